"""Price quality: what kind of evidence a stored price is, read from where it came from.

Every price observation has one quality (docs/provider-prices.md, "Price quality"):

- ``observed``: read from a provider's API at a known time (``aws:...`` sources);
- ``snapshot``: a catalog file whose data date is unknown (the bundled SkyPilot catalog,
  ``skypilot:...``): its timestamp is the day it was bundled, not the day the price held;
- ``quoted``: a rate card a person imported (``file:...`` in gpuledger's provider format);
- ``illustrative``: made-up prices shipped to demonstrate a currency or provider (the bundled AutoDL
  CNY file). They never rank unless a request asks for them, and are labelled wherever shown.

The quality is a function of the observation's ``source`` (set by the one reader of each source), so
it travels with every price without a second bookkeeping column.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

OBSERVED, SNAPSHOT, QUOTED, ILLUSTRATIVE = "observed", "snapshot", "quoted", "illustrative"
PRICE_QUALITIES = (OBSERVED, SNAPSHOT, QUOTED, ILLUSTRATIVE)
# Bundled provider files whose prices are made up (pricing/data/SOURCES.md says why).
ILLUSTRATIVE_SOURCES = frozenset({"file:autodl_cny.csv"})
ILLUSTRATIVE_PREFIXES = (
    "illustrative:",
)  # e.g. the bundled demo commitment prices (pricing/data/SOURCES.md)
SNAPSHOT_PREFIXES = ("skypilot:",)
QUOTED_PREFIXES = ("file:",)
ILLUSTRATIVE_LABEL = "illustrative price (made up for the demo, not a quote): not ranked unless asked for"


def price_quality(source: str) -> str:
    """The quality of one observation's source."""
    source = source or ""
    if source in ILLUSTRATIVE_SOURCES or source.startswith(ILLUSTRATIVE_PREFIXES):
        return ILLUSTRATIVE
    if source.startswith(SNAPSHOT_PREFIXES):
        return SNAPSHOT
    if source.startswith(QUOTED_PREFIXES):
        return QUOTED
    return OBSERVED


def price_qualities(sources: pd.Series) -> np.ndarray:
    """price_quality for a column of sources, once per distinct source (a catalog has a handful)."""
    codes, names = pd.factorize(sources.fillna("").to_numpy(dtype=object))
    table = np.array([price_quality(str(name)) for name in names] + [OBSERVED], dtype=object)
    return table[codes]


def quality_text(quality: str, observed_at: dt.datetime | None, now: dt.datetime | None = None) -> str:
    """How a page says how old a price is: a snapshot has no data date, so it gets none and no age."""
    date = f"{observed_at:%Y-%m-%d}" if observed_at else "date unknown"
    if quality == SNAPSHOT:
        return f"snapshot, data date unknown, bundled {date}"
    if quality == ILLUSTRATIVE:
        return f"illustrative, not a real price (file dated {date})"
    if quality == QUOTED:
        return f"quoted rate card, dated {date}"
    age = ""
    if observed_at and now:
        age = f", {max(0, (now - observed_at).days)} d old"
    return f"observed {date}{age}"
