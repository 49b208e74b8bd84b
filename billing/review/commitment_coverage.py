"""Commitment utilization, GPU coverage and expiring commitments: the review's `commitments` section.

Definitions (docs/billing.md, "Utilization, coverage, expiring commitments"), as AWS reports them and
the CUDOS dashboards (AWS Cloud Intelligence Dashboards, "RI/SP Summary") chart them:
- utilization = used commitment / total commitment, where total = used + unused. AWS Cost Explorer's
  SavingsPlansUtilization: "UtilizationPercentage: the amount of UsedCommitment divided by the
  TotalCommitment" (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/
  API_SavingsPlansUtilization.html). Here in money: each used row's EffectiveCost is the commitment
  it consumed, each unused row's the commitment wasted, so for a reservation (one rate per hour) it is
  also AWS's hour-based RI utilization (API_ReservationUtilizationGroup: UtilizationPercentage).
- coverage = GPU-hours under a commitment / all GPU-hours: AWS's CoverageHours, "CoverageHoursPercentage:
  the percentage of instance hours that a reservation covered" (API_CoverageHours.html), on GPU usage
  rows only. Under a commitment: PricingCategory Committed (FOCUS sets it on every Used row; CUR's
  DiscountedUsage and SavingsPlanCoveredUsage lines are read so). A commitment's own GPU-hours are
  those of its Used rows.
- by team: coverage of the team's own GPU-hours; utilization of the commitment rows tagged with the
  team (used rows are the consumer's, unused rows carry the tags of the commitment's own lines).
- expiring: commitments of the period whose term ends within EXPIRING_DAYS after the review's `to`
  (so a review is the same whatever day it is read); commitments whose export carries no end date are
  listed as such (`end_unknown`), never guessed.
Input rows are the review period's, in the review currency, after commitment_attribution.attributed.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.review.commitment_attribution import TO_GPU, UNATTRIBUTED, gpu_scoped_commitments
from billing.storage import review_sql
from billing.storage.frame_sql import FrameSql

EXPIRING_DAYS = 90
MAX_LISTED = (
    200  # commitments listed per table: an account holds tens, a bound keeps a hostile file's answer small
)
UNTAGGED = "(untagged)"
NAT = np.iinfo(np.int64).min  # NaT as int64 nanoseconds


def _pct(part: int, whole: int) -> str | None:
    if whole <= 0:
        return None
    return str((Decimal(int(part)) * 100 / Decimal(int(whole))).quantize(Decimal("0.1")))


SUMS = ["used", "unused", "to_gpu", "unattributed", "used_gpu", "gpu_hours", "covered_gpu_hours"]


def commitments_section(
    commitment_rows: pd.DataFrame,
    cube: pd.DataFrame,
    *,
    gpu_flags: np.ndarray,
    as_of: dt.date,
    money,
    hours,
) -> dict:
    """The `commitments` JSON of the review. `commitment_rows`: the period's rows with a commitment id or
    status, in the review currency, after attribution, and `gpu_flags` which of them are GPU usage;
    `cube`: the period's GPU sums by month, team and pricing category (review_sql.COVERAGE_HOURS), for coverage.
    `money` and `hours` format micro-units as the review does."""
    commitments = _commitment_sums(commitment_rows, gpu_flags)
    coverage = _coverage_sums(cube)
    with FrameSql() as sql:  # review_sql's sums of the section, in DuckDB
        sql.register("commitments", commitments).register("coverage", coverage)
        costs, hours_ = sql.rows(review_sql.COMMITMENT_TOTALS)[0], sql.rows(review_sql.COVERAGE_TOTALS)[0]
        total = dict(zip(SUMS, [int(value or 0) for value in (*costs, *hours_)], strict=True))
        by_key = {
            key: [
                (str(label), dict(zip(SUMS, map(int, values), strict=True)))
                for label, *values in sql.rows(review_sql.COMMITMENTS_BY.format(key=key))
            ]
            for key in ("month", "team")
        }
        per_id = [
            (str(name), dict(zip([*SUMS[:5], "own_gpu_hours"], map(int, values), strict=True)))
            for name, *values in sql.rows(review_sql.COMMITMENTS_BY_ID)
        ]

    def entry(sums) -> dict:
        committed = int(sums["used"] + sums["unused"])
        return {
            "used_cost": money(sums["used"]),
            "unused_cost": money(sums["unused"]),
            "committed_cost": money(committed),
            "utilization_pct": _pct(sums["used"], committed),
            "gpu_hours": hours(sums["gpu_hours"]),
            "committed_gpu_hours": hours(sums["covered_gpu_hours"]),
            "coverage_pct": _pct(sums["covered_gpu_hours"], sums["gpu_hours"]),
        }

    by_month = [{"month": m} | entry(s) for m, s in by_key["month"]]
    by_team = [{"team": t} | entry(s) for t, s in by_key["team"]]
    listed = _by_commitment(commitment_rows, commitments, per_id, entry, money, total["gpu_hours"])
    return {
        "totals": entry(total)
        | {
            "gpu_attributed_unused_cost": money(total["to_gpu"]),
            "unattributed_commitment_cost": money(total["unattributed"]),
        },
        "by_commitment": listed[:MAX_LISTED],
        "by_month": by_month,
        "by_team": by_team[:MAX_LISTED],
        "expiring": _expiring(listed, as_of),
        "definitions": {
            "utilization": "used commitment / (used + unused commitment), in effective cost (AWS "
            "SavingsPlansUtilization.UtilizationPercentage)",
            "coverage": "GPU-hours under a commitment / all GPU-hours (AWS CoverageHours)",
            "attribution": "unused commitment is GPU spend when the commitment is scoped to GPU capacity, "
            "else in proportion to its used cost on GPU rows; the rest is unattributed_commitment_cost",
        },
    }


def _commitment_sums(rows: pd.DataFrame, gpu_flags: np.ndarray) -> pd.DataFrame:
    """Per commitment row: its used, unused (to GPU, unattributed) and used-on-GPU cost, and the GPU-hours
    it covered (a few rows: plain columns)."""
    status = rows["commitment_status"].astype(object).to_numpy()
    ids = rows["commitment_discount_id"].astype(object).to_numpy()
    used, unused, named = status == "used", status == "unused", ids != ""
    effective = rows["effective_micros"].to_numpy(np.int64)
    covered = np.where(gpu_flags & used, rows["gpu_hours_micros"].to_numpy(np.int64), 0)
    return pd.DataFrame(
        {
            "id": ids,
            "month": _months(rows),
            "team": _teams(rows),
            "used": np.where(used & named, effective, 0),
            "unused": np.where(unused & named, effective, 0),
            "to_gpu": np.where(unused & rows[TO_GPU].to_numpy(bool), effective, 0),
            "unattributed": np.where(unused & rows[UNATTRIBUTED].to_numpy(bool), effective, 0),
            "used_gpu": np.where(used & gpu_flags, effective, 0),
            "own_gpu_hours": covered,
        }
    )


def _coverage_sums(cube: pd.DataFrame) -> pd.DataFrame:
    """GPU-hours by month and team (review_sql.COVERAGE_HOURS's combinations), and those priced under a commitment."""
    gpu_hours = cube["gpu_hours_micros"].to_numpy(np.int64)
    committed = (cube["pricing_category"] == "committed").to_numpy(bool)
    return pd.DataFrame(
        {
            "month": cube["month"].array,
            "team": cube["team"].array,
            "gpu_hours": gpu_hours,
            "covered_gpu_hours": np.where(committed, gpu_hours, 0),
        }
    )


def _months(rows: pd.DataFrame) -> pd.Categorical:
    """Each row's month as a category (labels formatted once per month, not once per row)."""
    starts = pd.DatetimeIndex(rows["charge_period_start"]).as_unit("ns").asi8.astype("datetime64[ns]")
    codes, months = pd.factorize(starts.astype("datetime64[M]").astype(np.int64), sort=True)
    return pd.Categorical.from_codes(
        codes, categories=[f"{1970 + m // 12:04d}-{m % 12 + 1:02d}" for m in months]
    )


def _teams(rows: pd.DataFrame) -> pd.Categorical:
    teams = rows["team"] if rows["team"].dtype == "category" else rows["team"].astype("category")
    if "" in teams.cat.categories and UNTAGGED not in teams.cat.categories:
        teams = teams.cat.rename_categories({"": UNTAGGED})
    return teams.array


def _by_commitment(
    rows: pd.DataFrame, sums: pd.DataFrame, per_id: list[tuple[str, dict]], entry, money, all_gpu_hours: int
) -> list[dict]:
    """Each commitment's entry (`per_id`: its sums, review_sql.COMMITMENTS_BY_ID, in id order); its GPU-hours
    are those it covered, its coverage their share of all the period's GPU-hours."""
    named = sums["id"].to_numpy() != ""
    if not named.any():
        return []
    with_id = rows.iloc[np.flatnonzero(named)]
    ids = sums["id"].to_numpy()[named]
    scoped = gpu_scoped_commitments(with_id)
    unused = with_id["commitment_status"].astype(object).to_numpy() == "unused"
    has_gpu = with_id["gpu"].astype(object).to_numpy() != ""
    typed = with_id["instance_type"].astype(object).to_numpy() != ""
    gpu_typed, non_gpu_typed = set(ids[unused & has_gpu]), set(ids[unused & ~has_gpu & typed])
    facts = _facts(ids, with_id)
    listed = []
    for commitment, s in per_id:
        fact = facts[commitment]
        if commitment in scoped or commitment in gpu_typed:
            attribution = "gpu capacity"
        elif commitment in non_gpu_typed:
            attribution = "non-GPU capacity"
        else:
            attribution = "in proportion to its used cost on GPU rows"
        end = int(fact["end"])
        figures = s | {"gpu_hours": s["own_gpu_hours"], "covered_gpu_hours": s["own_gpu_hours"]}
        listed.append(
            {
                "commitment_id": str(commitment),
                "type": str(fact["kind"]),
                "instance_family": str(fact["family"]),
                "attribution": attribution,
                **entry(figures),
                "coverage_pct": _pct(s["own_gpu_hours"], all_gpu_hours),
                "used_on_gpu_cost": money(s["used_gpu"]),
                "gpu_attributed_unused_cost": money(s["to_gpu"]),
                "unattributed_cost": money(s["unattributed"]),
                "end": None if end == NAT else pd.Timestamp(end, tz="UTC").isoformat(),
            }
        )
    return listed


def _facts(ids: np.ndarray, rows: pd.DataFrame) -> dict[str, dict]:
    """Per commitment id, its first non-empty type and family among its rows and its latest end (int64
    nanoseconds, NaT lowest), review_sql.COMMITMENT_FACTS in DuckDB."""
    facts = pd.DataFrame(
        {
            "id": ids.astype(object),
            "line": np.arange(len(ids), dtype=np.int64),
            "type": rows["commitment_type"].astype(object).to_numpy(),
            "family": rows["commitment_family"].astype(object).to_numpy(),
            "end_ns": pd.DatetimeIndex(rows["commitment_end"]).as_unit("ns").asi8,
        }
    )
    with FrameSql() as sql:
        found = sql.register("commitment_facts", facts).rows(review_sql.COMMITMENT_FACTS)
    return {str(name): {"kind": kind, "family": family, "end": end} for name, kind, family, end in found}


def _expiring(listed: list[dict], as_of: dt.date) -> dict:
    horizon = as_of + dt.timedelta(days=EXPIRING_DAYS)
    soon, unknown = [], []
    for item in listed:
        if item["end"] is None:
            unknown.append(item["commitment_id"])
            continue
        ends = pd.Timestamp(item["end"]).date()
        if as_of <= ends < horizon:
            soon.append(
                {
                    "commitment_id": item["commitment_id"],
                    "type": item["type"],
                    "end": item["end"],
                    "days_left": (ends - as_of).days,
                    "utilization_pct": item["utilization_pct"],
                    "committed_cost": item["committed_cost"],
                }
            )
    soon.sort(key=lambda item: item["end"])
    return {
        "as_of": as_of.isoformat(),
        "within_days": EXPIRING_DAYS,
        "commitments": soon,
        "end_unknown": unknown,
        "note": (
            f"{len(unknown)} commitment(s) of the period carry no end date in the export; their expiry is unknown"
            if unknown
            else ""
        ),
    }
