"""The plan's selector (planning/history.py) on a few stored rows, against series worked
out by hand, and who may plan which scope.

The bill (FOCUS, imported as a file), in May 2026 (period 2026-05-01 to 2026-05-08, hours 0-168):
- p5.48xlarge (8 x H100 SXM5) of team ml, 6 instance-hours charged over May 1 (24 h): 48 GPU-hours, so
  2 GPUs in hours 0-24; tagged interruptible; on demand, 330.24 USD (6 x 55.04);
- g6.xlarge (1 x L4) of team web, 24 instance-hours over May 2: 1 GPU in hours 24-48; 20 EUR;
- g6e.xlarge (1 x L40S) of team ml, spot, 12 instance-hours over May 3 00:00-12:00: 1 GPU in hours 48-60;
- a storage row of team ml charged May 1-8: the bill covers every hour of the week for team ml;
- an unused p5 commitment of team ml on May 4 (cost, no demand), and a p5 row in June (outside).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import numpy as np
import pytest
from django.core.exceptions import PermissionDenied

from billing.imports.importer import import_files
from billing.models import GpuUtilization, SpendGrant
from planning.engine.demand import demand_percentiles, hour_index, status_quo
from planning.engine.errors import PlanInputError
from planning.history import PlanScope, plan_scope_for_user, plan_usage_rows, scope_demand
from planning.usage_frame import collapsed
from pricing.models import FxRate
from tests.billing.catalog import import_demo_billing, make_catalog

pytestmark = pytest.mark.django_db
MAY, WEEK_END = dt.date(2026, 5, 1), dt.date(2026, 5, 8)
HEADER = (
    "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,BilledCost,EffectiveCost,ListCost,"
    "BillingCurrency,ProviderName,RegionId,ResourceId,PricingCategory,CommitmentDiscountId,"
    "CommitmentDiscountStatus,ConsumedQuantity,ConsumedUnit,ServiceCategory,x_UsageType,Tags"
)


def tags(**values) -> str:
    return '"' + json.dumps(values).replace('"', '""') + '"'


def row(
    start, end, cost, currency, resource, category, quantity, service, usage_type, status="", **tag_values
):
    commitment = "ri-1" if status else ""
    return ",".join(
        [
            start,
            end,
            "Usage",
            "",
            cost,
            cost,
            "",
            currency,
            "AWS",
            "us-east-1",
            resource,
            category,
            commitment,
            status,
            quantity,
            "Hours" if quantity else "",
            service,
            usage_type,
            tags(**tag_values),
        ]
    )


ROWS = [
    row(
        "2026-05-01T00:00:00Z",
        "2026-05-02T00:00:00Z",
        "330.24",
        "USD",
        "i-p5",
        "Standard",
        "6",
        "Compute",
        "USE1-BoxUsage:p5.48xlarge",
        team="ml",
        interruptible="true",
    ),
    row(
        "2026-05-02T00:00:00Z",
        "2026-05-03T00:00:00Z",
        "20",
        "EUR",
        "i-l4",
        "Standard",
        "24",
        "Compute",
        "USE1-BoxUsage:g6.xlarge",
        team="web",
    ),
    row(
        "2026-05-03T00:00:00Z",
        "2026-05-03T12:00:00Z",
        "11",
        "USD",
        "i-l40s",
        "Dynamic",
        "12",
        "Compute",
        "USE1-SpotUsage:g6e.xlarge",
        team="ml",
    ),
    row(
        "2026-05-01T00:00:00Z",
        "2026-05-08T00:00:00Z",
        "7",
        "USD",
        "vol-1",
        "Standard",
        "",
        "Storage",
        "USE1-EBS:VolumeUsage.gp3",
        team="ml",
    ),
    row(
        "2026-05-04T00:00:00Z",
        "2026-05-05T00:00:00Z",
        "100",
        "USD",
        "ri-1",
        "Committed",
        "",
        "Compute",
        "USE1-BoxUsage:p5.48xlarge",
        status="Unused",
        team="ml",
    ),
    row(
        "2026-06-01T00:00:00Z",
        "2026-06-02T00:00:00Z",
        "55.04",
        "USD",
        "i-p5",
        "Standard",
        "1",
        "Compute",
        "USE1-BoxUsage:p5.48xlarge",
        team="ml",
    ),
]


@pytest.fixture
def bill(tmp_path):
    make_catalog()
    FxRate.objects.create(currency="EUR", base="USD", rate="1.10", as_of=MAY, source="test")
    path = tmp_path / "bill.csv"
    path.write_text(HEADER + "\n" + "\n".join(ROWS) + "\n")
    result = import_files([path], fmt="focus")
    assert (result.inserted, result.errors) == (len(ROWS), [])


def week(**fields) -> PlanScope:
    return PlanScope(start=MAY, end=WEEK_END, **fields)


def test_it_reads_the_scopes_gpu_rows_into_the_hourly_series(bill):
    history, usage = scope_demand(week())
    expected = [2.0] * 24 + [1.0] * 24 + [1.0] * 12 + [0.0] * 108  # storage covers the GPU-free hours
    assert history.billed.tolist() == expected
    assert history.billed_interruptible.tolist() == [2.0] * 24 + [0.0] * 144
    assert (history.covered_hours, history.total_hours) == (168, 168)
    assert history.series_used == "billed"
    assert sorted(set(usage.gpu_model)) == ["h100-sxm5-80gb", "l4", "l40s"]
    assert usage.unused_commitment.sum() == 1  # cost of the bill, no demand
    assert usage.provider.tolist() == ["aws"] * 4  # ProviderName "AWS", stored as the catalog's slug


def test_status_quo_cost_converts_through_the_stored_fx_rate(bill):
    usage = plan_usage_rows(week(), currency="USD")
    quo = status_quo(usage, start_hour=week().start_hour, end_hour=week().end_hour)
    # 330.24 + 20 EUR x 1.10 + 11 + 100 unused = 463.24 USD for 48 + 24 + 12 = 84 GPU-hours
    assert quo.effective_cost_micros == 463_240_000
    assert quo.unused_commitment_micros == 100_000_000
    assert quo.gpu_hours == 84
    assert quo.by_pricing_category["spot"] == {"gpu_hours": 12.0, "effective_cost_micros": 11_000_000}


def test_a_missing_fx_rate_names_the_currency(bill):
    FxRate.objects.all().delete()
    with pytest.raises(PlanInputError) as error:
        plan_usage_rows(week(), currency="USD")
    assert error.value.field == "currency" and "EUR" in error.value.message


def test_a_team_scope_sees_its_rows_and_its_bills_coverage_only(bill):
    history, usage = scope_demand(week(teams=("web",)), currency="EUR")
    assert set(usage.team) == {"web"}
    assert history.covered_hours == 24  # only the web row's day; the storage row is team ml's
    assert history.billed[24:48].tolist() == [1.0] * 24
    assert np.isnan(history.billed[:24]).all() and np.isnan(history.billed[48:]).all()
    assert usage.effective_cost_micros.tolist() == [20_000_000]  # EUR, unconverted


@pytest.mark.parametrize(
    ("gpu", "resources"),
    [
        ("h100", {"i-p5", "ri-1"}),
        ("h100-sxm5-80gb", {"i-p5", "ri-1"}),
        ("l40s", {"i-l40s"}),
        ("l4", {"i-l4"}),
    ],
)
def test_a_gpu_slug_or_family_selects_its_rows(bill, gpu, resources):
    assert set(plan_usage_rows(week(gpu=gpu)).resource_id) == resources


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"gpu": "l40"}, "gpu"),  # a family matches at a dash: l40 is not l40s
        ({"teams": ("nobody",)}, "team"),
        ({"start": dt.date(2026, 7, 1), "end": dt.date(2026, 8, 1)}, "from"),
    ],
)
def test_a_scope_without_gpu_rows_names_the_field(bill, fields, field):
    with pytest.raises(PlanInputError, match="no GPU usage rows") as error:
        plan_usage_rows(PlanScope(**{"start": MAY, "end": WEEK_END, **fields}))
    assert error.value.field == field


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"end": dt.date(2026, 5, 7)}, "to"),  # 6 days
        ({"end": dt.date(2026, 4, 1)}, "to"),
        ({"end": dt.date(2029, 6, 1)}, "to"),  # over three years
        ({"start": "2026-05-01"}, "from"),
        ({"gpu": "H100; drop"}, "gpu"),
        ({"teams": "ml"}, "team"),
        ({"teams": tuple(f"t{i}" for i in range(101))}, "team"),
    ],
)
def test_bad_scopes_name_the_field(fields, field):
    with pytest.raises(PlanInputError) as error:
        PlanScope(**{"start": MAY, "end": WEEK_END, **fields})
    assert error.value.field == field


def test_utilization_of_the_scopes_resources_gives_the_busy_series(bill):
    from billing.models import BillingImport

    source = BillingImport.objects.create(source_format="utilization", file_name="u.csv")
    for hour in range(24):  # the p5's hours: two GPUs at 25% and 75%, mean 50%
        for gpu, percent in ((0, 25), (1, 75)):
            GpuUtilization.objects.create(
                billing_import=source,
                resource_id="i-p5",
                gpu_index=gpu,
                utilization_pct=percent,
                hour=dt.datetime(2026, 5, 1, hour, tzinfo=dt.UTC),
            )
    GpuUtilization.objects.create(  # another team's machine: never read into a web scope
        billing_import=source,
        resource_id="i-other",
        gpu_index=0,
        utilization_pct=0,
        hour=dt.datetime(2026, 5, 2, 3, tzinfo=dt.UTC),
    )
    history, _ = scope_demand(week())
    assert history.busy[:24] == pytest.approx([1.0] * 24)  # 2 GPUs x 50%
    assert history.busy[24:60].tolist() == [1.0] * 36  # no samples: counted busy
    # 48 of the 84 billed GPU-hours are sampled: 57%, under 95%, so the plan keeps the billed series
    assert history.utilization_coverage == pytest.approx(48 / 84)
    assert history.series_used == "billed" and "57%" in history.series_reason
    scoped, _ = scope_demand(week(teams=("web",)))
    assert scoped.busy is None  # the web scope's only resource has no samples


def test_who_may_plan_which_scope(bill, user_with_role, team_named):
    scope = week()
    for role in ("finance", "admin"):
        assert plan_scope_for_user(user_with_role(role), scope) == scope
    for user in (user_with_role("viewer"), user_with_role("engineer", team="ml")):
        with pytest.raises(PermissionDenied):
            plan_scope_for_user(user, scope)
    admin = user_with_role("admin")
    SpendGrant.objects.create(team=team_named("ml"), spend_team="ml", granted_by=admin)
    engineer = user_with_role("engineer", team="ml")
    assert plan_scope_for_user(engineer, scope).teams == ("ml",)  # no team asked: their granted ones
    assert plan_scope_for_user(engineer, week(teams=("ml",))).teams == ("ml",)
    with pytest.raises(PermissionDenied, match="web"):
        plan_scope_for_user(engineer, week(teams=("ml", "web")))
    history, usage = scope_demand(plan_scope_for_user(engineer, scope))
    assert set(usage.team) == {"ml"} and history.billed[24:48].tolist() == [0.0] * 24  # web's L4 unseen


def test_the_demo_bill_gives_a_plan_worth_looking_at(tmp_path):
    """make run's demo (seed 3, May-October 2026): demand every hour, an interruptible share, a daytime
    peak, and utilization for some resources (demo.py). Hand figures: the always-on fleet is the
    committed p5 (8 GPUs), three p4d (24) and the L4 (1) = 33 GPUs; the L40S dev box (4 GPUs, 8-12 h on
    weekdays) and the L40S spot box (1 GPU, 12 h) are daily rows, spread over their days; the p5 batch
    (8 GPUs, 14-22 UTC, interruptible) and the Lambda node (8 GPUs, 08-20 UTC) are hourly."""
    import_demo_billing(tmp_path, months=6)
    history, usage = scope_demand(PlanScope(start=MAY, end=dt.date(2026, 11, 1)))
    assert (history.covered_hours, history.total_hours) == (4416, 4416)  # 184 days
    spot_box = 12 / 24  # 12 GPU-hours a day spread over 24 hours
    # 03:00 UTC on a Saturday (2026-05-02): only the always-on fleet and the spot box run
    assert history.billed[24 + 3] == pytest.approx(33 + spot_box)
    # 15:00 UTC that Saturday: plus the batch and the Lambda node
    assert history.billed[24 + 15] == pytest.approx(33 + spot_box + 8 + 8)
    assert history.billed_interruptible[24 + 15] == pytest.approx(spot_box + 8)
    levels = demand_percentiles(history.billed)
    assert levels.p10 < 35 < 45 < levels.peak
    assert history.utilization_coverage > 0 and history.series_used == "billed"
    assert set(usage.pricing_category) == {"committed", "on_demand", "spot"}


def test_every_teams_rows_and_a_team_scope_give_the_hand_series(bill):
    """Every team's rows and a team scope's (the teams in DuckDB's WHERE clause) give the hand series
    above, read after read."""
    everyone, _ = scope_demand(week())
    again, _ = scope_demand(week())
    ml, _ = scope_demand(week(teams=("ml", "web")))
    assert everyone.billed.tolist() == again.billed.tolist() == ml.billed.tolist()
    assert everyone.billed[:60].tolist() == [2.0] * 24 + [1.0] * 36


def usage_records(usage) -> list[tuple]:
    """Every row of `usage` as a tuple of all its columns, in one order (reads may order rows apart)."""
    names = [
        f.name
        for f in dataclasses.fields(usage)
        if f.name not in ("currency", "covered_start_hour", "covered_end_hour")
    ]
    columns = [getattr(usage, name).tolist() for name in names]
    return sorted(zip(*columns, strict=True))


def test_every_teams_read_and_a_team_scope_give_the_same_usage_rows(bill):
    """The plan reads only its columns (history.PLAN_COLUMNS) by DuckDB over the imports' datasets: every
    team's rows and the scope of the teams that hold them (the team in the query) give the same
    UsageRows, every column and the bill's coverage."""
    everyone = plan_usage_rows(week())
    scoped = plan_usage_rows(week(teams=("ml", "web")))
    expected = usage_records(everyone)
    assert len(expected) == 4  # the p5, L4 and L40S rows and the unused commitment; June's p5 is outside
    assert usage_records(scoped) == expected
    assert scoped.covered_start_hour.tolist() == everyone.covered_start_hour.tolist()
    assert scoped.covered_end_hour.tolist() == everyone.covered_end_hour.tolist()
    assert set(everyone.provider) == {"aws"}


def test_the_series_summed_in_sql_is_the_hand_sum_of_the_bills_lines(tmp_path):
    """A plan without utilization samples reads the bill summed by DuckDB (billing/storage/demand_sql.py:
    no bill line reaches Python): a second p5 of team ml over May 1 (3 instance-hours, 165.12 USD) is one
    row with the first, the EUR line is converted on the line, every other line stays its own row."""
    make_catalog()
    FxRate.objects.create(currency="EUR", base="USD", rate="1.10", as_of=MAY, source="test")
    second_p5 = row(
        "2026-05-01T00:00:00Z",
        "2026-05-02T00:00:00Z",
        "165.12",
        "USD",
        "i-p5-b",
        "Standard",
        "3",
        "Compute",
        "USE1-BoxUsage:p5.48xlarge",
        team="ml",
        interruptible="true",
    )
    path = tmp_path / "bill.csv"
    path.write_text(HEADER + "\n" + "\n".join([*ROWS, second_p5]) + "\n")
    assert import_files([path], fmt="focus").errors == []
    summed = plan_usage_rows(week(), by_resource=False)
    found = sorted(
        zip(
            summed.start_hour.tolist(),
            summed.end_hour.tolist(),
            summed.gpu_model.tolist(),
            summed.team.tolist(),
            summed.gpu_hours.tolist(),
            summed.effective_cost_micros.tolist(),
            summed.unused_commitment.tolist(),
            summed.interruptible.tolist(),
            strict=True,
        )
    )
    first = hour_index(MAY)
    assert found == [
        # 48 + 24 GPU-hours, 330.24 + 165.12 USD
        (first, first + 24, "h100-sxm5-80gb", "ml", 72.0, 495_360_000, False, True),
        (first + 24, first + 48, "l4", "web", 24.0, 22_000_000, False, False),  # 20 EUR x 1.10
        (first + 48, first + 60, "l40s", "ml", 12.0, 11_000_000, False, False),
        (first + 72, first + 96, "h100-sxm5-80gb", "ml", 0.0, 100_000_000, True, False),  # unused
    ]
    assert set(summed.resource_id) == {""}
    # the storage line covers the week (its only trace), the GPU lines their own periods
    assert list(zip(summed.covered_start_hour.tolist(), summed.covered_end_hour.tolist(), strict=True)) == [
        (first, first + 24),
        (first, first + 168),
        (first + 24, first + 48),
        (first + 48, first + 60),
        (first + 72, first + 96),
    ]
    # the same rows as the lines read one by one into pandas and summed there (usage_frame.collapsed)
    by_line = collapsed(plan_usage_rows(week(), by_resource=True))
    assert sorted(
        zip(
            by_line.start_hour.tolist(),
            by_line.gpu_hours.tolist(),
            by_line.effective_cost_micros.tolist(),
            strict=True,
        )
    ) == sorted(
        zip(
            summed.start_hour.tolist(),
            summed.gpu_hours.tolist(),
            summed.effective_cost_micros.tolist(),
            strict=True,
        )
    )
