"""API tokens: create (the secret is returned once), look up by hash, revoke.

Tokens are 256 random bits, so a plain SHA-256 is enough to store them (no password stretching is
needed for a secret nobody chose).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.utils import timezone

from gpuledger.accounts.models import ApiToken
from gpuledger.errors import InputError

TOKEN_PREFIX = "glt_"  # noqa: S105 (a file name / a public prefix, not a secret)
MAX_NAME_LENGTH = 100
# last_used_at is written at most this often per token, so scripts do not cause a write per request.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


class TokenError(InputError):
    """A token request that cannot be honoured, with the field it concerns."""


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(user, name: str) -> tuple[ApiToken, str]:
    """A new token for `user`; returns the row and the secret (shown once, never stored)."""
    name = (name or "").strip()
    if not name:
        raise TokenError("name", "give the token a name (what it is for)")
    if len(name) > MAX_NAME_LENGTH:
        raise TokenError("name", f"at most {MAX_NAME_LENGTH} characters")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, prefix=secret[: len(TOKEN_PREFIX) + 6], key_hash=token_hash(secret)
    )
    return token, secret


def token_user(secret: str):
    """The active user a token belongs to, or None (unknown, revoked, or the user is inactive)."""
    try:  # key_hash is unique: a get, with no ORDER BY for the database or the query compiler
        token = ApiToken.objects.select_related("user").get(
            key_hash=token_hash(secret), revoked_at__isnull=True
        )
    except ApiToken.DoesNotExist:
        return None
    if not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def token_revoke(user, token_id: int) -> ApiToken:
    """Revoke one of `user`'s tokens (someone else's token id is "not found", never revoked)."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise TokenError("token", f"you have no token {token_id}")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def user_tokens(user) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user).order_by("-created_at"))
