"""Billing imports, their Parquet datasets' files, grants, budgets and checks.

Bill lines are not PostgreSQL rows (issue 28, item 1): each import's lines, normalized across sources
(FOCUS, AWS CUR 2.0, Cost Explorer...), are its Parquet dataset (storage/datasets.py), recorded here as
BillingImportFile rows. The SpendRecord table they were kept in before was written into datasets by
migration 0010 and dropped by 0014 (storage/backfill.py).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from billing.choices import (
    BillingFormat,
    ExportFormat,
    QueryEngine,
    RowKeyScheme,
    SpendScope,
)

MONEY = {"max_digits": 20, "decimal_places": 6}


class BillingImport(models.Model):
    """One file (or one Cost Explorer pull) brought in; its rows are all stored or none."""

    source_format = models.CharField(max_length=20, choices=BillingFormat.choices)
    file_name = models.CharField(max_length=500)
    file_sha256 = models.CharField(max_length=64, blank=True)
    file_bytes = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="The imported file's size in bytes (none for a pull or an import before stop 46): a file of "
        "another size cannot be this one, so it is read while its checksum is computed (storage/store.py).",
    )
    provider = models.CharField(max_length=50, blank=True, help_text="--provider, when the file names none.")
    rows_seen = models.PositiveIntegerField(default=0)
    inserted = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    unmapped_instance_types = models.JSONField(
        default=dict,
        help_text="Instance type -> rows: names the GPU catalog does not know (kept, never guessed).",
    )
    warnings = models.JSONField(
        default=list,
        blank=True,
        help_text="Lines for people of what was kept but not as written (a tag value that is no name); at "
        "most 21 of at most 500 characters (storage/store.stored_warnings).",
    )
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    imported_at = models.DateTimeField(auto_now_add=True)
    restated = models.BooleanField(
        default=False,
        help_text="It replaced the stored charge months of an earlier import of the same billing source.",
    )
    row_key_scheme = models.PositiveSmallIntegerField(
        choices=RowKeyScheme.choices,
        default=RowKeyScheme.COLUMN_HASH_128,
        help_text="How this import's row keys were made; older keys are matched through the file's checksum.",
    )

    class Meta:
        ordering = ["-imported_at"]

    def __str__(self) -> str:
        return f"{self.get_source_format_display()} {self.file_name} ({self.imported_at:%Y-%m-%d})"


class BillingImportFile(models.Model):
    """One Parquet file of an import's dataset (storage/datasets.py): the rows of one charge month. The
    files are immutable; a re-import of the same file records the first import's files again."""

    billing_import = models.ForeignKey(BillingImport, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=500, help_text="Relative to settings.BILLING_DATASET_DIR.")
    month = models.DateField(help_text="First day of the charge month its rows belong to (UTC).")
    rows = models.PositiveIntegerField()
    size_bytes = models.PositiveBigIntegerField()

    class Meta:
        ordering = ["month", "path"]
        indexes = [models.Index(fields=["month"], name="billing_file_month")]
        constraints = [
            models.UniqueConstraint(fields=["billing_import", "path"], name="billing_file_once_per_import"),
        ]

    def __str__(self) -> str:
        return f"{self.path} ({self.rows} rows)"


class BillingFilePeriod(models.Model):
    """A billing period (the invoice month) that rows of one dataset file are billed in (issue 28, item 1:
    the invoice view reads only the months it needs). The files are partitioned by charge month, and a
    billing period bills rows charged in other months (a correction to a closed period lands on a later
    invoice), so the invoice view finds the files of the periods asked here instead of reading every file
    (storage/billing_periods.py). Written by the post-import task (tasks.check_spend_after_import) and, for
    a file without any (an import before this table, or whose task never ran), on the first read."""

    file = models.ForeignKey(BillingImportFile, on_delete=models.CASCADE, related_name="billing_periods")
    billing_period = models.DateField(
        help_text="First day of the billing period's month: coalesce(billing period start, charge start)."
    )

    class Meta:
        ordering = ["billing_period"]
        indexes = [models.Index(fields=["billing_period"], name="billing_file_period")]
        constraints = [
            models.UniqueConstraint(fields=["file", "billing_period"], name="billing_file_period_once"),
        ]

    def __str__(self) -> str:
        return f"{self.file_id} {self.billing_period:%Y-%m}"


