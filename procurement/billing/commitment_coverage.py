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
  rows only (committed usage: CommitmentDiscountStatus Used, or PricingCategory Committed).
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

from procurement.billing.commitment_attribution import TO_GPU, UNATTRIBUTED, gpu_scoped_commitments

EXPIRING_DAYS = 90
MAX_LISTED = (
    200  # commitments listed per table: an account holds tens, a bound keeps a hostile file's answer small
)
UNTAGGED = "(untagged)"


def _pct(part: int, whole: int) -> str | None:
    if whole <= 0:
        return None
    return str((Decimal(int(part)) * 100 / Decimal(int(whole))).quantize(Decimal("0.1")))


def commitments_section(rows: pd.DataFrame, gpu_usage: np.ndarray, *, as_of: dt.date, money, hours) -> dict:
    """The `commitments` JSON of the review; `gpu_usage` flags the GPU usage rows of `rows`; `money`
    and `hours` format micro-units as the review does."""
    status = rows["commitment_status"].astype(object).to_numpy()
    ids = rows["commitment_discount_id"].astype(object).to_numpy()
    used, unused = status == "used", status == "unused"
    committed_hour = used | (rows["pricing_category"].astype(object).to_numpy() == "committed")
    effective = rows["effective_micros"].to_numpy(np.int64)
    gpu_hours = np.where(gpu_usage, rows["gpu_hours_micros"].to_numpy(np.int64), 0)
    frame = pd.DataFrame({
        "id": ids, "used": np.where(used & (ids != ""), effective, 0),
        "unused": np.where(unused & (ids != ""), effective, 0),
        "to_gpu": np.where(unused & rows[TO_GPU].to_numpy(bool), effective, 0),
        "unattributed": np.where(unused & rows[UNATTRIBUTED].to_numpy(bool), effective, 0),
        "gpu_hours": gpu_hours, "covered_gpu_hours": np.where(committed_hour, gpu_hours, 0),
        "used_gpu": np.where(used & gpu_usage, effective, 0),
        "month": _months(rows), "team": rows["team"].astype(object).replace("", UNTAGGED).to_numpy(),
    })  # fmt: skip

    def entry(sums) -> dict:
        committed = int(sums["used"] + sums["unused"])
        return {
            "used_cost": money(sums["used"]), "unused_cost": money(sums["unused"]),
            "committed_cost": money(committed), "utilization_pct": _pct(sums["used"], committed),
            "gpu_hours": hours(sums["gpu_hours"]), "committed_gpu_hours": hours(sums["covered_gpu_hours"]),
            "coverage_pct": _pct(sums["covered_gpu_hours"], sums["gpu_hours"]),
        }  # fmt: skip

    sums = ["used", "unused", "to_gpu", "unattributed", "gpu_hours", "covered_gpu_hours", "used_gpu"]
    total = frame[sums].sum()
    by_month = [{"month": m} | entry(s) for m, s in frame.groupby("month", sort=True)[sums].sum().iterrows()]
    by_team = [{"team": t} | entry(s) for t, s in frame.groupby("team", sort=True)[sums].sum().iterrows()]
    listed = _by_commitment(rows, frame[ids != ""], sums, entry, money, int(total["gpu_hours"]))
    return {
        "totals": entry(total) | {
            "gpu_attributed_unused_cost": money(total["to_gpu"]),
            "unattributed_commitment_cost": money(total["unattributed"]),
        },
        "by_commitment": listed[:MAX_LISTED], "by_month": by_month, "by_team": by_team[:MAX_LISTED],
        "expiring": _expiring(listed, as_of),
        "definitions": {
            "utilization": "used commitment / (used + unused commitment), in effective cost (AWS "
            "SavingsPlansUtilization.UtilizationPercentage)",
            "coverage": "GPU-hours under a commitment / all GPU-hours (AWS CoverageHours)",
            "attribution": "unused commitment is GPU spend when the commitment is scoped to GPU capacity, "
            "else in proportion to its used cost on GPU rows; the rest is unattributed_commitment_cost",
        },
    }  # fmt: skip


