"""The regions each live price source may name: a price for any other region is refused.

A price API that names a region we do not know is either a new region (add it here, with the page
that lists it) or a broken answer; either way a person should look before it ranks. Each list is the
provider's own documented list, copied on 2026-12-03 from the page named beside it (re-check there
when a refresh refuses rows for "region"); every region of the bundled catalog is in its provider's
list (a test checks it). Providers without a list here (bundled catalogs, imported
files) are not checked for region.
"""

from __future__ import annotations

# docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html (commercial and GovCloud).
AWS_REGIONS = frozenset(
    """
    us-east-1 us-east-2 us-west-1 us-west-2 af-south-1 ap-east-1 ap-east-2 ap-south-1 ap-south-2
    ap-southeast-1 ap-southeast-2 ap-southeast-3 ap-southeast-4 ap-southeast-5 ap-southeast-7
    ap-northeast-1 ap-northeast-2 ap-northeast-3 ca-central-1 ca-west-1 eu-central-1 eu-central-2
    eu-west-1 eu-west-2 eu-west-3 eu-south-1 eu-south-2 eu-north-1 il-central-1 me-south-1
    me-central-1 mx-central-1 sa-east-1 us-gov-east-1 us-gov-west-1
    """.split()
)

# learn.microsoft.com/azure/reliability/regions-list (the "Programmatic name" column = armRegionName).
AZURE_REGIONS = frozenset(
    """
    eastus eastus2 westus westus2 westus3 centralus northcentralus southcentralus westcentralus
    canadacentral canadaeast brazilsouth brazilsoutheast mexicocentral chilecentral
    northeurope westeurope uksouth ukwest francecentral francesouth germanywestcentral germanynorth
    switzerlandnorth switzerlandwest norwayeast norwaywest swedencentral swedensouth polandcentral
    italynorth spaincentral austriaeast belgiumcentral
    eastasia southeastasia japaneast japanwest koreacentral koreasouth australiaeast
    australiasoutheast australiacentral australiacentral2 centralindia southindia westindia
    jioindiawest jioindiacentral indonesiacentral malaysiawest newzealandnorth
    uaenorth uaecentral qatarcentral israelcentral southafricanorth southafricawest
    usgovvirginia usgovarizona usgovtexas
    """.split()
)

# cloud.google.com/compute/docs/regions-zones (the regions of the "Available regions and zones" table).
GCP_REGIONS = frozenset(
    """
    us-central1 us-east1 us-east4 us-east5 us-south1 us-west1 us-west2 us-west3 us-west4
    northamerica-northeast1 northamerica-northeast2 northamerica-south1 southamerica-east1
    southamerica-west1 europe-central2 europe-north1 europe-north2 europe-southwest1 europe-west1
    europe-west2 europe-west3 europe-west4 europe-west6 europe-west8 europe-west9 europe-west10
    europe-west12 me-central1 me-central2 me-west1 africa-south1 asia-east1 asia-east2
    asia-northeast1 asia-northeast2 asia-northeast3 asia-south1 asia-south2 asia-southeast1
    asia-southeast2 australia-southeast1 australia-southeast2
    us-central2
    """.split()
)  # us-central2 (Oklahoma) serves TPUs only and is missing from that table; the bundled catalog prices it

# docs.lambda.ai/public-cloud/on-demand/ ("Regions"), the names the instance-types API answers with.
LAMBDA_REGIONS = frozenset(
    """
    us-east-1 us-east-2 us-east-3 us-west-1 us-west-2 us-west-3 us-south-1 us-south-2 us-south-3
    us-midwest-1 us-midwest-2 europe-central-1 asia-south-1 asia-northeast-1 asia-northeast-2
    me-west-1 australia-east-1 europe-south-1
    """.split()
)  # europe-south-1 is not on that page but is a region of the bundled Lambda catalog (skypilot/lambda)

KNOWN_REGIONS: dict[str, frozenset[str]] = {
    "aws": AWS_REGIONS,
    "azure": AZURE_REGIONS,
    "gcp": GCP_REGIONS,
    "lambda": LAMBDA_REGIONS,
}


def region_known(provider: str, region: str) -> bool:
    """True when `provider` documents `region`, or when we keep no list for `provider`."""
    known = KNOWN_REGIONS.get(provider)
    return known is None or region in known
