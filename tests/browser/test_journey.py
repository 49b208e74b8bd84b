"""Issue 11's journeys in Chromium: an engineer from a sized job to ranked offers to a spot report's
PDF and XLSX; who is refused what (viewer, an engineer of another team, anonymous); an admin's
rent-or-buy PDF. Each page is photographed at 1400 px and 390 px (`snap`).

Offers are a handful of typed-in prices over the bundled GPU models (`gpu_catalog`), not the ~10 s
of bundled prices: the live server needs a transactional database, flushed after every test, so a
catalog cannot be shared across tests and each load would be paid again.
"""

from __future__ import annotations

import io
import re
from decimal import Decimal

import pytest
import yaml
from django.utils import timezone

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A QLoRA of Llama-3.1-8B (the /size/ form's defaults) fits on one 24 GB A10G; g5.xlarge is one A10G.
WORKLOAD_NAME = "browser journey qlora"
# Money as the pages and reports write it: thousands separators and two decimals ("1,234.56").
MONEY = re.compile(r"\b\d{1,3}(?:,\d{3})*\.\d\d\b")


@pytest.fixture
def a10g_offers(gpu_catalog):
    """AWS g5.xlarge on demand (1.006 USD/h, the published us-east-1 Linux price) and spot in two zones:
    enough for the ranking to list on-demand and spot rows and for the spot report to compare them."""
    from pricing.ingest import ingest_price_records
    from pricing.providers.records import InstanceTypeRecord, PriceRecord

    g5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))
    now = timezone.now()

    def record(price: str, model: str, zone: str = "") -> PriceRecord:
        return PriceRecord(
            instance=g5,
            region="us-east-1",
            zone=zone,
            pricing_model=model,
            price_per_hour=Decimal(price),
            currency="USD",
            observed_at=now,
            source="test",
        )

    ingest_price_records(
        [record("1.006", "on_demand"), record("0.40", "spot", "use1-az1"), record("0.45", "spot", "use1-az2")]
    )


def _saved_workload(owner, team):
    """A workload stored as the engineer's "Find offers" would, without driving the browser there."""
    from procurement.services.recommendations import workload_create_from_spec

    document = {
        "name": WORKLOAD_NAME,
        "task": "qlora",
        "model": {"preset": "llama-3.1-8b"},
        "training_tokens": 2e8,
    }
    return workload_create_from_spec(document=document, owner=owner, team=team)


def _download(page, button: str):
    """Click a report's download button and return the file's bytes and its suggested name."""
    with page.expect_download() as caught:
        page.click(button)
    download = caught.value
    assert download.failure() is None, download.failure()
    with open(download.path(), "rb") as handle:
        return handle.read(), download.suggested_filename


def _pdf_text(content: bytes) -> str:
    from pypdf import PdfReader

    assert content.startswith(b"%PDF-"), content[:20]
    return "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(content)).pages)


def test_an_engineer_sizes_finds_offers_and_downloads_the_spot_report(signed_in_page, a10g_offers, snap):
    from openpyxl import load_workbook

    from procurement.models import Recommendation, Workload

    page = signed_in_page("engineer", team="research")  # through the login form
    page.goto("/size/")
    page.fill("#knob-name", WORKLOAD_NAME)
    page.click("#fields-form button[type=submit]")
    page.wait_for_selector("#candidates")
    snap(page, "journey-sizing")

    page.click("#find-offers-form button[type=submit]")
    page.wait_for_url(re.compile(r"/workloads/\d+/recommendations/$"))
    workload = Workload.objects.get()
    assert workload.name == WORKLOAD_NAME and workload.owner == page.signed_in_user
    assert workload.team.slug == "research"
    assert Recommendation.objects.filter(workload=workload).count() == 1  # the saved answer
    assert WORKLOAD_NAME in page.locator("h1").inner_text()
    rows = page.locator("#recommendations tbody tr")
    assert rows.count() >= 2  # on demand and spot for g5.xlarge
    ranked = rows.all_inner_texts()
    assert all("g5.xlarge" in row for row in ranked)
    # pricing model -> the hourly prices of its rows, as the table shows them
    hourly: dict[str, list[str]] = {}
    for row in rows.all():
        model = row.locator("td:nth-child(5)").inner_text().strip().lower()
        hourly.setdefault(model, []).append(row.locator("td:nth-child(6)").inner_text().strip())
    assert {"on demand", "spot"} <= set(hourly), ranked
    assert hourly["on demand"] == ["1.006"]  # the typed-in on-demand price of one A10G, 4 decimals at most
    assert all(Decimal(price) < Decimal("1.006") for price in hourly["spot"]), hourly  # 0.40/0.45 + overhead
    totals = [
        Decimal(t.replace(",", ""))
        for t in MONEY.findall(
            " ".join(page.locator("#recommendations tbody td:nth-child(8)").all_inner_texts())
        )
    ]
    assert totals and totals[0] > 0
    # the first row links to its offer page (spot history, zones)
    assert re.fullmatch(r"/offers/\d+/", rows.first.locator("a").first.get_attribute("href"))
    snap(page, "journey-ranking")

    page.click("#spot-report")
    page.wait_for_url(re.compile(rf"/reports/spot/{workload.pk}/$"))
    assert WORKLOAD_NAME in page.locator("h1").inner_text()
    summary = page.locator("#report-summary").inner_text()
    on_page = set(MONEY.findall(summary))
    assert on_page, summary  # the options' expected costs
    snap(page, "journey-spot-report")

    pdf, pdf_name = _download(page, "#download-pdf")
    assert pdf_name.endswith(".pdf")
    text = _pdf_text(pdf)
    assert WORKLOAD_NAME in text
    assert on_page & set(MONEY.findall(text)), (on_page, text[:2000])  # the same money as the page

    xlsx, xlsx_name = _download(page, "#download-xlsx")
    assert xlsx_name.endswith(".xlsx")
    workbook = load_workbook(io.BytesIO(xlsx))  # formulas as written, not cached values
    cells = [cell.value for sheet in workbook.worksheets for row in sheet.iter_rows() for cell in row]
    numbers = [value for value in cells if isinstance(value, int | float) and not isinstance(value, bool)]
    formulas = [value for value in cells if isinstance(value, str) and value.startswith("=")]
    assert numbers, "no numeric cell: numbers were written as text"
    assert any(formula.startswith("=SUM(") for formula in formulas), formulas  # the breakdown's totals
    # the on-demand expected cost on the page is a number in the workbook
    assert any(f"{Decimal(str(n)):,.2f}" in on_page for n in numbers), (on_page, numbers[:40])


