"""What a bill row ran on, beyond AWS's usage types (issue 28): Azure VM sizes and Google Cloud's
per-GPU SKUs. Plain Python, no ORM.

- Azure: the VM size is `ServiceType` in the row's additional information, which Microsoft's FOCUS
  export carries as `x_SkuDetails` and its actual/amortized cost exports as `AdditionalInfo` (both a
  JSON object, e.g. {"UsageType": "ComputeHR", "ServiceType": "Standard_ND96isr_H100_v5", "VCPUs": 96};
  "AdditionalInfo" in https://learn.microsoft.com/azure/cost-management-billing/automate/understand-usage-details-fields,
  "x_SkuDetails" in https://learn.microsoft.com/azure/cost-management-billing/dataset-schema/cost-usage-details-focus).
  A cell that is not a JSON object names no size here; it never fails the import (an extension column).
- Google Cloud bills a GPU by itself, one SKU per GPU model and region ("Nvidia H100 80GB GPU running
  in Americas", "Spot Preemptible Nvidia L4 GPU running in EMEA"): the SKU description, which Google's
  FOCUS view writes as ChargeDescription (https://cloud.google.com/billing/docs/how-to/focus). Such a
  row is one GPU per hour: it gets the accelerator type as Compute Engine names it ("nvidia-h100-80gb",
  `gcloud compute accelerator-types list`), which store.catalog_entries maps to the GPU model through
  the catalog's Google Cloud GPU aliases with one GPU per "instance". Committed-use SKUs
  ("Commitment v1: Nvidia L4 GPU in Americas for 1 Year") are the commitment's fee, not usage: not matched.
"""

from __future__ import annotations

import json
import re

from gpuledger.json_depth import loads_bounded

# The GPU words of a Google Cloud GPU SKU description -> (Compute Engine accelerator type, the catalog's
# Google Cloud alias of that GPU, pricing/data/gpu_aliases.csv)
GCP_GPU_SKUS = {
    "tesla t4": ("nvidia-tesla-t4", "T4"),
    "t4": ("nvidia-tesla-t4", "T4"),
    "tesla v100": ("nvidia-tesla-v100", "V100"),
    "v100": ("nvidia-tesla-v100", "V100"),
    "tesla a100": ("nvidia-tesla-a100", "A100"),
    "a100": ("nvidia-tesla-a100", "A100"),
    "tesla a100 80gb": ("nvidia-a100-80gb", "A100-80GB"),
    "a100 80gb": ("nvidia-a100-80gb", "A100-80GB"),
    "h100 80gb": ("nvidia-h100-80gb", "H100"),
    "h100": ("nvidia-h100-80gb", "H100"),
    "h100 80gb mega": ("nvidia-h100-mega-80gb", "H100-MEGA"),
    "h200 141gb": ("nvidia-h200-141gb", "H200"),
    "b200": ("nvidia-b200", "B200"),
    "l4": ("nvidia-l4", "L4"),
}
_GCP_GPU_USAGE = re.compile(
    r"^(?:spot preemptible |preemptible |dws calendar mode |dws flex start )?nvidia (?P<gpu>.+?) gpu running in ",
    re.IGNORECASE,
)


def gcp_accelerator_type(description: str) -> str:
    """The accelerator type of a Google Cloud per-GPU usage SKU description, or "" for any other."""
    match = _GCP_GPU_USAGE.match(description.strip())
    if not match:
        return ""
    found = GCP_GPU_SKUS.get(" ".join(match.group("gpu").lower().split()))
    return found[0] if found else ""


def gcp_accelerator_aliases() -> dict[str, str]:
    """Accelerator type -> the catalog's Google Cloud alias of its GPU."""
    return {accelerator: alias for accelerator, alias in GCP_GPU_SKUS.values()}


# OCI's GPU shapes: BM.GPU.H100.8, BM.GPU.A100-v2.8, VM.GPU.A10.1, BM.GPU4.8, VM.GPU3.2 (OCI's "Compute
# Shapes" page; the catalog's skypilot/oci/vms.gpu.csv): bare metal or VM, "GPU", then the GPU count last
_OCI_GPU_SHAPE = re.compile(r"^(?:BM|VM)\.GPU[A-Za-z0-9.-]*\.\d+$")


def oci_gpu_shape(value: str) -> str:
    """The OCI GPU shape a cell holds (OCI's FOCUS report's ResourceType, where it names the shape), or ""."""
    text = value.strip()
    return text if _OCI_GPU_SHAPE.match(text) else ""


def azure_vm_size(details: str) -> str:
    """`ServiceType` of an Azure additional-information JSON object, or ""."""
    text = details.strip()
    if not text.startswith("{"):
        return ""
    try:
        obj = loads_bounded(text)
    except json.JSONDecodeError:
        return ""
    size = obj.get("ServiceType") if isinstance(obj, dict) else None
    return size.strip() if isinstance(size, str) else ""
