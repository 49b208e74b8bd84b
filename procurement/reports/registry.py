"""Report kinds by name: every module in ``procurement.reports.kinds`` that defines ``KIND``."""

from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuledger.errors import InputError
from procurement.reports.model import Report


class ReportInputError(InputError):
    """The subject of a report does not exist or has nothing to report yet; ``field`` names the input."""


@dataclass(frozen=True)
class ReportPeriod:
    """The subject of a report about a span of time (a spend review) rather than one stored object."""

    start: dt.date
    end: dt.date  # exclusive, as the billing engine takes it
    team: str = ""
    project: str = ""
    provider: str = ""
    allocation: str = ""  # the spend review's showback rule (billing/finance/allocation.py); "": default

    def __post_init__(self):
        if self.end <= self.start:
            raise ReportInputError("to", f"must be after from ({self.start}), got {self.end}")

    @property
    def subject_id(self) -> int:
        """The snapshot's subject_id (YYYYMMDD of the start): the fingerprint tells periods apart."""
        return int(self.start.strftime("%Y%m%d"))


@dataclass(frozen=True)
class ReportKind:
    name: str
    title: str
    roles: tuple[str, ...]
    subject: str
    load: Callable[[Any], dict[str, Any]]  # Django side: (subject id, or a ReportPeriod) -> plain dict
    build: Callable[[dict[str, Any], dt.datetime], Report]  # plain Python
    by_period: bool = False  # True: the subject is a ReportPeriod (--from/--to), not an object id


_KINDS: dict[str, ReportKind] = {}
_DISCOVERED = False


def register(kind: ReportKind) -> ReportKind:
    _KINDS[kind.name] = kind
    return kind


def _discover() -> None:
    global _DISCOVERED
    from procurement.reports import kinds

    _DISCOVERED = True
    for module in pkgutil.iter_modules(kinds.__path__):
        loaded = importlib.import_module(f"{kinds.__name__}.{module.name}")
        if hasattr(loaded, "KIND"):
            register(loaded.KIND)


def report_kinds() -> dict[str, ReportKind]:
    if not _DISCOVERED:  # a kind registered from another app's ready() must not hide the bundled ones
        _discover()
    return dict(_KINDS)


def report_kind_names() -> list[str]:
    """The kinds' names without importing them (a command's help): the bundled modules and any registered."""
    from procurement.reports import kinds

    return sorted({module.name for module in pkgutil.iter_modules(kinds.__path__)} | set(_KINDS))


def report_kind(name: str) -> ReportKind:
    # the bundled kind of that name alone, when there is one: a spot PDF need not import the spend review
    # (pandas) and the capacity plan (issue 30, benchmarks/cli_bench.py)
    if name not in _KINDS and name in report_kind_names():
        loaded = importlib.import_module(f"procurement.reports.kinds.{name}")
        if hasattr(loaded, "KIND"):
            register(loaded.KIND)
    kinds = _KINDS if name in _KINDS else report_kinds()
    if name not in kinds:
        raise ReportInputError("kind", f"unknown report {name!r}; one of {', '.join(sorted(kinds))}")
    return kinds[name]
