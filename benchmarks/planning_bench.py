"""Benchmark: a capacity plan over 1M spend rows with 1,000 growth trials, against the spend review of
the same rows in the same run.

    DATABASE_URL=postgres://.../scratch .venv/bin/python benchmarks/planning_bench.py [--resources 115]
    (--resources 571: 5,001,960 rows, the issue's 5M)

Uses DATABASE_URL when set (give it a throwaway database: it is migrated, the bundled catalog loaded,
and its spend rows deleted), else a temporary SQLite file. The rows: a year (2026, 8,760 hours) of
hourly FOCUS usage rows for 115 p5.48xlarge resources (8 x H100 each) = 1,007,400 rows (the issue's
"a year of hourly rows for 100 resources" is 876,000; 115 make the million), each running a share of
its hour (0.5-1.0), in three pricing categories (on-demand, spot, committed), a quarter tagged
interruptible, 8 teams. Each phase runs in its own process, so its peak memory is its own:

- the spend review of the year (read the rows into the engine frame, price them, the engine): the
  baseline, run twice (the first read builds the month snapshots on PostgreSQL; the second reads them,
  as the plan then does);
- the capacity plan of the same year and rows: read, demand, prices, the plan engine with its
  sensitivity and 1,000 growth trials over 36 months (planning.services.capacity_plans);
- the same plan again under tracemalloc: its peak Python/numpy allocation.

Printed: each time, the plan / review ratio (target: at most 3x) and the peaks (target: under 512 MiB).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from billing_bench import _peak_mib, _setup_django, run  # noqa: E402 (the same phases' plumbing)

HOURS = 8760
START = pd.Timestamp("2026-01-01", tz="UTC")
P5_RATE = 55.04  # p5.48xlarge us-east-1 on-demand USD/h, the bundled catalog (as billing_bench.py)
CATEGORIES = ("Standard", "Dynamic", "Committed")
FACTORS = (1.0, 0.35, 0.6)  # what the bill charges against on-demand: spot ~65% off, committed ~40% off


def make_frame(resources: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    resource = np.repeat(np.arange(resources), HOURS)
    hour = np.tile(np.arange(HOURS), resources)
    starts = START + pd.to_timedelta(hour, unit="h")
    used = np.round(rng.uniform(0.5, 1.0, resource.size), 3)  # the share of the hour the instance ran
    category = resource % 3
    cost = np.round(used * P5_RATE * np.asarray(FACTORS)[category], 6)
    tags = np.array(
        [
            json.dumps({"team": f"team-{i % 8}"} | ({"interruptible": "true"} if i % 4 == 0 else {}))
            for i in range(resources)
        ]
    )
    return pd.DataFrame(
        {
            "BillingAccountId": "111122223333",
            "BillingCurrency": "USD",
            "ChargePeriodStart": starts.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "ChargePeriodEnd": (starts + pd.Timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "ChargeCategory": "Usage",
            "ChargeClass": "",
            "BilledCost": cost,
            "EffectiveCost": cost,
            "ListCost": np.round(used * P5_RATE, 6),
            "PricingCategory": np.asarray(CATEGORIES)[category],
            "ConsumedQuantity": used,
            "ConsumedUnit": "Hours",
            "ProviderName": "AWS",
            "RegionId": "us-east-1",
            "ResourceId": np.char.add("i-plan", resource.astype(str)),
            "ServiceCategory": "Compute",
            "Tags": tags[resource],
            "x_UsageType": "USE1-BoxUsage:p5.48xlarge",
        }
    )


def phase_prepare(path: str, db_path: str, keep: bool, resources: int, queue) -> None:
    _setup_django(db_path)
    from django.core.management import call_command

    from billing.imports.importer import import_files
    from billing.models import BillingImport
    from pricing.models import InstanceType

    call_command("migrate", verbosity=0)
    if not InstanceType.objects.exists():
        call_command("load_catalog", verbosity=0)
    stored = sum(BillingImport.objects.values_list("inserted", flat=True))
    if keep and stored == HOURS * resources:
        queue.put({"seconds": 0.0, "inserted": stored, "errors": []})  # a kept run's rows
        return
    BillingImport.objects.all().delete()
    started = time.perf_counter()
    result = import_files([Path(path)], fmt="focus")
    queue.put(
        {"seconds": time.perf_counter() - started, "inserted": result.inserted, "errors": result.errors}
    )


def phase_review(db_path: str, queue) -> None:
    """The review of the year, twice: read the rows into the engine frame, price them, run the engine."""
    _setup_django(db_path)
    from billing.review import selectors
    from billing.review.engine import spend_review
    from billing.review.service import make_request

    figures = {}
    for label in ("first", "later"):
        request = make_request(start=dt.date(2026, 1, 1), end=dt.date(2027, 1, 1))
        started = time.perf_counter()
        frame = selectors.spend_frame(request)
        review = spend_review(frame, request, prices=selectors.price_context(frame), utilization=None)
        figures[label] = {
            "seconds": time.perf_counter() - started,
            "rows": len(frame),
            "gpu_hours": review["totals"].get("gpu_hours"),
        }
        del frame, review
    queue.put(figures | {"peak_mib": _peak_mib()})


PLAN_BODY = {
    "from": "2026-01-01",
    "to": "2027-01-01",
    "gpu": "h100-sxm5-80gb",
    "providers": ["aws"],
    "horizon_months": 36,
    "growth": 0.02,
    "trials": 1000,
    "seed": 20,
}


def phase_plan(db_path: str, traced: bool, queue) -> None:
    _setup_django(db_path)
    from planning.services.capacity_plans import capacity_plan_preview

    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    result = capacity_plan_preview(body=PLAN_BODY)
    seconds = time.perf_counter() - started
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20 if traced else None
    queue.put(
        {
            "seconds": seconds,
            "traced_peak_mib": traced_peak,
            "peak_mib": _peak_mib(),
            "covered_hours": result["demand"]["covered_hours"],
            "gpu_hours": result["demand"]["gpu_hours"],
            "total_cost": result["total_cost"],
            "p90": result["p90_total_cost"],
            "trials": result["trials"],
            "layers": [(layer["kind"], layer["gpus"]) for layer in result["layers"]],
        }
    )


def phase_stages(db_path: str, queue) -> None:
    """Where the plan's peak RSS comes from: the process's peak after Django, after reading the scope's
    rows as the plan does (a month at a time, summed where no utilization sample needs the resource:
    planning/history.py), and after the whole plan."""
    _setup_django(db_path)
    from planning.history import PlanScope, plan_rows
    from planning.services.capacity_plans import capacity_plan_preview

    peaks = {"django": _peak_mib()}
    scope = PlanScope(start=dt.date(2026, 1, 1), end=dt.date(2027, 1, 1), gpu="h100-sxm5-80gb")
    usage = plan_rows(scope)
    peaks["rows read"] = _peak_mib()
    peaks["usage rows"] = (
        sum(
            getattr(usage, name).nbytes
            for name in usage.__dataclass_fields__
            if isinstance(getattr(usage, name), np.ndarray)
        )
        / 2**20
    )
    del usage
    capacity_plan_preview(body=PLAN_BODY)
    peaks["plan"] = _peak_mib()
    queue.put(peaks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--resources", type=int, default=115, help="p5.48xlarge resources, each 8,760 hourly rows"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the rows (and reuse kept ones) for another run"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="planning-bench-") as folder:
        db_path = os.path.join(folder, "bench.sqlite3")
        path = os.path.join(folder, "focus.csv")
        # written in a child process: a forked phase would otherwise start with this parent's pages resident
        run(lambda queue: (make_frame(args.resources).to_csv(path, index=False), queue.put({})))
        prepared = run(phase_prepare, path, db_path, args.keep, args.resources)
        if prepared["errors"]:
            raise SystemExit(f"import failed: {prepared['errors'][:3]}")
        print(
            f"rows: {prepared['inserted']:,} ({args.resources} resources x {HOURS:,} hours), imported in "
            f"{prepared['seconds']:.1f} s; database {os.environ.get('DATABASE_URL', 'SQLite').split('@')[-1]}"
        )
        review = run(phase_review, db_path)
        plan = run(phase_plan, db_path, False)
        traced = run(phase_plan, db_path, True)
        stages = run(phase_stages, db_path)
        for label in ("first", "later"):
            one = review[label]
            print(f"spend review ({label} read): {one['rows']:,} rows in {one['seconds']:.2f} s")
        print(f"spend review: peak RSS {review['peak_mib']:.0f} MiB")
        print(
            f"capacity plan: {plan['seconds']:.2f} s ({plan['covered_hours']:,} hours, {plan['gpu_hours']:,.0f} "
            f"GPU-hours, {plan['trials']:,} growth trials, 36 months; layers {plan['layers']}; total "
            f"{plan['total_cost']} USD, P90 {plan['p90']} USD)"
        )
        baseline = review["later"]["seconds"]
        ratio = plan["seconds"] / baseline
        print(
            f"plan / review (both reading the month snapshots where there are some): {ratio:.2f}x "
            f"(target <= 3x: {'PASS' if ratio <= 3 else 'MISS'}); against the first review "
            f"{plan['seconds'] / review['first']['seconds']:.2f}x"
        )
        peak = max(plan["peak_mib"], traced["traced_peak_mib"])
        print(
            f"capacity plan: peak RSS {plan['peak_mib']:.0f} MiB (the whole process, Django included), "
            f"tracemalloc peak {traced['traced_peak_mib']:.0f} MiB (target < 512 MiB: "
            f"{'PASS' if peak < 512 else 'MISS'})"
        )
        print("capacity plan, peak RSS by stage: " + ", ".join(f"{k} {v:.0f} MiB" for k, v in stages.items()))
        if not args.keep:
            run(lambda queue: (_setup_django(db_path), _clear(), queue.put({})))


def _clear() -> None:
    from billing.models import BillingImport

    BillingImport.objects.all().delete()


if __name__ == "__main__":
    main()
