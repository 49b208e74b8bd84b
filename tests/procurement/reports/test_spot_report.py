"""The spot report: options with cost and P50/P90, interruption band and age, checkpoint advice,
the verdict in words; injection-safe exports; pages and downloads behind roles."""

import csv
import io
import zipfile

import openpyxl
import pypdf
import pytest

from procurement.reports.render import render
from procurement.reports.render.xlsx import write_text
from procurement.services.reports import report_snapshot_create, snapshot_report
from tests.procurement.reports.conftest import NOW, SPOT, ranked_row

EVIL = '=HYPERLINK("http://evil.example","click")'


def _table(report, key):
    return next(table for table in report.tables() if table.key == key)


def _report(workload):
    return snapshot_report(report_snapshot_create(kind="spot", subject_id=workload.pk, now=NOW))


def test_it_compares_spot_with_on_demand_and_says_why(make_ranked_workload):
    report = _report(make_ranked_workload())
    # saving = 120.00 - 45.50 = 74.50, 74.50 / 120.00 = 62%
    assert report.verdict == (
        "Use spot: aws g6.12xlarge x1 us-east-1 saves 74.50 USD (62%) against on demand "
        "(aws g6.12xlarge x1 us-east-1)."
    )
    options = {row["option"]: row for row in report.tables()[0].rows}
    assert options["on demand"]["p50_hours"] == options["on demand"]["p90_hours"] == 20.0
    assert (options["spot"]["p50_hours"], options["spot"]["p90_hours"]) == (21.4, 23.1)
    assert options["spot"]["expected_cost"] == "45.50"
    assert options["spot with on-demand fallback"]["offer"] == "not available in this ranking"
    reasons = next(section for section in report.sections if section.heading == "Verdict and reasons")
    assert reasons.paragraphs == SPOT["why"]


def test_it_dates_the_interruption_band(make_ranked_workload):
    report = _report(make_ranked_workload())
    items = {row["item"]: row["value"] for row in _table(report, "interruptions").rows}
    assert items["band (share of instances interrupted a month)"] == "5-10%"
    assert items["snapshot date"] == "2026-11-01"
    assert items["snapshot age (days)"] == "30"  # 2026-11-01 to 2026-12-01
    advice = next(section for section in report.sections if section.heading == "Checkpoint advice")
    assert "Checkpoint every 15.0 minutes" in advice.paragraphs[0] and "6.67%" in advice.paragraphs[0]


def test_it_shows_a_fallback_option_when_the_spot_model_gives_one(make_ranked_workload):
    fallback = {
        "expected_cost": "61.20",
        "p50_hours": 21.0,
        "p90_hours": 22.0,
        "offer": "spot, then on demand",
    }
    rows = [
        ranked_row(pricing_model="spot", total_cost="45.50", spot=SPOT | {"fallback": fallback}),
        ranked_row(total_cost="120.00"),
    ]
    options = {row["option"]: row for row in _report(make_ranked_workload(rows)).tables()[0].rows}
    assert options["spot with on-demand fallback"]["expected_cost"] == "61.20"
    assert options["spot with on-demand fallback"]["p90_hours"] == 22.0


def test_it_shows_the_reclaim_exposure_of_a_spot_row_on_several_instances(make_ranked_workload):
    # spot26: 2 instances at 1.06868e-4 an instance-hour: the job's rate is 2 x that = 2.13736e-4 (independent
    # reclaims); the stored row carries both rates and the exposure, and the report shows them
    exposure = "2-fold reclaim exposure: the job spans 2 instances and stops when any one is reclaimed"
    spot = SPOT | {
        "interruption_rate_per_hour": "0.000213736",
        "interruption_rate_per_instance_hour": "0.000106868",
        "instances": 2,
        "reclaim_exposure": exposure,
    }
    rows = [
        ranked_row(pricing_model="spot", total_cost="45.50", instances=2, spot=spot),
        ranked_row(total_cost="120.00"),
    ]
    items = {
        row["item"]: row["value"] for row in _table(_report(make_ranked_workload(rows)), "interruptions").rows
    }
    assert items["rate per hour"] == "0.000213736"
    assert items["rate per instance-hour"] == "0.000106868"
    assert items["reclaim exposure"] == exposure
    one = {row["item"] for row in _table(_report(make_ranked_workload()), "interruptions").rows}
    assert "reclaim exposure" not in one  # one instance: no exposure row


