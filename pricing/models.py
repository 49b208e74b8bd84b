"""The catalog and its prices: providers, regions, GPU models, instance types, offers, observations.

Price history is append-only: a new price is a new PriceObservation, and "current" is the newest
published observation of an offer and pricing model. A missing price is an absent row, never 0
(a database constraint keeps every stored amount positive).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from pricing.choices import (
    CommitmentKind,
    Currency,
    PaymentOption,
    PriceStatus,
    PricingModel,
    ProviderKind,
    StorageClass,
)

HOURLY = {"max_digits": 18, "decimal_places": 6}
FX_FUTURE_ALLOWANCE = dt.timedelta(days=1)  # the same clock-skew allowance as pricing.ingest


class Provider(models.Model):
    slug = models.SlugField(unique=True, help_text="Short name used by the CLI and API, e.g. 'aws'.")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=ProviderKind.choices, default=ProviderKind.NEOCLOUD)
    default_currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    website = models.URLField(blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name


class Region(models.Model):
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="regions")
    code = models.CharField(max_length=100, help_text="The provider's region code, e.g. 'us-east-1'.")
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["provider__slug", "code"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "code"], name="region_unique_per_provider")
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}/{self.code}"


class GpuModel(models.Model):
    """A datasheet entry. Tensor figures are dense (2:4-sparse vendor numbers halved)."""

    slug = models.SlugField(unique=True, help_text="e.g. 'h100-sxm5-80gb'; used by the CLI and API.")
    name = models.CharField(max_length=100, unique=True)
    vendor = models.CharField(max_length=100)
    architecture = models.CharField(max_length=50)
    memory_gb = models.DecimalField(max_digits=8, decimal_places=2, help_text="Datasheet GB (10^9 bytes).")
    memory_capacity_mib = models.PositiveIntegerField(
        null=True, blank=True, help_text="Total memory the driver reports (MiB); empty where no source."
    )
    memory_capacity_source = models.CharField(max_length=300, blank=True)
    memory_type = models.CharField(max_length=30, blank=True)
    memory_bandwidth_gbps = models.DecimalField(max_digits=10, decimal_places=2, help_text="GB/s.")
    fp32_tflops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    tf32_tflops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    fp16_tflops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    bf16_tflops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    fp8_tflops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    int8_tops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    fp4_tflops = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    tdp_w = models.PositiveIntegerField(null=True, blank=True, help_text="Empty where no reliable source.")
    interconnect = models.CharField(max_length=120, blank=True)
    nvlink_bandwidth_gbps = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    ecc = models.BooleanField(null=True, blank=True)
    mig_instances = models.PositiveSmallIntegerField(default=0, help_text="0: no MIG.")
    form_factor = models.CharField(max_length=100, blank=True)
    launch_year = models.PositiveSmallIntegerField(null=True, blank=True)
    approx_list_price_usd = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    price_note = models.CharField(max_length=300, blank=True)
    price_source_url = models.URLField(max_length=500, blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    crosscheck_url = models.URLField(max_length=500, blank=True)
    notes = models.TextField(blank=True)
    edited_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When a person last edited this datasheet in the admin; the bundled catalog never overrides it then.",
    )

    class Meta:
        ordering = ["vendor", "memory_gb", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(memory_gb__gt=0),
                name="gpu_memory_positive",
                violation_error_message="GPU memory must be above zero GB.",
            ),
            models.CheckConstraint(
                condition=Q(memory_bandwidth_gbps__gt=0),
                name="gpu_bandwidth_positive",
                violation_error_message="Memory bandwidth must be above zero GB/s.",
            ),
            models.CheckConstraint(condition=Q(tdp_w__isnull=True) | Q(tdp_w__gt=0), name="gpu_tdp_positive"),
            models.CheckConstraint(
                condition=Q(approx_list_price_usd__isnull=True) | Q(approx_list_price_usd__gt=0),
                name="gpu_list_price_positive_or_missing",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = {}
        for field in ("fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops"):
            value = getattr(self, field)
            if value is not None and value <= 0:
                errors[field] = "Leave a missing figure empty; a throughput cannot be zero or negative."
        if self.memory_gb is not None and self.memory_gb > 1000:
            errors["memory_gb"] = (
                "No single accelerator has over 1000 GB of memory; check the unit (GB, not MB)."
            )
        if self.launch_year is not None and not 1990 <= self.launch_year <= 2100:
            errors["launch_year"] = "Enter a four-digit launch year."
        if errors:
            raise ValidationError(errors)


class GpuAlias(models.Model):
    """Maps a source's accelerator name (e.g. SkyPilot's 'A100-80GB') to one of our GPU models.

    The most specific alias wins: provider and instance-type pattern, then provider, then global.
    Lambda's 'H100' is the PCIe card in gpu_1x_h100_pcie and the SXM5 part in gpu_8x_h100_sxm5.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, null=True, blank=True)
    alias = models.CharField(max_length=100)
    instance_type_contains = models.CharField(
        max_length=100, blank=True, help_text="Only instance types whose name contains this (e.g. 'pcie')."
    )
    gpu = models.ForeignKey(GpuModel, on_delete=models.CASCADE, related_name="aliases")
    note = models.CharField(max_length=300, blank=True, help_text="Why this mapping holds (a source).")

    class Meta:
        verbose_name_plural = "GPU aliases"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "alias", "instance_type_contains"], name="gpu_alias_unique_per_provider"
            ),
            models.UniqueConstraint(
                fields=["alias", "instance_type_contains"],
                condition=Q(provider__isnull=True),
                name="gpu_alias_unique_global",
            ),
        ]

    def __str__(self) -> str:
        scope = self.provider.slug if self.provider_id else "*"
        return f"{scope}:{self.alias} → {self.gpu.slug}"


