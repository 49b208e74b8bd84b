"""Saving twice is one save (issue 31): a TCO study or a workload is stored once per fingerprint of
what it was saved from (the normalized document, the owner and the team), as capacity plans are
(planning.services.capacity_plans). A unique constraint on first versions makes it hold when two
requests save at once; the loser of the race reads the winner's row."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import IntegrityError, models, transaction

from procurement.services.documents import plain_json

Row = TypeVar("Row", bound=models.Model)


def input_fingerprint(document: object, *, owner=None, team=None) -> str:
    """Hash of the normalized document (keys sorted, numbers as plain JSON) with who saved it for whom:
    the same document saved by another person or for another team is another row."""
    payload: dict[str, Any] = {
        "document": plain_json(document),
        "owner": getattr(owner, "pk", None),
        "team": getattr(team, "pk", None),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def save_once(saved: Callable[[], Row | None], create: Callable[[], Row]) -> tuple[Row, bool]:
    """(row, created): the stored row ``saved`` finds, else a new one from ``create``. ``create`` runs in
    a savepoint: a concurrent save of the same inputs breaks the unique constraint there, and the row it
    stored is returned instead."""
    existing = saved()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return create(), True
    except IntegrityError:
        existing = saved()
        if existing is None:
            raise
        return existing, False