def test_it_stays_on_demand_when_spot_is_unsuitable(make_ranked_workload):
    spot = SPOT | {"verdict": "unsuitable", "why": ["serving cannot be interrupted"], "simulation": None}
    rows = [ranked_row(pricing_model="spot", total_cost="45.50", spot=spot), ranked_row()]
    report = _report(make_ranked_workload(rows))
    assert report.verdict == "Stay on demand: spot is unsuitable for this job."


def test_it_flags_a_price_that_has_gone_stale(make_ranked_workload):
    # observed 2026-11-21, limit 48 h: by 2026-12-01 it is 10 days old, so stale
    report = _report(make_ranked_workload())
    assert report.stale and all(price.stale for price in report.price_dates)
    assert report.price_dates[0].age_days == 10


def test_the_exports_write_a_formula_like_provider_name_as_text(make_ranked_workload):
    rows = [ranked_row(provider=EVIL, pricing_model="spot", total_cost="45.50", spot=SPOT), ranked_row()]
    report = _report(make_ranked_workload(rows, name="-2+3"))
    workbook = openpyxl.load_workbook(io.BytesIO(render(report, "xlsx")[0]))
    cells = [
        cell for row in workbook["options"].iter_rows() for cell in row if str(cell.value).startswith("=HYP")
    ]
    assert cells and all(cell.data_type == "s" and cell.quotePrefix for cell in cells)
    archive = zipfile.ZipFile(io.BytesIO(render(report, "csv")[0]))
    table = list(csv.reader(io.StringIO(archive.read("options.csv").decode())))
    assert table[2][1].startswith("'=HYPERLINK(")  # the spot row's offer, quoted
    assert table[2][3] == "45.50"  # numbers stay numbers


def test_a_formula_like_text_cell_is_never_a_formula():
    sheet = openpyxl.Workbook().active
    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        write_text(sheet["A1"], text)
        assert sheet["A1"].data_type == "s" and sheet["A1"].value == text


def test_the_pdf_reads_back(make_ranked_workload):
    text = (
        pypdf.PdfReader(io.BytesIO(render(_report(make_ranked_workload()), "pdf")[0])).pages[0].extract_text()
    )
    assert "Spot vs on-demand: llama fine-tune" in text and "Use spot" in text


