"""Benchmark: the showback and anomaly engines (allocation.py, anomalies.py) on N synthetic spend rows.

    .venv/bin/python benchmarks/finance_bench.py [--rows 1000000] [--repeat 3]

The rows are review_bench.py's (2,000 resources, 8 teams, 180 daily charge periods, utilization samples for
100 resources over three months); a tenth of the teams' tags are blanked to make shared cost. Printed: each
engine's median seconds and its ratio against a baseline measured in the same run on the same frame (one
pandas groupby-sum of the effective cost by team, service and day, the least a daily check must do), so
machine speed cancels out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from review_bench import START, _median_seconds, make_frame, make_utilization  # noqa: E402

from billing.finance import allocation, anomalies  # noqa: E402
from billing.review.engine import categorized, scope_masks  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frame = make_frame(args.rows)
    frame["team"] = np.where(np.arange(len(frame)) % 10 == 0, "", frame["team"])  # shared cost
    frame = categorized(frame)
    utilization = make_utilization()
    usage, unused = scope_masks(frame)
    daily = pd.DataFrame(
        {
            "day": pd.DatetimeIndex(frame["charge_period_start"]).tz_localize(None).floor("D"),
            "team": frame["team"].astype(object).to_numpy(),
            "provider": frame["provider"].astype(object).to_numpy(),
            "service": frame["service_category"].astype(object).to_numpy(),
            "effective_micros": frame["effective_micros"].to_numpy(),
        }
    )[usage | unused]

    def baseline():
        return daily.groupby(["team", "service", "day"])["effective_micros"].sum()

    def showback():
        per_team = allocation.team_usage(frame[usage], frame[unused], utilization)
        return allocation.allocate(per_team, "proportional")

    def anomaly_check():
        return anomalies.detect(daily, check_from=START, check_to=daily["day"].max() + pd.Timedelta(days=1))

    base_s = _median_seconds(baseline, args.repeat)
    showback_s = _median_seconds(showback, args.repeat)
    anomaly_s = _median_seconds(anomaly_check, args.repeat)
    result, found = showback(), anomaly_check()
    print(
        f"rows: {args.rows:,}; utilization samples {len(utilization):,}; series {daily.groupby(['team', 'service']).ngroups}"
    )
    print(f"baseline (pandas groupby-sum by team, service, day): {base_s:.3f} s")
    print(
        f"showback (idle per row from utilization, allocation): {showback_s:.3f} s = {showback_s / base_s:.1f}x the baseline"
    )
    print(
        f"anomaly check (daily series, 28-day rolling median and MAD): {anomaly_s:.3f} s = {anomaly_s / base_s:.1f}x"
    )
    print(
        f"shared pool {result.shared_pool_micros / 1e6:,.2f} USD, idle pool {result.idle_pool_micros / 1e6:,.2f} USD; "
        f"anomalies {len(found)}"
    )


if __name__ == "__main__":
    main()
