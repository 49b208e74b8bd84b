from django import forms
from django.contrib import admin
from django.utils import timezone

from billing.finance.budget_fields import check_currency, parse_amount, parse_month
from billing.input_errors import ReviewInputError
from billing.models import (
    BillingExportDelivery,
    BillingExportSource,
    BillingImport,
    Budget,
    BudgetAlert,
    GpuUtilization,
    SpendGrant,
)


@admin.register(BillingImport)
class BillingImportAdmin(admin.ModelAdmin):
    list_display = [
        "file_name",
        "source_format",
        "imported_at",
        "rows_seen",
        "inserted",
        "unchanged",
        "unmapped_instance_types",
    ]
    list_filter = ["source_format"]
    readonly_fields = [f.name for f in BillingImport._meta.fields]


@admin.register(GpuUtilization)
class GpuUtilizationAdmin(admin.ModelAdmin):
    list_display = ["resource_id", "gpu_index", "hour", "utilization_pct", "samples"]
    search_fields = ["resource_id"]
    raw_id_fields = ["billing_import"]


@admin.register(SpendGrant)
class SpendGrantAdmin(admin.ModelAdmin):
    """Grant a team's engineers their own team's spend; who granted it is recorded, never typed."""

    list_display = ["team", "spend_team", "granted_by", "granted_at"]
    search_fields = ["team__name", "team__slug", "spend_team"]
    readonly_fields = ["granted_by", "granted_at"]
    fields = ["team", "spend_team", "granted_by", "granted_at"]

    def save_model(self, request, obj, form, change):
        # whoever saves the grant last answers for it (the admin history keeps the earlier ones)
        obj.granted_by, obj.granted_at = request.user, timezone.now()
        super().save_model(request, obj, form, change)


class BudgetAdminForm(forms.ModelForm):
    """The rules budget_service.budget_save applies on the page and the API: amount, currency, month."""

    class Meta:
        model = Budget
        fields = ["team", "month", "amount", "currency", "notify_email"]

    def _checked(self, name, check):
        try:
            return check(self.cleaned_data[name])
        except ReviewInputError as error:
            raise forms.ValidationError(error.message) from None

    def clean_amount(self):
        return self._checked("amount", parse_amount)

    def clean_currency(self):
        return self._checked("currency", check_currency)

    def clean_month(self):
        return self._checked("month", parse_month)


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    """Budgets on the admin site (admin role); finance edits them on /billing/budgets/ and through the API.
    All three check the same rules (budget_service)."""

    form = BudgetAdminForm
    list_display = ["team", "month", "amount", "currency", "notify_email", "updated_by", "updated_at"]
    list_filter = ["month", "currency"]
    search_fields = ["team"]
    readonly_fields = ["updated_by", "updated_at"]

    def save_model(self, request, obj, form, change):
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(BudgetAlert)
class BudgetAlertAdmin(admin.ModelAdmin):
    list_display = ["budget", "threshold_pct", "forecast", "created_at"]
    readonly_fields = ["budget", "threshold_pct", "forecast", "event", "created_at"]


@admin.register(BillingExportSource)
class BillingExportSourceAdmin(admin.ModelAdmin):
    """Where billing exports land; the scheduled import (billing.import_s3_exports) reads enabled ones."""

    list_display = ["name", "export_format", "bucket", "prefix", "enabled", "query_engine", "last_checked_at"]
    list_filter = ["enabled", "export_format", "query_engine"]
    readonly_fields = ["last_checked_at", "last_error"]


@admin.register(BillingExportDelivery)
class BillingExportDeliveryAdmin(admin.ModelAdmin):
    """What the scheduled import brought in, month by month; written only by the import."""

    list_display = ["source", "billing_month", "delivery_id", "rows", "restated", "replaced", "imported_at"]
    list_filter = ["source", "restated", "replaced"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
