"""A workload and its latest saved answer, as the stored recommendation page shows them, cached per
workload between requests (issue 9: it was the one stored page still asking the database three
times a request, and Django compiling a query costs about two thirds of its millisecond).

The entry holds plain values, never model instances: a pickled user would carry its password hash
into the cache. The saved rows themselves (`results`, the bulk of an answer) are not in it: the page
renders them from its cached fragments and reads them only when those are missing.

The key names the data versions the entry shows (gpuledger/data_versions.py), so it goes stale the
one way every cache does: ``workloads`` (a workload saved or deleted, an answer stored, the
recompute's `bulk_create` and an answer deleted in the admin, which bump it themselves) and
``access`` (a team or a user renamed: the entry shows their names). Who may see the workload is
decided on every request from the entry's team and owner (`gpuledger.accounts.teams.can_see`, the rule
of `visible_to`) and the user's own cached facts, never cached per user.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from gpuledger.data_versions import bump_on_write
from gpuledger.versioned_cache import cached
from procurement import models

DEPENDS_ON = ("workloads", "access")


@dataclass(frozen=True)
class Person:
    """Who owns a workload or saved an answer, as the page names them."""

    username: str

    def get_username(self) -> str:
        return self.username


@dataclass(frozen=True)
class TeamName:
    pk: int
    name: str


@dataclass(frozen=True)
class SavedAnswer:
    pk: int
    computed_at: dt.datetime
    parameters: dict
    spec: dict
    saved_by: Person | None

    @property
    def results(self) -> list[dict]:
        """The saved rows, read when the page renders them (its fragments are missing or stale)."""
        found = models.Recommendation.objects.filter(pk=self.pk).values_list("results", flat=True)
        return next(iter(found), [])


@dataclass(frozen=True)
class WorkloadHead:
    pk: int
    name: str
    spec: dict
    updated_at: dt.datetime
    team_id: int | None
    team: TeamName | None
    owner_id: int | None
    owner: Person | None
    answer: SavedAnswer | None


def workload_head(workload_id: int) -> WorkloadHead | None:
    """The workload and its latest saved answer (None: no such workload), from the cache when neither
    the workloads nor the names it shows changed since it was read."""
    return cached("workload-head", workload_id, DEPENDS_ON, lambda: _read(workload_id))


def _read(workload_id: int) -> WorkloadHead | None:
    try:  # by primary key: a get, so no ORDER BY is compiled or sent as .first() would
        workload = models.Workload.objects.select_related("team", "owner").get(pk=workload_id)
    except models.Workload.DoesNotExist:
        return None
    saved = (
        workload.recommendations.select_related("saved_by")
        .defer("results")
        .order_by("-computed_at", "-pk")
        .first()
    )
    answer = None
    if saved is not None:
        answer = SavedAnswer(
            pk=saved.pk,
            computed_at=saved.computed_at,
            parameters=saved.parameters,
            spec=saved.spec,
            saved_by=Person(saved.saved_by.get_username()) if saved.saved_by else None,
        )
    return WorkloadHead(
        pk=workload.pk,
        name=workload.name,
        spec=workload.spec,
        updated_at=workload.updated_at,
        team_id=workload.team_id,
        team=TeamName(workload.team.pk, workload.team.name) if workload.team else None,
        owner_id=workload.owner_id,
        owner=Person(workload.owner.get_username()) if workload.owner else None,
        answer=answer,
    )


def connect() -> None:
    """ProcurementConfig.ready: single-row writes bump the workloads version. Answers only when stored:
    a delete receiver would make Django load every answer (its rows included) of a workload it deletes,
    whose own deletion bumps the version anyway."""
    bump_on_write("workloads", models.Workload)
    bump_on_write("workloads", models.Recommendation, deletes=False)
