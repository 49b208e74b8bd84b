"""Browser tests: Playwright driving Debian's Chromium against pytest-django's live server.

- No browser is ever downloaded: Chromium is `/usr/bin/chromium` (apt, installed by .ci/run). Without
  it the tests skip with the reason, and fail when REQUIRE_SERVICES=1 (CI must run them).
- `signed_in_page("engineer")` is a page signed in as a new user with that role: through the login
  form when the app has one, else with the session cookie of `Client.force_login`.
- `snap(page, name)` saves the page at 1400 px and 390 px under test-artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import REQUIRE_SERVICES

CHROMIUM = Path(os.environ.get("GPULEDGER_CHROMIUM", "/usr/bin/chromium"))
# STACK.md's arguments: no sandbox as root in CI, no GPU, nothing that phones home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",  # containers often have a small /dev/shm
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
WIDTHS = {"laptop": (1400, 900), "phone": (390, 844)}
TIMEOUT_MS = 15_000


def _unavailable_reason() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install -y --no-install-recommends chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (requirements-dev.txt)"
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _unavailable_reason()
    if reason:
        if REQUIRE_SERVICES:
            pytest.fail(f"browser tests cannot run: {reason}, and REQUIRE_SERVICES=1")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from a thread
    # with a running loop unless told it is safe. The ORM calls here are the tests' own, made between
    # page actions, never concurrently with them; the flag is set only while the browser runs.
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


class PageProblems:
    """What a page did that no page should: reach another host, break the CSP, throw in its scripts."""

    def __init__(self):
        self.external_requests: list[str] = []
        self.console_errors: list[str] = []
        self.refused_paths: set[str] = set()

    def expect_refusal(self, path: str) -> None:
        """The test opens `path` to be refused (403, 404): the browser's "Failed to load resource" line
        for that very document is the expected answer, not a problem (any other resource's still is)."""
        self.refused_paths.add(path)

    def _console(self, message):
        if message.type != "error":
            return
        url = (message.location or {}).get("url", "")
        if message.text.startswith("Failed to load resource") and urlsplit(url).path in self.refused_paths:
            return
        self.console_errors.append(message.text)

    def watch(self, page):
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        return page

    def check(self):
        assert not self.external_requests, f"pages reached outside the app: {self.external_requests}"
        assert not self.console_errors, (
            f"browser console errors (CSP violations among them): {self.console_errors}"
        )


@pytest.fixture
def page_problems():
    return PageProblems()


@pytest.fixture
def browser_context(browser, live_server, page_problems):
    """A fresh context at laptop width; any request to another host is refused and fails the test (the
    app must work offline: no CDN, no fonts from elsewhere)."""
    width, height = WIDTHS["laptop"]
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)

    def only_this_server(route):
        if route.request.url.startswith(live_server.url) or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            page_problems.external_requests.append(route.request.url)
            route.abort()

    context.route("**/*", only_this_server)
    context.on("page", page_problems.watch)
    yield context
    context.close()
    page_problems.check()


@pytest.fixture
def page(browser_context):
    """An anonymous page on the live server."""
    return browser_context.new_page()


def _login_url() -> str | None:
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse("login")
    except NoReverseMatch:
        return None


@pytest.fixture
def signed_in_page(browser_context, user_with_role, live_server):
    """`signed_in_page("engineer")`: a page signed in as a new user holding that role."""

    def sign_in(role: str | None, **fields):
        user = user_with_role(role, **fields)
        page = browser_context.new_page()
        login = _login_url()
        if login:
            page.goto(login)
            page.fill("input[name=username]", user.get_username())
            page.fill("input[name=password]", "pw")  # tests/conftest.py user_with_role's password
            page.locator("form:has(input[name=password]) [type=submit]").first.click()
            page.wait_for_load_state()
            assert page.locator("#signed-in").inner_text().find(user.get_username()) >= 0, page.content()
        else:
            from django.conf import settings
            from django.test import Client

            client = Client()
            client.force_login(user)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
            browser_context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
            )
        page.signed_in_user = user
        return page

    return sign_in


@pytest.fixture
def snap(request):
    """`snap(page, "catalog")`: screenshots at laptop and phone widths; returns the files written.

    The page comes back at laptop width. Also checks the phone layout does not widen the page: a
    table that is too wide must scroll inside its box, not push the whole page sideways."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> list[Path]:
        files = []
        for label, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            path = ARTIFACTS / f"{name}-{width}px.png"
            page.screenshot(path=str(path), full_page=True)
            files.append(path)
            if label == "phone":
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{name}: the page is {overflow} px wider than a {width} px phone"
        page.set_viewport_size({"width": WIDTHS["laptop"][0], "height": WIDTHS["laptop"][1]})
        return files

    return take


@pytest.fixture
def gpu_catalog(transactional_db):
    """The bundled GPU models, providers, aliases, FX rates and architectures without the ~10 s of
    bundled prices: what sizing and a typed-in rent-or-buy study need (keeps the browser suite fast)."""
    from pricing import catalog
    from procurement.architectures import architectures_load

    catalog._load_providers(catalog.DATA_DIR / "providers.csv")
    catalog._load_gpu_models(catalog.DATA_DIR / "gpu_specs.csv")
    catalog._load_aliases(catalog.DATA_DIR / "gpu_aliases.csv")
    catalog._load_fx_rates(catalog.DATA_DIR / "fx_rates.csv")
    architectures_load()
