"""DRF authentication by API token: `Authorization: Bearer glt_...` (or `Token glt_...`)."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from gpuledger.accounts.tokens import token_user

SCHEMES = ("bearer", "token")


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """Scripts sign in with a per-user token; browsers keep using the session.

    Listed first in DEFAULT_AUTHENTICATION_CLASSES so that an anonymous API request gets 401 with a
    `WWW-Authenticate: Bearer` challenge (session auth alone would answer 403).
    """

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower().decode(errors="replace") not in SCHEMES:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("The Authorization header must be 'Bearer <token>'.")
        try:
            secret = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("The token is not valid.") from None
        user = token_user(secret)
        if user is None:
            raise exceptions.AuthenticationFailed("The token is not valid or was revoked.")
        return user, None

    def authenticate_header(self, request):
        return 'Bearer realm="api"'