class UnmappedGpuName(models.Model):
    """An accelerator name a source used that no alias maps; listed in the admin for mapping."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    rows_seen = models.PositiveIntegerField(default=0)
    first_seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "name"], name="unmapped_gpu_unique")]

    def __str__(self) -> str:
        return f"{self.provider.slug}:{self.name}"


class InstanceType(models.Model):
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="instance_types")
    name = models.CharField(max_length=150)
    gpu = models.ForeignKey(
        GpuModel, on_delete=models.PROTECT, null=True, blank=True, related_name="instance_types"
    )
    gpu_name = models.CharField(max_length=100, help_text="The source's accelerator name.")
    gpu_count = models.DecimalField(max_digits=8, decimal_places=3, help_text="Fractional for shared GPUs.")
    vcpus = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    memory_gib = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    gpu_memory_gib = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    local_disk_gb = models.DecimalField(max_digits=10, decimal_places=1, null=True, blank=True)
    network = models.CharField(max_length=100, blank=True)
    interconnect = models.CharField(max_length=100, blank=True, help_text="Intra-node GPU interconnect.")
    host_priced_separately = models.BooleanField(
        default=False, help_text="The price covers the GPUs only; the host VM is billed separately (GCP)."
    )
    host_figures_lower_bound = models.BooleanField(
        default=False,
        help_text="vCPUs and RAM are the smallest of the figures the source lists for this type in its regions.",
    )

    class Meta:
        ordering = ["provider__slug", "name"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "name"], name="instance_type_unique_per_provider"),
            models.CheckConstraint(
                condition=Q(gpu_count__gt=0),
                name="instance_gpu_count_positive",
                violation_error_message="An instance type needs a GPU count above zero (fractions allowed for shared GPUs).",
            ),
            models.CheckConstraint(
                condition=Q(vcpus__isnull=True) | Q(vcpus__gt=0), name="instance_vcpus_positive"
            ),
            models.CheckConstraint(
                condition=Q(memory_gib__isnull=True) | Q(memory_gib__gt=0), name="instance_memory_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}:{self.name}"


class Offer(models.Model):
    """An instance type in a region, and zone where the price is per zone (spot)."""

    instance_type = models.ForeignKey(InstanceType, on_delete=models.CASCADE, related_name="offers")
    region = models.ForeignKey(Region, on_delete=models.CASCADE, related_name="offers")
    zone = models.CharField(max_length=100, blank=True, help_text="Empty when priced per region.")
    # Marketplace offers (pricing/market_offers.py) come and go: each market refresh stamps the offers it
    # saw and marks gone the ones it no longer lists. Both stay empty for catalog and cloud offers.
    last_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="Marketplace offers: when a market refresh last listed it."
    )
    gone_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Marketplace offers: the refresh that no longer listed it; its prices are then not current.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["instance_type", "region", "zone"], name="offer_unique"),
        ]

    def __str__(self) -> str:
        where = f"{self.region.code}/{self.zone}" if self.zone else self.region.code
        return f"{self.instance_type} @ {where}"


class PriceObservation(models.Model):
    """One observed hourly price. Append-only: history is never overwritten.

    Commitment prices (reserved and savings-plan terms) are observations too, not a model of their own:
    ``amount_per_hour`` is their effective hourly price (recurring + upfront ÷ term hours), so the offer
    table, the ranking, "current" selection, suspect checks and freshness treat them as every other
    price with no second store to keep in step; ``upfront_amount`` and ``recurring_per_hour`` keep the
    two parts the provider quotes, and ``commitment_kind`` tells apart products sold for the same term
    and payment option (standard or convertible reservation, Compute or EC2 Instance Savings Plan). The
    kind is part of the natural key and of "current" (newest per offer, pricing model, payment option
    and kind), so each product keeps its own history.
    """

    # No separate index on offer: the natural-key unique index leads with it, and every extra index
    # slows the million-row ingest (benchmarks/ingest_bench.py).
    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="prices", db_index=False)
    pricing_model = models.CharField(max_length=20, choices=PricingModel.choices)
    payment_option = models.CharField(max_length=20, choices=PaymentOption.choices, blank=True, default="")
    commitment_kind = models.CharField(max_length=20, choices=CommitmentKind.choices, blank=True, default="")
    amount_per_hour = models.DecimalField(**HOURLY)
    upfront_amount = models.DecimalField(
        **HOURLY,
        null=True,
        blank=True,
        help_text="Commitments: the one-off fee per instance (in `currency`).",
    )
    recurring_per_hour = models.DecimalField(
        **HOURLY, null=True, blank=True, help_text="Commitments: the hourly part billed besides the fee."
    )
    currency = models.CharField(max_length=3, choices=Currency.choices)
    observed_at = models.DateTimeField()
    source = models.CharField(max_length=200, help_text="Where the price came from, e.g. a file or an API.")
    status = models.CharField(max_length=12, choices=PriceStatus.choices, default=PriceStatus.PUBLISHED)
    # Bookkeeping link, not a business rule: no database constraint and no index (Django still
    # applies SET_NULL; refresh rows are not deleted), which spares a trigger and an index entry
    # per inserted row.
    refresh = models.ForeignKey(
        "scheduler.PriceRefresh",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="prices",
        db_constraint=False,
        db_index=False,
    )
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "offer",
                    "pricing_model",
                    "payment_option",
                    "commitment_kind",
                    "observed_at",
                    "source",
                ],
                name="price_observation_natural_key",
            ),
            models.CheckConstraint(
                condition=Q(upfront_amount__isnull=True) | Q(upfront_amount__gte=0),
                name="price_upfront_not_negative",
                violation_error_message="An upfront fee cannot be negative; leave it empty where there is none.",
            ),
            models.CheckConstraint(
                condition=Q(amount_per_hour__gt=0),
                name="price_positive",
                violation_error_message="A price must be above zero; a missing price is left out, never entered as 0.",
            ),
        ]
        # Publishing a held-back price is its own right: viewing price history does not grant it.
        permissions = [("publish_suspect", "Can publish a suspect (held-back) price")]
        # "Current" (newest per offer, pricing model, payment option, commitment kind) is served by the
        # natural-key index, which starts with exactly those columns and then observed_at.

    def __str__(self) -> str:
        return f"{self.offer} {self.pricing_model} {self.amount_per_hour} {self.currency}/h @ {self.observed_at:%Y-%m-%d}"


class FxRate(models.Model):
    """How many units of `base` one unit of `currency` buys on a date."""

    currency = models.CharField(max_length=3, choices=Currency.choices)
    base = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    rate = models.DecimalField(max_digits=18, decimal_places=8)
    as_of = models.DateField()
    source = models.CharField(max_length=300)
    edited_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When a person last edited this rate in the admin; the bundled catalog never overrides it then.",
    )

    class Meta:
        ordering = ["currency", "-as_of"]
        constraints = [
            models.UniqueConstraint(fields=["currency", "base", "as_of"], name="fx_rate_unique_per_day"),
            models.CheckConstraint(
                condition=Q(rate__gt=0),
                name="fx_rate_positive",
                violation_error_message="An FX rate must be above zero.",
            ),
        ]

    def __str__(self) -> str:
        return f"1 {self.currency} = {self.rate} {self.base} ({self.as_of})"

    def clean(self) -> None:
        # A rate dated ahead (beyond a day of clock skew) would be "the newest rate" for good.
        from django.utils import timezone

        latest = (timezone.now() + FX_FUTURE_ALLOWANCE).date()
        if self.as_of and self.as_of > latest:
            raise ValidationError({"as_of": f"{self.as_of} is in the future (after {latest})."})


class StorageRate(models.Model):
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="storage_rates")
    region = models.ForeignKey(
        Region, on_delete=models.CASCADE, null=True, blank=True, help_text="Empty: all regions."
    )
    storage_class = models.CharField(max_length=20, choices=StorageClass.choices)
    price_per_gb_month = models.DecimalField(max_digits=12, decimal_places=6)
    currency = models.CharField(max_length=3, choices=Currency.choices)
    source = models.CharField(max_length=300)
    observed_at = models.DateTimeField()
    edited_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When a person last edited this row in the admin; the bundled catalog never overrides it then.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "region", "storage_class"], name="storage_rate_unique"
            ),
            models.UniqueConstraint(
                fields=["provider", "storage_class"],
                condition=Q(region__isnull=True),
                name="storage_rate_unique_all_regions",
            ),
            models.CheckConstraint(
                condition=Q(price_per_gb_month__gt=0),
                name="storage_rate_positive",
                violation_error_message="A storage price must be above zero per GB-month.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug} {self.storage_class} {self.price_per_gb_month} {self.currency}/GB-month"


class SpotAdvisory(models.Model):
    """AWS Spot Instance Advisor: interruption band and savings for a type in a region, on a date."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE)
    region_code = models.CharField(max_length=50)
    instance_type_name = models.CharField(max_length=100)
    interruption_band = models.PositiveSmallIntegerField(
        help_text="0: <5%, 1: 5-10%, 2: 10-15%, 3: 15-20%, 4: >20%."
    )
    interruption_label = models.CharField(max_length=20)
    savings_pct = models.PositiveSmallIntegerField()
    observed_at = models.DateTimeField()
    source = models.CharField(max_length=300)

    class Meta:
        verbose_name_plural = "spot advisories"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "region_code", "instance_type_name", "observed_at"],
                name="spot_advisory_unique",
            ),
            models.CheckConstraint(condition=Q(interruption_band__lte=4), name="spot_advisory_band_range"),
        ]

    def __str__(self) -> str:
        return f"{self.region_code} {self.instance_type_name}: {self.interruption_label}"


