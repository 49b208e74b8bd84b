"""The review's frame is summed in DuckDB past the resource (issue 28: what comes back to Python grows
with teams x GPUs x categories x days, not with resources x days), and the review over it is the
review over the bill's lines, every figure the same string.

The demo bill (make_demo_billing, seed 3: resources of several teams a day, unused commitments, a
workload-tagged resource) read three ways: a row per bill line, the grouped frame per resource and
charge period, and the review's frame (review_sql.REVIEW_RESOURCE), which keeps a resource id only
on unused commitment rows and on the rows of a resource with a workload tag.
"""

from __future__ import annotations

import datetime as dt

import pytest

from billing.finance.sections import finance_review
from billing.models import GpuUtilization
from billing.review import selectors
from billing.review.engine import spend_review
from billing.review.service import make_request
from tests.billing.catalog import import_demo_billing

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path):
    import_demo_billing(tmp_path, months=2)
    request = make_request(start=dt.date(2026, 6, 1), end=dt.date(2026, 7, 1))
    start = request.previous[0]
    frames = {
        "line": selectors.dataset_rows(start, request.end),
        "resource": selectors.dataset_rows(start, request.end, grouped=True),
        "review": selectors.dataset_rows(start, request.end, grouped=True, per_resource=False),
    }
    return request, frames


def test_the_review_frame_keeps_a_resource_id_only_where_the_review_reads_one(demo):
    _, frames = demo
    line, review = frames["line"], frames["review"]
    assert len(review) < len(frames["resource"]) <= len(line)
    tagged = set(line.loc[line["workload"] != "", "resource_id"].astype(object))
    unused = set(line.loc[line["commitment_status"] == "unused", "resource_id"].astype(object))
    assert tagged, "the demo bill tags a resource with a workload"
    kept = set(review["resource_id"].astype(object)) - {""}
    assert kept == (tagged | unused) - {""}
    # every line is counted once: the row counts add up to the lines
    assert int(review["row_count"].sum()) == len(line)
    assert int(review["effective_micros"].sum()) == int(line["effective_micros"].sum())


def test_the_review_over_the_summed_frame_is_the_review_over_the_lines(demo):
    request, frames = demo
    reviews = {
        name: spend_review(frame, request, prices=selectors.price_context(frame, request.currency))
        for name, frame in frames.items()
    }
    assert reviews["review"]["savings"], "the demo bill has savings to compare"
    assert reviews["review"] == reviews["line"] == reviews["resource"]
    finance = {name: finance_review(frame, request, None) for name, frame in frames.items()}
    assert finance["review"] == finance["line"]


def test_with_utilization_samples_the_sampled_resources_stay_bill_lines(demo):
    # idle GPU-hours are capped per bill line and idle cost rounded per line: the lines of the resources
    # with samples in the period come back as they are, every other row summed as before
    request, frames = demo
    samples = selectors.utilization_frame(request)
    idle = samples[samples["utilization_pct"] < 10]["resource_id"].value_counts()
    assert len(idle), "the demo imports idle utilization samples"
    # the samples of one resource kept: the other resources' rows are summed
    GpuUtilization.objects.exclude(resource_id=idle.index[0]).delete()
    utilization = selectors.utilization_frame(request)
    frame = selectors.spend_frame(request)
    line = frames["line"]
    assert len(frames["review"]) <= len(frame) < len(line)
    sampled = set(utilization["resource_id"])
    assert sampled <= set(frame["resource_id"].astype(object))
    assert (frame.loc[frame["resource_id"].isin(sampled), "row_count"] == 1).all()
    reviews = [
        spend_review(
            rows, request, prices=selectors.price_context(rows, request.currency), utilization=utilization
        )
        for rows in (frame, line)
    ]
    assert reviews[0]["idle_gpu_hours"] not in (None, "0.00")
    assert reviews[0] == reviews[1]
    assert finance_review(frame, request, utilization) == finance_review(line, request, utilization)


