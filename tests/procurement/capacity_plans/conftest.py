"""Fixtures of the capacity plan's shells: the real bundled catalog and the demo bills (May-October
2026, as `make run` imports them), and spend grants."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

PERIOD = {"from": "2026-05-01", "to": "2026-11-01"}


@pytest.fixture
def demo_bills(bundled_catalog, tmp_path):
    """make_demo_billing (seed 3, six months from May 2026) and import_billing of its FOCUS and
    utilization files, over the bundled catalog: what `make run` does."""
    path = tmp_path / "demo.csv"
    call_command(
        "make_demo_billing", "--seed", "3", "--start", "2026-05", "--months", "6", "--output", str(path)
    )
    call_command(
        "import_billing",
        str(path),
        str(tmp_path / "demo_utilization.csv"),
        "--no-progress",
        stdout=StringIO(),
    )
    return path


@pytest.fixture
def grant():
    """grant(team, spend_team): an admin lets `team`'s engineers see the spend tagged `spend_team`."""
    from django.contrib.auth import get_user_model

    from procurement.billing.models import SpendGrant

    def make(team, spend_team: str):
        admin = get_user_model().objects.create_user("granting-admin", is_superuser=True)
        return SpendGrant.objects.create(team=team, spend_team=spend_team, granted_by=admin)

    return make
