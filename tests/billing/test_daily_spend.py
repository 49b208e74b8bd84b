"""The daily team x GPU x scope summary (models.DailySpend, issue 28 item 1) and the budget burn and
anomaly series that read it.

Each figure read from the summary is checked against the figure the same code computes from the
dataset files (finance/selectors.daily_spend_frame forced to None: the path used before the summary), to
the cent, on the tests' bills: tests/billing/fixtures (SOURCES.md) and the public samples of
tests/billing/outside/data (SOURCES.md; the list is test_outside_finops_stop42.PUBLIC), plus the
two-month bill of test_finance_surfaces.py whose 2026-11-10 is an anomaly. The summary's own sums are
checked against review_sums (DuckDB over the same files) to the micro-unit.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from billing.finance import anomalies, sections
from billing.finance import selectors as finance_selectors
from billing.finance.sections import BUDGET_SCOPES, anomalies_between, budget_states
from billing.imports.importer import import_files
from billing.imports.scheduled import replace_imports
from billing.models import BillingImport, Budget, DailySpend
from billing.review.service import make_request
from billing.storage.duckdb_review import review_sums
from billing.storage.import_datasets import ImportDatasets
from billing.tasks import check_spend_after_import
from pricing.models import FxRate
from tests.billing.catalog import make_catalog
from tests.billing.outside.test_outside_finops_stop42 import (
    NOT_USD,
    PUBLIC,
    cents,
    import_billing,
    review_json,
    window,
)
from tests.billing.test_finance_surfaces import bill, import_text
from tests.billing.test_import_restate import bill as restate_bill
from tests.billing.test_import_restate import import_billing as import_restate_billing

pytestmark = pytest.mark.django_db
# an illustrative rate (not a market one): each non-USD bill's spend converts into a USD budget
ILLUSTRATIVE_RATE = Decimal("0.731")


def _months() -> list[dt.date]:
    return sorted({day.replace(day=1) for day in DailySpend.objects.values_list("day", flat=True)})


def _following(month: dt.date) -> dt.date:
    return (month + dt.timedelta(days=32)).replace(day=1)


def _budgets_everywhere() -> None:
    """A USD budget of 100 for each team (blank: untagged) with GPU spend in each month (the 80% and 100% thresholds and
    the overrun date all come into play), and a rate into USD for every other currency."""
    for currency in set(DailySpend.objects.exclude(currency="USD").values_list("currency", flat=True)):
        FxRate.objects.create(
            currency=currency, base="USD", rate=ILLUSTRATIVE_RATE, as_of=dt.date(2020, 1, 1), source="test"
        )
    spent = DailySpend.objects.filter(scope__in=BUDGET_SCOPES)  # the untagged ("") too: most samples'
    for team, day in spent.values_list("team", "day").distinct():
        Budget.objects.get_or_create(
            team=team, month=day.replace(day=1), defaults={"amount": Decimal(100), "currency": "USD"}
        )


def _from_files(monkeypatch):
    """The figures as computed before the summary: every read from the dataset files."""
    monkeypatch.setattr(finance_selectors, "daily_spend_frame", lambda *args, **kwargs: None)


def _anomalies(month: dt.date, end: dt.date) -> dict:
    found = anomalies_between(make_request(start=month, end=end))
    return {key: found[key] for key in ("found", "items")}


def _series(months: list[dt.date]) -> list[list[tuple]]:
    """Each month's dense anomaly series (with its baseline days) as (team, provider, service, day,
    effective micro-units) tuples: what the anomaly check judges."""
    found = []
    for month in months:
        request = make_request(start=month, end=_following(month))
        start = month - dt.timedelta(days=anomalies.WINDOW_DAYS)
        dense = anomalies.daily_series(sections._anomaly_series(start, request, None))
        found.append(
            sorted(map(tuple, dense[[*anomalies.SERIES_KEYS, "day", "effective_micros"]].values.tolist()))
        )
    return found


def _old_and_new(monkeypatch, months: list[dt.date]):
    new = budget_states(months), [_anomalies(m, _following(m)) for m in months], _series(months)
    with monkeypatch.context() as patched:
        _from_files(patched)
        old = budget_states(months), [_anomalies(m, _following(m)) for m in months], _series(months)
    return old, new


@pytest.mark.parametrize("folder,name,sql,fields", PUBLIC, ids=[p[1] for p in PUBLIC])
def test_it_gives_the_budget_burn_and_anomalies_of_the_files_to_the_cent(
    folder, name, sql, fields, monkeypatch, django_capture_on_commit_callbacks
):
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):  # the summary is the post-import task's
        import_billing(folder / name)
    _budgets_everywhere()
    months = _months()
    for month in months:  # the summary holds each month (one dataset): the new path is the one taken
        assert finance_selectors.daily_spend_frame(month, _following(month)) is not None
    (old_budgets, old_anomalies, old_series), (new_budgets, new_anomalies, new_series) = _old_and_new(
        monkeypatch, months
    )
    assert new_budgets == old_budgets
    assert new_anomalies == old_anomalies
    assert new_series == old_series


def test_it_finds_the_surfaces_bills_anomaly_and_burn_as_the_files_do(
    tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    # test_finance_surfaces.bill: research 100.00 a day, 400.00 on 2026-11-10 (the anomaly); platform
    # 50.00 a day, 2026-10-01..2026-11-12
    make_catalog()
    import_text(tmp_path, "bill.csv", bill(), django_capture_on_commit_callbacks)
    Budget.objects.create(team="research", month=dt.date(2026, 11, 1), amount=Decimal(2000), currency="USD")
    Budget.objects.create(team="platform", month=dt.date(2026, 10, 1), amount=Decimal(1500), currency="USD")
    (old_budgets, old_anomalies, old_series), (new_budgets, new_anomalies, new_series) = _old_and_new(
        monkeypatch, _months()
    )
    assert new_series == old_series
    assert new_budgets == old_budgets
    assert {b["team"]: b["burn"] for b in new_budgets} == {"platform": "1550.00", "research": "1500.00"}
    assert new_anomalies == old_anomalies
    assert [(a["day"], a["team"]) for a in new_anomalies[1]["items"]] == [("2026-11-10", "research")]


@pytest.mark.parametrize("folder,name,sql,fields", PUBLIC, ids=[p[1] for p in PUBLIC])
def test_its_sums_are_duckdbs_over_the_imports_files_to_the_micro_unit(
    folder, name, sql, fields, django_capture_on_commit_callbacks
):
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        import_billing(folder / name)
    first, last = _months()[0], _following(_months()[-1])
    sums = review_sums(ImportDatasets(), first, last)
    micros = {
        scope: int(
            sum(
                DailySpend.objects.filter(scope__in=scope).values_list("effective_cost", flat=True),
                Decimal(0),
            ).scaleb(6)
        )
        for scope in (
            ("gpu",),
            ("gpu", "gpu_unused_commitment", "unused_commitment", "undetermined", "non_gpu"),
        )
    }
    assert micros[("gpu",)] == sums["gpu"][1]
    assert (
        micros[("gpu", "gpu_unused_commitment", "unused_commitment", "undetermined", "non_gpu")]
        == sums["all_effective"]
    )
    hours = sum(DailySpend.objects.filter(scope="gpu").values_list("gpu_hours", flat=True), Decimal(0))
    assert int(hours.scaleb(6)) == sums["gpu"][3]
    if name not in NOT_USD:  # the SQL undetermined rule is gpu_scope.py's: the review's bucket, to the cent
        review = review_json(*(f"{month}-01" for month in window(name)))
        undetermined = DailySpend.objects.filter(scope="undetermined").values_list(
            "effective_cost", flat=True
        )
        assert cents(sum(undetermined, Decimal(0))) == cents(review["undetermined_cost"])


def test_the_team_scope_reads_only_the_granted_teams_days(tmp_path, django_capture_on_commit_callbacks):
    make_catalog()
    import_text(tmp_path, "bill.csv", bill(), django_capture_on_commit_callbacks)
    frame = finance_selectors.daily_spend_frame(dt.date(2026, 11, 1), dt.date(2026, 12, 1), ("research",))
    assert set(frame["team"]) == {"research"}
    # 11 days of 100.00 and one of 400.00 (test_finance_surfaces.bill)
    assert frame.loc[frame["scope"] == "gpu", "effective_micros"].sum() == 1_500_000_000
    budget = Budget.objects.create(
        team="platform", month=dt.date(2026, 11, 1), amount=Decimal(10), currency="USD"
    )
    assert budget_states([budget.month], ("research",)) == []


def test_a_month_two_datasets_hold_is_read_from_the_files(
    tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    # the same bill under another name and other row order: another dataset of the same rows (each key
    # counted once by the file readers): the summary cannot count a key once, so the files are read
    make_catalog()
    text = bill()
    import_text(tmp_path, "bill.csv", text, django_capture_on_commit_callbacks)
    head, *lines = text.splitlines()
    import_text(
        tmp_path, "again.csv", "\n".join([head, *reversed(lines)]) + "\n", django_capture_on_commit_callbacks
    )
    assert finance_selectors.daily_spend_frame(dt.date(2026, 11, 1), dt.date(2026, 12, 1)) is None
    Budget.objects.create(team="research", month=dt.date(2026, 11, 1), amount=Decimal(2000), currency="USD")
    (state,) = budget_states([dt.date(2026, 11, 1)])
    assert state["burn"] == "1500.00"  # not twice


def test_a_restated_month_loses_its_summary_and_a_deleted_import_all_of_it(
    tmp_path, django_capture_on_commit_callbacks
):
    make_catalog()
    import_text(tmp_path, "bill.csv", bill(), django_capture_on_commit_callbacks)
    billing_import = BillingImport.objects.get()
    replace_imports(BillingImport.objects.filter(pk=billing_import.pk), {dt.date(2026, 11, 1)})
    left = DailySpend.objects.filter(billing_import=billing_import)
    assert {day.replace(day=1) for day in left.values_list("day", flat=True)} == {dt.date(2026, 10, 1)}
    billing_import.delete()
    assert not DailySpend.objects.exists()


def test_the_backfill_writes_the_same_rows_and_a_second_run_changes_nothing(
    tmp_path, django_capture_on_commit_callbacks
):
    make_catalog()
    import_text(tmp_path, "bill.csv", bill(), django_capture_on_commit_callbacks)
    fields = ["day", "team", "gpu", "scope", "currency", "effective_cost", "billed_cost", "gpu_hours", "rows"]
    written = list(DailySpend.objects.order_by("pk").values_list(*fields))
    DailySpend.objects.all().delete()
    out = StringIO()
    call_command("daily_spend_backfill", stdout=out)
    assert "for 1 import(s)" in out.getvalue()
    assert sorted(DailySpend.objects.values_list(*fields)) == sorted(written)
    call_command("daily_spend_backfill", stdout=out)
    assert "0 rows written for 0 import(s)" in out.getvalue()
    assert sorted(DailySpend.objects.values_list(*fields)) == sorted(written)


def test_an_import_is_read_from_the_files_until_its_summary_is_written(tmp_path):
    # the summary is written by the post-import task after the commit (billing.tasks): an import whose
    # task has not run (here: its on-commit callback never fires) leaves the month to the files, with the
    # same burn
    make_catalog()
    path = tmp_path / "bill.csv"
    path.write_text(bill())
    assert not import_files([path], fmt="focus").errors
    assert not DailySpend.objects.exists()
    assert finance_selectors.daily_spend_frame(dt.date(2026, 11, 1), dt.date(2026, 12, 1)) is None
    Budget.objects.create(team="research", month=dt.date(2026, 11, 1), amount=Decimal(2000), currency="USD")
    (state,) = budget_states([dt.date(2026, 11, 1)])
    assert state["burn"] == "1500.00"
    check_spend_after_import(BillingImport.objects.get().pk)
    assert finance_selectors.daily_spend_frame(dt.date(2026, 11, 1), dt.date(2026, 12, 1)) is not None
    (state,) = budget_states([dt.date(2026, 11, 1)])
    assert state["burn"] == "1500.00"


def test_a_review_filtered_by_project_reads_the_files(
    tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    make_catalog()
    import_text(tmp_path, "bill.csv", bill(), django_capture_on_commit_callbacks)
    called = []
    monkeypatch.setattr(finance_selectors, "daily_spend_frame", lambda *a, **k: called.append(a))
    request = make_request(start=dt.date(2026, 11, 1), end=dt.date(2026, 12, 1), project="p")
    sections.anomalies_between(request)
    assert called == []


def test_a_restated_month_reads_the_new_files_summary(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    # test_import_restate.bill: one-hour g6.xlarge lines of team "ml" (one L4: make_catalog), costs as
    # written here; the second file restates May 2026 of account 111 (10.00 + 5.00 -> 7.00 + 1.00)
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        import_restate_billing(
            restate_bill(tmp_path, "a.csv", ("111", "2026-05-01", "10.00"), ("111", "2026-05-02", "5.00"))
        )
    with django_capture_on_commit_callbacks(execute=True):
        import_restate_billing(
            restate_bill(tmp_path, "b.csv", ("111", "2026-05-01", "7.00"), ("111", "2026-05-02", "1.00")),
            "--restate",
        )
    (kept,) = BillingImport.objects.filter(files__isnull=False).distinct()
    assert set(DailySpend.objects.values_list("billing_import_id", flat=True)) == {kept.pk}
    assert finance_selectors.daily_spend_frame(dt.date(2026, 5, 1), dt.date(2026, 6, 1)) is not None
    Budget.objects.create(team="ml", month=dt.date(2026, 5, 1), amount=Decimal(10), currency="USD")
    (old_budgets, _, old_series), (new_budgets, _, new_series) = _old_and_new(
        monkeypatch, [dt.date(2026, 5, 1)]
    )
    assert new_budgets == old_budgets
    assert new_series == old_series
    assert new_budgets[0]["burn"] == "8.00"