def _sorted(frame):
    frame = frame.astype({name: object for name in frame.columns if str(frame[name].dtype) == "category"})
    return frame.sort_values(list(frame.columns), ignore_index=True)


@pytest.mark.parametrize("by_tag_set", [True, False])
@pytest.mark.parametrize("sampled", [True, False])
def test_the_frame_read_a_file_at_a_time_is_the_frame_read_at_once(demo, monkeypatch, by_tag_set, sampled):
    """peak45 (issue 28, "flat from 1M to 5M"): DuckDB holds something of every row group a query reads
    until it ends, so the grouped frame reads the period's files FILES_A_QUERY at a time
    (duckdb_review._file_parts) and merges their groups in a temp table; the frame is the one query's, row
    for row, read a file a query, with the temp tables merged after every file (MERGED_ROWS 1), the tags read a line or a tag set, and with the lines
    of a sampled resource kept."""
    from billing.storage import duckdb_review

    request, _ = demo
    start = request.previous[0]
    assert len(duckdb_review.ImportDatasets().files(start, request.end)) > 1, "the demo's months are files"
    monkeypatch.setattr(duckdb_review, "TAG_SETS", 10_000 if by_tag_set else 0)
    samples = selectors.utilization_frame(request)
    kept = sorted(set(samples["resource_id"]))[:1] if sampled else []
    assert kept or not sampled

    def frame():
        return selectors.dataset_rows(start, request.end, grouped=True, per_resource=False, sampled=kept)

    monkeypatch.setattr(duckdb_review, "MERGED_ROWS", 1)
    monkeypatch.setattr(duckdb_review, "FILES_A_QUERY", 1)
    by_file = frame()
    monkeypatch.setattr(duckdb_review, "_file_parts", lambda connection, params: [list(params["files"])])
    at_once = frame()
    assert len(by_file) == len(at_once) > 0
    assert list(by_file.columns) == list(at_once.columns)
    assert _sorted(by_file).equals(_sorted(at_once))


class _SameMonthFiles:
    """Five files of January 2026 whose lines fall in the same groups (one team, the same days, types and
    categories), each its own row keys: a month of several part files, as a large import writes."""

    def __init__(self, root):
        import duckdb

        from tests.billing.test_duckdb_review_memory import DATASET

        root.mkdir()
        connection = duckdb.connect()
        connection.execute("SET TimeZone = 'UTC'")
        self.paths = []
        for number in range(5):
            self.paths.append(root / f"part-{number:05d}.parquet")
            sql = DATASET.format(first=number * 10_000, rows=3_000, team="team-1", path=self.paths[-1])
            connection.execute(sql)

    def files(self, start, end):
        return self.paths

    @staticmethod
    def may_repeat_rows(files) -> bool:
        return False


@pytest.mark.parametrize("per_resource", [True, False])
def test_groups_split_across_files_are_summed_again(tmp_path, monkeypatch, per_resource):
    """The same groups in several files of a month (read a file a query, merged after every file) sum to
    the one query's groups: row for row, every amount and row count."""
    from billing.storage import duckdb_review

    monkeypatch.setattr(duckdb_review, "TAG_SETS", 0)  # the tags read a line: the groups span the files

    def frame():
        return duckdb_review.engine_rows(
            _SameMonthFiles(tmp_path / f"files-{len(list(tmp_path.iterdir()))}"),
            dt.date(2026, 1, 1),
            dt.date(2026, 2, 1),
            interruptible_tag="interruptible",
            grouped=True,
            per_resource=per_resource,
        )

    monkeypatch.setattr(duckdb_review, "MERGED_ROWS", 1)
    monkeypatch.setattr(duckdb_review, "FILES_A_QUERY", 1)
    by_file = frame()
    monkeypatch.setattr(duckdb_review, "_file_parts", lambda connection, params: [list(params["files"])])
    at_once = frame()
    assert int(at_once["row_count"].sum()) == 15_000
    assert (at_once["row_count"] > 1).any() or per_resource
    assert _sorted(by_file).equals(_sorted(at_once))
