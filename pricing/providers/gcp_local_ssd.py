"""The Local SSD GCP bundles with some GPU machine types, and the SKUs that price it (issue 32).

Google "bills accelerator-optimized machine types for their attached GPUs, predefined vCPU, memory, and
bundled Local SSD (if applicable)" (https://cloud.google.com/compute/docs/accelerator-optimized-machines,
"Pricing"), and every A3 and A2 Ultra machine type comes with Local SSD that cannot be left off
(https://cloud.google.com/compute/docs/disks/add-local-ssd, "machine types that automatically attach
Local SSD disks"). So such a machine's hourly price is

    GPUs + vCPUs + RAM + bundled GiB x the region's Local SSD price per GiB-month / 730 h

GCP prices Local SSD per GiB-month ("GiBy.mo") and converts to hours with 730 hours a month
(cloud.google.com/compute/all-pricing: "monthly estimates are based on 730 hours in each month"); the
same 730 h convention gpuhunt uses (``hours_in_month``).

A Local SSD SKU is recognised by its category (resourceGroup "LocalSSD"), never by its description
alone. Its description only says which machine family it bills (per-family "<Family> Instance Local SSD
running in ...", else the generic "SSD backed Local Storage" / "... in <City>") and whether it is the
Spot one ("... attached to Spot Preemptible VMs", "Spot Preemptible <Family> Instance Local SSD ..."):
a third-party catalog scraper (vantage-sh ec2instances.info, scraper/gcp) notes Google categorizes the
generic Spot SKU's usageType as "OnDemand", so a "Spot Preemptible" description makes the SKU Spot
whatever its usageType says (otherwise it would overwrite the on-demand SSD price). Not verified
against a recorded real answer: none with Local Storage SKUs is held here.
"""

from __future__ import annotations

import re
from decimal import Decimal

# GCP's 730 hours in a month (cloud.google.com/compute/all-pricing), for GiB-month prices.
HOURS_PER_MONTH = Decimal(730)
# Local SSD price units -> hours in one unit (a GiB-month price / 730 is per GiB-hour).
SSD_UNIT_HOURS = {"GiBy.mo": HOURS_PER_MONTH, "GiBy.h": Decimal(1)}
GENERIC = ""  # the family key of the generic "SSD backed Local Storage" SKUs

# Machine type -> bundled Local SSD GiB (each disk 375 GiB). Source: Google's A3 and A2 machine-type
# tables ("Attached Local SSD (GiB)"), https://cloud.google.com/compute/docs/accelerator-optimized-machines,
# and https://cloud.google.com/compute/docs/disks/add-local-ssd. a2-ultragpu-Ng (N x 375), a3-highgpu-8g and
# a3-megagpu-8g (16 x 375) agree with gpuhunt 0.1.34's ``local_ssd_sizes_gib``; a3-highgpu-1g/2g/4g
# (2, 4, 8 x 375) and a3-ultragpu-8g (32 x 375) are Google's table figures that gpuhunt does not carry.
# a2-highgpu/megagpu, g2 and n1 machines bundle none (Local SSD is optional there and billed apart).
BUNDLED_LOCAL_SSD_GIB: dict[str, int] = {
    "a2-ultragpu-1g": 1 * 375,
    "a2-ultragpu-2g": 2 * 375,
    "a2-ultragpu-4g": 4 * 375,
    "a2-ultragpu-8g": 8 * 375,
    "a3-highgpu-1g": 2 * 375,
    "a3-highgpu-2g": 4 * 375,
    "a3-highgpu-4g": 8 * 375,
    "a3-highgpu-8g": 16 * 375,
    "a3-megagpu-8g": 16 * 375,
    "a3-ultragpu-8g": 32 * 375,
}
SSD_UNPRICED = "bundled Local SSD unpriced"

_FAMILY_SSD = re.compile(r"^(?:Spot Preemptible )?(.+?) Instance Local SSD\b")
_SPOT = re.compile(r"\bSpot Preemptible\b")
_LOCAL_SSD_TEXT = re.compile(r"\bLocal (?:SSD|Storage)\b", re.IGNORECASE)


def local_ssd_family(description: str) -> str:
    """The machine family a per-family Local SSD SKU bills ("A3" ...), GENERIC for any other form."""
    match = _FAMILY_SSD.match(description)
    return match.group(1) if match else GENERIC


def says_spot(description: str) -> bool:
    return bool(_SPOT.search(description))


def mentions_local_ssd(description: str) -> bool:
    return bool(_LOCAL_SSD_TEXT.search(description))