class DailySpend(models.Model):
    """One import's bill lines summed per charge day (UTC) x team x GPU model x scope x pricing category x
    commitment status x provider x service x currency (issue 28, item 1): one DuckDB GROUP BY over the
    import's dataset files (storage/duckdb_review.daily_spend_sums), written in the import's transaction
    (storage/daily_spend.py). Amounts exactly as the datasets hold them (micro-units as 6 decimals). The
    budgets' burn and the anomaly series read it (finance/selectors.daily_spend_frame); a month held by two
    datasets (rows a reader counts once per key, Cost Explorer pulls) is read from the files instead."""

    billing_import = models.ForeignKey(BillingImport, on_delete=models.CASCADE, related_name="daily_spend")
    day = models.DateField(help_text="The charge day (UTC) of the lines' charge period start.")
    team = models.CharField(max_length=100, blank=True, help_text="As the bills' tag spells it; blank: none.")
    gpu = models.CharField(max_length=100, blank=True, help_text="The GPU model's slug; blank: none.")
    scope = models.CharField(max_length=24, choices=SpendScope.choices)
    pricing_category = models.CharField(max_length=20, blank=True)
    commitment_status = models.CharField(max_length=20, blank=True)
    provider = models.CharField(max_length=100, blank=True)
    service_category = models.CharField(max_length=100, blank=True)
    currency = models.CharField(max_length=3)
    billed_cost = models.DecimalField(**MONEY)
    effective_cost = models.DecimalField(**MONEY)
    gpu_hours = models.DecimalField(**MONEY)
    rows = models.PositiveBigIntegerField(help_text="The bill lines summed.")

    class Meta:
        ordering = ["day", "team", "gpu", "scope"]
        indexes = [models.Index(fields=["billing_import", "day"], name="billing_daily_import_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.team or '(untagged)'} {self.gpu or '-'} {self.scope}: {self.effective_cost}"


class GpuUtilization(models.Model):
    """Mean utilization of one GPU of one resource over one clock hour (DCGM or Prometheus samples)."""

    billing_import = models.ForeignKey(BillingImport, on_delete=models.CASCADE, related_name="utilization")
    resource_id = models.CharField(
        max_length=500, help_text="Matches a bill line's resource id (or the hostname)."
    )
    gpu_index = models.PositiveSmallIntegerField()
    hour = models.DateTimeField(help_text="Start of the clock hour (UTC).")
    utilization_pct = models.DecimalField(max_digits=6, decimal_places=2)
    memory_used_mib = models.DecimalField(max_digits=12, decimal_places=1, null=True, blank=True)
    samples = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["resource_id", "hour", "gpu_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["resource_id", "gpu_index", "hour"], name="gpu_utilization_unique_hour"
            ),
            models.CheckConstraint(
                condition=Q(utilization_pct__gte=0, utilization_pct__lte=100),
                name="gpu_utilization_pct_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.resource_id} gpu{self.gpu_index} {self.hour:%Y-%m-%d %H}h {self.utilization_pct}%"


class SpendGrant(models.Model):
    """An admin's grant that lets the engineers of one team see that team's spend (and no other team's).

    Spend data is finance and admin only by default (docs/billing.md, "Who sees spend"); a grant is the
    one explicit exception. It is edited on the admin site only (admin role); deleting it revokes the
    access, and the admin site's history keeps who granted and who revoked it when."""

    team = models.OneToOneField("accounts.Team", on_delete=models.CASCADE, related_name="spend_grant")
    spend_team = models.CharField(
        max_length=100,
        blank=True,
        help_text="The team's name as the bills' tags spell it; blank: the team's slug.",
    )
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="spend_grants_given"
    )
    granted_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["team__name"]

    def __str__(self) -> str:
        return f"{self.team} sees the spend of team {self.spend_label!r}"

    @property
    def spend_label(self) -> str:
        return self.spend_team or self.team.slug


class Budget(models.Model):
    """A team's GPU budget for one month (docs/billing.md, "Budgets"), edited by finance and admin.

    `team` is the team as the bills' tags spell it (as spend grants spell it), so a
    granted engineer reads the budgets of their own spend teams. The amount is in its own currency; the
    spend is converted into it through stored FX rates, so a currency without one is refused."""

    team = models.CharField(max_length=100, help_text="The team as the bills' team tag spells it.")
    month = models.DateField(help_text="First day of the month.")
    amount = models.DecimalField(**MONEY)
    currency = models.CharField(max_length=3)
    notify_email = models.EmailField(
        blank=True, help_text="Who gets the 80% and 100% forecast e-mails; blank: every finance user."
    )
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["month", "team"]
        constraints = [
            models.UniqueConstraint(fields=["team", "month"], name="budget_team_month"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="budget_amount_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.team} {self.month:%Y-%m}: {self.amount} {self.currency}"


class BudgetAlert(models.Model):
    """One forecast threshold (80 or 100%) crossed by one budget: the unique row is what makes its e-mail
    go exactly once, however often the month is re-checked (budget_checks.py)."""

    budget = models.ForeignKey(Budget, on_delete=models.CASCADE, related_name="alerts")
    threshold_pct = models.PositiveSmallIntegerField()
    forecast = models.DecimalField(**MONEY)
    event = models.ForeignKey(
        "procurement.ChangeEvent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["budget", "threshold_pct"]
        constraints = [
            models.UniqueConstraint(fields=["budget", "threshold_pct"], name="budget_alert_once"),
        ]

    def __str__(self) -> str:
        return f"{self.budget}: forecast crossed {self.threshold_pct}%"


class SpendCheck(models.Model):
    """One import's re-check of one month's anomalies and budgets (tasks.check_spend_after_import). Unique
    per import and month, so a redelivered or repeated task checks nothing twice."""

    billing_import = models.ForeignKey(BillingImport, on_delete=models.CASCADE, related_name="spend_checks")
    month = models.DateField()
    result = models.JSONField(default=dict, help_text="Anomalies found and budget states at the check.")
    checked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-checked_at"]
        constraints = [
            models.UniqueConstraint(fields=["billing_import", "month"], name="spend_check_once"),
        ]

    def __str__(self) -> str:
        return f"check of {self.month:%Y-%m} after import {self.billing_import_id}"


class BillingExportSource(models.Model):
    """Where a provider's billing exports land (an S3 bucket and prefix), read by the scheduled import
    (imports/scheduled.py) and, for Athena, queried where they land (storage/athena.py). Off until enabled."""

    name = models.SlugField(max_length=80, unique=True)
    export_format = models.CharField(max_length=10, choices=ExportFormat.choices)
    provider = models.CharField(max_length=50, default="aws", help_text="Given to the import (--provider).")
    bucket = models.CharField(max_length=63)
    prefix = models.CharField(max_length=500, blank=True, help_text="Up to and including the export's name.")
    enabled = models.BooleanField(default=False, help_text="The scheduled import reads only enabled sources.")
    query_engine = models.CharField(max_length=10, choices=QueryEngine.choices, default=QueryEngine.DUCKDB)
    athena_database = models.CharField(max_length=255, blank=True)
    athena_table = models.CharField(max_length=255, blank=True)
    athena_workgroup = models.CharField(max_length=128, blank=True, default="primary")
    athena_output_location = models.CharField(max_length=500, blank=True, help_text="s3://… for results.")
    last_checked_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, help_text="The last run's error, empty when it succeeded.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} (s3://{self.bucket}/{self.prefix})"


class BillingExportDelivery(models.Model):
    """One delivery of one billing month (a manifest's executionId or assemblyId), imported exactly once.
    A later delivery of the same month replaces the earlier one's imports and is flagged restated."""

    source = models.ForeignKey(BillingExportSource, on_delete=models.CASCADE, related_name="deliveries")
    delivery_id = models.CharField(max_length=200, help_text="Manifest executionId / assemblyId.")
    billing_month = models.DateField(help_text="First day of the billing period delivered.")
    manifest_key = models.CharField(max_length=1024)
    imports = models.ManyToManyField(BillingImport, related_name="export_deliveries", blank=True)
    rows = models.PositiveIntegerField(default=0)
    restated = models.BooleanField(default=False, help_text="It replaced an earlier delivery of its month.")
    replaced = models.BooleanField(default=False, help_text="A later delivery of its month replaced it.")
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-billing_month", "-imported_at"]
        constraints = [
            models.UniqueConstraint(fields=["source", "delivery_id"], name="export_delivery_once"),
        ]

    def __str__(self) -> str:
        return f"{self.source.name} {self.billing_month:%Y-%m} {self.delivery_id}"
