"""Sign-in, API tokens, throttling, role groups and the demo users."""

from __future__ import annotations

import hashlib
import json
import stat
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import CommandError, call_command

from gpuledger.accounts.models import ApiToken, Team
from gpuledger.accounts.throttling import AnonApiRateThrottle, UserApiRateThrottle

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_anonymous_pages_go_to_sign_in_and_the_api_answers_401_with_a_bearer_challenge(client):
    page = client.get("/dashboard/")
    assert page.status_code == 302 and page.url == "/accounts/login/?next=/dashboard/"
    api = client.get("/api/gpus/")
    assert api.status_code == 401 and api["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/api/docs/").url == "/accounts/login/?next=/api/docs/"  # an HTML page of the API
    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 200


def test_http_basic_auth_is_not_accepted(client, user_with_role):
    import base64

    user_with_role("viewer", username="scripted")
    basic = base64.b64encode(b"scripted:pw").decode()
    assert client.get("/api/gpus/", HTTP_AUTHORIZATION=f"Basic {basic}").status_code == 401


def test_a_token_made_on_the_users_page_works_once_shown_and_stops_when_revoked(client, client_as):
    signed_in = client_as("viewer")
    assert signed_in.post("/accounts/me/tokens/", {"name": "nightly export"}).status_code == 302
    page = signed_in.get("/accounts/me/").content.decode()
    token = ApiToken.objects.get()
    secret = page.split('id="new-token"')[1].split("<code>")[1].split("</code>")[0]
    assert secret.startswith("glt_") and token.prefix == secret[:10]
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest() and secret not in token.key_hash
    assert secret not in signed_in.get("/accounts/me/").content.decode()  # shown once only

    signed_in.logout()
    assert client.get("/api/gpus/", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None

    client.force_login(token.user)
    client.post(f"/accounts/me/tokens/{token.pk}/revoke/")
    client.logout()
    refused = client.get("/api/gpus/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert refused.status_code == 401 and "revoked" in refused.json()["errors"][0]["message"]


def test_nobody_revokes_another_users_token(client_as, user_with_role):
    from gpuledger.accounts.tokens import token_create

    token, _ = token_create(user_with_role("engineer"), "theirs")
    client_as("engineer").post(f"/accounts/me/tokens/{token.pk}/revoke/")
    token.refresh_from_db()
    assert token.revoked_at is None


def test_the_api_token_command_creates_lists_and_revokes(client, user_with_role):
    user_with_role("engineer", username="ci")
    created = _run("api_token", "create", "ci", "--name", "ci pipeline")
    secret = created.split(": ", 1)[1].split()[0]
    assert client.get("/api/gpus/", HTTP_AUTHORIZATION=f"Token {secret}").status_code == 200
    token = ApiToken.objects.get()
    listing = _run("api_token", "list", "ci")
    assert "ci pipeline" in listing and token.prefix in listing and secret not in listing
    assert "revoked" in _run("api_token", "revoke", "ci", str(token.pk))
    assert client.get("/api/gpus/", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 401
    with pytest.raises(CommandError, match="username: no user 'nobody'"):
        _run("api_token", "list", "nobody")
    with pytest.raises(CommandError, match="name"):
        _run("api_token", "create", "ci", "--name", " ")


def test_five_failed_sign_ins_block_even_the_right_password_for_that_user_and_address(client, user_with_role):
    user_with_role("viewer", username="alice")
    answers = [
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code
        for _ in range(5)
    ]
    assert answers == [200, 200, 200, 200, 429]  # the fifth failure starts the block
    blocked = client.post("/accounts/login/", {"username": "alice", "password": "pw"})
    assert blocked.status_code == 429 and "try again in 15 minutes" in blocked.content.decode()
    assert "_auth_user_id" not in client.session
    # the admin's own sign-in form goes through the same backend: no way round the block
    client.post("/admin/login/", {"username": "alice", "password": "pw"})
    assert "_auth_user_id" not in client.session
    # another address is not blocked (a throttle per user name + address, not a lock-out of the user)
    other = client.post("/accounts/login/", {"username": "alice", "password": "pw"}, REMOTE_ADDR="10.0.0.9")
    assert other.status_code == 302 and "_auth_user_id" in client.session


def test_a_successful_sign_in_clears_the_failures(client, user_with_role):
    user_with_role("viewer", username="bob")
    for _ in range(4):
        client.post("/accounts/login/", {"username": "bob", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "bob", "password": "pw"}).status_code == 302
    client.logout()
    for _ in range(4):
        client.post("/accounts/login/", {"username": "bob", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "bob", "password": "pw"}).status_code == 302


def test_the_api_answers_429_with_retry_after_past_the_rate(client_as, monkeypatch):
    monkeypatch.setattr(UserApiRateThrottle, "THROTTLE_RATES", {"user": "3/minute", "anon": "3/minute"})
    monkeypatch.setattr(AnonApiRateThrottle, "THROTTLE_RATES", {"user": "3/minute", "anon": "3/minute"})
    signed_in = client_as("viewer")
    assert [signed_in.get("/api/gpus/").status_code for _ in range(3)] == [200, 200, 200]
    throttled = signed_in.get("/api/gpus/")
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert "throttled" in throttled.json()["errors"][0]["message"]


def test_sync_roles_makes_four_groups_and_is_idempotent():
    first = _run("sync_roles")
    assert "0 group(s) created" in first  # the migration made them already
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "engineer", "finance", "admin"}
    Group.objects.filter(name="finance").delete()
    assert "1 group(s) created" in _run("sync_roles")
    assert "0 group(s) created, 0 permission(s) granted" in _run("sync_roles")
    accept = Permission.objects.get(codename="publish_suspect")
    assert Group.objects.get(name="admin").permissions.filter(pk=accept.pk).exists()


def test_demo_users_are_one_per_role_in_two_teams_with_passwords_kept_in_var(settings, tmp_path):
    settings.DEBUG, settings.VAR_DIR = True, tmp_path
    out = _run("demo_users", "--url", "http://127.0.0.1:9000")
    stored = json.loads((tmp_path / "demo-users.json").read_text())
    assert stat.S_IMODE((tmp_path / "demo-users.json").stat().st_mode) == 0o600
    users = get_user_model().objects.filter(username__in=stored)
    assert {u.username: u.groups.get().name for u in users} == {
        "viewer": "viewer",
        "engineer": "engineer",
        "engineer2": "engineer",
        "finance": "finance",
        "admin": "admin",
    }
    assert all(u.check_password(stored[u.username]) and stored[u.username] in out for u in users)
    assert set(Team.objects.values_list("slug", flat=True)) == {"research", "platform"}
    assert {t.slug for t in Team.objects.filter(members__username="engineer2")} == {"platform"}
    assert "http://127.0.0.1:9000/accounts/login/" in out
    assert _run("demo_admin") and json.loads((tmp_path / "demo-users.json").read_text()) == stored
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG off"):
        _run("demo_users")


def test_the_signed_in_user_and_roles_show_in_the_navigation(client_as):
    html = client_as("finance", username="fran").get("/").content.decode()
    assert 'id="signed-in-as"' in html and "fran (viewer, finance)" in html
