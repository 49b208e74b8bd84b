"""The stored results of one in-process recompute of the recompute benchmark's workloads, as JSON, and its CPU.

    .venv/bin/python benchmarks/recompute_rows_dump.py /tmp/new.json               # 210 workloads
    .venv/bin/python benchmarks/recompute_rows_dump.py /tmp/new.json --profile 40  # and cProfile's top 40
    cmp /tmp/old.json /tmp/new.json                                                  # no output: identical

A speed change to the recompute (issue 26, "Speed") must store every row as it was. The workloads are
``recompute_bench.py``'s (``_workload_specs(count, seed=3)``), most under its ``{"top": 20}``, every
seventh group under one of ``ranking_rows_dump.py``'s option sets (deadlines, another currency,
infeasible rows, spot only, a budget, checkpoint timings). They are stored in a throwaway SQLite database
with the bundled catalog and recomputed by ``recommendations_recompute_chunk`` (the Celery task's call) at
a fixed moment, so price ages and stale texts do not move between two runs; the dump is what the database
then holds (results, prices_used, fingerprint per workload), read back and written with keys in order.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIXED_NOW = dt.datetime(2026, 12, 6, 0, 0, tzinfo=dt.UTC)


def _freeze_now() -> None:
    """Every clock the ranking reads, at FIXED_NOW (the offer context's staleness, the rows' ages)."""
    import pandas as pd
    from django.utils import timezone

    from procurement.services import recommendations

    timezone.now = lambda: FIXED_NOW
    recommendations.rank_workload = functools.partial(
        recommendations.rank_workload, now=pd.Timestamp(FIXED_NOW)
    )


def _parameters(index: int, bench_only: bool) -> dict:
    from benchmarks.ranking_rows_dump import OPTION_SETS

    group = index // 10
    if bench_only:
        return {"top": 20}
    return OPTION_SETS[group % len(OPTION_SETS)] if group % 3 == 2 else {"top": 20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--workloads", type=int, default=210)
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's N costliest functions")
    parser.add_argument("--repeat", type=int, default=1, help="recompute this many times (CPU of each)")
    parser.add_argument("--bench-options", action="store_true", help='every workload under {"top": 20} only')
    arguments = parser.parse_args()
    from benchmarks.ranking_bench import _setup_django, _workload_specs

    with tempfile.TemporaryDirectory() as folder:
        _setup_django(folder)
        _freeze_now()
        from procurement.models import Recommendation, Workload
        from procurement.services.recommendations import RankingContext
        from procurement.services.recompute import recommendations_recompute_chunk

        documents, _ = _workload_specs(arguments.workloads, seed=3)
        workloads = Workload.objects.bulk_create(
            Workload(name=document["name"], task=document["task"], spec=document) for document in documents
        )
        ids = [workload.pk for workload in workloads]
        context = RankingContext.current()
        recommendations_recompute_chunk(ids[:1], context=context)  # warm: imports, the prepared table
        timings = []
        for repeat in range(arguments.repeat):
            Recommendation.objects.all().delete()
            Recommendation.objects.bulk_create(
                Recommendation(
                    workload=workload,
                    parameters=_parameters(i, arguments.bench_options),
                    results=[],
                    fingerprint="seed",
                )
                for i, workload in enumerate(workloads)
            )
            profiler = None
            if arguments.profile and repeat == arguments.repeat - 1:  # the last: memos warm as in a worker
                import cProfile

                profiler = cProfile.Profile(time.process_time)
                profiler.enable()
            start = time.process_time()
            recommendations_recompute_chunk(ids, context=context)
            timings.append(time.process_time() - start)
            if profiler is not None:
                import pstats

                profiler.disable()
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(arguments.profile)
                pstats.Stats(profiler).sort_stats("tottime").print_stats(arguments.profile)
        stored = {
            workload_id: {"results": results, "prices_used": prices_used, "fingerprint": fingerprint}
            for workload_id, results, prices_used, fingerprint in Recommendation.objects.exclude(
                fingerprint="seed"
            )
            .order_by("workload_id")
            .values_list("workload_id", "results", "prices_used", "fingerprint")
        }
    Path(arguments.output).write_text(json.dumps(stored))
    rows = sum(len(entry["results"]) for entry in stored.values())
    per = ", ".join(f"{1000 * t / len(ids):.2f}" for t in timings)
    print(f"{len(stored)} stored rankings, {rows} rows; recompute CPU {per} ms a workload")


if __name__ == "__main__":
    main()
