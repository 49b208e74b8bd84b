"""Webhooks go only where they should (issue 31, finding 7): a private, loopback, link-local, reserved
or non-https target is refused when saved (the model field, so the admin form too), and a name that
resolves to such an address is refused again when sent, before any connection is made."""

from __future__ import annotations

import socket

import pytest
from django.core.exceptions import ValidationError

from procurement import webhooks
from procurement.models import ChangeEvent, Workload
from procurement.services.notifications import change_events_notify
from procurement.webhooks import WebhookRefused, check_webhook_url, post_webhook

REFUSED = [
    "http://hooks.example.com/x",  # not https
    "ftp://hooks.example.com/x",
    "https://169.254.169.254/latest/meta-data/",  # link-local: the cloud metadata service
    "https://127.0.0.1/",
    "https://127.1.2.3:8443/",
    "https://10.0.0.5/",
    "https://172.16.0.1/",
    "https://192.168.1.1/",
    "https://100.64.0.1/",  # carrier-grade NAT (RFC 6598)
    "https://0.0.0.0/",
    "https://[::1]/",
    "https://[fe80::1]/",
    "https://[fd00::1]/",  # unique local (RFC 4193)
    "https://[::ffff:127.0.0.1]/",  # IPv4-mapped loopback
    "https://[::ffff:169.254.169.254]/",
    "https://localhost/",
    "https://metadata.google.internal/",
    "https://printer.local/",
    "https://224.0.0.1/",  # multicast
]
ACCEPTED = [
    "https://hooks.example.com/gpuledger",
    "https://93.184.215.14/x?y=1",
    "https://[2606:4700::1111]/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_a_non_public_or_non_https_target_is_refused(url):
    with pytest.raises(WebhookRefused):
        check_webhook_url(url)


@pytest.mark.parametrize("url", ACCEPTED)
def test_a_public_https_target_is_accepted(url):
    assert check_webhook_url(url)[0]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url", ["https://169.254.169.254/latest/", "https://127.0.0.1/", "ftp://example.com/x"]
)
def test_saving_a_workload_with_such_a_webhook_is_refused(url, client_as):
    workload = Workload(name="w", task="qlora", spec={"task": "qlora"}, notify_webhook=url)
    with pytest.raises(ValidationError) as refused:
        workload.full_clean(exclude=["spec", "team"])
    assert "notify_webhook" in refused.value.message_dict
    # the admin's form runs the same validator
    admin = client_as("admin", is_staff=True, is_superuser=True)
    response = admin.post(
        "/admin/procurement/workload/add/",
        {"name": "w", "task": "qlora", "spec": "{}", "notify_webhook": url},
    )
    assert response.status_code == 200 and b"Webhook" in response.content
    assert not Workload.objects.exists()


def _resolving_to(monkeypatch, address: str) -> list:
    asked = []

    def fake_getaddrinfo(host, port, *args, **kwargs):
        asked.append(host)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(webhooks.socket, "getaddrinfo", fake_getaddrinfo)
    monkeypatch.setattr(webhooks.socket, "create_connection", lambda *a, **k: pytest.fail("connected"))
    return asked


@pytest.mark.parametrize("address", ["169.254.169.254", "127.0.0.1", "10.1.2.3", "::1", "::ffff:10.0.0.1"])
def test_a_name_that_resolves_to_a_private_address_is_refused_at_send(monkeypatch, address):
    asked = _resolving_to(monkeypatch, address)
    with pytest.raises(WebhookRefused, match="non-public"):
        post_webhook("https://hooks.example.com/gpuledger", {"kind": "x"})
    assert asked == ["hooks.example.com"]


@pytest.mark.django_db
def test_a_refused_webhook_is_skipped_not_retried(monkeypatch):
    _resolving_to(monkeypatch, "169.254.169.254")
    workload = Workload.objects.create(
        name="w", task="qlora", spec={"task": "qlora"}, notify_webhook="https://hooks.example.com/gpuledger"
    )
    event = ChangeEvent.objects.create(workload=workload, kind="price_change", before={}, after={})
    assert change_events_notify([event.pk]) == {"no target": 1}
    assert change_events_notify([event.pk]) == {}  # claimed once: not sent again
