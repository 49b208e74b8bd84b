"""Admin for the catalog: searchable, filterable; price history is read-only."""

from django.contrib import admin
from django.utils import timezone

from pricing import models
from pricing.choices import PriceStatus
from pricing.publishing import suspect_prices_publish


class EditedAtAdmin(admin.ModelAdmin):
    """A row a person saved here (a corrected datasheet, a rate entered or changed) is theirs: saving stamps
    edited_at, and `load_catalog` at the next deploy keeps it."""

    def save_model(self, request, obj, form, change):
        obj.edited_at = timezone.now()
        super().save_model(request, obj, form, change)


class ViewOnlyAdmin(admin.ModelAdmin):
    """Rows viewed here, never added, changed or deleted."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "kind", "default_currency"]
    list_filter = ["kind", "default_currency"]
    search_fields = ["slug", "name"]


@admin.register(models.Region)
class RegionAdmin(admin.ModelAdmin):
    list_display = ["code", "provider", "name"]
    list_filter = ["provider"]
    search_fields = ["code", "name"]


@admin.register(models.GpuModel)
class GpuModelAdmin(EditedAtAdmin):
    list_display = [
        "slug",
        "name",
        "architecture",
        "memory_gb",
        "memory_bandwidth_gbps",
        "bf16_tflops",
        "tdp_w",
        "edited_at",
    ]
    list_filter = ["vendor", "architecture", "ecc"]
    search_fields = ["slug", "name"]
    readonly_fields = ["edited_at"]


@admin.register(models.GpuAlias)
class GpuAliasAdmin(admin.ModelAdmin):
    list_display = ["alias", "provider", "gpu"]
    list_filter = ["provider"]
    search_fields = ["alias", "gpu__slug"]


@admin.register(models.UnmappedGpuName)
class UnmappedGpuNameAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "rows_seen", "first_seen_at"]
    list_filter = ["provider"]
    search_fields = ["name"]
    readonly_fields = ["provider", "name", "rows_seen", "first_seen_at"]


@admin.register(models.InstanceType)
class InstanceTypeAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "gpu", "gpu_name", "gpu_count", "vcpus", "memory_gib"]
    list_filter = ["provider", "gpu"]
    search_fields = ["name", "gpu_name"]


@admin.register(models.Offer)
class OfferAdmin(admin.ModelAdmin):
    list_display = ["instance_type", "region", "zone"]
    list_filter = ["region__provider"]
    search_fields = ["instance_type__name", "region__code", "zone"]
    list_select_related = ["instance_type__provider", "region__provider"]


@admin.register(models.PriceObservation)
class PriceObservationAdmin(ViewOnlyAdmin):
    """History is append-only: observations are viewed here, never edited or deleted."""

    list_display = [
        "offer",
        "pricing_model",
        "amount_per_hour",
        "currency",
        "observed_at",
        "source",
        "status",
    ]
    list_filter = ["status", "pricing_model", "currency", "offer__region__provider", "source"]
    search_fields = ["offer__instance_type__name", "offer__region__code", "source"]
    date_hierarchy = "observed_at"
    list_select_related = ["offer__instance_type__provider", "offer__region"]
    readonly_fields = [f.name for f in models.PriceObservation._meta.fields]
    actions = ["accept_suspect_prices"]

    @admin.action(
        description="Accept the selected suspect prices (publish them)", permissions=["publish_suspect"]
    )
    def accept_suspect_prices(self, request, queryset):
        """The one change allowed: a person confirms a price the >5× / <1/5 guard rail held back.
        Needs pricing.publish_suspect (viewing prices is not enough); each publication is audited."""
        ids = queryset.filter(status=PriceStatus.SUSPECT).values_list("pk", flat=True)
        accepted = suspect_prices_publish(ids, user=request.user)
        self.message_user(request, f"{accepted} suspect price(s) accepted and published.")

    def has_publish_suspect_permission(self, request) -> bool:
        return request.user.has_perm("pricing.publish_suspect")


@admin.register(models.FxRate)
class FxRateAdmin(EditedAtAdmin):
    list_display = ["currency", "base", "rate", "as_of", "source", "edited_at"]
    list_filter = ["currency", "base"]
    readonly_fields = ["edited_at"]


@admin.register(models.StorageRate)
class StorageRateAdmin(EditedAtAdmin):
    list_display = [
        "provider",
        "region",
        "storage_class",
        "price_per_gb_month",
        "currency",
        "observed_at",
        "edited_at",
    ]
    list_filter = ["provider", "storage_class"]
    readonly_fields = ["edited_at"]


@admin.register(models.SpotAdvisory)
class SpotAdvisoryAdmin(admin.ModelAdmin):
    list_display = ["instance_type_name", "region_code", "interruption_label", "savings_pct", "observed_at"]
    list_filter = ["interruption_band", "region_code"]
    search_fields = ["instance_type_name"]


@admin.register(models.SuspectPricePublication)
class SuspectPricePublicationAdmin(ViewOnlyAdmin):
    """The audit of published suspect prices: read-only, written by the publish action alone."""

    list_display = [
        "published_at",
        "published_by",
        "observation",
        "previous_current_amount",
        "previous_current_currency",
        "new_current_amount",
        "new_current_currency",
    ]
    list_filter = ["published_by"]
    list_select_related = [
        "published_by",
        "observation__offer__instance_type__provider",
        "observation__offer__region",
    ]
    date_hierarchy = "published_at"