def money_quantize(amount: Decimal) -> Decimal:
    """Hourly prices keep 6 decimal places."""
    return amount.quantize(Decimal("0.000001"))


class SuspectPricePublication(models.Model):
    """Audit of a held-back (suspect) price a person published: who, when, and what it did to the
    current price of its offer, pricing model and payment option. Written by pricing.publishing only."""

    observation = models.ForeignKey(PriceObservation, on_delete=models.PROTECT, related_name="publications")
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    published_at = models.DateTimeField(auto_now_add=True)
    previous_current_amount = models.DecimalField(
        **HOURLY, null=True, blank=True, help_text="The current price before; empty when there was none."
    )
    previous_current_currency = models.CharField(max_length=3, blank=True)
    new_current_amount = models.DecimalField(**HOURLY, help_text="The current price after publishing.")
    new_current_currency = models.CharField(max_length=3)

    class Meta:
        ordering = ["-published_at", "-pk"]

    def __str__(self) -> str:
        who = self.published_by.get_username() if self.published_by else "(deleted user)"
        return f"{who} published {self.observation_id} at {self.published_at:%Y-%m-%d %H:%M}"


class PriceVersion(models.Model):
    """One row whose (number, token) changes with every write that can change a ranking's input: prices,
    their publication, FX rates, the catalog (providers, regions, GPUs, instance types, offers), storage
    rates and Spot Advisor bands (pricing/price_version.py). Cached offer tables are keyed by it.

    The token is random on every bump, so a version rolled back with its transaction and bumped again by
    another never repeats a key whose cached table held the rolled-back data."""

    number = models.BigIntegerField(default=0)
    token = models.CharField(max_length=32)
    changed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"price version {self.number} ({self.token})"
