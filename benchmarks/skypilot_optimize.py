"""SkyPilot's ``Optimizer.optimize`` timed on the bundled catalog rows: run by ranking_bench.py with the
Python of SkyPilot's own virtualenv (var/skypilot-venv, ``pip install skypilot==0.14.1``), never with
the project's. Prints one JSON object.

    var/skypilot-venv/bin/python benchmarks/skypilot_optimize.py --catalog pricing/data/skypilot --repeat 9

Offline by construction: SkyPilot reads its catalogs from ``$HOME/.sky/catalogs/v8``; this script makes a
throwaway HOME, copies the bundled SkyPilot CSVs there (the same files catalog_load() stores: GCP's GPU
rows and host-VM rows joined into one vms.csv, as SkyPilot's own GCP catalog holds both), and writes the
catalog files SkyPilot would otherwise download at import (AWS images and quota mapping) empty with their
header, so nothing is fetched; proxies point at a closed loopback port, so a missed download fails at once
instead of reaching the network. No cloud has credentials here, so the enabled-cloud check is replaced by
the clouds whose catalogs were copied: the optimizer then runs exactly as for a user with those clouds.

The task: one node asking for any of the (accelerator, count) pairs the copied catalogs sell that SkyPilot
can place on the enabled clouds (SkyPilot's ``any_of`` resources; ``--list`` prints those pairs: each one
optimized alone, kept if SkyPilot finds a launchable; in a process of its own so the timed one starts
cold), minimizing
cost: the closest SkyPilot question to "rank every offer for this workload". Timed: the first call in this fresh process (cold: catalogs read and parsed inside it), then
``--repeat`` further calls (warm), each on a new DAG.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# clouds whose catalog the project bundles, by SkyPilot's registry name and catalog folder
CLOUDS = {
    "aws": "aws",
    "gcp": "gcp",
    "lambda": "lambda",
    "cudo": "cudo",
    "vast": "vast",
    "nebius": "nebius",
    "verda": "verda",
}
EMPTY_CATALOGS = {
    "aws/images.csv": "Tag,Region,OS,OSVersion,ImageId,CreationDate\n",
    "aws/instance_quota_mapping.csv": "InstanceType,QuotaCode\n",
    "common/metadata.csv": "GPU,MemoryGB,Manufacturer\n",  # read only to pick GPUs by memory: unused here
}
DISPLAY = {
    "aws": "AWS",
    "gcp": "GCP",
    "lambda": "Lambda",
    "cudo": "Cudo",
    "vast": "Vast",
    "nebius": "Nebius",
    "verda": "Verda",
}


def _copy_catalogs(source: Path, home: Path) -> None:
    target = home / ".sky" / "catalogs" / "v8"
    for folder in CLOUDS.values():
        (target / folder).mkdir(parents=True, exist_ok=True)
        if folder in ("aws", "gcp"):  # the project bundles their GPU rows only (vms.gpu.csv)
            parts = [source / folder / "vms.gpu.csv"] + (
                [source / "gcp" / "vms.hosts.csv"] if folder == "gcp" else []
            )
            with (target / folder / "vms.csv").open("w", encoding="utf-8") as out:
                for index, part in enumerate(parts):
                    lines = part.read_text(encoding="utf-8").splitlines(keepends=True)
                    out.writelines(lines if index == 0 else lines[1:])
        else:
            shutil.copy(source / folder / "vms.csv", target / folder / "vms.csv")
    (target / "common").mkdir(exist_ok=True)
    for name, header in EMPTY_CATALOGS.items():
        (target / name).write_text(header, encoding="utf-8")
    # SkyPilot canonicalizes accelerator names against common/accelerators.csv (downloaded otherwise): the
    # same table built from the copied catalogs, each name with the clouds selling it
    clouds: dict[str, set[str]] = {}
    for folder, accelerator, _ in _rows(source):
        clouds.setdefault(accelerator, set()).add(DISPLAY[folder])
    with (target / "common" / "accelerators.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["AcceleratorName", "Clouds"])
        writer.writerows([name, ", ".join(sorted(names))] for name, names in sorted(clouds.items()))


def _rows(source: Path):
    """(cloud folder, accelerator, count) of every whole-GPU row of the copied catalogs."""
    for folder in CLOUDS.values():
        name = "vms.gpu.csv" if folder in ("aws", "gcp") else "vms.csv"
        with (source / folder / name).open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                accelerator, count = row.get("AcceleratorName") or "", row.get("AcceleratorCount") or ""
                # TPUs: the project's ranking has no TPU model (no row of gpu_specs.csv), so neither side ranks them
                if accelerator.lower().startswith("tpu-"):
                    continue
                if accelerator and count and float(count) >= 1 and float(count).is_integer():
                    yield folder, accelerator, int(float(count))


def _pairs(source: Path) -> list[tuple[str, int]]:
    return sorted({(accelerator, count) for _, accelerator, count in _rows(source)})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--list", action="store_true", help="print the placeable (accelerator, count) pairs")
    parser.add_argument("--pairs", type=Path, help="JSON file of the pairs to ask for (from --list)")
    arguments = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="skypilot-home-"))
    _copy_catalogs(arguments.catalog, home)
    os.environ.update(
        HOME=str(home),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        SKYPILOT_DISABLE_USAGE_COLLECTION="1",
        SKYPILOT_DEBUG="0",
    )
    start = time.perf_counter()
    import sky
    from sky import check as sky_check
    from sky import optimizer as sky_optimizer
    from sky.utils import registry

    import_s = time.perf_counter() - start
    enabled = [registry.CLOUD_REGISTRY.from_str(name) for name in CLOUDS]
    sky_check.get_cached_enabled_clouds_or_refresh = lambda *args, **kwargs: list(enabled)
    sky_optimizer.sky_check = sky_check
    pairs = _pairs(arguments.catalog)

    def optimize(candidates):
        with sky.Dag() as dag:
            task = sky.Task(run="true")
            task.set_resources({sky.Resources(accelerators={name: count}) for name, count in candidates})
        sky_optimizer.Optimizer.optimize(dag, quiet=True)
        return task.best_resources

    if arguments.list:  # the pairs SkyPilot places on its own (the others only add "did you mean" work)
        placeable = []
        for pair in pairs:
            try:
                optimize([pair])
            except Exception:  # noqa: BLE001 - ResourcesUnavailableError and kin: not placeable here
                continue
            placeable.append(pair)
        print(json.dumps(placeable))
        return
    if arguments.pairs:
        pairs = [tuple(pair) for pair in json.loads(arguments.pairs.read_text())]

    durations, best = [], None
    for _ in range(arguments.repeat + 1):
        start = time.perf_counter()
        best = optimize(pairs)
        durations.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "skypilot": sky.__version__,
                "clouds": sorted(CLOUDS),
                "candidate_resources": len(pairs),
                "import_s": import_s,
                "cold_s": durations[0],
                "warm_s": statistics.median(durations[1:]),
                "warm_all_s": durations[1:],
                "best": str(best),
                "enabled": [str(c) for c in enabled],
                "python": sys.version.split()[0],
            }
        )
    )
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
