"""Admin for refresh runs (read-only records of what each run did) and for what sync_schedule last read
from the schedule in code (the beat jobs themselves are edited under "Periodic tasks")."""

from django.contrib import admin

from scheduler.models import PriceRefresh, SyncedScheduleJob


@admin.register(PriceRefresh)
class PriceRefreshAdmin(admin.ModelAdmin):
    list_display = [
        "source",
        "region",
        "started_at",
        "finished_at",
        "status",
        "rows_seen",
        "rows_inserted",
        "rows_unchanged",
        "rows_rejected",
        "rows_suspect",
        "rows_added",
        "rows_changed",
        "rows_refused",
        "duration_s",
        "failures_in_a_row",
    ]
    list_filter = ["status", "source"]
    search_fields = ["source", "region", "error"]
    readonly_fields = [f.name for f in PriceRefresh._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(SyncedScheduleJob)
class SyncedScheduleJobAdmin(admin.ModelAdmin):
    list_display = ["name", "synced_at"]
    readonly_fields = ["name", "definition", "synced_at"]

    def has_add_permission(self, request):
        return False
