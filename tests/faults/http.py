"""A signed-in HTTP client for the fault tests' gunicorn (urllib: no dependency, no redirects followed)."""

from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    def __init__(self, base: str):
        self.base, self.cookies = base, http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect()
        )

    def request(self, path: str, data: dict | None = None) -> tuple[int, str]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.base + path, data=body, headers={"Referer": self.base + path})
        try:
            with self._opener.open(request, timeout=30) as response:
                return response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode("utf-8", "replace")

    def sign_in(self, username: str, password: str) -> int:
        """Post the sign-in form; returns its status (302 on success)."""
        status, page = self.request("/accounts/login/")
        assert status == 200, (status, page[:500])
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        status, _ = self.request(
            "/accounts/login/", {"csrfmiddlewaretoken": token, "username": username, "password": password}
        )
        return status
