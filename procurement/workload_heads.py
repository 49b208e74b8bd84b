"""A workload and its latest saved answer, as the stored recommendation page shows them, cached per
workload between requests (issue 9: it was the one stored page still asking the database three
times a request, and Django compiling a query costs about two thirds of its millisecond).

The entry holds plain values, never model instances: a pickled user would carry its password hash
into the cache. The saved rows themselves (`results`, the bulk of an answer) are not in it: the page
renders them from its cached fragments and reads them only when those are missing.

Every write through the app drops the entry at once and again when its transaction commits (so a
request that read the old rows meanwhile cannot keep them): a workload saved or deleted and an answer
stored (signals, connected by ProcurementConfig.ready), the recompute's `bulk_create` (it calls
`forget_workload_heads` itself, since bulk_create sends no signal), a team renamed. A user renamed, a
single answer deleted (the admin) or a write around the ORM shows within HEAD_TTL_S. Who may see the workload is decided on
every request from the entry's team and owner (`gpuledger.accounts.teams.can_see`, the rule of
`visible_to`) and the user's own cached facts, never cached per user.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from gpuledger.accounts.models import Team
from procurement import models

HEAD_TTL_S = 60


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


def _key(workload_id: int) -> str:
    return f"gpuledger:workload-head:{workload_id}"


def workload_head(workload_id: int) -> WorkloadHead | None:
    """The workload and its latest saved answer (None: no such workload), from the cache when no write
    dropped it since it was read."""
    key = _key(workload_id)
    head = cache.get(key)
    if head is None:
        head = _read(workload_id)
        if head is not None:
            cache.set(key, head, HEAD_TTL_S)
    return head


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


def forget_workload_heads(workload_ids: Iterable[int | None]) -> None:
    """Drop these workloads' entries, now and when the current transaction commits."""
    keys = [_key(int(pk)) for pk in set(workload_ids) if pk is not None]
    if keys:
        cache.delete_many(keys)
        transaction.on_commit(lambda: cache.delete_many(keys))


def _workload_changed(sender, instance: models.Workload, **kwargs: Any) -> None:
    forget_workload_heads([instance.pk])


def _answer_stored(sender, instance: models.Recommendation, **kwargs: Any) -> None:
    forget_workload_heads([instance.workload_id])


def _team_changed(sender, instance: Team, **kwargs: Any) -> None:
    if instance.pk is not None:
        forget_workload_heads(models.Workload.objects.filter(team=instance).values_list("pk", flat=True))


def connect() -> None:
    for signal in (post_save, post_delete):
        signal.connect(_workload_changed, sender=models.Workload, dispatch_uid=f"workload-head-w-{signal}")
    # Stored answers only: a receiver of their deletion would make Django load every answer (its rows
    # included) of a workload it deletes; that deletion drops the workload's own entry anyway.
    post_save.connect(_answer_stored, sender=models.Recommendation, dispatch_uid="workload-head-answer")
    post_save.connect(_team_changed, sender=Team, dispatch_uid="workload-head-team")
