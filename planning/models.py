"""The stored capacity plan (docs/capacity-plan.md). Its table keeps the name it had under procurement
(``procurement_capacityplan``): the model moved apps with a state-only migration, so no row moved."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class CapacityPlan(models.Model):
    """A capacity plan (docs/capacity-plan.md): the scope of spend it read, the inputs it was asked with,
    the prices it was computed with (source and observed date each) and its result. Spend data: finance
    and admin see every plan; an engineer only plans whose spend teams an admin granted them
    (billing.access). A recomputation after a price change adds a new row linked to the one
    it replaces, as TCO studies do, so the page shows the previous total beside the current one."""

    name = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    scope_teams = models.JSONField(
        default=list,
        blank=True,
        help_text="Spend teams read, as the bills' tags spell them; empty: every team.",
    )
    inputs = models.JSONField(help_text="The request: period, GPU, horizon, growth, trials, study, currency.")
    prices_used = models.JSONField(default=list, help_text="Each price with its source and observed date.")
    result = models.JSONField(default=dict)
    fingerprint = models.CharField(max_length=64, help_text="Hash of the inputs and prices used.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    previous = models.OneToOneField(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="next_version",
        help_text="The plan this recomputation replaced; both rows are kept.",
    )

    class Meta:
        db_table = (
            "procurement_capacityplan"  # the table it had under procurement (migrations/0001_initial.py)
        )
        ordering = ["-created_at", "-pk"]
        constraints = [
            # saving the same plan twice, even at once, is one save (services.capacity_plans); a
            # recomputation (previous set) may come back to an earlier version's prices and result
            models.UniqueConstraint(
                fields=["fingerprint"],
                condition=models.Q(previous__isnull=True),
                name="capacity_plan_saved_once",
            )
        ]

    def __str__(self) -> str:
        return self.name
