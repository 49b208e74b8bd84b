"""Ranking benchmark: latencies, workloads per second, and the ratio against a per-offer Python loop.

    .venv/bin/python benchmarks/ranking_bench.py            # the issue's sizes (10,000 workloads: minutes)
    .venv/bin/python benchmarks/ranking_bench.py --quick    # 1/10 of the workload counts

Runs against a throwaway SQLite database in a temporary folder loaded with the bundled catalog, so it
never touches a real database. Every figure is measured in the same run as its baseline:

1. one workload against the bundled catalog: vectorized vs the loop in tests/reference/ranking_loop.py,
   with a check that both give identical rows;
2. one workload against a synthetic catalog of 100,000 offers (bundled rows resampled, prices
   jittered); the loop runs on a sample and is extrapolated per offer; then the same workload with a
   deadline (the deadline-aware spot plans of the simulated spot rows), warm and with every spot
   simulation recomputed, against the same ranking without one;
3. 10,000 workloads against the bundled catalog (one prepared offer table shared, as a recompute chunk
   does);
4. 10,000 stored workloads recomputed through the Celery task path (the chunk task run in-process,
   as one worker would), then again with unchanged prices (which must add nothing);
5. against SkyPilot's ``Optimizer.optimize`` on the same catalog rows (benchmarks/skypilot_optimize.py,
   run with the Python of SkyPilot's own virtualenv, SKYPILOT_PYTHON or var/skypilot-venv; offline):
   in process with the offer table in memory, per request (POST /api/recommendations/) with the offer
   cache warm, and cold (offer cache dropped: table rebuilt from the database) against SkyPilot's first
   call in a fresh process. Without that virtualenv it says why and prints our figures only.

    python -m venv var/skypilot-venv && var/skypilot-venv/bin/pip install -r requirements-skypilot-bench.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _setup_django(folder: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DEBUG", "1")
    os.environ.pop("REDIS_URL", None)  # tasks run eagerly, in this process
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.local")
    import logging

    import django
    from django.core.management import call_command

    django.setup()
    logging.getLogger("celery").setLevel(logging.WARNING)  # eager tasks would log one line each
    call_command("migrate", verbosity=0)
    from pricing.catalog import catalog_load

    catalog_load()


def _timed(function, repeat: int = 1) -> tuple[float, object]:
    durations, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        durations.append(time.perf_counter() - start)
    return statistics.median(durations), result


def _workload_specs(count: int, seed: int = 7):
    import numpy as np

    from procurement.sizing import parse_workload_spec

    rng = np.random.default_rng(seed)
    presets = ["llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "llama-2-13b", "qwen2.5-14b"]
    tasks = ["qlora", "lora", "full_finetune"]
    documents = [
        {
            "name": f"bench-{index}",
            "task": tasks[index % len(tasks)],
            "model": {"preset": presets[index % len(presets)]},
            "training_tokens": float(rng.integers(1, 50)) * 1e8,
        }
        for index in range(count)
    ]
    return documents, [parse_workload_spec(document) for document in documents]


def _synthetic_offers(frame, size: int, seed: int = 11):
    import numpy as np

    from pricing.selectors import decimals_to_floats

    rng = np.random.default_rng(seed)
    sample = frame.sample(n=size, replace=True, random_state=seed).reset_index(drop=True)
    jitter = rng.uniform(0.8, 1.2, size)
    sample["price_per_hour_usd"] = [
        price * type(price)(repr(float(j)))
        for price, j in zip(sample["price_per_hour_usd"], jitter, strict=True)
    ]
    # offer_frame() converts its Decimal columns to float once per read of the catalog; do the same here
    sample["price_per_hour_usd_float"] = decimals_to_floats(sample["price_per_hour_usd"])
    sample["observation_id"] = np.arange(1, size + 1)
    return sample


def _same_rows(vectorized, loop) -> bool:
    if len(vectorized) != len(loop):
        return False
    return all(
        (float(row["total_cost"]), row["hours"], row["instances"], row["plan"]["name"])
        == (round(total, 2), round(hours, 6), instances, plan)  # rank48: rows show hours to 6 decimals
        for row, (total, hours, _, instances, plan) in zip(vectorized, loop, strict=True)
    )


def bench_one_workload(frame, gpus, spec) -> list[str]:
    from procurement.ranking import RankingOptions, rank_workload
    from tests.reference.ranking_loop import rank_workload_loop

    options = RankingOptions(top=None)
    vector_s, ranking = _timed(lambda: rank_workload(spec, frame, gpus, RankingOptions(top=20)), repeat=9)
    all_rows = rank_workload(spec, frame, gpus, options).results
    loop_s, loop_rows = _timed(lambda: rank_workload_loop(spec, frame, gpus, options))
    return [
        f"1 workload x bundled catalog ({len(frame):,} offers, {ranking.considered:,} configurations): "
        f"{vector_s * 1000:.1f} ms vectorized, {loop_s * 1000:.0f} ms loop, ratio {loop_s / vector_s:.0f}x, "
        f"identical rows: {_same_rows(all_rows, loop_rows)} ({len(loop_rows):,} feasible)"
    ]


def bench_synthetic(frame, gpus, spec, size: int, loop_sample: int) -> list[str]:
    from procurement.ranking import RankingOptions, prepare, rank_workload
    from tests.reference.ranking_loop import rank_workload_loop

    offers = _synthetic_offers(frame, size)
    options = RankingOptions(top=20)
    full_s, ranking = _timed(lambda: rank_workload(spec, offers, gpus, options), repeat=5)
    prepared = prepare(offers, gpus, options)
    ranked_s, _ = _timed(lambda: rank_workload(spec, None, gpus, options, prepared=prepared), repeat=9)
    sample = offers.head(loop_sample)
    loop_s, _ = _timed(lambda: rank_workload_loop(spec, sample, gpus, RankingOptions(top=None)))
    loop_estimate_s = loop_s / loop_sample * size
    check = rank_workload(spec, sample, gpus, RankingOptions(top=None)).results
    same = _same_rows(check, rank_workload_loop(spec, sample, gpus, RankingOptions(top=None)))
    return [
        f"1 workload x synthetic catalog ({size:,} offers, {ranking.considered:,} configurations): "
        f"{full_s * 1000:.1f} ms including table preparation, {ranked_s * 1000:.1f} ms with a prepared table "
        f"(target < 100 ms)",
        f"  loop on {loop_sample:,} offers: {loop_s:.2f} s -> {loop_estimate_s:.0f} s for {size:,} (extrapolated), "
        f"ratio {loop_estimate_s / full_s:.0f}x; identical rows on the sample: {same}",
    ]


def _clear_spot_caches() -> None:
    """Forget the memoized spot simulations, so a timed ranking pays for every one it needs."""
    from procurement.costing.spot_fallback import _reserve_runs
    from procurement.costing.spot_simulation import _sorted_walls
    from procurement.ranking.spot_details import _at_band, _closed_form, _simulation

    for cache in (_reserve_runs, _simulation, _closed_form, _at_band):
        cache.cache_clear()
    _sorted_walls.clear()


def bench_deadline(frame, gpus, spec, size: int) -> list[str]:
    """One workload with a deadline over the synthetic catalog: the deadline filter, the on-demand
    fallback price of each simulated spot row and its deadline-aware spot plan (costing/spot_fallback.py),
    against the same ranking without a deadline in the same run."""
    from dataclasses import replace

    from procurement.ranking import RankingOptions, prepare, rank_workload

    offers = _synthetic_offers(frame, size)
    options = RankingOptions(top=20)
    prepared = prepare(offers, gpus, options)
    cheapest = rank_workload(spec, offers, gpus, options, prepared=prepared).results[0]["hours"]
    deadline = replace(options, deadline_hours=round(1.25 * cheapest, 1))  # binds, yet leaves rows to rank
    plain_s, _ = _timed(lambda: rank_workload(spec, offers, gpus, options, prepared=prepared), repeat=9)
    warm_s, ranking = _timed(lambda: rank_workload(spec, offers, gpus, deadline, prepared=prepared), repeat=9)

    def cold():
        _clear_spot_caches()
        return rank_workload(spec, offers, gpus, deadline, prepared=prepared)

    cold_s, _ = _timed(cold, repeat=5)
    full_s, _ = _timed(lambda: rank_workload(spec, offers, gpus, deadline), repeat=3)
    plans = [
        row["spot"]["deadline_plan"]
        for row in ranking.results
        if (row.get("spot") or {}).get("deadline_plan")
    ]
    available = sum(1 for plan in plans if plan["available"])
    return [
        f"1 workload with a {deadline.deadline_hours:g} h deadline x synthetic catalog ({size:,} offers, "
        f"{available} deadline plans): {warm_s * 1000:.1f} ms with a prepared table, "
        f"{cold_s * 1000:.1f} ms with every spot simulation recomputed, {full_s * 1000:.1f} ms including "
        f"table preparation (target < 100 ms with a prepared table)",
        f"  without the deadline, same run: {plain_s * 1000:.1f} ms; ratio deadline / none "
        f"{warm_s / plain_s:.2f} (cold {cold_s / plain_s:.2f})",
    ]


def bench_many_workloads(frame, gpus, count: int) -> list[str]:
    from procurement.ranking import RankingOptions, prepare, rank_workload

    _, specs = _workload_specs(count)
    options = RankingOptions(top=20)
    prepared = prepare(frame, gpus, options)
    start = time.perf_counter()
    for spec in specs:
        rank_workload(spec, None, gpus, options, prepared=prepared)
    elapsed = time.perf_counter() - start
    return [f"{count:,} workloads x bundled catalog: {elapsed:.1f} s, {count / elapsed:,.0f} workloads/s"]


def bench_recompute(count: int) -> list[str]:
    from procurement.models import Recommendation, Workload
    from procurement.tasks import RECOMPUTE_CHUNK, recompute_recommendations

    documents, specs = _workload_specs(count, seed=3)
    workloads = Workload.objects.bulk_create(
        Workload(name=document["name"], task=document["task"], spec=document) for document in documents
    )
    Recommendation.objects.bulk_create(
        Recommendation(workload=workload, parameters={"top": 20}, results=[], fingerprint="seed")
        for workload in workloads
    )
    ids = [workload.pk for workload in workloads]
    chunks = [ids[i : i + RECOMPUTE_CHUNK] for i in range(0, len(ids), RECOMPUTE_CHUNK)]
    lines = []
    for label in ("prices changed since the last run", "unchanged prices"):
        start = time.perf_counter()
        created = sum(recompute_recommendations.apply(args=(chunk,)).get()["created"] for chunk in chunks)
        elapsed = time.perf_counter() - start
        lines.append(
            f"recompute {count:,} stored workloads via the Celery task ({label}): {elapsed:.1f} s, "
            f"{count / elapsed:,.0f} workloads/s, {created:,} new rows (target < 60 s on one worker)"
        )
    return lines


SKYPILOT_VERSION = "0.14.1"  # pinned: the comparison is against this release
SKYPILOT_CLOUDS = ("aws", "gcp", "lambda", "cudo", "vast", "nebius", "verda")  # skypilot_optimize.CLOUDS
SKYPILOT_PYTHON = Path(os.environ.get("SKYPILOT_PYTHON", ROOT / "var" / "skypilot-venv" / "bin" / "python"))
SKYPILOT_RUNNER = ROOT / "benchmarks" / "skypilot_optimize.py"
SKYPILOT_CATALOG = ROOT / "pricing" / "data" / "skypilot"


def _skypilot(*arguments: str, timeout: int = 900) -> str:
    """The last stdout line of the SkyPilot runner (SkyPilot prints its own lines before it)."""
    import subprocess

    done = subprocess.run(
        [str(SKYPILOT_PYTHON), str(SKYPILOT_RUNNER), "--catalog", str(SKYPILOT_CATALOG), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def skypilot_figures(repeat: int) -> dict | None:
    """SkyPilot's timings on the bundled SkyPilot catalogs, or None (with the reason printed) without it."""
    import json

    if not SKYPILOT_PYTHON.exists():
        print(
            f"SkyPilot comparison skipped: no {SKYPILOT_PYTHON} (python -m venv var/skypilot-venv && "
            f"var/skypilot-venv/bin/pip install skypilot=={SKYPILOT_VERSION}); our figures only"
        )
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        handle.write(_skypilot("--list"))
    try:
        return json.loads(_skypilot("--pairs", handle.name, "--repeat", str(repeat)))
    finally:
        os.unlink(handle.name)


