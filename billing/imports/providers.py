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


# AWS's line item description of EC2 instance usage, which its FOCUS export writes as ChargeDescription:
# "$1.624 per On Demand Linux g5.4xlarge Instance Hour" (On Demand and Savings Plan covered usage alike),
# "USD 0.0 per Linux/UNIX (Amazon VPC), p4d.24xlarge reserved instance applied". Read only where the file
# has no x_UsageType: an anonymized or trimmed FOCUS file (FOCUS-Sample-Data, FinOps Foundation) keeps
# the description alone, and its GPU hours were otherwise counted as non-GPU spend.
_AWS_INSTANCE_DESCRIPTION = re.compile(
    r"\bper (?:On Demand|Dedicated Usage|Dedicated) .*?\b(?P<type>[a-z][a-z0-9-]*\.[a-z0-9-]+) Instance Hour$"
    r"|, (?P<reserved>[a-z][a-z0-9-]*\.[a-z0-9-]+) reserved instance applied$"
)


def provider_slug(name: str) -> str:
    cleaned = name.strip()
    return PROVIDER_SLUGS.get(cleaned.lower(), cleaned.lower()[:100])


def aws_usage_instance_type(usage_type: str) -> str:
    """The instance type in an AWS usage type, or "" when it names none."""
    match = _AWS_INSTANCE_USAGE.search(usage_type.strip())
    return match.group("type") if match else ""


def aws_description_instance_type(description: str) -> str:
    """The instance type an AWS EC2 usage description names, or "" for any other description."""
    match = _AWS_INSTANCE_DESCRIPTION.search(description.strip())
    return (match.group("type") or match.group("reserved")) if match else ""
