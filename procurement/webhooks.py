"""Where a webhook may go: an https URL on a public address, checked when it is saved and again, on the
address its name resolves to, when it is sent (issue 31, finding 7). An admin could aim a workload's
webhook at 169.254.169.254 (the cloud metadata service), 127.0.0.1 or ftp:, turning the worker into a
client of internal services.

At save the URL must be https and its host must not be a private, loopback, link-local, reserved,
multicast or unspecified address written out (IPv4, IPv6, IPv4-mapped IPv6) nor a local name
(localhost, *.localhost, *.local, *.internal). At send the host is resolved once, every address it
resolves to must be public, and the connection goes to that checked address (TLS still verifies the
name), so a name that resolves elsewhere between the check and the connection (DNS rebinding) cannot
move it; redirects are not followed.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from gpuledger.errors import InputError

LOCAL_NAMES = ("localhost", ".localhost", ".local", ".internal", ".home.arpa")
SEND_TIMEOUT_S = 10


class WebhookRefused(InputError):
    """A webhook URL that may not be called (not https, not a public address), named by its `url` field."""

    def __init__(self, message: str):
        super().__init__("url", message, text=message)


NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: a NAT64 gateway forwards to the IPv4 inside
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated form; a sit tunnel routes it to the IPv4


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and may reach: mapped, NAT64, compatible, 6to4, Teredo."""
    found = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
    if address in NAT64 or (address in IPV4_COMPATIBLE and int(address) > 1):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ipv4 for ipv4 in found if ipv4 is not None]


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if address.ipv4_mapped is not None:
            return _public(address.ipv4_mapped)
        if embedded and not all(_public(ipv4) for ipv4 in embedded):
            return False
    return address.is_global and not address.is_multicast


def _written_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names by itself: the usual forms, and the ones inet_aton (and so the resolver)
    also reads as IPv4: 2130706433, 0x7f000001, 0177.0.0.1, 127.1."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def check_webhook_url(url: str) -> tuple[str, int, str]:
    """(host, port, path with query) of an acceptable webhook URL; raises WebhookRefused saying why."""
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise WebhookRefused(f"must be an https URL, not {parts.scheme or 'schemeless'}")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise WebhookRefused("has no host")
    if host == LOCAL_NAMES[0] or host.endswith(LOCAL_NAMES[1:]):
        raise WebhookRefused(f"{host} is a local name")
    address = _written_address(host)
    if address is not None and not _public(address):
        raise WebhookRefused(f"{host} is not a public address (private, loopback, link-local or reserved)")
    try:
        port = parts.port or 443
    except ValueError:
        raise WebhookRefused("has a bad port") from None
    return host, port, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def validate_webhook_url(url: str) -> None:
    """The model field's validator: a refused URL is a form error naming why."""
    if not url:
        return
    try:
        check_webhook_url(url)
    except WebhookRefused as refused:
        raise ValidationError(f"Webhook {refused}.", code="webhook_target") from None


def resolve_public(host: str, port: int) -> str:
    """The one address to connect to; raises WebhookRefused if the name resolves to any non-public one."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise WebhookRefused(f"{host} does not resolve: {error}") from None
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in found]
    refused = [str(address) for address in addresses if not _public(address)]
    if refused or not addresses:
        raise WebhookRefused(f"{host} resolves to a non-public address ({', '.join(refused) or 'none'})")
    return str(addresses[0])


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to a checked address, verifying the certificate against the URL's name."""

    def __init__(self, host: str, address: str, port: int, **kwargs) -> None:
        super().__init__(host, port, context=ssl.create_default_context(), **kwargs)
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post_webhook(url: str, payload: dict[str, Any]) -> int:
    """POST the payload as JSON; the status code. Raises WebhookRefused before connecting anywhere not
    allowed, OSError for a network failure."""
    host, port, path = check_webhook_url(url)
    address = resolve_public(host, port)
    connection = _PinnedHTTPSConnection(host, address, port, timeout=SEND_TIMEOUT_S)
    try:
        body = json.dumps(payload, default=str).encode()
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        return connection.getresponse().status
    finally:
        connection.close()