def bench_against_skypilot(spec, repeat: int) -> list[str]:
    """Ours and SkyPilot's, each the median of ``repeat`` calls in the same run, on the same catalog rows:
    the offers of the clouds whose SkyPilot catalogs the project bundles (pricing/data/skypilot)."""
    from procurement import offer_cache
    from procurement.models import Workload
    from procurement.ranking import rank_workload
    from procurement.services.benchmarks import ShapeMeasurements
    from procurement.services.recommendations import (
        RankingContext,
        ranking_options_parse,
        recommendation_compute,
        recommendation_preview,
    )

    parameters = {"top": 20, "providers": list(SKYPILOT_CLOUDS)}
    workload = Workload.objects.create(name="bench-skypilot", task=spec.task, spec=SPEC_DOCUMENT)
    options = ranking_options_parse(parameters)
    recommendation_preview(workload=workload, parameters=parameters)  # warms the offer cache
    context = RankingContext.current()
    rows = context.offers["provider"].isin(SKYPILOT_CLOUDS).sum()
    measurements = ShapeMeasurements({}, {})

    def in_process():
        return recommendation_compute(spec=spec, options=options, context=context, measurements=measurements)

    in_process_s, _ = _timed(in_process, repeat=repeat)
    with_preparation_s, _ = _timed(
        lambda: rank_workload(spec, context.offers, context.gpus, options), repeat=repeat
    )
    request_s = _api_post(workload, parameters, repeat)

    def cold():
        offer_cache.cache_clear()  # this process's offer table and prepared tables are gone
        return recommendation_preview(workload=workload, parameters=parameters)

    cold_s, _ = _timed(cold, repeat=max(3, repeat // 3))
    ours = [
        f"ours on the same rows ({rows:,} offers of {', '.join(SKYPILOT_CLOUDS)}; median of {repeat}): "
        f"in process {in_process_s * 1000:.1f} ms (recommendation_compute, prepared table in memory), "
        f"{with_preparation_s * 1000:.1f} ms preparing the table each call (rank_workload), "
        f"per request {request_s * 1000:.1f} ms (POST /api/recommendations/, offer cache warm), "
        f"cold {cold_s * 1000:.0f} ms (offer cache dropped: table rebuilt from the database)"
    ]
    sky = skypilot_figures(repeat)
    if sky is None:
        return ours
    warm, first = sky["warm_s"], sky["cold_s"]
    return ours + [
        f"SkyPilot {sky['skypilot']} Optimizer.optimize ({sky['candidate_resources']} accelerator:count "
        f"candidates placeable on {', '.join(sky['clouds'])}; best {sky['best']}): warm {warm * 1000:.0f} ms "
        f"(median of {repeat}), cold {first * 1000:.0f} ms (first call in a fresh process; import "
        f"{sky['import_s'] * 1000:.0f} ms not counted); {warm / sky['candidate_resources'] * 1000:.0f} ms per "
        f"candidate. SkyPilot picks the cheapest launchable of the candidates; it checks neither memory fit "
        f"nor time to finish, which our ranking does",
        f"  ratio SkyPilot / ours: in process {warm / in_process_s:.0f}x ({warm / with_preparation_s:.0f}x "
        f"preparing the table each call), per request {warm / request_s:.0f}x "
        f"(target >= 20x), cold {first / cold_s:.1f}x (target >= 2x)",
    ]


def _api_post(workload, parameters: dict, repeat: int) -> float:
    """POST /api/recommendations/ (a preview: nothing stored) through Django's test client as an admin."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_superuser("bench-admin", "bench@example.com", "x")
    client = Client(HTTP_HOST="127.0.0.1")  # a host the development settings allow
    client.force_login(user)

    def post():
        response = client.post(
            "/api/recommendations/",
            {"workload_id": workload.pk, **parameters},
            content_type="application/json",
        )
        assert response.status_code == 200, response.content[:300]

    post()
    return _timed(post, repeat=repeat)[0]


SPEC_DOCUMENT = {
    "name": "bench",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "training_tokens": 1e9,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/10 of the workload counts")
    parser.add_argument("--loop-sample", type=int, default=2000, help="offers the loop runs on for 100k")
    parser.add_argument("--skypilot-only", action="store_true", help="only section 5 (ours against SkyPilot)")
    parser.add_argument("--repeat", type=int, default=9, help="calls per median in section 5")
    arguments = parser.parse_args()
    workloads = 1_000 if arguments.quick else 10_000
    with tempfile.TemporaryDirectory() as folder:
        _setup_django(folder)
        from procurement import selectors
        from procurement.sizing import parse_workload_spec

        frame, gpus = selectors.ranking_offer_frame(), selectors.ranking_gpus()
        spec = parse_workload_spec(SPEC_DOCUMENT)
        if arguments.skypilot_only:
            print("\n".join(bench_against_skypilot(spec, arguments.repeat)))
            return
        lines = bench_one_workload(frame, gpus, spec)
        lines += bench_synthetic(frame, gpus, spec, 100_000, arguments.loop_sample)
        lines += bench_deadline(frame, gpus, spec, 100_000)
        lines += bench_many_workloads(frame, gpus, workloads)
        lines += bench_recompute(workloads)
        lines += bench_against_skypilot(spec, arguments.repeat)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
