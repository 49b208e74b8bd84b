"""Sign in through the login form, as a browser does, and return the headers that carry the session.

One sign-in per role, shared by that role's simulated users: a sign-in hashes the password (PBKDF2,
hundreds of milliseconds by design), which is not the load being measured.
"""

from __future__ import annotations

import http.client
import re
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

LOGIN_PATH = "/accounts/login/"
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _cookies(response: http.client.HTTPResponse) -> dict[str, str]:
    jar = SimpleCookie()
    for header in response.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    return {name: morsel.value for name, morsel in jar.items()}


def sign_in(base: str, username: str, password: str) -> dict[str, str]:
    """Headers (Cookie, and the CSRF token for form posts) of a signed-in session of ``username``."""
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", LOGIN_PATH)
        page = connection.getresponse()
        html = page.read().decode()
        cookies = _cookies(page)
        match = CSRF_FIELD.search(html)
        if page.status != 200 or not match or "csrftoken" not in cookies:
            raise SystemExit(f"sign-in page: status {page.status}, no CSRF token")
        form = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": match.group(1)})
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={cookies['csrftoken']}",
            "Origin": base,  # Django's CSRF check compares it with the host over plain HTTP
        }
        connection.request("POST", LOGIN_PATH, body=form, headers=headers)
        answer = connection.getresponse()
        answer.read()
        cookies |= _cookies(answer)
    finally:
        connection.close()
    if answer.status != 302 or "sessionid" not in cookies:
        raise SystemExit(f"sign-in as {username}: status {answer.status}, no session cookie")
    return {"Cookie": f"sessionid={cookies['sessionid']}; csrftoken={cookies['csrftoken']}"}
