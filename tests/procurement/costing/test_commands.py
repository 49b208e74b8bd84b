"""manage.py job_cost and tco, as a person runs them."""

import json
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from procurement.models import TcoStudy
from tests.procurement.costing.tco_fixtures import study_document


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_it_prints_the_job_cost_contract_as_decimal_strings():
    # compute = 2.5 x 4 x 2 = 20; setup = 2.5 x 0.5 x 2 = 2.5; reruns = 0.1 x 20 = 2; storage = 100 x 0.08 x 1.5 = 12
    output = _run(
        "job_cost",
        "--price-per-hour",
        "2.5",
        "--hours",
        "4",
        "--instances",
        "2",
        "--setup-hours",
        "0.5",
        "--storage-gb",
        "100",
        "--storage-rate",
        "0.08",
        "--storage-months",
        "1.5",
        "--rerun-fraction",
        "0.1",
        "--currency",
        "USD",
        "--format",
        "json",
    )
    assert json.loads(output) == {
        "compute": "20.00",
        "setup": "2.50",
        "storage": "12.00",
        "reruns": "2.00",
        "total": "36.50",
        "currency": "USD",
    }


def test_it_prices_the_guides_worked_example_on_the_command_line():
    card_a = json.loads(
        _run("job_cost", "--price-per-hour", "2", "--hours", "10", "--currency", "USD", "--format", "json")
    )
    card_b = json.loads(
        _run("job_cost", "--price-per-hour", "3.5", "--hours", "5", "--currency", "USD", "--format", "json")
    )
    assert (card_a["total"], card_b["total"]) == ("20.00", "17.50")


def test_it_names_the_flag_of_a_negative_value():
    with pytest.raises(CommandError, match="--hours: must not be negative"):
        _run("job_cost", "--price-per-hour", "2", "--hours", "-1", "--currency", "USD")


def _study_file(tmp_path, document) -> str:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


def test_it_runs_the_worked_tco_example_without_storing_it(tmp_path, h100):
    report = json.loads(_run("tco", _study_file(tmp_path, study_document()), "--format", "json"))
    assert (report["buy"]["total"], report["rent"]["total"], report["break_even_month"]) == (
        "477211.79",
        "628617.60",
        28,
    )
    assert TcoStudy.objects.count() == 0


def test_it_stores_a_study_on_request(tmp_path, h100):
    report = json.loads(_run("tco", _study_file(tmp_path, study_document()), "--format", "json", "--save"))
    stored = TcoStudy.objects.get(pk=report["id"])
    assert stored.result["buy"]["npv"] == report["buy"]["npv"]
    assert stored.spec["buy"]["server_price"] == "300000"


def test_it_prints_a_table(tmp_path, h100):
    output = _run("tco", _study_file(tmp_path, study_document()))
    assert "recommendation: BUY" in output
    assert "477,211.79" in output  # the table groups thousands; the JSON keeps 477211.79


def test_it_names_the_field_and_stores_nothing(tmp_path, h100):
    path = _study_file(tmp_path, study_document(buy__average_load="1.5"))
    with pytest.raises(CommandError, match=r"buy\.average_load: must be between 0 and 1"):
        _run("tco", path, "--save")
    assert TcoStudy.objects.count() == 0


def test_it_prices_rent_from_a_catalog_offer_with_its_timestamp(tmp_path, bundled_catalog):
    # Bundled SkyPilot catalog: p5.48xlarge us-east-1 on demand 55.04 USD/h for 8 H100 = 6.88 per GPU-hour
    offer = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
    document = study_document(rent__price_per_gpu_hour=None, rent__offer=offer)
    report = json.loads(_run("tco", _study_file(tmp_path, document), "--format", "json", "--save"))
    assert report["rent"]["price_per_gpu_hour"] == "6.880000"
    assert report["rent"]["price_observed_at"]
    stored = TcoStudy.objects.get(pk=report["id"])
    assert stored.prices_used[0]["amount_per_hour"].startswith("55.04")
    assert stored.prices_used[0]["observed_at"] == report["rent"]["price_observed_at"]


def test_the_table_gives_the_present_value_figures_and_the_residual_note(tmp_path, h100):
    # the docs' example at 80%: NPV break-even 0.829378, discounted payback never, cash break-even 36 from the residual
    output = _run("tco", _study_file(tmp_path, study_document(utilization="0.8", tax_rate="0.25")))
    assert "break-even utilization (present value): 82.9%" in output  # 0.829378 as a share
    assert "break-even month (present value): never" in output
    assert "note: cash break-even in month 36 only because the residual value" in output
    assert "after 0.25 tax (straight_line)" in output
