"""Admin for workloads, architectures, benchmarks and stored decisions."""

from django.contrib import admin

from gpuledger.data_versions import bump_version
from procurement import models


@admin.register(models.ModelArchitecture)
class ModelArchitectureAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "params",
        "num_layers",
        "hidden_size",
        "num_key_value_heads",
        "vocab_size",
    ]
    search_fields = ["slug", "name", "hf_id"]


@admin.register(models.Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ["name", "task", "team", "owner", "updated_at"]
    list_filter = ["task", "team"]
    search_fields = ["name", "team__name"]


@admin.register(models.BenchmarkResult)
class BenchmarkResultAdmin(admin.ModelAdmin):
    list_display = [
        "workload",
        "gpu",
        "gpu_count",
        "precision",
        "tokens_per_second",
        "peak_memory_gib",
        "measured_at",
    ]
    list_filter = ["gpu", "precision", "peak_memory_definition"]
    search_fields = ["workload__name", "source"]


@admin.register(models.Recommendation)
class RecommendationAdmin(admin.ModelAdmin):
    list_display = ["workload", "computed_at", "fingerprint"]
    readonly_fields = ["workload", "computed_at", "parameters", "results", "prices_used", "fingerprint"]

    # An answer's deletion has no signal receiver (a workload's deletion would then load every answer it
    # cascades to, rows and all): the admin, the one place that deletes single answers, bumps itself.
    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        bump_version("workloads")

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        bump_version("workloads")


@admin.register(models.TcoStudy)
class TcoStudyAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "team", "computed_at"]
    list_filter = ["team"]
    search_fields = ["name"]


@admin.register(models.ChangeEvent)
class ChangeEventAdmin(admin.ModelAdmin):
    list_display = ["kind", "workload", "tco_study", "created_at", "notified_at"]
    list_filter = ["kind"]
    readonly_fields = ["kind", "workload", "tco_study", "before", "after", "created_at", "notified_at"]


@admin.register(models.NotificationOutbox)
class NotificationOutboxAdmin(admin.ModelAdmin):
    """Where each change event's notification stands; written by the senders only (read-only here)."""

    list_display = ["event", "state", "attempts", "claimed_at", "sent_at", "last_error"]
    list_filter = ["state"]
    readonly_fields = [
        "event",
        "state",
        "claim_token",
        "claimed_at",
        "sent_at",
        "attempts",
        "last_error",
        "created_at",
    ]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
