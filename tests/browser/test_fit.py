"""Issue 30: every page a role can open fits a 1,400 px laptop and a 390 px phone without the page itself
scrolling sideways (a wide table scrolls in its own box), and a refused page is the site's page with the
menu and a reason. Signed in as each role, on the bundled catalog (its wide price table is the page that
was 2,019 px wide), the example bill, study and workload (examples/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WIDTHS = (1400, 390)
# (role, a page it is refused): a finance user and Rent or buy is the issue's own case.
REFUSALS = (("finance", "/tco/"), ("viewer", "/billing/"), ("engineer", "/plans/"))
# Django's own admin and Swagger UI are third-party pages: the site's menu links to them, their layout
# is theirs (the admin index is still checked).
NOT_OURS = ("/api/docs/",)


@pytest.fixture
def example_data(bundled_catalog, team_named):
    from django.core.management import call_command

    from procurement.models import Recommendation, TcoStudy

    call_command("import_billing", str(EXAMPLES / "bill-focus.csv"), "--no-progress")
    call_command("tco", str(EXAMPLES / "tco-study.yaml"), "--save")
    call_command("recommend", str(EXAMPLES / "lora-finetune.yaml"), "--save", "--top", "10")
    study = TcoStudy.objects.latest("pk")
    recommendation = Recommendation.objects.latest("pk")
    team = team_named("research")
    for row in (study, recommendation.workload):
        row.team = team
        row.save(update_fields=["team"])
    offer_id = next(row["offer_id"] for row in recommendation.results if row.get("offer_id"))
    return {
        "engineer": [
            f"/tco/{study.pk}/",
            f"/workloads/{recommendation.workload_id}/recommendations/",
            f"/offers/{offer_id}/",
        ],
        "viewer": [f"/offers/{offer_id}/"],
        "admin": [f"/tco/{study.pk}/", f"/workloads/{recommendation.workload_id}/recommendations/"],
        "finance": [],
    }


def _overflow(page, width: int) -> int:
    page.set_viewport_size({"width": width, "height": 900})
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


# The outermost elements that reach past the window's right edge: what a failure names.
WIDEST = """() => Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
               && !(e.parentElement && e.parentElement.getBoundingClientRect().right > window.innerWidth + 1))
  .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + e.className
                        + ' ' + Math.round(e.getBoundingClientRect().right) + 'px')"""


# A price with more than 4 decimals in a table: a number cell, or a figure followed by its per-hour unit
# (prices per GPU-hour read at most 4 decimals through |hourly, money 2; a rate such as interruptions an
# hour may need more and is left alone).
LONG_DECIMALS = r"\\b\\d+\\.\\d{5,}\\b"
LONG_PRICE = r"\\b\\d+\\.\\d{5,}\\s*(?:[A-Z]{3}\\s*)?(?:/h\\b|/GPU-hour|per GPU-hour)"


# Pages whose long prices are engine-written sentences, not table figures: the capacity plan's assumptions
# ("at a blended 2.744688 per GPU-hour used", planning/engine/assumptions.py round_price). Left to the
# plan's own issue; the page is still checked for fit.
LONG_PRICES_KNOWN: set[str] = set()


def _long_decimals(page) -> list[str]:
    return page.evaluate(
        f"""() => Array.from(document.querySelectorAll('main table td'))
            .filter(td => (td.classList.contains('num') && new RegExp('{LONG_DECIMALS}').test(td.innerText))
                          || new RegExp('{LONG_PRICE}').test(td.innerText))
            .map(td => td.innerText).slice(0, 3)"""
    )


def _menu(page) -> list[str]:
    return page.eval_on_selector_all("header nav a", "links => links.map(a => a.getAttribute('href'))")


@pytest.mark.parametrize("role", ["viewer", "engineer", "finance", "admin"])
def test_every_page_of_each_role_fits_a_laptop_and_a_phone_and_reads_short_numbers(
    role, signed_in_page, example_data
):
    page = signed_in_page(role, team="research")
    page.goto("/")
    paths = [path for path in _menu(page) if path not in NOT_OURS] + example_data[role]
    assert paths, "the menu lists the role's pages"
    too_wide = []  # and numbers with too many decimals
    for path in dict.fromkeys(paths):
        response = page.goto(path)
        assert response.status == 200, (path, response.status)
        if path not in LONG_PRICES_KNOWN and (found := _long_decimals(page)):
            too_wide.append(f"{path}: more than 4 decimals in a table: {found}")
        for width in WIDTHS:
            overflow = _overflow(page, width)
            if overflow > 0:
                too_wide.append(f"{path} at {width} px: {overflow} px too wide: {page.evaluate(WIDEST)}")
    assert not too_wide, too_wide


@pytest.mark.parametrize(("role", "path"), REFUSALS)
def test_a_refused_page_shows_the_menu_and_a_reason(role, path, signed_in_page, page_problems, gpu_catalog):
    page = signed_in_page(role, team="research")
    page_problems.expect_refusal(path)
    response = page.goto(path)
    assert response.status == 403
    menu = _menu(page)
    assert "/" in menu and path not in menu  # the site's menu, without the page refused
    reason = page.locator("#refusal-reason").inner_text()
    assert "needs the role" in reason, reason
    assert "admin" in page.locator("#refusal-grant").inner_text()
    for width in WIDTHS:
        assert _overflow(page, width) <= 0, (path, width)
