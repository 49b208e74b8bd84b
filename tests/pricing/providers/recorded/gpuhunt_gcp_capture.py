"""Regenerate gpuhunt_gcp_capture.json: gpuhunt 0.1.34's GCP provider on the two real Cloud Billing
Catalog answers that our GCP reader is tested on (issue 32, item 3).

Not part of the test suite and not run with the project's virtualenv: gpuhunt's GCP module imports the
Google SDKs at load time, which the project does not install. Run it once from a throwaway venv:

    python3.11 -m venv /tmp/gcpvenv
    /tmp/gcpvenv/bin/pip install gpuhunt==0.1.34 google-cloud-billing google-cloud-compute google-cloud-tpu
    /tmp/gcpvenv/bin/python tests/pricing/providers/recorded/gpuhunt_gcp_capture.py

gpuhunt's own code is run: ``Prices.add_skus`` (SKUs -> per-GPU, per-vCPU, per-GiB hourly prices per
family, region and capacity type), ``GCPProvider._list_machine_types`` and ``_make_offers`` (machine
prices). Only its network calls are stood in for:
- the Cloud Billing Catalog ``list_skus`` answers with the recorded SKUs, each made a
  ``billing_v1.Sku`` by ``Sku.from_json(..., ignore_unknown_fields=True)``;
- the Compute Engine ``regions.list`` / ``machineTypes.list`` answers (no recorded answer of that API is
  kept here) are MACHINE_TYPES below, in the API's own fields (guestCpus, memoryMb, accelerators) with
  the figures of cloud.google.com/compute/docs/accelerator-optimized-machines (memoryMb = the
  documented GB, which are GiB, x 1024), listed in one zone per region the SKUs name. Which zones
  offer a machine does not change its price (gpuhunt prices by ``location[:-2]``, the region);
- ``acceleratorTypes.list`` (N1 + attached GPUs) answers nothing: neither answer has an N1 SKU.
``_make_offers`` is called once per machine type so that one machine whose price gpuhunt cannot
compute (a KeyError) is recorded as such and does not hide the others.

The gpuhunt 0.1.34 wheel lacks ``gpuhunt/resources/tpu_pricing.json`` (its RECORD lists only
``resources/__init__.py``; the file is in dstackai/gpuhunt's source tree), and ``gpuhunt.providers.gcp``
reads it at import: the import raises FileNotFoundError. The table prices TPUs only, which are not
compared here, so it is read as empty (``{}``) while the module is imported; nothing else is touched.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import importlib.metadata
import importlib.resources
import json
import platform
import types
from pathlib import Path

import google.cloud.compute_v1 as compute_v1
from google.cloud.billing_v1.types import Sku


def import_gpuhunt_gcp() -> types.ModuleType:
    """gpuhunt.providers.gcp with its missing TPU price table read as empty (see above)."""
    files = importlib.resources.files

    def files_with_empty_tpu_table(package):
        if package == "gpuhunt.resources":
            return types.SimpleNamespace(joinpath=lambda name: types.SimpleNamespace(read_text=lambda: "{}"))
        return files(package)

    importlib.resources.files = files_with_empty_tpu_table
    try:
        return importlib.import_module("gpuhunt.providers.gcp")
    finally:
        importlib.resources.files = files


gcp = import_gpuhunt_gcp()

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
OUTPUT = HERE / "gpuhunt_gcp_capture.json"
ANSWERS = {
    # path in the repository -> how its SKUs are listed in the file
    "tests/pricing/providers/recorded/real/gcp_opencost_skus.json": "skus",
    "tests/pricing/outside/data/gcp_cromwell_monitor_h100_mega_pricelist.json": None,
}
PACKAGES = [
    "gpuhunt",
    "google-cloud-billing",
    "google-cloud-compute",
    "google-cloud-tpu",
    "google-api-core",
    "google-auth",
    "proto-plus",
    "protobuf",
]
# name -> (guestCpus, memoryMb, accelerator type, accelerator count)
MACHINE_TYPES = {
    "a2-highgpu-1g": (12, 85 * 1024, "nvidia-tesla-a100", 1),
    "a2-highgpu-2g": (24, 170 * 1024, "nvidia-tesla-a100", 2),
    "a2-highgpu-4g": (48, 340 * 1024, "nvidia-tesla-a100", 4),
    "a2-highgpu-8g": (96, 680 * 1024, "nvidia-tesla-a100", 8),
    "a2-megagpu-16g": (96, 1360 * 1024, "nvidia-tesla-a100", 16),
    "a3-highgpu-8g": (208, 1872 * 1024, "nvidia-h100-80gb", 8),
    "a3-megagpu-8g": (208, 1872 * 1024, "nvidia-h100-mega-80gb", 8),
    "g2-standard-4": (4, 16 * 1024, "nvidia-l4", 1),
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_skus(relative: str, key: str | None) -> list[Sku]:
    document = json.loads((REPO / relative).read_text())
    items = document[key] if key else document
    return [Sku.from_json(json.dumps(item), ignore_unknown_fields=True) for item in items]


def zones_of(skus: list[Sku]) -> list[str]:
    return sorted({f"{region}-a" for sku in skus for region in sku.service_regions})


def provider_on(skus: list[Sku], zones: list[str]) -> gcp.GCPProvider:
    machine_types = [
        compute_v1.MachineType(
            name=name,
            guest_cpus=cpus,
            memory_mb=memory_mb,
            accelerators=[compute_v1.Accelerators(guest_accelerator_type=gpu, guest_accelerator_count=count)],
        )
        for name, (cpus, memory_mb, gpu, count) in MACHINE_TYPES.items()
    ]
    regions = {}
    for zone in zones:
        regions.setdefault(zone[:-2], []).append(f"https://www.googleapis.com/compute/v1/zones/{zone}")
    provider = object.__new__(gcp.GCPProvider)
    provider.project = "capture"
    provider.regions_client = types.SimpleNamespace(
        list=lambda project: [compute_v1.Region(name=r, zones=z) for r, z in regions.items()]
    )
    provider.machine_types_client = types.SimpleNamespace(list=lambda project, zone: machine_types)
    provider.accelerator_types_client = types.SimpleNamespace(list=lambda project, zone: [])
    provider.cloud_catalog_client = types.SimpleNamespace(list_skus=lambda parent: skus)
    return provider


def part_prices(skus: list[Sku]) -> dict:
    prices = gcp.Prices()
    prices.add_skus(skus)
    table = {"gpu": prices.gpu, "cpu": prices.cpu, "ram": prices.ram}
    return {
        resource: {
            family: {
                f"{region} {capacity.name}": price for (region, capacity), price in sorted(by_key.items())
            }
            for family, by_key in sorted(families.items())
        }
        for resource, families in table.items()
    }


def offers(provider: gcp.GCPProvider) -> tuple[list[dict], list[dict]]:
    made, failed = [], []
    machine_types = provider._list_machine_types()
    machine_types += provider._make_gpu_machine_types(machine_types)
    for machine_type in sorted(machine_types, key=lambda m: (m.instance_name, m.location)):
        try:
            items = provider._make_offers([machine_type])
        except Exception as error:  # what gpuhunt raises is the finding: recorded, not hidden
            failed.append(
                {
                    "instance_name": machine_type.instance_name,
                    "location": machine_type.location,
                    "error": f"{type(error).__name__}: {error}",
                }
            )
            continue
        for item in items:
            made.append(
                {
                    "instance_name": item.instance_name,
                    "location": item.location,
                    "spot": item.spot,
                    "price": item.price,
                    "cpu": item.cpu,
                    "memory": item.memory,
                    "gpu_name": item.gpu_name,
                    "gpu_count": item.gpu_count,
                    "gpu_memory": item.gpu_memory,
                }
            )
    return made, failed


def main() -> None:
    captures = []
    for relative, key in ANSWERS.items():
        skus = load_skus(relative, key)
        made, failed = offers(provider_on(skus, zones_of(skus)))
        captures.append(
            {
                "input": relative,
                "input_sha256": sha256(REPO / relative),
                "skus": len(skus),
                "part_prices": part_prices(skus),
                "offers": made,
                "offers_failed": failed,
            }
        )
    capture = {
        "generated_by": "tests/pricing/providers/recorded/gpuhunt_gcp_capture.py",
        "generated_on": dt.date.today().isoformat(),
        "python": platform.python_version(),
        "versions": {name: importlib.metadata.version(name) for name in PACKAGES},
        "machine_types_stand_in": {
            name: {"guestCpus": c, "memoryMb": m, "guestAcceleratorType": g, "guestAcceleratorCount": n}
            for name, (c, m, g, n) in MACHINE_TYPES.items()
        },
        "answers": captures,
    }
    OUTPUT.write_text(json.dumps(capture, indent=1, sort_keys=False) + "\n")
    print(f"wrote {OUTPUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
