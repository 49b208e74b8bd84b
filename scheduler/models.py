"""Bookkeeping of scheduled work: one PriceRefresh row per run of a source in a region."""

from django.db import models


class RefreshStatus(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped (another run holds the lock)"


class PriceRefresh(models.Model):
    source = models.CharField(max_length=50, help_text="e.g. 'aws-spot', 'catalog', 'import:file.csv'.")
    region = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=RefreshStatus.choices, default=RefreshStatus.RUNNING)
    rows_seen = models.PositiveIntegerField(default=0)
    rows_inserted = models.PositiveIntegerField(default=0)
    rows_unchanged = models.PositiveIntegerField(default=0)
    rows_rejected = models.PositiveIntegerField(default=0)
    rows_suspect = models.PositiveIntegerField(default=0)
    # What the run's prices did to the current prices (pricing.ingest): a first price for an offer,
    # pricing model and payment option is "added", a new price for one already priced is "changed".
    rows_added = models.PositiveIntegerField(default=0)
    rows_changed = models.PositiveIntegerField(default=0)
    # Rows pricing.price_checks refused, by reason: {"region": {"count": 3, "examples": ["...", ...]}}.
    rows_refused = models.PositiveIntegerField(default=0)
    refused_reasons = models.JSONField(default=dict, blank=True)
    # Rows the source's reader skipped on purpose (Windows, other products, other families), by reason.
    skipped_reasons = models.JSONField(default=dict, blank=True)
    # Per provider what the run produced (pricing.refresh_changes.CoverageTap.as_json): offers, GPU types,
    # pricing models; the next run compares with it.
    coverage = models.JSONField(default=dict, blank=True)
    # Prices that moved more than pricing.refresh_changes.MOVE_SHARE since the last refresh, and GPU types
    # gone: {"share": "0.25", "count": n, "moves": [...], "gpu_types_gone": {provider: [...]}}.
    changes = models.JSONField(default=dict, blank=True)
    duration_s = models.FloatField(null=True, blank=True, help_text="Seconds from start to finish.")
    # Failed runs of this source and region in a row, this one included (0 when it did not fail);
    # three or more is shown as failing (pricing.sources.status.FAILING_AFTER).
    failures_in_a_row = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        verbose_name_plural = "price refreshes"

    def __str__(self) -> str:
        where = f" {self.region}" if self.region else ""
        return f"{self.source}{where} {self.started_at:%Y-%m-%d %H:%M} {self.status}"


class SyncedScheduleJob(models.Model):
    """What `sync_schedule` last read from the schedule in code (scheduler/schedule.py) for one job.

    The next sync compares the code with this, not with the periodic task: a field whose code value has
    not changed since keeps whatever a person set in the admin; a field the code changed is written.
    """

    name = models.CharField(
        max_length=200, unique=True, help_text="The django-celery-beat periodic task's name."
    )
    definition = models.JSONField(help_text="task, every_seconds, kwargs and description as the code said.")
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
