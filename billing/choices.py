"""Enumerations of billing data, normalized across FOCUS, CUR and Cost Explorer."""

from django.db import models


class BillingFormat(models.TextChoices):
    FOCUS = "focus", "FOCUS 1.0-1.2"
    CUR = "cur", "AWS CUR 2.0"
    AZURE = "azure", "Azure cost details (actual or amortized)"
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


class RowKeyScheme(models.IntegerChoices):
    """How an import's row keys were made (keys.py). Only the current scheme is computed now; a file of
    an older one imported again is matched through its checksum (store._record_dataset)."""

    SHA256_TEXT = 1, "SHA-256 of the row's text (before December 2026)"
    COLUMN_HASH_128 = 2, "128-bit column hash"


class AllocationRule(models.TextChoices):
    """How the showback allocates shared and idle GPU cost to teams (allocation.py)."""

    PROPORTIONAL = "proportional", "In proportion to GPU-hours"
    EVEN = "even", "Evenly across the teams in scope"
    UNALLOCATED = "unallocated", "Left unallocated, as its own line"


class ExportFormat(models.TextChoices):
    """What an S3 export source delivers (imports/s3_exports.py reads both layouts' manifests)."""

    CUR2 = "cur", "AWS CUR 2.0 (Data Exports)"
    FOCUS = "focus", "FOCUS (Data Exports or a FOCUS export)"


class QueryEngine(models.TextChoices):
    """Where a source's review SQL runs (storage/review_sql.py translates it with sqlglot)."""

    DUCKDB = "duckdb", "DuckDB over the imported Parquet (embedded)"
    ATHENA = "athena", "Amazon Athena over the export in S3"


class SpendScope(models.TextChoices):
    """Where a bill line counts in the review (engine.scope_masks, gpu_scope.py), as DailySpend keeps it."""

    GPU = "gpu", "GPU usage"
    GPU_UNUSED_COMMITMENT = "gpu_unused_commitment", "Unused commitment of a GPU instance type"
    UNUSED_COMMITMENT = "unused_commitment", "Unused commitment naming no GPU (attributed by the review)"
    UNDETERMINED = "undetermined", "Usage the bill cannot tell GPU from non-GPU"
    NON_GPU = "non_gpu", "Non-GPU"
