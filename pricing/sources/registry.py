"""The price sources a refresh can run, each fetched per region through one provider module.

A source turns (region, now) into normalized records plus the reader's counters. Names are the
``source`` values of the beat schedule (scheduler/schedule.py) and of ``refresh_prices --source``;
``aws`` on the command line means every AWS source.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from pricing.price_checks import Refusals
from pricing.providers import (
    aws,
    aws_pricing,
    aws_savings_plans,
    azure_retail,
    gcp_billing_catalog,
    gpuhunt_offers,
    lambda_cloud,
    vast_market,
)
from pricing.providers.aws import AwsReadStats
from pricing.providers.http_api import Transport, urllib_transport
from pricing.providers.spot_advisor import parse_spot_advisor, read_spot_advisor, snapshot_time

DEFAULT_AWS_REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
SPOT_ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
GLOBAL_REGION = ""  # the spot advisor covers every region in one file


def aws_client_factory() -> aws.ClientFactory:
    """The boto3 client factory refreshes use (tests replace this function)."""
    return aws.boto3_client_factory


def spot_advisor_document() -> dict[str, Any]:
    """Download the Spot Advisor JSON (tests replace this function)."""
    with urllib.request.urlopen(SPOT_ADVISOR_URL, timeout=60) as response:  # noqa: S310 (fixed https URL)
        return json.load(response)


def aws_regions() -> list[str]:
    """The configured AWS regions (setting GPULEDGER_AWS_REGIONS), each a separate unit of work."""
    return list(getattr(settings, "GPULEDGER_AWS_REGIONS", None) or DEFAULT_AWS_REGIONS)


def http_transport() -> Transport:
    """The HTTPS transport the non-AWS price APIs use (tests replace this function)."""
    return urllib_transport


@dataclass
class Fetch:
    records: Iterator[Any]
    stats: Any  # the reader's counters: `rejected` and `rejected_locations` at least (AwsReadStats)
    # Rows the reader refused with a reason (a unit it cannot read, a size it does not know), filled
    # while `records` is read.
    refusals: Refusals = field(default_factory=Refusals)


@dataclass(frozen=True)
class Source:
    name: str
    fetch: Callable[[str, dt.datetime], Fetch]
    regions: Callable[[], list[str]]
    kind: str = "prices"  # "prices" | "spot_advisory"
    # Off until its setting exists: the beat task queues nothing for a source that is off (pricing/tasks.py)
    enabled: Callable[[], bool] = lambda: True
    off_reason: str = ""
    # Run in the ingest's transaction once the prices are stored (a marketplace marks its gone offers)
    after_ingest: Callable[[Fetch, dt.datetime], None] | None = None
    # A source whose GPU types follow its capacity (a marketplace's hosts, Lambda's "regions with capacity",
    # gpuhunt's current offers): a GPU type gone is flagged, never a failed refresh (a list-price source
    # losing a GPU type, or any source losing a pricing model, fails: pricing.refresh_changes).
    marketplace: bool = False
    # The provider whose offers it prices (the landing page's "not refreshed yet" list reads it)
    provider: str = ""


def _fetch_azure(region: str, now: dt.datetime) -> Fetch:
    refusals, stats = Refusals(), azure_retail.AzureReadStats()
    records = azure_retail.fetch_azure_prices(
        now=now, refusals=refusals, stats=stats, transport=http_transport()
    )
    return Fetch(records, stats, refusals)


def _fetch_gcp(region: str, now: dt.datetime) -> Fetch:
    refusals, stats = Refusals(), gcp_billing_catalog.GcpReadStats()
    records = gcp_billing_catalog.fetch_gcp_prices(
        api_key=settings.GCP_BILLING_API_KEY,
        now=now,
        refusals=refusals,
        stats=stats,
        transport=http_transport(),
    )
    return Fetch(records, stats, refusals)


def _fetch_lambda(region: str, now: dt.datetime) -> Fetch:
    refusals, stats = Refusals(), lambda_cloud.LambdaReadStats()
    records = lambda_cloud.fetch_lambda_prices(
        api_key=settings.LAMBDA_API_KEY, now=now, refusals=refusals, stats=stats, transport=http_transport()
    )
    return Fetch(records, stats, refusals)


def _fetch_aws_spot(region: str, now: dt.datetime) -> Fetch:
    stats, refusals = AwsReadStats(), Refusals()
    look_back = dt.timedelta(hours=getattr(settings, "GPULEDGER_SPOT_LOOK_BACK_HOURS", 7 * 24))
    records = aws.fetch_aws_spot(
        region,
        client_factory=aws_client_factory(),
        now=now,
        look_back=look_back,
        stats=stats,
        refusals=refusals,
    )
    return Fetch(records, stats, refusals)


def _fetch_aws_on_demand(region: str, now: dt.datetime) -> Fetch:
    # List prices are stamped with the day they were read, so a second run on the same day has the
    # same natural key and inserts nothing; a run the next day records that the price still holds.
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    stats, refusals = AwsReadStats(), Refusals()
    records = aws_pricing.fetch_aws_list_prices(
        region, client_factory=aws_client_factory(), now=day, stats=stats, refusals=refusals
    )
    return Fetch(records, stats, refusals)


def _fetch_aws_savings_plans(region: str, now: dt.datetime) -> Fetch:
    # Rates are stamped with the day they were read, as list prices are (a rerun that day adds nothing).
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    stats, refusals = AwsReadStats(), Refusals()
    records = aws_savings_plans.fetch_aws_savings_plan_rates(
        region, client_factory=aws_client_factory(), now=day, stats=stats, refusals=refusals
    )
    return Fetch(records, stats, refusals)


def _fetch_spot_advisor(region: str, now: dt.datetime) -> Fetch:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    refusals = Refusals()
    records = parse_spot_advisor(
        spot_advisor_document(),
        observed_at=day,
        source="spot-advisor:" + SPOT_ADVISOR_URL,
        instance_types=_known_aws_instance_types(),
        refusals=refusals,
    )
    return Fetch(records, AwsReadStats(), refusals)


def _known_aws_instance_types() -> set[str]:
    """Bands are kept for the AWS types gpuledger prices: the rest of the advisor would be ballast."""
    from pricing.models import InstanceType

    return set(InstanceType.objects.filter(provider__slug="aws").values_list("name", flat=True))


def spot_advisor_file_source(path: Path) -> Source:
    """The `aws-spot-advisor` source read from a saved spot-advisor-data.json instead of the network
    (`refresh_prices --source aws-spot-advisor --file PATH`, for machines without internet access).
    The bands are dated by the date in the file name, else by the day the file was written."""

    def fetch(region: str, now: dt.datetime) -> Fetch:
        refusals = Refusals()
        records = read_spot_advisor(
            path,
            observed_at=snapshot_time(path),
            instance_types=_known_aws_instance_types(),
            refusals=refusals,
        )
        return Fetch(records, AwsReadStats(), refusals)

    return Source("aws-spot-advisor", fetch, lambda: [GLOBAL_REGION], "spot_advisory")


def vast_market_transport() -> Transport:
    """How the Vast offer search is reached (tests replace this function with recorded answers)."""
    return http_transport()


# Where boto3 finds credentials without asking the network (its chain also asks the EC2 instance metadata
# service, which a machine outside AWS would wait on, so that link is switched on by a setting instead).
AWS_CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
)


def aws_credentials_configured() -> bool:
    """True when boto3 would find credentials in the environment or the shared files, or when
    GPULEDGER_AWS_SAVINGS_PLANS says an instance role provides them."""
    if getattr(settings, "GPULEDGER_AWS_SAVINGS_PLANS", False):
        return True
    if any(os.environ.get(name) for name in AWS_CREDENTIAL_VARIABLES):
        return True
    shared = [
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"),
        os.environ.get("AWS_CONFIG_FILE", "~/.aws/config"),
    ]
    return any(Path(path).expanduser().is_file() for path in shared)


def vast_market_enabled() -> bool:
    return bool(getattr(settings, "GPULEDGER_VAST_MARKET", False))


def _fetch_vast_market(region: str, now: dt.datetime) -> Fetch:
    stats = vast_market.VastMarketStats()
    records = vast_market.fetch_vast_market(now=now, transport=vast_market_transport(), stats=stats)
    return Fetch(records, stats)  # type: ignore[arg-type]  (the refresh reads .rejected, as of AwsReadStats)


def _vast_market_gone(fetch: Fetch, now: dt.datetime) -> None:
    from pricing.market_offers import market_offers_mark

    stats = fetch.stats
    market_offers_mark(
        provider_slug=vast_market.PROVIDER, listed=stats.listed, seen_at=now, complete=stats.complete
    )


SOURCES: dict[str, Source] = {
    "aws-spot": Source("aws-spot", _fetch_aws_spot, aws_regions, provider="aws"),
    "aws-on-demand": Source("aws-on-demand", _fetch_aws_on_demand, aws_regions, provider="aws"),
    "aws-savings-plans": Source(
        "aws-savings-plans",
        _fetch_aws_savings_plans,
        aws_regions,
        enabled=aws_credentials_configured,
        off_reason="off: no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, a web-identity "
        "or container role, ~/.aws files); on an EC2 instance role set GPULEDGER_AWS_SAVINGS_PLANS=1",
    ),
    "aws-spot-advisor": Source(
        "aws-spot-advisor", _fetch_spot_advisor, lambda: [GLOBAL_REGION], "spot_advisory"
    ),
    "vast-market": Source(
        "vast-market",
        _fetch_vast_market,
        lambda: [GLOBAL_REGION],
        enabled=vast_market_enabled,
        off_reason="off: set GPULEDGER_VAST_MARKET=1 to read Vast's public offer search (no credentials)",
        after_ingest=_vast_market_gone,
        marketplace=True,
        provider="vast",
    ),
    # One listing covers every region of these providers (the region of each price is in the answer).
    "azure-retail": Source(
        "azure-retail",
        _fetch_azure,
        lambda: [GLOBAL_REGION],
        enabled=lambda: bool(getattr(settings, "GPULEDGER_AZURE_PRICES", False)),
        off_reason="off: set GPULEDGER_AZURE_PRICES=1 (the Retail Prices API needs no key)",
        provider="azure",
    ),
    "gcp-billing": Source(
        "gcp-billing",
        _fetch_gcp,
        lambda: [GLOBAL_REGION],
        enabled=lambda: bool(getattr(settings, "GCP_BILLING_API_KEY", "")),
        off_reason="off: set GCP_BILLING_API_KEY (an API key allowed to call the Cloud Billing API)",
        provider="gcp",
    ),
    "lambda-cloud": Source(
        "lambda-cloud",
        _fetch_lambda,
        lambda: [GLOBAL_REGION],
        enabled=lambda: bool(getattr(settings, "LAMBDA_API_KEY", "")),
        off_reason="off: set LAMBDA_API_KEY (a Lambda Cloud API key)",
        marketplace=True,
        provider="lambda",
    ),
}


def gpuhunt_items(provider: str) -> list[Any]:
    """gpuhunt's items of one provider (tests replace this function with recorded items)."""
    return gpuhunt_offers.fetch_gpuhunt_items(provider)


