"""Enumerations of the pricing domain, as Django Choices classes."""

from django.db import models


class PricingModel(models.TextChoices):
    ON_DEMAND = "on_demand", "On-demand"
    SPOT = "spot", "Spot"
    RESERVED_1Y = "reserved_1y", "Reserved 1 year"
    RESERVED_3Y = "reserved_3y", "Reserved 3 years"
    SAVINGS_PLAN_1Y = "savings_plan_1y", "Savings plan 1 year"
    SAVINGS_PLAN_3Y = "savings_plan_3y", "Savings plan 3 years"


class PaymentOption(models.TextChoices):
    NONE = "", "Not applicable"
    NO_UPFRONT = "no_upfront", "No upfront"
    PARTIAL_UPFRONT = "partial_upfront", "Partial upfront"
    ALL_UPFRONT = "all_upfront", "All upfront"


class CommitmentKind(models.TextChoices):
    """Which commitment a reserved or savings-plan price is: the same term and payment option can be
    sold as several products (AWS: standard or convertible reservations; Compute or EC2 Instance
    Savings Plans), each with its own price. Empty for on-demand, spot, and a commitment whose source
    does not say (a rate card, an Azure reservation)."""

    NONE = "", "Not applicable"
    STANDARD = "standard", "Standard reservation"
    CONVERTIBLE = "convertible", "Convertible reservation"
    COMPUTE_SAVINGS_PLAN = "compute_sp", "Compute Savings Plan"
    INSTANCE_SAVINGS_PLAN = "ec2_instance_sp", "EC2 Instance Savings Plan"


# Commitment terms: the pricing models that bind for a term, and its length in years.
COMMITMENT_TERM_YEARS = {
    PricingModel.RESERVED_1Y: 1,
    PricingModel.RESERVED_3Y: 3,
    PricingModel.SAVINGS_PLAN_1Y: 1,
    PricingModel.SAVINGS_PLAN_3Y: 3,
}
COMMITTED_PRICING_MODELS = frozenset(COMMITMENT_TERM_YEARS)


class PriceStatus(models.TextChoices):
    PUBLISHED = "published", "Published"
    SUSPECT = "suspect", "Suspect (held back until accepted)"


class ProviderKind(models.TextChoices):
    HYPERSCALER = "hyperscaler", "Hyperscaler"
    NEOCLOUD = "neocloud", "GPU cloud"
    MARKETPLACE = "marketplace", "Marketplace"
    ONPREM = "onprem", "On-premise"
    INTERNAL = "internal", "Internal chargeback"


class Currency(models.TextChoices):
    """ISO 4217 codes the product accepts; a price in one of them also needs a stored FX rate."""

    USD = "USD", "US dollar"
    EUR = "EUR", "Euro"
    GBP = "GBP", "Pound sterling"
    CNY = "CNY", "Chinese yuan"
    JPY = "JPY", "Japanese yen"
    INR = "INR", "Indian rupee"
    CAD = "CAD", "Canadian dollar"
    AUD = "AUD", "Australian dollar"
    CHF = "CHF", "Swiss franc"
    SGD = "SGD", "Singapore dollar"
    KRW = "KRW", "South Korean won"
    HKD = "HKD", "Hong Kong dollar"


class StorageClass(models.TextChoices):
    BLOCK_SSD = "block_ssd", "Block storage (SSD)"
    BLOCK_HDD = "block_hdd", "Block storage (HDD)"
    OBJECT = "object", "Object storage"
    FILE = "file", "Shared file storage"
