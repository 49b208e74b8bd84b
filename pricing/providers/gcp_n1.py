"""Which GPUs an n1 host VM can carry, and the whole-instance names of those combinations.

GCP attaches T4, V100, P100 and P4 GPUs to N1 general-purpose machine types in counts of 1, 2, 4 (and 8
for V100), each count with a ceiling on the host's vCPUs and memory (cloud.google.com/compute/docs/gpus,
"N1 general-purpose machine series"). A combination is offered here when

* GCP allows it: host vCPUs and memory within the ceiling for that GPU model and count, and
* the host has at least 4 vCPUs per GPU, the procurement guides' rule of thumb for feeding a GPU
  (docs/cost-model.md, "Host figures"): below it a combination would rank cheapest with only a warning,
  although nobody would run it, and
* it is the smallest such host of its line: the smallest n1-standard (the default, cheapest) and the
  smallest n1-highmem (6.5 GB per vCPU instead of 3.75, for plans that need host RAM, e.g. CPU offload).
  A larger host of the same line carries the same GPUs at a higher price and would only repeat rows.

Names read "<host>+<count>x<GPU>", e.g. ``n1-standard-8+2xT4``: unique per (host, GPU, count), and
never a name GCP uses for a machine type (GCP names have no "+").
"""

from __future__ import annotations

# The bundled n1 hosts (vms.hosts.csv: vCPUs, MemoryGiB), smallest first within each line. The figures are
# checked against every host row when the catalog is read (pricing/providers/gcp_hosts.py).
N1_STANDARD = {
    "n1-standard-4": (4, 15),
    "n1-standard-8": (8, 30),
    "n1-standard-16": (16, 60),
    "n1-standard-32": (32, 120),
}
N1_HIGHMEM = {"n1-highmem-8": (8, 52), "n1-highmem-16": (16, 104)}
N1_HOSTS = {**N1_STANDARD, **N1_HIGHMEM}
# (accelerator, count) -> (max host vCPUs, max host memory GB), GCP's "N1 general-purpose machine series"
# table. Where two readings of that table differ (T4 with one GPU: 24 or 48 vCPUs; P100 with four: 64 or
# 96 vCPUs "in some zones"), the lower ceiling is kept, so no combination GCP might refuse is built.
# Taken from secondary copies of that page (the live page was not reachable here): re-check them there.
N1_GPU_LIMITS: dict[tuple[str, int], tuple[int, int]] = {
    ("T4", 1): (24, 156),
    ("T4", 2): (48, 312),
    ("T4", 4): (96, 624),
    ("P4", 1): (24, 156),
    ("P4", 2): (48, 312),
    ("P4", 4): (96, 624),
    ("V100", 1): (12, 78),
    ("V100", 2): (24, 156),
    ("V100", 4): (48, 312),
    ("V100", 8): (96, 624),
    ("P100", 1): (16, 104),
    ("P100", 2): (32, 208),
    ("P100", 4): (64, 208),
}
MIN_VCPUS_PER_GPU = 4  # the guides' rule of thumb (docs/cost-model.md, "Host figures")


def n1_instance_name(host: str, accelerator: str, count: int) -> str:
    return f"{host}+{count}x{accelerator}"


def _allowed(accelerator: str, count: int, vcpus: int, memory_gb: int) -> bool:
    max_vcpus, max_memory = N1_GPU_LIMITS[(accelerator, count)]
    return MIN_VCPUS_PER_GPU * count <= vcpus <= max_vcpus and memory_gb <= max_memory


def _smallest_hosts(accelerator: str, count: int) -> tuple[str, ...]:
    """The smallest allowed host of each line (standard, highmem) for this many GPUs."""
    chosen = []
    for line in (N1_STANDARD, N1_HIGHMEM):
        allowed = [
            host for host, (vcpus, memory) in line.items() if _allowed(accelerator, count, vcpus, memory)
        ]
        if allowed:
            chosen.append(allowed[0])
    return tuple(chosen)


# host -> the (accelerator, count) pairs it is offered with, in the limits table's order
_OFFERED: dict[str, list[tuple[str, int]]] = {}
for _pair in N1_GPU_LIMITS:
    for _host in _smallest_hosts(*_pair):
        _OFFERED.setdefault(_host, []).append(_pair)


def n1_attachments(host: str) -> list[tuple[str, int]]:
    """The (accelerator, count) pairs offered on this n1 host; [] for any other machine type."""
    return list(_OFFERED.get(host, ()))