def gpuhunt_enabled(provider: str) -> bool:
    """On when GPULEDGER_GPUHUNT_PROVIDERS (a list, or a comma-separated string) names the provider."""
    names = getattr(settings, "GPULEDGER_GPUHUNT_PROVIDERS", "") or ""
    if isinstance(names, str):
        names = names.split(",")
    return provider in {name.strip() for name in names}


def _gpuhunt_source(provider: str) -> Source:
    def fetch(region: str, now: dt.datetime) -> Fetch:
        # The catalog is stamped with the day it was read: a rerun the same day inserts nothing.
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        refusals, stats = Refusals(), gpuhunt_offers.GpuhuntReadStats()
        records = gpuhunt_offers.gpuhunt_price_records(
            gpuhunt_items(provider), provider=provider, observed_at=day, refusals=refusals, stats=stats
        )
        return Fetch(records, stats, refusals)

    return Source(
        f"gpuhunt-{provider}",
        fetch,
        lambda: [GLOBAL_REGION],
        enabled=lambda: gpuhunt_enabled(provider),
        off_reason=f"off: add {provider} to GPULEDGER_GPUHUNT_PROVIDERS (read through gpuhunt "
        f"{gpuhunt_offers.GPUHUNT_VERSION}; see docs/provider-prices.md for the credentials it needs)",
        marketplace=True,
        provider=provider,
    )


SOURCES.update({f"gpuhunt-{name}": _gpuhunt_source(name) for name in gpuhunt_offers.GPUHUNT_PROVIDERS})
SOURCE_GROUPS = {
    "aws": ["aws-spot", "aws-on-demand", "aws-savings-plans", "aws-spot-advisor"],
    "gpuhunt": [f"gpuhunt-{name}" for name in gpuhunt_offers.GPUHUNT_PROVIDERS],
}


def expand_sources(name: str) -> list[Source]:
    """`aws` → every AWS source; a source name → itself. Unknown names raise, naming the choices."""
    names = SOURCE_GROUPS.get(name, [name])
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        choices = ", ".join([*SOURCE_GROUPS, *SOURCES])
        raise ValueError(f"unknown price source {unknown[0]!r} (choose from {choices})")
    return [SOURCES[n] for n in names]
