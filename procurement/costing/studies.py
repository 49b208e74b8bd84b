"""One call from a parsed study to the full report the CLI, API and pages show."""

from __future__ import annotations

from typing import Any

from procurement.costing.tco import run_tco, tco_report
from procurement.costing.tco_sensitivity import sensitivity_report
from procurement.costing.tco_spec import TcoStudy


def evaluate_tco_study(study: TcoStudy) -> dict[str, Any]:
    """The JSON report: cash view, accounting view, sensitivity, and the resolved inputs it used."""
    report = tco_report(run_tco(study))
    report["sensitivity"] = sensitivity_report(study)
    report["inputs"] = study.as_dict()
    return report