def test_the_page_offers_downloads_to_an_engineer(make_ranked_workload, client_as):
    workload = make_ranked_workload()
    client = client_as("engineer", team="research")
    response = client.get(f"/reports/spot/{workload.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Use spot" in html and 'id="download-pdf"' in html and 'id="download-xlsx"' in html
    live = client.get(f"/reports/spot/{workload.pk}/download/pdf/")  # computed, stored nowhere
    assert live.content.startswith(b"%PDF") and response.context["snapshot"] is None
    snapshot = client.post(f"/reports/spot/{workload.pk}/").context["snapshot"]  # "Keep this report"
    pdf = client.get(f"/reports/spot/snapshots/{snapshot.pk}/pdf/")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF")
    xlsx = client.get(f"/reports/spot/snapshots/{snapshot.pk}/xlsx/")
    assert xlsx["Content-Disposition"].endswith(f'spot-{workload.pk}-{snapshot.pk}.xlsx"')


def test_the_spot_report_is_for_engineers_and_admins(make_ranked_workload, client_as, client):
    workload = make_ranked_workload()
    assert client.get(f"/reports/spot/{workload.pk}/").status_code == 302  # anonymous: to the login page
    assert client_as("viewer").get(f"/reports/spot/{workload.pk}/").status_code == 403
    assert client_as("finance").get(f"/reports/spot/{workload.pk}/").status_code == 403
    assert client_as("admin").get(f"/reports/spot/{workload.pk}/").status_code == 200


def test_the_rent_or_buy_report_is_for_engineers_and_admins(stored_study, client_as):
    assert client_as("viewer").get(f"/reports/rent_or_buy/{stored_study.pk}/").status_code == 403
    assert client_as("finance").get(f"/reports/rent_or_buy/{stored_study.pk}/").status_code == 403
    response = client_as("admin").post(f"/reports/rent_or_buy/{stored_study.pk}/")
    assert response.status_code == 200 and "477,211.79" in response.content.decode()
    snapshot = response.context["snapshot"]
    assert client_as("viewer").get(f"/reports/rent_or_buy/snapshots/{snapshot.pk}/pdf/").status_code == 403
    # a snapshot of one kind is not downloadable through another kind's route
    assert client_as("admin").get(f"/reports/spot/snapshots/{snapshot.pk}/pdf/").status_code == 404


def test_a_workload_without_a_ranking_is_a_404_naming_why(db, client_as):
    from procurement.models import Workload

    workload = Workload.objects.create(name="w", task="qlora", spec={"task": "qlora"})
    response = client_as("engineer", team="research").get(f"/reports/spot/{workload.pk}/")
    assert response.status_code == 404


def test_it_reports_on_a_real_ranking_of_the_bundled_catalog(client_as, bundled_catalog, tmp_path):
    from django.core.management import call_command

    client = client_as("engineer", team="research")
    workload = {"name": "w", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
    created = client.post(
        "/api/recommendations/",
        {"workload": workload, "top": 50, "save": True},
        content_type="application/json",
    )
    workload_id = created.json()["workload_id"]
    rows = created.json()["results"]
    ranking = client.get(f"/workloads/{workload_id}/recommendations/").content.decode()
    assert f'href="/reports/spot/{workload_id}/"' in ranking  # the ranking links to its spot report
    page = client.post(f"/reports/spot/{workload_id}/")
    assert page.status_code == 200
    report = snapshot_report(page.context["snapshot"])
    options = {row["option"]: row for row in report.tables()[0].rows}
    cheapest_on_demand = next(row for row in rows if row["fits"] and row["pricing_model"] == "on_demand")
    assert options["on demand"]["expected_cost"] == cheapest_on_demand["total_cost"]
    output = tmp_path / "spot.xlsx"
    call_command("report", "spot", "--id", str(workload_id), "--format", "xlsx", "--output", str(output))
    workbook = openpyxl.load_workbook(output)
    assert workbook["options"]["D3"].value == float(cheapest_on_demand["total_cost"])  # a number, not text
    breakdown = workbook["cost_breakdown"]
    assert breakdown["B7"].value == "=SUM(B3:B6)"  # the ranking's parts add up to its total
    assert sum(breakdown.cell(row, 2).value for row in range(3, 7)) == pytest.approx(
        float(cheapest_on_demand["total_cost"]), abs=0.005
    )


def test_one_table_downloads_as_a_plain_csv(make_ranked_workload, client_as):
    workload = make_ranked_workload()
    client = client_as("engineer", team="research")
    snapshot = client.post(f"/reports/spot/{workload.pk}/").context["snapshot"]
    response = client.get(f"/reports/spot/snapshots/{snapshot.pk}/csv/?table=options")
    assert response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("Option,Offer,") and lines[2].startswith("spot,")
    assert client.get(f"/reports/spot/snapshots/{snapshot.pk}/csv/?table=nope").status_code == 404


def test_it_reads_a_fallback_ranked_as_a_row_of_its_own(make_ranked_workload):
    fallback_row = ranked_row(
        pricing_model="spot_with_fallback",
        total_cost="58.00",
        spot={"simulation": {"p50_hours": 20.5, "p90_hours": 21.0}},
    )
    rows = [ranked_row(pricing_model="spot", total_cost="45.50", spot=SPOT), fallback_row, ranked_row()]
    options = {row["option"]: row for row in _report(make_ranked_workload(rows)).tables()[0].rows}
    assert options["spot with on-demand fallback"]["expected_cost"] == "58.00"
    assert options["spot with on-demand fallback"]["p90_hours"] == 21.0


def test_the_cost_breakdown_adds_up_to_each_total_with_a_formula(make_ranked_workload):
    # on demand 90.00 + 4.60 + 1.40 + 24.00 = 120.00; spot 34.00 + 1.95 + 2.75 + 6.80 = 45.50
    report = _report(make_ranked_workload())
    assert _table(report, "cost_breakdown").totals() == {"on_demand": "120.00", "spot": "45.50"}
    sheet = openpyxl.load_workbook(io.BytesIO(render(report, "xlsx")[0]))["cost_breakdown"]
    assert (sheet["B7"].value, sheet["C7"].value) == ("=SUM(B3:B6)", "=SUM(C3:C6)")
    assert sum(sheet.cell(row, 3).value for row in range(3, 7)) == pytest.approx(45.50)


def test_it_shows_the_spot_with_fallback_plan_the_ranking_ranked(make_ranked_workload):
    # Issue 26: the report shows the same plan as the ranking row. A real ranking (the long L4 QLoRA at band 4
    # with 0.1 h of slack, tests/procurement/test_ranking_deadline_wall_clock.py) ranks the late spot row as
    # spot with on-demand fallback; the report's fallback option is that row, at that row's total.
    import json
    import math

    from tests.procurement.test_ranking_deadline_wall_clock import BAND4, LONG, _l4, _rows

    [alone] = _l4(_rows(BAND4, LONG), "spot")
    deadline = alone["hours"] + (math.ceil(alone["hours"] / 0.25) - 1) / 3600 + 0.1
    rows = json.loads(json.dumps(_rows(BAND4, LONG, deadline_hours=deadline), default=str))
    [ranked] = [r for r in rows if r.get("ranked_as") == "spot_with_fallback"]
    options = {row["option"]: row for row in _report(make_ranked_workload(rows)).tables()[0].rows}
    fallback = options["spot with on-demand fallback"]
    assert fallback["expected_cost"] == ranked["total_cost"]
    assert fallback["p90_cost"] == ranked["spot"]["deadline_plan"]["p90_cost"]
    assert fallback["offer"].endswith("falling back on aws g6.xlarge us-east-1 on demand")
    assert (
        options["spot"]["offer"] != fallback["offer"]
        or options["spot"]["expected_cost"] != ranked["total_cost"]
    )


def test_the_ranking_tie_note_is_in_the_verdict_section_and_the_pdf(make_ranked_workload):
    """audtie / fixtie: the tie note (procurement/ranking/ties.py) a buyer would otherwise find only in the JSON
    is a paragraph of "Verdict and reasons", and so in the PDF."""
    note = (
        "within the model's error: l4 and t4 are a tie at ±11% (t4 costs 3.1% more: aws g5g.xlarge, 1 x 1 t4, "
        "spot, rank 3 in the list); measure both before choosing on cost"
    )
    rows = [
        ranked_row(pricing_model="spot", total_cost="45.50", spot=SPOT, warnings=[note]),
        ranked_row(total_cost="120.00"),
    ]
    report = _report(make_ranked_workload(rows))
    reasons = next(section for section in report.sections if section.heading == "Verdict and reasons")
    assert reasons.paragraphs[-1] == f"Ranking's first row: {note}."
    pdf = pypdf.PdfReader(io.BytesIO(render(report, "pdf")[0]))
    text = " ".join(page.extract_text() for page in pdf.pages).replace("\n", " ")
    assert "are a tie at" in text and "g5g.xlarge" in text
