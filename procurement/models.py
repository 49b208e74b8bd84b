"""Workloads, model architectures, measured benchmarks and stored decisions.

Stored decisions (Recommendation, TcoStudy) keep the prices they used, so a report shows the same
numbers next month; a recomputation adds a new dated row beside the old one.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from procurement.choices import ChangeKind, PeakMemoryDefinition, Precision, TaskKind
from procurement.json_fields import BulkInsertedJSONField, FirstRowField, JSONTextField
from procurement.webhooks import validate_webhook_url


class ModelArchitecture(models.Model):
    slug = models.CharField(
        max_length=100, unique=True, help_text="Preset name in workload specs, e.g. 'llama-3-8b'."
    )
    name = models.CharField(max_length=100, unique=True)
    hf_id = models.CharField(max_length=200, blank=True)
    params = models.BigIntegerField()
    num_layers = models.PositiveIntegerField()
    hidden_size = models.PositiveIntegerField()
    num_attention_heads = models.PositiveIntegerField()
    num_key_value_heads = models.PositiveIntegerField()
    head_dim = models.PositiveIntegerField()
    intermediate_size = models.PositiveIntegerField()
    vocab_size = models.PositiveIntegerField()
    max_position_embeddings = models.PositiveIntegerField(null=True, blank=True)
    tie_word_embeddings = models.BooleanField(default=False)
    gated_mlp = models.BooleanField(default=True)
    num_experts = models.PositiveSmallIntegerField(default=1)
    experts_per_token = models.PositiveSmallIntegerField(default=1)
    source = models.TextField(blank=True)

    class Meta:
        ordering = ["params"]
        constraints = [
            models.CheckConstraint(condition=Q(params__gt=0), name="architecture_params_positive"),
            models.CheckConstraint(condition=Q(num_layers__gt=0), name="architecture_layers_positive"),
            models.CheckConstraint(
                condition=Q(experts_per_token__lte=models.F("num_experts")),
                name="architecture_active_experts_le_experts",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = {}
        if (
            self.num_attention_heads
            and self.num_key_value_heads
            and self.num_attention_heads % self.num_key_value_heads
        ):
            errors["num_key_value_heads"] = (
                "KV heads must divide the attention heads (grouped-query attention)."
            )
        if errors:
            raise ValidationError(errors)


class Workload(models.Model):
    """A job to run, stored as the workload spec (docs/workload-spec.md)."""

    name = models.CharField(max_length=200)
    task = models.CharField(max_length=20, choices=TaskKind.choices)
    spec = models.JSONField(
        help_text="The workload spec: one schema for CLI files, API bodies and stored workloads."
    )
    team = models.ForeignKey(
        "accounts.Team",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="workloads",
        help_text="Engineers see and change their team's workloads only (empty: stored before teams).",
    )
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    notify_email = models.EmailField(blank=True)
    # https to a public address only (procurement.webhooks): checked here and again when sent
    notify_webhook = models.URLField(blank=True, validators=[validate_webhook_url])
    input_fingerprint = models.CharField(
        max_length=64,
        null=True,
        blank=True,
        editable=False,
        help_text="Hash of the spec, owner and team it was saved from: saving them again returns this row "
        "(procurement.services.saved_once). Cleared when the spec is edited; empty before issue 31.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["input_fingerprint"], name="workload_saved_once"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # Imported here: the sizing engine is plain Python and must not import Django at module load.
        from procurement.sizing import WorkloadSpecError, parse_workload_spec

        try:
            parsed = parse_workload_spec(self.spec or {})
        except WorkloadSpecError as exc:
            raise ValidationError({"spec": [f"{e.path}: {e.message}" for e in exc.errors]}) from None
        if self.task and getattr(parsed, "task", self.task) != self.task:
            raise ValidationError({"task": "The task must match the spec's 'task' field."})


class BenchmarkResult(models.Model):
    """A measured run: throughput and peak memory that override and calibrate estimates. A run belongs
    to the team and person who uploaded it, as a workload does: engineers see their teams' runs (the
    spec, the price paid, the uploader); the calibration pools every team's runs into per-GPU factors
    and shows only those (docs/benchmark-format.md, "Who sees a run")."""

    team = models.ForeignKey(
        "accounts.Team",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="benchmarks",
        help_text="Engineers see their team's runs only (empty: uploaded before teams, or by a command).",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="benchmarks"
    )

    workload = models.ForeignKey(
        Workload, on_delete=models.CASCADE, null=True, blank=True, related_name="benchmarks"
    )
    gpu = models.ForeignKey(
        "pricing.GpuModel",
        on_delete=models.PROTECT,
        related_name="benchmarks",
        null=True,
        blank=True,
        help_text="Empty only for CPU path runs.",
    )
    gpu_count = models.PositiveSmallIntegerField(default=1)
    instance_type = models.ForeignKey(
        "pricing.InstanceType", on_delete=models.SET_NULL, null=True, blank=True
    )
    precision = models.CharField(max_length=8, choices=Precision.choices)
    tokens_per_second = models.DecimalField(max_digits=14, decimal_places=3, null=True, blank=True)
    step_time_seconds = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    peak_memory_gib = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    peak_memory_definition = models.CharField(max_length=12, choices=PeakMemoryDefinition.choices, blank=True)
    mfu = models.DecimalField(max_digits=5, decimal_places=4, null=True, blank=True, help_text="0..1")
    measured_at = models.DateTimeField()
    source = models.CharField(max_length=300)
    notes = models.TextField(blank=True)
    # Imported runner documents (docs/benchmark-format.md); rows entered by hand leave these empty.
    document_sha256 = models.CharField(
        max_length=64,
        unique=True,
        null=True,
        blank=True,
        help_text="Content hash: re-importing adds nothing.",
    )
    task = models.CharField(max_length=16, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    shape_key = models.CharField(
        max_length=64,
        blank=True,
        db_index=True,
        help_text="Model shape and method: what a workload matches on.",
    )
    cpu_only = models.BooleanField(
        default=False, help_text="A CPU path run (tiny model): never used as a measurement."
    )
    price_per_hour = models.DecimalField(max_digits=18, decimal_places=6, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    price_basis = models.CharField(
        max_length=120, blank=True, help_text="given in the run, or the current catalog price"
    )
    unit_costs = models.JSONField(default=dict, blank=True)
    diagnostics = models.JSONField(default=list, blank=True)
    estimate = models.JSONField(
        default=dict, blank=True, help_text="The sizing engine's estimate for the same run."
    )
    document = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-measured_at"]
        constraints = [
            models.CheckConstraint(condition=Q(gpu_count__gt=0), name="benchmark_gpu_count_positive"),
            models.CheckConstraint(
                condition=Q(tokens_per_second__isnull=True) | Q(tokens_per_second__gt=0),
                name="benchmark_throughput_positive",
            ),
            models.CheckConstraint(
                condition=Q(peak_memory_gib__isnull=True) | Q(peak_memory_gib__gt=0),
                name="benchmark_memory_positive",
            ),
            models.CheckConstraint(
                condition=Q(mfu__isnull=True) | Q(mfu__gt=0, mfu__lte=1), name="benchmark_mfu_range"
            ),
        ]

    def __str__(self) -> str:
        where = f"{self.gpu_count}× {self.gpu.slug}" if self.gpu else "CPU"
        return f"{self.model_name or self.workload or 'benchmark'} on {where}"


class Recommendation(models.Model):
    """A dated ranking of configurations for a workload, with the prices it used."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="recommendations")
    computed_at = models.DateTimeField(auto_now_add=True)
    parameters = models.JSONField(
        default=dict, help_text="Filters used: deadline, budget, providers, regions."
    )
    spec = models.JSONField(
        default=dict, blank=True, help_text="The workload spec it ranked (the workload may change later)."
    )
    # ~76 KB of JSON per 20-row ranking, inserted 500 at a time by a recompute chunk and kept as text,
    # never parsed by PostgreSQL (json_fields.py)
    results = JSONTextField(default=list)
    first_result = FirstRowField(
        source="results",
        help_text="The ranking's first row (the cheapest feasible, when any fits), for lists.",
    )
    prices_used = models.JSONField(
        default=list, help_text="Price observations (id, amount, currency, observed_at)."
    )
    fingerprint = models.CharField(
        max_length=64, help_text="Hash of the prices used; unchanged prices add no row."
    )
    saved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who saved these options as the workload's answer (a recompute keeps them).",
    )

    class Meta:
        ordering = ["-computed_at"]
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return f"{self.workload} @ {self.computed_at:%Y-%m-%d %H:%M}"