def test_a_viewer_cannot_create_a_workload(signed_in_page, page_problems, snap):
    from procurement.models import Workload

    page_problems.expect_refusal("/workloads/new/")
    page_problems.expect_refusal("/size/")
    page = signed_in_page("viewer")
    response = page.goto("/workloads/new/")
    assert response.status == 403
    assert page.locator("form:has(textarea[name=spec])").count() == 0  # no create form
    assert page.goto("/size/").status == 403  # nor the sizing page's "Find offers"
    assert "Sizing" not in page.locator("body").inner_text()  # a 403 page, no engineer's navigation
    snap(page, "journey-viewer-refused")
    assert not Workload.objects.exists()


def test_an_engineer_of_another_team_cannot_open_the_workloads_recommendations(
    signed_in_page, user_with_role, team_named, page_problems, snap
):
    from django.test import Client

    owner = user_with_role("engineer", team="research")
    workload = _saved_workload(owner, team_named("research"))
    url = f"/workloads/{workload.pk}/recommendations/"
    owner_client = Client()
    owner_client.force_login(owner)
    assert owner_client.get(url).status_code == 200  # the page exists for its team

    page_problems.expect_refusal(url)
    page = signed_in_page("engineer", team="platform")
    response = page.goto(url)
    assert response.status == 404
    assert WORKLOAD_NAME not in page.content()
    snap(page, "journey-other-team-404")


def test_anonymous_gets_the_login_page_for_a_protected_url(page, snap):
    page.goto("/workloads/")
    assert re.search(r"/accounts/login/\?next=/workloads/$", page.url), page.url
    assert page.locator("h1").inner_text() == "Sign in"
    assert page.locator("input[name=password]").count() == 1
    assert page.locator("input[name=next]").get_attribute("value") == "/workloads/"
    snap(page, "journey-login")


def test_an_admin_downloads_the_rent_or_buy_report_pdf(signed_in_page, gpu_catalog, team_named, snap):
    from procurement.services.tco import tco_study_create
    from procurement.views.costing import EXAMPLE_STUDY

    page = signed_in_page("admin", team="leadership")
    document = yaml.safe_load(EXAMPLE_STUDY) | {"name": "browser rent or buy"}
    study = tco_study_create(document=document, owner=page.signed_in_user, team=team_named("leadership"))
    page.goto(f"/reports/rent_or_buy/{study.pk}/")
    assert "browser rent or buy" in page.locator("h1").inner_text()
    verdict = page.locator("#report-verdict").inner_text()
    assert re.match(r"Recommendation: (BUY|RENT)\b", verdict), verdict
    summary = page.locator("#report-summary").inner_text()
    # Renting EXAMPLE_STUDY's 8 GPUs at 2.99 USD per GPU-hour, 730 h a month (docs/cost-model.md), 80% used,
    # for 36 months: 2.99 * 8 * 730 * 0.8 * 36 = 502,894.08 USD
    assert "502,894.08 USD" in summary, summary
    snap(page, "journey-rent-or-buy-report")

    pdf, name = _download(page, "#download-pdf")
    assert re.fullmatch(rf"rent_or_buy-{study.pk}\.pdf", name), name  # computed now: no snapshot id
    text = _pdf_text(pdf)
    assert "Rent or buy: browser rent or buy" in text and "amounts in USD" in text
    assert "502,894.08 USD" in text  # the same rent total as the page
    assert verdict.split(":")[1].split("(")[0].strip() in text  # "BUY" or "RENT", as the page says
    # month 0 of the cash flows: the 300,000 server and its 5,000 install, paid up front
    assert re.search(r"^0 305,000\.00 0\.00 ", text, re.MULTILINE), text[:3000]
