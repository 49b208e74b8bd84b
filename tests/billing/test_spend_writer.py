"""The spend writer's paths: rows of days already stored are looked up, others are not; numbers go
into the database exactly as PostgreSQL would read their text (binary COPY, pgcopy.py)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.imports.importer import import_files
from billing.models import SpendRecord
from billing.storage import pgcopy

pytestmark = pytest.mark.django_db
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,ResourceId"


def line(day: int, resource: str, cost: str = "10.00") -> str:
    return (
        f"2026-05-{day:02d}T00:00:00Z,2026-05-{day + 1:02d}T00:00:00Z,Usage,{cost},{cost},USD,AWS,{resource}"
    )


def write(tmp_path, name, *lines):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def test_it_stores_new_rows_of_a_stored_day_and_skips_the_stored_ones(tmp_path):
    first = import_files([write(tmp_path, "a.csv", line(1, "i-1"), line(1, "i-2"))], fmt="focus")
    # May 1 holds rows: its rows are looked up (one of the two is stored); May 3 holds none
    second = import_files(
        [write(tmp_path, "b.csv", line(3, "i-1"), line(1, "i-2"), line(1, "i-3"))], fmt="focus"
    )
    assert (first.inserted, second.inserted, second.unchanged) == (2, 2, 1)
    assert sorted(SpendRecord.objects.values_list("resource_id", "charge_period_start__day")) == [
        ("i-1", 1),
        ("i-1", 3),
        ("i-2", 1),
        ("i-3", 1),
    ]


def test_rows_that_are_equal_within_a_file_are_all_stored_whatever_the_chunk(tmp_path, monkeypatch):
    from billing.imports import focus

    original = focus.read_focus
    monkeypatch.setattr(focus, "read_focus", lambda p, **kw: original(p, **(kw | {"chunk_rows": 2})))
    path = write(tmp_path, "same.csv", *[line(1, "i-1")] * 5)
    assert (import_files([path]).inserted, import_files([path]).unchanged) == (5, 5)


decimal_text = st.one_of(
    st.decimals(min_value=-(10**13), max_value=10**13, allow_nan=False, allow_infinity=False, places=9).map(
        str
    ),
    st.sampled_from(
        [
            "0.0000005",
            "-0.0000005",
            "0.00000049",
            "99.9999995",
            "-0",
            "+3",
            "1E-7",
            "2.5e3",
            ".5",
            "000000000000000000000042.1",
            "12345678901234.123456",
        ]
    ),
)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the binary COPY is PostgreSQL's")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(costs=st.lists(decimal_text, min_size=1, max_size=12))
def test_costs_are_stored_as_postgresql_rounds_their_text(tmp_path, costs):
    path = write(tmp_path, "costs.csv", *[line(1, f"i-{n}", cost) for n, cost in enumerate(costs)])
    result = import_files([path], fmt="focus")
    assert not result.errors, result.errors
    stored = dict(
        SpendRecord.objects.filter(billing_import_id__in=result.imports).values_list(
            "resource_id", "billed_cost"
        )
    )
    for n, cost in enumerate(costs):
        if f"i-{n}" in stored:  # an earlier example may hold the same row
            assert stored[f"i-{n}"] == Decimal(cost).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)


def test_numeric_fields_hold_the_rounded_value_in_base_10000_digits():
    values = np.array(["12345678901234.5678905", "-0.0000015", "", "7"], dtype=object)
    field = pgcopy.numeric_field("cost", pd.Series(values, dtype=object), 6)
    digits = [np.frombuffer(value[4:], dtype=">i2").tolist() for value in field.values[:2]]
    # ndigits 6, weight 3, sign, scale 6; then 12|3456|7890|1234 . 5678|9100 (.5678905 half away from 0)
    assert digits[0] == [6, 3, 0, 6, 12, 3456, 7890, 1234, 5678, 9100]
    assert digits[1] == [6, 3, pgcopy.NUMERIC_NEGATIVE, 6, 0, 0, 0, 0, 0, 200]
    assert field.codes[2] == -1  # "" is NULL


def test_rows_of_many_distinct_values_are_stored_as_written(tmp_path):
    # resources distinct in every row and independent columns: the COPY takes those per row
    rng = np.random.default_rng(7)
    header = HEADER + ",PricingCategory,ListCost,RegionId,Tags"
    rows, expected = [], {}
    for n in range(300):
        cost = f"{rng.integers(0, 10**9) / 10**7:.7f}"
        category = ["Standard", "Dynamic", "Committed", ""][n % 4]
        listed = "" if n % 3 == 0 else str(rng.integers(1, 10**6))
        region = ["us-east-1", "eu-west-3", "ap-south-1", ""][rng.integers(0, 4)]
        tags = f'"{{""team"": ""t{n % 7}"", ""n"": {n % 11}}}"'
        rows.append(line(1 + n % 28, f"resource-{n:05d}", cost) + f",{category},{listed},{region},{tags}")
        expected[f"resource-{n:05d}"] = (
            Decimal(cost).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP),
            {"Standard": "on_demand", "Dynamic": "spot", "Committed": "committed", "": "other"}[category],
            Decimal(listed) if listed else None,
            region,
            f"t{n % 7}",
        )
    path = tmp_path / "many.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    result = import_files([path], fmt="focus")
    assert (result.inserted, result.errors) == (300, [])
    stored = SpendRecord.objects.values_list(
        "resource_id", "billed_cost", "pricing_category", "list_cost", "region", "team"
    )
    found = {resource: values for resource, *values in stored}
    if connection.vendor == "postgresql":  # SQLite keeps decimals as floats
        assert found == {resource: list(values) for resource, values in expected.items()}
    else:
        assert {r: v[1:] for r, v in found.items()} == {r: list(v[1:]) for r, v in expected.items()}


def test_deleting_an_import_deletes_its_rows_without_a_database_constraint(tmp_path, client_as):
    # SpendRecord's foreign keys are no database constraints (docs/performance.md): Django cascades
    kept = import_files([write(tmp_path, "a.csv", line(1, "i-1"))], fmt="focus")
    gone = import_files([write(tmp_path, "b.csv", line(2, "i-2"), line(3, "i-3"))], fmt="focus")
    admin = client_as("admin")
    assert (
        admin.get(f"/admin/billing/spendrecord/{SpendRecord.objects.first().pk}/change/").status_code == 200
    )
    response = admin.post(f"/admin/billing/billingimport/{gone.imports[0]}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert list(SpendRecord.objects.values_list("billing_import_id", flat=True)) == kept.imports
