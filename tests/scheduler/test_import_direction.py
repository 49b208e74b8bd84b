"""The scheduler app keeps the beat schedule, the locks and the refresh bookkeeping; price sources and their
refresh live in pricing/sources/. Imports go one way, pricing -> scheduler: no scheduler module imports
pricing (a cycle between the two packages is what issue 32 removed)."""

from __future__ import annotations

import ast
from pathlib import Path

SCHEDULER = Path(__file__).resolve().parents[2] / "scheduler"


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_scheduler_module_imports_pricing():
    offenders = {
        str(path.relative_to(SCHEDULER.parent)): sorted(
            m for m in imported_modules(path) if m.split(".")[0] == "pricing"
        )
        for path in SCHEDULER.rglob("*.py")
        if "migrations" not in path.parts
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}
    assert len(offenders) > 10  # the walk saw the package (a test over no file cannot fail)
