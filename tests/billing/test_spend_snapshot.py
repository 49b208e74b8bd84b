"""The review's month snapshots (spend_snapshot.py) give exactly the frame the rows give, are read
instead of the rows while nothing was imported since, and are rebuilt after any import or deletion."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from django.db import connection

from billing.imports.importer import import_files
from billing.imports.records import tag_mapping
from billing.models import BillingImport, SpendRecord, SpendSnapshot
from billing.review import selectors
from billing.review.service import make_request
from billing.storage import import_datasets, spend_snapshot
from billing.storage.charge_periods import starts_with_rows
from tests.billing.catalog import import_demo_billing
from tests.billing.test_spend_columns import assert_same_rows

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="snapshots are read on PostgreSQL only"),
]
HEADER = (
    "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,"
    "RegionId,ResourceId,PricingCategory,ConsumedQuantity,ConsumedUnit,ServiceCategory,x_UsageType,Tags"
)


@pytest.fixture(autouse=True)
def rows_without_datasets(monkeypatch):
    """Month snapshots are how the review reads imports that have no Parquet dataset (made before
    datasets existed, billing/storage/import_datasets.covers_stored_rows): these tests read that way."""
    monkeypatch.setattr(import_datasets, "covers_stored_rows", lambda: False)


def row_frame(start: dt.date, end: dt.date) -> pd.DataFrame:
    """The same rows read straight from the spend table (the read before snapshots)."""
    where = "WHERE r.charge_period_start >= %s AND r.charge_period_start < %s"
    bounds = [dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (start, end)]
    return selectors.copied_spend_frame(where, bounds)


def review_frame(start: dt.date, end: dt.date) -> pd.DataFrame:
    return selectors.spend_frame(make_request(start=start, end=end))


def refuse_row_reads(monkeypatch) -> None:
    """Fail the test if the spend rows are read for a snapshot from now on."""

    def refuse(*args, **kwargs):
        raise AssertionError("the spend rows were read; a snapshot was expected")

    monkeypatch.setattr(spend_snapshot, "spend_table", refuse)


@pytest.fixture
def no_row_reads(monkeypatch):
    refuse_row_reads(monkeypatch)


def one_row_file(tmp_path, name: str, day: str, cost: str, resource: str = "i-new"):
    path = tmp_path / name
    path.write_text(
        HEADER
        + f"\n{day}T00:00:00Z,{day}T01:00:00Z,Usage,{cost},{cost},USD,AWS,us-east-1,{resource},Standard,"
        '1,Hours,Compute,USE1-BoxUsage:g6.xlarge,"{""team"": ""ml""}"\n'
    )
    return path


def test_the_snapshot_frame_is_the_row_frame_and_is_read_instead_of_the_rows(tmp_path, monkeypatch):
    import_demo_billing(tmp_path, months=3)  # May, June, July 2026: 2586 rows (930 daily + 18 hourly a day)
    # August to November: the review's months; May to August: the previous period's (trends)
    first = review_frame(dt.date(2026, 8, 1), dt.date(2026, 11, 1))
    expected = row_frame(dt.date(2026, 5, 1), dt.date(2026, 11, 1))
    assert len(expected) == 2586
    assert_same_rows(first, expected)
    stored = dict(SpendSnapshot.objects.values_list("month", "rows"))
    assert sum(stored.values()) == 2586
    assert set(stored) == {dt.date(2026, month, 1) for month in range(5, 11)}  # empty months stored too
    assert stored[dt.date(2026, 8, 1)] == 0
    refuse_row_reads(monkeypatch)
    assert_same_rows(review_frame(dt.date(2026, 8, 1), dt.date(2026, 11, 1)), expected)


def test_a_period_that_does_not_start_on_the_first_takes_only_its_days(tmp_path):
    import_demo_billing(tmp_path, months=3)
    review_frame(dt.date(2026, 5, 1), dt.date(2026, 8, 1))  # builds May to July (and the months before)
    # 2026-06-10 .. 2026-07-05, and the previous period of the same length before it
    request = make_request(start=dt.date(2026, 6, 10), end=dt.date(2026, 7, 5))
    start, _ = request.previous
    assert start == dt.date(2026, 5, 16)
    frame = selectors.spend_frame(request)
    expected = row_frame(start, dt.date(2026, 7, 5))
    assert 0 < len(frame) < 2586
    assert_same_rows(frame, expected)


def test_a_column_subset_is_the_whole_frames_columns_by_snapshot_and_by_copy(tmp_path, monkeypatch):
    """A capacity plan reads a dozen columns (planning/history.py PLAN_COLUMNS): from the stored
    snapshots (only those columns decompressed; a month cut by the period filtered, whole ones not)
    and through COPY they are the whole frame's same columns, values, categories and types."""
    import_demo_billing(tmp_path, months=3)
    columns = ["team", "charge_period_start", "gpu", "effective_micros", "interruptible", "provider"]
    start, end = dt.date(2026, 5, 20), dt.date(2026, 8, 1)  # May cut, June and July whole
    expected = row_frame(start, end)[columns]
    tag = tag_mapping().interruptible
    built = spend_snapshot.snapshot_spend_frame(start, end, interruptible_tag=tag, columns=columns)
    refuse_row_reads(monkeypatch)
    stored = spend_snapshot.snapshot_spend_frame(start, end, interruptible_tag=tag, columns=columns)
    where = "WHERE r.charge_period_start >= %s AND r.charge_period_start < %s"
    bounds = [dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (start, end)]
    copied = selectors.copied_spend_frame(where, bounds, columns)
    assert list(stored.columns) == list(copied.columns) == columns
    assert 0 < len(expected) < 2586
    for frame in (built, stored, copied):
        assert_same_rows(frame, expected)


