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

LOCAL_NAMES = ("localhost", ".localhost", ".local", ".internal", ".home.arpa")
SEND_TIMEOUT_S = 10


class WebhookRefused(ValueError):
    pass


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


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
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
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
