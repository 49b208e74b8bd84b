"""A recompute chunk stores each batch of new rows on a thread of its own connection while it ranks the
next (procurement/services/written_behind.py, issue 26 "Speed"). The stored rows are those of a chunk
that stores as it goes; a failed batch stops the chunk with its error; inside a transaction (another
connection could not see its rows) the chunk stores on its own connection, as before."""

import threading

import pytest

from procurement.models import Recommendation, Workload
from procurement.services import recompute
from procurement.services.recommendations import RankingContext
from procurement.services.recompute import recommendations_recompute_chunk
from procurement.services.written_behind import written_behind
from tests.procurement.test_recompute_chunk_rankings import DOCUMENTS, NOW, _fresh, _store, _stored


@pytest.fixture
def batches_of_two(monkeypatch):
    monkeypatch.setattr(recompute, "STORE_BATCH", 2)
    monkeypatch.setattr(recompute.timezone, "now", lambda: NOW)


def _storing_threads(monkeypatch, fail_on_batch: int | None = None) -> list[int]:
    threads, real_store = [], recompute._store_recomputed

    def store(changed):
        threads.append(threading.get_ident())
        if len(threads) == fail_on_batch:
            raise RuntimeError("the database went away")
        return real_store(changed)

    monkeypatch.setattr(recompute, "_store_recomputed", store)
    return threads


@pytest.mark.django_db(transaction=True)
def test_batches_are_stored_on_another_thread_as_the_chunk_would_store_them(
    require_postgres, bundled_catalog, batches_of_two, monkeypatch
):
    workloads = _store(DOCUMENTS[:5])
    threads = _storing_threads(monkeypatch)
    context = RankingContext.current()
    summaries = recommendations_recompute_chunk([w.pk for w in workloads], context=context)
    assert [summary["created"] for summary in summaries] == [True] * 5
    assert len(threads) == 3 and threading.get_ident() not in threads  # 2 + 2 + 1, written behind
    for workload in workloads:
        assert _stored(workload) == _fresh(workload, context), workload.name
    assert all(summary["events"] for summary in summaries)  # the first answer of each: a change event


@pytest.mark.django_db(transaction=True)
def test_a_failed_batch_stops_the_chunk_with_its_error(
    require_postgres, bundled_catalog, batches_of_two, monkeypatch
):
    workloads = _store(DOCUMENTS[:5])
    threads = _storing_threads(monkeypatch, fail_on_batch=2)
    with pytest.raises(RuntimeError, match="went away"):
        recommendations_recompute_chunk([w.pk for w in workloads], context=RankingContext.current())
    assert len(threads) == 2  # the third batch is never written
    new = Recommendation.objects.exclude(fingerprint="seed")
    assert sorted(new.values_list("workload__name", flat=True)) == ["copy-a", "copy-b"]


def test_inside_a_transaction_the_chunk_stores_on_its_own_connection(
    bundled_catalog, batches_of_two, monkeypatch
):
    workloads = _store(DOCUMENTS[:3])
    threads = _storing_threads(monkeypatch)
    recommendations_recompute_chunk([w.pk for w in workloads], context=RankingContext.current())
    assert threads == [threading.get_ident()] * 2
    assert Workload.objects.count() == Recommendation.objects.exclude(fingerprint="seed").count() == 3


@pytest.mark.django_db(transaction=True)
def test_an_error_of_the_caller_waits_for_the_batch_in_flight(require_postgres):
    written, started = [], threading.Event()

    def slow_write(batch):
        started.set()
        threading.Event().wait(0.2)
        written.append(batch)

    with pytest.raises(ValueError), written_behind(slow_write) as hand_over:
        hand_over("first")
        started.wait(5)
        raise ValueError("ranking failed")
    assert written == ["first"]
