"""The beat schedule, declared in code and loaded into django-celery-beat by `sync_schedule`.

Editing a job in the admin afterwards is allowed and survives deploys: the next `sync_schedule` (run at
deploy and by `make run`) creates missing jobs and rewrites a field only when this file changed it
since the last sync (scheduler/beat_sync.py); `sync_schedule --reset` puts back what this file says.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ScheduledJob:
    name: str
    task: str
    every_seconds: int
    kwargs: dict = field(default_factory=dict)
    description: str = ""


HOUR = 3600
DAY = 24 * HOUR

SCHEDULE: tuple[ScheduledJob, ...] = (
    ScheduledJob(
        "aws spot prices", "pricing.refresh_prices", HOUR, {"source": "aws-spot"}, "Spot prices move hourly."
    ),
    ScheduledJob(
        "aws on-demand and reserved prices",
        "pricing.refresh_prices",
        DAY,
        {"source": "aws-on-demand"},
        "List prices change rarely; daily catches announcements.",
    ),
    ScheduledJob(
        "aws savings plans rates",
        "pricing.refresh_prices",
        DAY,
        {"source": "aws-savings-plans"},
        "Compute and EC2 Instance Savings Plans rates change with list prices; daily.",
    ),
    ScheduledJob(
        "aws spot advisor",
        "pricing.refresh_prices",
        DAY,
        {"source": "aws-spot-advisor"},
        "The advisor's interruption bands are published about daily.",
    ),
    ScheduledJob(
        "azure gpu prices",
        "pricing.refresh_prices",
        DAY,
        {"source": "azure-retail"},
        "Azure Retail Prices API: pay-as-you-go, Spot, reservations, savings plans of NC/ND/NV sizes. "
        "Off until GPULEDGER_AZURE_PRICES=1; stamped per day, so reruns within a day insert nothing.",
    ),
    ScheduledJob(
        "gcp gpu prices",
        "pricing.refresh_prices",
        DAY,
        {"source": "gcp-billing"},
        "GCP Cloud Billing Catalog: a2/a3/g2 and n1+GPU machines, on-demand, Spot, committed use. "
        "Off until GCP_BILLING_API_KEY is set; stamped per day like Azure.",
    ),
    ScheduledJob(
        "lambda gpu prices",
        "pricing.refresh_prices",
        6 * HOUR,
        {"source": "lambda-cloud"},
        "Lambda Cloud API: instance types where capacity is available. Off until LAMBDA_API_KEY is set.",
    ),
    ScheduledJob(
        "vast market offers",
        "pricing.refresh_prices",
        HOUR,
        {"source": "vast-market"},
        "Marketplace offers come and go; off (queues nothing) unless GPULEDGER_VAST_MARKET=1.",
    ),
    ScheduledJob(
        "gpuhunt offers",
        "pricing.refresh_prices",
        DAY,
        {"source": "gpuhunt"},
        "The providers without a module here, read through gpuhunt (one source each, gpuhunt-<provider>); "
        "each is off (queues nothing) until GPULEDGER_GPUHUNT_PROVIDERS names it.",
    ),
    ScheduledJob(
        "billing exports from s3",
        "billing.import_s3_exports",
        6 * HOUR,
        {},
        "CUR 2.0 and FOCUS exports where they land in S3 (billing export sources): each month's newest "
        "delivery imported once, a restated month replaced and flagged. Off until a source is enabled.",
    ),
    ScheduledJob(
        "recompute stored decisions",
        "procurement.recompute_all",
        DAY,
        {},
        "Nightly catch-up: stored recommendations and TCO studies against current prices "
        "(each successful refresh also queues one).",
    ),
    ScheduledJob(
        "sweep unsent notifications",
        "procurement.sweep_notifications",
        5 * 60,
        {},
        "Change events whose notification was never queued (broker down) or whose sender died.",
    ),
    ScheduledJob(
        "close orphaned refreshes",
        "scheduler.close_orphaned_refreshes",
        15 * 60,
        {},
        "Refresh rows a crashed worker left 'running' are marked failed (scheduler/orphans.py).",
    ),
)
