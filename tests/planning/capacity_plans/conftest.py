"""Fixtures of the capacity plan's shells: the real bundled catalog and the demo bills (May-October
2026, as `make run` imports them), and spend grants."""

from __future__ import annotations

import pytest

from tests.billing.catalog import import_demo_files

PERIOD = {"from": "2026-05-01", "to": "2026-11-01"}


@pytest.fixture
def demo_bills(bundled_catalog, tmp_path):
    """make_demo_billing (seed 3, six months from May 2026) and import_billing of its FOCUS and
    utilization files, over the bundled catalog: what `make run` does."""
    return import_demo_files(tmp_path, months=6)


@pytest.fixture
def grant():
    """grant(team, spend_team): an admin lets `team`'s engineers see the spend tagged `spend_team`."""
    from django.contrib.auth import get_user_model

    from billing.models import SpendGrant

    def make(team, spend_team: str):
        admin = get_user_model().objects.create_user("granting-admin", is_superuser=True)
        return SpendGrant.objects.create(team=team, spend_team=spend_team, granted_by=admin)

    return make
