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