def _months(rows: pd.DataFrame) -> np.ndarray:
    starts = pd.DatetimeIndex(rows["charge_period_start"]).as_unit("ns").asi8.astype("datetime64[ns]")
    months = starts.astype("datetime64[M]").astype(np.int64)
    return np.array([f"{1970 + m // 12:04d}-{m % 12 + 1:02d}" for m in months], dtype=object)


def _by_commitment(
    rows: pd.DataFrame, frame: pd.DataFrame, sums: list[str], entry, money, all_gpu_hours: int
) -> list[dict]:
    """Each commitment's entry; its coverage is the share of all the period's GPU-hours it covered."""
    if frame.empty:
        return []
    with_id = rows[rows["commitment_discount_id"].astype(object).to_numpy() != ""]
    scoped = gpu_scoped_commitments(with_id)
    unused = with_id["commitment_status"].astype(object).to_numpy() == "unused"
    gpu_typed = set(
        with_id["commitment_discount_id"]
        .astype(object)
        .to_numpy()[unused & (with_id["gpu"] != "").to_numpy(bool)]
    )
    non_gpu_typed = set(
        with_id["commitment_discount_id"]
        .astype(object)
        .to_numpy()[
            unused & (with_id["gpu"] == "").to_numpy(bool) & (with_id["instance_type"] != "").to_numpy(bool)
        ]
    )
    facts = (
        with_id.assign(_id=with_id["commitment_discount_id"].astype(object))
        .groupby("_id", sort=True)
        .agg(
            kind=("commitment_type", lambda v: next((x for x in v.astype(object) if x), "")),
            family=("commitment_family", lambda v: next((x for x in v.astype(object) if x), "")),
            end=("commitment_end", "max"),
        )
    )
    listed = []
    for commitment, s in frame.groupby("id", sort=True)[sums].sum().iterrows():
        fact = facts.loc[commitment]
        if commitment in scoped or commitment in gpu_typed:
            attribution = "gpu capacity"
        elif commitment in non_gpu_typed:
            attribution = "non-GPU capacity"
        else:
            attribution = "in proportion to its used cost on GPU rows"
        end = fact["end"]
        listed.append({
            "commitment_id": str(commitment), "type": str(fact["kind"]), "instance_family": str(fact["family"]),
            "attribution": attribution, **entry(s), "coverage_pct": _pct(s["covered_gpu_hours"], all_gpu_hours),
            "used_on_gpu_cost": money(s["used_gpu"]),
            "gpu_attributed_unused_cost": money(s["to_gpu"]), "unattributed_cost": money(s["unattributed"]),
            "end": None if pd.isna(end) else pd.Timestamp(end).isoformat(),
        })  # fmt: skip
    return listed


def _expiring(listed: list[dict], as_of: dt.date) -> dict:
    horizon = as_of + dt.timedelta(days=EXPIRING_DAYS)
    soon, unknown = [], []
    for item in listed:
        if item["end"] is None:
            unknown.append(item["commitment_id"])
            continue
        ends = pd.Timestamp(item["end"]).date()
        if as_of <= ends < horizon:
            soon.append({
                "commitment_id": item["commitment_id"], "type": item["type"], "end": item["end"],
                "days_left": (ends - as_of).days, "utilization_pct": item["utilization_pct"],
                "committed_cost": item["committed_cost"],
            })  # fmt: skip
    soon.sort(key=lambda item: item["end"])
    return {
        "as_of": as_of.isoformat(), "within_days": EXPIRING_DAYS, "commitments": soon,
        "end_unknown": unknown, "note": (
            f"{len(unknown)} commitment(s) of the period carry no end date in the export; their expiry is unknown"
            if unknown else ""
        ),
    }  # fmt: skip
