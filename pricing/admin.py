"""Admin for the catalog: searchable, filterable; price history is read-only."""

from django.contrib import admin

from pricing import models
from pricing.choices import PriceStatus


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
class GpuModelAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "architecture",
        "memory_gb",
        "memory_bandwidth_gbps",
        "bf16_tflops",
        "tdp_w",
    ]
    list_filter = ["vendor", "architecture", "ecc"]
    search_fields = ["slug", "name"]


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
class PriceObservationAdmin(admin.ModelAdmin):
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
        description="Accept the selected suspect prices (publish them)", permissions=["accept_suspect"]
    )
    def accept_suspect_prices(self, request, queryset):
        """The one change allowed: a person confirms a price the >5× / <1/5 guard rail held back."""
        suspects = list(queryset.filter(status=PriceStatus.SUSPECT))
        accepted = queryset.filter(pk__in=[o.pk for o in suspects]).update(status=PriceStatus.PUBLISHED)
        for observation in suspects:  # the admin's history says who published which price, and when
            self.log_change(request, observation, f"Accepted suspect price {observation.amount_per_hour}")
        self.message_user(request, f"{accepted} suspect price(s) accepted and published.")

    def has_accept_suspect_permission(self, request):
        """Its own permission: seeing prices (view-only staff) is not enough to publish one."""
        return request.user.has_perm("pricing.accept_suspect_price")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.FxRate)
class FxRateAdmin(admin.ModelAdmin):
    list_display = ["currency", "base", "rate", "as_of", "source"]
    list_filter = ["currency", "base"]


@admin.register(models.StorageRate)
class StorageRateAdmin(admin.ModelAdmin):
    list_display = ["provider", "region", "storage_class", "price_per_gb_month", "currency", "observed_at"]
    list_filter = ["provider", "storage_class"]


@admin.register(models.SpotAdvisory)
class SpotAdvisoryAdmin(admin.ModelAdmin):
    list_display = ["instance_type_name", "region_code", "interruption_label", "savings_pct", "observed_at"]
    list_filter = ["interruption_band", "region_code"]
    search_fields = ["instance_type_name"]