class TcoStudy(models.Model):
    """A buy-versus-rent study (docs/tco-spec.md) and its latest result with the prices it used."""

    name = models.CharField(max_length=200)
    spec = models.JSONField()
    result = models.JSONField(default=dict)
    prices_used = models.JSONField(default=list)
    fingerprint = models.CharField(max_length=64, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    team = models.ForeignKey(
        "accounts.Team",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="tco_studies",
        help_text="Engineers see and change their team's studies only (empty: stored before teams).",
    )
    computed_at = models.DateTimeField(auto_now_add=True)
    previous = models.OneToOneField(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="next_version",
        help_text="The dated result this recomputation replaced; both rows are kept.",
    )
    input_fingerprint = models.CharField(
        max_length=64,
        null=True,
        blank=True,
        editable=False,
        help_text="Hash of the document, owner and team it was first saved from: saving them again returns "
        "this study's newest version (procurement.services.saved_once). Cleared when the study is edited.",
    )

    class Meta:
        ordering = ["-computed_at"]
        verbose_name_plural = "TCO studies"
        constraints = [
            # first versions only: a recomputation is a new row of the same inputs, linked to the old one
            models.UniqueConstraint(
                fields=["input_fingerprint"],
                condition=models.Q(previous__isnull=True),
                name="tco_study_saved_once",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ChangeEvent(models.Model):
    """A recomputation changed a decision someone relies on."""

    kind = models.CharField(max_length=20, choices=ChangeKind.choices)
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, null=True, blank=True)
    tco_study = models.ForeignKey(TcoStudy, on_delete=models.CASCADE, null=True, blank=True)
    # a recompute chunk stores up to one event per workload in one bulk insert (json_fields.py says why)
    before = BulkInsertedJSONField(default=dict)
    after = BulkInsertedJSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.created_at:%Y-%m-%d})"