def test_an_import_makes_every_snapshot_stale_and_the_next_review_reads_the_new_rows(tmp_path):
    import_demo_billing(tmp_path, months=3)
    before = review_frame(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    import_files([one_row_file(tmp_path, "late.csv", "2026-05-20", "7.250000")], fmt="focus")
    after = review_frame(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    assert len(after) == len(before) + 1
    assert after["effective_micros"].sum() == before["effective_micros"].sum() + 7_250_000
    assert_same_rows(after, row_frame(dt.date(2026, 2, 1), dt.date(2026, 8, 1)))
    keys = set(SpendSnapshot.objects.filter(month=dt.date(2026, 5, 1)).values_list("data_key", flat=True))
    assert keys == {f"{spend_snapshot.SCHEME}:interruptible:{spend_snapshot.spend_rows_key()}"}


def test_deleting_an_import_takes_its_rows_out_of_the_next_review(tmp_path):
    import_demo_billing(tmp_path, months=3)
    extra = import_files([one_row_file(tmp_path, "extra.csv", "2026-06-02", "3.000000")], fmt="focus")
    with_extra = review_frame(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    BillingImport.objects.filter(pk__in=extra.imports).delete()  # the newest import: the largest id goes
    without = review_frame(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    assert len(without) == len(with_extra) - 1
    assert "i-new" not in set(without["resource_id"].astype(str))


def test_a_snapshot_of_another_interruptible_tag_is_not_used(tmp_path, settings):
    import_demo_billing(tmp_path, months=1)
    default = review_frame(dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert default["interruptible"].any()  # the demo bill tags some resources interruptible=true
    settings.BILLING_TAG_MAPPING = {"interruptible": "no-such-tag"}
    other = review_frame(dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert not other["interruptible"].any()


def test_a_granted_engineer_review_reads_its_teams_rows_in_the_database(tmp_path, no_row_reads):
    import_demo_billing(tmp_path, months=1)
    teams = sorted(set(row_frame(dt.date(2026, 5, 1), dt.date(2026, 6, 1))["team"].astype(str)) - {""})
    request = make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 6, 1))
    granted = request.__class__(**{**request.__dict__, "allowed_teams": (teams[0],)})
    frame = selectors.spend_frame(granted)  # no_row_reads: a snapshot read would fail here
    assert set(frame["team"].astype(str)) == {teams[0]}
    assert not SpendSnapshot.objects.exists()  # other teams' rows never left the database


def test_two_reviews_building_the_same_month_keep_one_snapshot(tmp_path):
    import_demo_billing(tmp_path, months=1)
    key = f"{spend_snapshot.SCHEME}:interruptible:{spend_snapshot.spend_rows_key()}"
    spend_snapshot.build_months([dt.date(2026, 5, 1)], key, "interruptible")
    spend_snapshot.build_months([dt.date(2026, 5, 1)], key, "interruptible")  # as a second worker would
    assert SpendSnapshot.objects.count() == 1
    may = SpendRecord.objects.filter(
        charge_period_start__gte=dt.datetime(2026, 5, 1, tzinfo=dt.UTC),
        charge_period_start__lt=dt.datetime(2026, 6, 1, tzinfo=dt.UTC),
    )
    assert (
        spend_snapshot.stored_months([dt.date(2026, 5, 1)], key)[dt.date(2026, 5, 1)].num_rows == may.count()
    )
    # every row make_demo_billing wrote for May: 334 daily rows + 31 days x 18 hourly ones
    assert may.count() == 892


def test_months_of_a_period():
    assert spend_snapshot.month_starts(dt.date(2025, 12, 15), dt.date(2026, 2, 1)) == [
        dt.date(2025, 12, 1),
        dt.date(2026, 1, 1),
    ]
    assert spend_snapshot.month_starts(dt.date(2026, 1, 31), dt.date(2026, 3, 2)) == [
        dt.date(2026, 1, 1),
        dt.date(2026, 2, 1),
        dt.date(2026, 3, 1),
    ]
    assert spend_snapshot.month_starts(dt.date(2026, 1, 1), dt.date(2026, 1, 1)) == []


def test_the_admin_cannot_edit_add_or_delete_single_spend_rows(tmp_path, client_as):
    import_demo_billing(tmp_path, months=1)
    record = SpendRecord.objects.first()
    admin = client_as("admin")
    assert admin.get(f"/admin/billing/spendrecord/{record.pk}/change/").status_code == 200  # view only
    assert admin.get("/admin/billing/spendrecord/add/").status_code == 403
    response = admin.post(f"/admin/billing/spendrecord/{record.pk}/change/", {"team": "forged"})
    assert response.status_code == 403
    assert admin.post(f"/admin/billing/spendrecord/{record.pk}/delete/", {"post": "yes"}).status_code == 403
    admin.post(
        "/admin/billing/spendrecord/",
        {"action": "delete_selected", "_selected_action": [record.pk], "post": "yes"},
    )
    record.refresh_from_db()  # still there: no bulk delete action either
    assert record.team != "forged"
    # a whole import is still deleted with its rows (the admin checks this model's delete permission)
    imported = record.billing_import_id
    assert admin.post(f"/admin/billing/billingimport/{imported}/delete/", {"post": "yes"}).status_code == 302
    assert not SpendRecord.objects.filter(billing_import_id=imported).exists()


def run_the_rebuild_here(monkeypatch) -> None:
    """The rebuild task runs where the import queues it (apply), as a worker would run it."""
    from billing import tasks

    task = tasks.refresh_spend_snapshots
    monkeypatch.setattr(task, "delay", lambda: task.apply().get())
    # the anomaly and budget re-check after an import reads (and builds) months of its own: not this test's
    # subject (tests/billing/test_finance_surfaces.py)
    from billing.storage import store

    monkeypatch.setattr(store, "check_spend_after_commit", lambda import_id: None)


def test_an_import_queues_the_rebuild_of_the_months_reviews_read(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    import_demo_billing(tmp_path, months=1)
    run_the_rebuild_here(monkeypatch)
    review_frame(dt.date(2026, 5, 1), dt.date(2026, 6, 1))  # May, and 2026-03-31 to May (the previous period)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        import_files([one_row_file(tmp_path, "late.csv", "2026-05-20", "7.250000")], fmt="focus")
    assert len(callbacks) == 1
    current = f"{spend_snapshot.SCHEME}:interruptible:{spend_snapshot.spend_rows_key()}"
    assert dict(SpendSnapshot.objects.values_list("month", "data_key")) == {
        dt.date(2026, 3, 1): current,
        dt.date(2026, 4, 1): current,
        dt.date(2026, 5, 1): current,
    }
    refuse_row_reads(monkeypatch)  # the review reads the rebuilt snapshots, with the new row
    assert "i-new" in set(review_frame(dt.date(2026, 5, 1), dt.date(2026, 6, 1))["resource_id"].astype(str))


def test_the_rebuild_builds_the_months_of_new_rows_that_no_review_has_read(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    """After the worker has run, the first review of a month nobody reviewed before reads snapshots."""
    run_the_rebuild_here(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        import_demo_billing(tmp_path, months=1)  # May 2026
    assert starts_with_rows("month") == [dt.date(2026, 5, 1)]
    with django_capture_on_commit_callbacks(execute=True):
        import_files([one_row_file(tmp_path, "august.csv", "2026-08-31", "7.250000")], fmt="focus")
    assert starts_with_rows("month") == [dt.date(2026, 5, 1), dt.date(2026, 8, 1)]
    current = spend_snapshot.current_data_key("interruptible")
    assert dict(SpendSnapshot.objects.values_list("month", "data_key")) == {
        dt.date(2026, 5, 1): current,
        dt.date(2026, 8, 1): current,
    }
    built, build = [], spend_snapshot.build_months
    monkeypatch.setattr(
        spend_snapshot, "build_months", lambda months, *a: built.extend(months) or build(months, *a)
    )
    august = review_frame(dt.date(2026, 8, 1), dt.date(2026, 9, 1))
    assert list(august["resource_id"].astype(str)) == ["i-new"]
    assert built == [dt.date(2026, 7, 1)]  # only July, the previous period's month, empty, is read
    assert spend_snapshot.refresh_stale_snapshots() == []  # nothing stale: a redelivery builds nothing


def test_an_unreachable_broker_leaves_the_import_standing(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from billing import tasks

    def unreachable():
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(tasks.refresh_spend_snapshots, "delay", unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        import_demo_billing(tmp_path, months=1)
    assert SpendRecord.objects.count() == 892


def test_a_month_too_large_to_store_is_read_from_its_rows_and_its_old_snapshot_goes(tmp_path, monkeypatch):
    import_demo_billing(tmp_path, months=2)  # May and June
    review_frame(dt.date(2026, 5, 1), dt.date(2026, 7, 1))
    assert set(SpendSnapshot.objects.values_list("month", flat=True)) >= {
        dt.date(2026, 5, 1),
        dt.date(2026, 6, 1),
    }
    import_files([one_row_file(tmp_path, "late.csv", "2026-06-20", "1.000000")], fmt="focus")  # all stale
    monkeypatch.setattr(spend_snapshot, "MAX_SNAPSHOT_BYTES", 1)  # as if each month held 8 million rows
    frame = review_frame(dt.date(2026, 5, 1), dt.date(2026, 7, 1))
    assert_same_rows(frame, row_frame(dt.date(2026, 3, 1), dt.date(2026, 7, 1)))
    assert not SpendSnapshot.objects.exists()  # nothing stored, and the stale ones are gone


def test_months_apart_are_read_as_separate_runs(tmp_path, monkeypatch):
    import_demo_billing(tmp_path, months=3)  # May, June, July
    key = f"{spend_snapshot.SCHEME}:interruptible:{spend_snapshot.spend_rows_key()}"
    reads = []
    original = spend_snapshot.spend_table

    def counting(cursor, where, params, tag):
        reads.append(tuple(bound.date() for bound in params))
        return original(cursor, where, params, tag)

    monkeypatch.setattr(spend_snapshot, "spend_table", counting)
    built = spend_snapshot.build_months([dt.date(2026, 7, 1), dt.date(2026, 5, 1)], key, "interruptible")
    assert reads == [(dt.date(2026, 5, 1), dt.date(2026, 6, 1)), (dt.date(2026, 7, 1), dt.date(2026, 8, 1))]
    assert sorted(built) == [dt.date(2026, 5, 1), dt.date(2026, 7, 1)]  # June, between them, is not read


def test_the_loose_scan_lists_each_day_and_month_with_rows_once(tmp_path):
    assert starts_with_rows("day") == starts_with_rows("month") == []
    for name, day in (("a.csv", "2026-05-31"), ("b.csv", "2026-06-01"), ("c.csv", "2026-06-01")):
        import_files([one_row_file(tmp_path, name, day, "1.000000", resource=name)], fmt="focus")
    assert starts_with_rows("day") == [dt.date(2026, 5, 31), dt.date(2026, 6, 1)]
    assert starts_with_rows("month") == [dt.date(2026, 5, 1), dt.date(2026, 6, 1)]
    with pytest.raises(ValueError, match="unit must be day or month"):
        starts_with_rows("week; DROP TABLE x")
