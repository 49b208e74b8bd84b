"""Usage the bill cannot tell GPU from non-GPU (issue 28): the review's "undetermined" bucket, shown
beside GPU and non-GPU spend and never silently in either. Plain pandas, no ORM.

A usage row without a GPU model is undetermined when
1. it names an instance type the catalog does not map, and the type's name can carry a GPU on its
   provider (AWS P and G families, "p5.48xlarge", "g6e.xlarge", "gr6.4xlarge"; Azure N-series sizes,
   "Standard_NC24ads_A100_v4"; Google Cloud's accelerator-optimized A2, A3, A4 and G2 machine types and
   its per-GPU accelerator types, "nvidia-l4"; OCI GPU shapes, "BM.GPU.H100.8"), or its provider has no
   such naming rule here (the name alone says nothing); or
2. it names no instance type, is Compute, and comes from a provider whose bill does not name every
   machine it charges (all but AWS, whose x_UsageType / line_item_usage_type names the instance of
   every instance-hour: its Compute rows without one are Lambda, Fargate and the like).
Any other row without a GPU is non-GPU spend: an instance type the provider's naming rules out
("m7i.large", "Standard_D4s_v5", "n2-standard-8", "VM.Standard.E5.Flex"), storage, network, tax.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

GPU_CAPABLE_NAMES = {
    "aws": re.compile(r"^(?:p|g|gr)\d+[a-z]*\.", re.IGNORECASE),
    "azure": re.compile(r"^standard_n", re.IGNORECASE),
    "gcp": re.compile(r"^(?:a2|a3|a4|a4x|g2|g4)-|^nvidia-", re.IGNORECASE),
    "oracle": re.compile(r"\.gpu", re.IGNORECASE),
}
MACHINES_ALWAYS_NAMED = frozenset({"aws"})
RULE = (
    "undetermined: usage with no GPU model whose instance type the catalog does not know and whose name can "
    "carry a GPU (or whose provider's names say nothing), or Compute usage naming no instance from a provider "
    "whose bill does not name every machine; shown beside GPU and non-GPU spend, in neither"
)


def _undetermined(provider: str, instance_type: str, service_category: str) -> bool:
    if instance_type:
        rule = GPU_CAPABLE_NAMES.get(provider)
        return rule is None or bool(rule.search(instance_type))
    return service_category.strip().lower() == "compute" and provider not in MACHINES_ALWAYS_NAMED


def _codes(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(int64 code per row, the distinct texts): a categorical's own codes, else one factorize pass."""
    if values.dtype == "category":
        codes = values.cat.codes.to_numpy(np.int64)
        names = [str(name) for name in values.cat.categories]
    else:
        codes, uniques = pd.factorize(values.astype(object).fillna(""))
        codes, names = codes.astype(np.int64), [str(name) for name in uniques]
    if (codes < 0).any():  # a missing value: its own code, read as ""
        codes = np.where(codes < 0, len(names), codes)
        names = [*names, ""]
    return codes, names


def undetermined_mask(frame: pd.DataFrame) -> np.ndarray:
    """The usage rows without a GPU model that the bill cannot place (module docstring); judged once per
    distinct (provider, instance type, service category), combined from the columns' integer codes."""
    # categorical columns compare by code: no per-row text
    candidates = (frame["charge_category"] == "usage").to_numpy(bool) & (frame["gpu"] == "").to_numpy(bool)
    if not candidates.any():
        return candidates
    parts = [_codes(frame[column]) for column in ("provider", "instance_type", "service_category")]
    combined = np.zeros(int(candidates.sum()), dtype=np.int64)
    for codes, names in parts:
        combined = combined * len(names) + codes[candidates]
    uniques, inverse = np.unique(combined, return_inverse=True)
    flags = []
    for value in uniques:
        picked = []
        for _, names in reversed(parts):
            value, code = divmod(int(value), len(names))
            picked.append(names[code])
        provider, instance_type, service = reversed(picked)
        flags.append(_undetermined(provider, instance_type, service))
    found = np.zeros(len(frame), dtype=bool)
    found[np.flatnonzero(candidates)] = np.asarray(flags, dtype=bool)[inverse]
    return found
