"""Every page: navigation by role with who is signed in, and nothing the content security policy refuses."""

import re

import pytest
import yaml

from gpuledger.context_processors import nav_links
from gpuledger.security import RELAXED_POLICY, STRICT_POLICY

pytestmark = pytest.mark.django_db

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
INLINE_STYLE = re.compile(r"<style\b|\sstyle=|\son[a-z]+=", re.I)

STUDY = {
    "name": "layout",
    "currency": "USD",
    "utilization": "0.8",
    "buy": {"gpu": "h100-sxm5-80gb", "server_price": "300000", "install_cost": "5000"},
    "rent": {"pricing_model": "on_demand", "price_per_gpu_hour": "2.99"},
}


def _labels(html: str) -> list[str]:
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r">([^<]+)</a>", nav)


def test_each_role_sees_the_links_it_can_use(client_as):
    assert _labels(client_as("viewer").get("/status/").content.decode()) == [
        "GPU catalog",
        "Price status",
        "API",
    ]
    engineer = _labels(client_as("engineer").get("/status/").content.decode())
    assert engineer == [
        "GPU catalog",
        "Sizing",
        "Workloads",
        "Dashboard",
        "Rent or buy",
        "Price status",
        "Benchmarks",
        "API",
    ]
    finance = _labels(client_as("finance").get("/status/").content.decode())
    assert "Spend" in finance and "Sizing" not in finance and "Spend" not in engineer
    admin = _labels(client_as("admin").get("/status/").content.decode())
    assert admin[-1] == "Admin" and "Sizing" in admin


def test_the_bar_says_who_is_signed_in_and_their_widest_role(client_as, client):
    html = client_as("finance", username="fiona").get("/status/").content.decode()
    slot = re.search(r'<div class="who" id="signed-in">(.*?)</div>', html, re.S).group(1)
    assert "fiona" in slot and ">finance<" in slot
    html = client_as(None, username="nobody").get("/accounts/me/").content.decode()  # their own account page
    assert "no role" in html
    client.logout()
    assert (
        _labels(client.get("/status/", follow=True).content.decode()) == []
    )  # anonymous: the login page, no links


def test_the_current_page_is_marked():
    links = nav_links({"engineer", "viewer"}, "/size/")
    assert [link["label"] for link in links if link["current"]] == ["Sizing"]
    assert [link["label"] for link in nav_links({"viewer"}, "/") if link["current"]] == ["GPU catalog"]


def test_pages_carry_a_strict_csp_and_have_no_inline_script_or_style(client_as, bundled_catalog):
    client = client_as("admin")
    study = client.post("/api/tco/", STUDY, content_type="application/json").json()
    sized = client.post(
        "/size/", {"spec": yaml.safe_dump({"task": "lora", "model": {"preset": "llama-3.1-8b"}})}
    )
    assert sized.context["report"] is not None
    from pricing.models import Offer

    workload = {"task": "lora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e8}
    ranked = client.post(
        "/api/recommendations/", {"workload": workload, "top": 3}, content_type="application/json"
    )
    pages = {
        "/size/ (sized)": sized,
        "recommendations": client.get(f"/workloads/{ranked.json()['workload_id']}/recommendations/"),
    }
    for url in (
        "/",
        "/size/",
        "/tco/",
        f"/tco/{study['id']}/",
        "/dashboard/",
        "/status/",
        f"/offers/{Offer.objects.first().pk}/",
        "/api/docs/",
    ):
        pages[url] = client.get(url)
    for url, response in pages.items():
        assert response.status_code == 200, url
        assert response.headers["Content-Security-Policy"] == STRICT_POLICY, url
        html = response.content.decode()
        assert not INLINE_SCRIPT.search(html), (url, INLINE_SCRIPT.search(html))
        assert not INLINE_STYLE.search(html), (url, INLINE_STYLE.search(html))
    assert "'unsafe-inline'" not in STRICT_POLICY and "script-src 'self';" in STRICT_POLICY
    assert client.get("/admin/").headers["Content-Security-Policy"] == RELAXED_POLICY


def test_a_page_that_names_its_roles_decides_who_sees_its_link(monkeypatch):
    from django.urls import resolve

    from procurement.views import dashboard

    # role_required marks the view with the roles it lets in; the link follows the view, not the list
    monkeypatch.setattr(dashboard.dashboard_page, "required_roles", ("admin",), raising=False)
    assert resolve("/dashboard/").func is dashboard.dashboard_page
    assert "Dashboard" not in [link["label"] for link in nav_links({"engineer", "viewer"})]
    assert "Dashboard" in [link["label"] for link in nav_links({"admin"})]