class NotificationState(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Being sent"
    SENT = "sent", "Sent"
    NO_TARGET = "no_target", "No e-mail or webhook configured"


class NotificationOutbox(models.Model):
    """One row per change event to notify, written in the event's own transaction (so a broker outage
    loses nothing). A sender claims rows with a conditional update (pending → sending, stamped with its
    token), so a duplicated or redelivered task sends each event once; the sweep re-queues pending rows
    and puts back rows whose sender died mid-claim (procurement.services.notifications)."""

    event = models.OneToOneField(ChangeEvent, on_delete=models.CASCADE, related_name="outbox")
    state = models.CharField(
        max_length=12, choices=NotificationState.choices, default=NotificationState.PENDING
    )
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["state", "created_at"], name="outbox_state_created")]

    def __str__(self) -> str:
        return f"event {self.event_id}: {self.state}"


class ReportSnapshot(models.Model):
    """A built report's data object (procurement.reports.model.Report as JSON): every later rendering
    (page, PDF, XLSX, CSV) reads this row only, so it shows the same numbers whatever prices do."""

    kind = models.CharField(max_length=40, help_text="Report kind, e.g. 'spot' or 'rent_or_buy'.")
    subject_id = models.PositiveBigIntegerField(help_text="The workload, study or period it reports on.")
    title = models.CharField(max_length=300)
    data = models.JSONField()
    fingerprint = models.CharField(
        max_length=64, help_text="Hash of the data; an unchanged report adds no row."
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["kind", "subject_id", "fingerprint"], name="report_snapshot_lookup")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.subject_id} @ {self.created_at:%Y-%m-%d %H:%M}"
