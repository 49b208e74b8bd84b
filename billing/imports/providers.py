"""Provider names as billing files write them, to the catalog's provider slugs, and AWS usage types.

Only names listed here are mapped; any other provider name is kept as written (lower-cased), so its
instance types show up as unmapped rather than being matched to a provider they may not belong to.
"""

from __future__ import annotations

import re

PROVIDER_SLUGS = {
    "aws": "aws",
    "amazon web services": "aws",
    "amazon": "aws",
    "google cloud": "gcp",
    "google cloud platform": "gcp",
    "google": "gcp",
    "gcp": "gcp",
    "microsoft": "azure",
    "microsoft azure": "azure",
    "azure": "azure",
    "lambda": "lambda",
    "lambda labs": "lambda",
    "lambda cloud": "lambda",
    "cudo": "cudo",
    "cudo compute": "cudo",
    "vast": "vast",
    "vast.ai": "vast",
}

# AWS usage types that carry the instance type after the colon: "USE1-BoxUsage:p5.48xlarge",
# "SpotUsage:g6e.xlarge", "APN1-DedicatedUsage:p4d.24xlarge". Other usage types (EBS, data transfer)
# name no instance.
_AWS_INSTANCE_USAGE = re.compile(
    r"(?:^|-)(?:BoxUsage|SpotUsage|DedicatedUsage|HostBoxUsage|ReservedHostUsage|UnusedBox|UnusedDed|"
    r"DiscountedUsage|SavingsPlanCoveredUsage|HeavyUsage)[^:]*:(?P<type>[a-z0-9-]+\.[a-z0-9-]+)$"
)


def provider_slug(name: str) -> str:
    cleaned = name.strip()
    return PROVIDER_SLUGS.get(cleaned.lower(), cleaned.lower()[:100])


def aws_usage_instance_type(usage_type: str) -> str:
    """The instance type in an AWS usage type, or "" when it names none."""
    match = _AWS_INSTANCE_USAGE.search(usage_type.strip())
    return match.group("type") if match else ""
