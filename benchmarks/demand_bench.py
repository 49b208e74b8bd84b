"""Benchmark: the capacity plan's demand side (planning/usage_frame.py + demand.py) against the spend
review engine on the same 1M-row engine frame, no database.

    .venv/bin/python benchmarks/demand_bench.py [--rows 1000000] [--repeat 3] [--trials 1000]

The frame, prices and utilization are review_bench.py's (2,000 resources, daily charge periods, 100
resources sampled hourly). The demand side is what a plan computes before its layers: the frame as
UsageRows, the hourly billed and busy series, the load-duration curve, percentiles, monthly GPU-hours,
gaps, the status quo and `--trials` growth trials over 36 months. Both read the same stored rows the
same way in the app (history.py uses the review's read path), so the read is not timed here; the full
plan over stored rows is benchmarks/planning_bench.py. Printed: median seconds, the ratio against the
review engine measured in the same run, and the demand side's peak traced memory.
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from review_bench import (  # noqa: E402
    END,
    START,
    _median_seconds,
    as_selector_builds,
    make_frame,
    make_prices,
    make_utilization,
)

from billing.review.engine import ReviewRequest, spend_review  # noqa: E402
from planning.engine import demand  # noqa: E402
from planning.usage_frame import usage_rows_from_frame  # noqa: E402


def utilization_rows(frame: pd.DataFrame) -> demand.UtilizationRows:
    return demand.UtilizationRows(
        resource_id=frame["resource_id"].to_numpy(dtype=object),
        hour=pd.DatetimeIndex(frame["hour"]).as_unit("ns").asi8 // (3600 * 10**9),
        utilization=frame["utilization_pct"].to_numpy(dtype=float) / 100,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    frame, prices, utilization = as_selector_builds(make_frame(args.rows)), make_prices(), make_utilization()
    samples = utilization_rows(utilization)
    start_hour, end_hour = demand.hour_index(START), demand.hour_index(END)

    def review():
        return spend_review(
            frame, ReviewRequest(start=START, end=END), prices=prices, utilization=utilization
        )

    def demand_side():
        usage = usage_rows_from_frame(frame)
        history = demand.demand_history(usage, start_hour=start_hour, end_hour=end_hour, utilization=samples)
        series = history.demand
        demand.load_duration_curve(series)
        demand.demand_percentiles(series)
        demand.monthly_gpu_hours(series, start_hour=start_hour)
        demand.data_gaps(history.covered, start_hour=start_hour)
        demand.status_quo(usage, start_hour=start_hour, end_hour=end_hour)
        demand.growth_trials(0.02, horizon_months=36, trials=args.trials, seed=1)
        return history

    review_s = _median_seconds(review, args.repeat)
    demand_s = _median_seconds(demand_side, args.repeat)
    tracemalloc.start()
    history = demand_side()
    peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"rows: {args.rows:,}; utilization samples {len(samples):,}; trials {args.trials:,}")
    print(f"spend review engine (baseline): {review_s:.3f} s")
    print(
        f"demand side: {demand_s:.3f} s = {demand_s / review_s:.2f}x the review; peak traced {peak_mib:.0f} MiB"
    )
    print(
        f"series used: {history.series_used} ({history.series_reason}); covered {history.covered_hours:,} of {history.total_hours:,} h"
    )


if __name__ == "__main__":
    main()
