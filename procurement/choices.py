"""Enumerations of the procurement domain."""

from django.db import models


class TaskKind(models.TextChoices):
    PRETRAIN = "pretrain", "Pre-training"
    FULL_FINETUNE = "full_finetune", "Full fine-tuning"
    LORA = "lora", "LoRA"
    QLORA = "qlora", "QLoRA"
    INFERENCE = "inference", "Inference"


class Precision(models.TextChoices):
    FP32 = "fp32", "FP32"
    FP16 = "fp16", "FP16"
    BF16 = "bf16", "BF16"
    FP8 = "fp8", "FP8"


class Deployment(models.TextChoices):
    """What a ranked serving is for (procurement.ranking.options.DEPLOYMENTS, the same values)."""

    PRODUCTION = "production", "Production"
    DEVELOPMENT = "development", "Development"


class PeakMemoryDefinition(models.TextChoices):
    ALLOCATED = "allocated", "torch max_memory_allocated"
    RESERVED = "reserved", "torch max_memory_reserved"
    NVIDIA_SMI = "nvidia_smi", "nvidia-smi (includes CUDA context)"


class ChangeKind(models.TextChoices):
    CHEAPEST_OPTION = "cheapest_option", "Cheapest feasible option changed"
    SPOT_VERDICT = "spot_verdict", "Spot verdict changed"
    RENT_OR_BUY = "rent_or_buy", "Rent-or-buy recommendation changed"
    BUDGET_FORECAST = "budget_forecast", "Budget forecast crossed a threshold"
