"""Enumerations of billing data, normalized across FOCUS, CUR and Cost Explorer."""

from django.db import models


class BillingFormat(models.TextChoices):
    FOCUS = "focus", "FOCUS 1.0-1.2"
    CUR = "cur", "AWS CUR 2.0"
    COST_EXPLORER = "cost_explorer", "AWS Cost Explorer"
    UTILIZATION = "utilization", "GPU utilization"


class PricingCategory(models.TextChoices):
    ON_DEMAND = "on_demand", "On-demand"
    SPOT = "spot", "Spot"
    COMMITTED = "committed", "Committed"
    OTHER = "other", "Other"


class ChargeCategory(models.TextChoices):
    USAGE = "usage", "Usage"
    PURCHASE = "purchase", "Purchase"
    TAX = "tax", "Tax"
    CREDIT = "credit", "Credit"
    ADJUSTMENT = "adjustment", "Adjustment"


class CommitmentStatus(models.TextChoices):
    NONE = "", "No commitment"
    USED = "used", "Used"
    UNUSED = "unused", "Unused"
