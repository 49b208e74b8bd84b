"""Sensitivity: each driver at -20% and +20%, widest swing first, for the tornado chart."""

from decimal import Decimal

from procurement.costing.tco import HOURS_PER_MONTH
from procurement.costing.tco_sensitivity import buy_advantage, sensitivity_report, sensitivity_rows
from procurement.costing.tco_spec import parse_tco_study
from tests.procurement.costing.tco_fixtures import GPUS, study_document

D = Decimal


def _study(**changes):
    return parse_tco_study(study_document(**changes), gpu_lookup=GPUS.get)


def test_it_moves_the_advantage_by_the_discounted_rent_change():
    # a 20% lower rent price lowers rent.npv by exactly 20%, so the advantage falls by 0.2 x rent.npv
    study = _study(discount_rate_annual="0")
    rows = {row.driver: row for row in sensitivity_rows(study)}
    rent_total = 8 * HOURS_PER_MONTH * 36 * D("2.99")  # undiscounted at r = 0: 628617.60
    assert buy_advantage(study) - rows["rent_price"].low_advantage == D("0.2") * rent_total


def test_it_caps_utilization_at_one():
    # at full utilization +20% cannot add hours: the high case equals the base
    rows = {row.driver: row for row in sensitivity_rows(_study())}
    assert rows["utilization"].high_advantage == buy_advantage(_study())


def test_it_orders_rows_by_swing_and_names_every_driver():
    report = sensitivity_report(_study())
    swings = [D(row["swing"]) for row in report["rows"]]
    assert swings == sorted(swings, reverse=True)
    assert {row["driver"] for row in report["rows"]} == {
        "rent_price",
        "utilization",
        "power_price",
        "residual_value",
        "purchase_price",
        "discount_rate",
        "horizon_months",
    }
    assert report["metric"] == "rent.npv - buy.npv"


def test_it_lowers_buying_s_advantage_when_power_gets_dearer():
    rows = {row.driver: row for row in sensitivity_rows(_study())}
    assert rows["power_price"].high_advantage < rows["power_price"].low_advantage
