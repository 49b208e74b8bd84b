"""Which offers sit on an aarch64 (Arm) host, where the bundled catalog knows it (fixrn2, audrn's FIX LIST item 4).

The image loader's rates (assumptions loader_crop_images_per_vcpu 25.2 images/s a vCPU, loader_images_per_vcpu)
were measured on x86 hosts, where a vCPU is a hyperthread (DeiT's 8-V100 node; YOLOv5 / Ultralytics runs). On an
aarch64 host a vCPU is a whole core (Graviton2: Neoverse N1, no SMT; Grace: Neoverse V2) and JPEG decode /
augmentation throughput there was not measured, so a row on such a host warns that its loader rate is an x86
figure. The rate itself is not changed (no aarch64 reading to change it to).

Known aarch64 hosts:
- AWS instance families whose rows in the bundled SkyPilot AWS catalog (pricing/data/skypilot/aws/vms.gpu.csv,
  column Arch) read arm64: g5g (T4G GPUs on a Graviton2 host), checked against the CSV by
  tests/procurement/sizing/test_host_arch_fixrn2.py.
- GPUs that are half of a Grace superchip (GH200 Grace Hopper, GB200 Grace Blackwell): the host CPU is Grace,
  whoever rents it (NVIDIA's GH200 / GB200 product pages: one Grace CPU joined to the GPU(s) by NVLink-C2C).
Other offers are taken as x86 (the catalog's Arch column reads x86_64 for every other AWS row; other providers'
CSVs carry no architecture).
"""

from __future__ import annotations

# provider slug -> instance-type prefixes whose hosts are aarch64 (the catalog's arm64 rows)
AARCH64_INSTANCE_PREFIXES = {"aws": (("g5g.", "AWS Graviton2"),)}
# GPU slug prefixes of Grace superchips: the host CPU is NVIDIA Grace
GRACE_GPU_PREFIXES = ("gh200", "gb200", "gb300")


def aarch64_host(provider: str, instance_type: str, gpu_slug: str) -> str | None:
    """The aarch64 host an offer runs on ("AWS Graviton2", "NVIDIA Grace"), None where the catalog knows none."""
    for prefix, name in AARCH64_INSTANCE_PREFIXES.get(str(provider).lower(), ()):
        if str(instance_type).lower().startswith(prefix):
            return name
    if str(gpu_slug).lower().startswith(GRACE_GPU_PREFIXES):
        return "NVIDIA Grace"
    return None


def aarch64_loader_warning(host: str, images_per_vcpu: float) -> str:
    """The row's warning that its loader rate is an x86 figure on an aarch64 host."""
    return (
        f"the host is aarch64 ({host}): the image loader's {images_per_vcpu:.3g} images/s a vCPU was measured on "
        "x86 hosts (a vCPU a hyperthread); JPEG decode and augmentation on an aarch64 vCPU (a whole core) is "
        "unmeasured, so this row's loader rate is an x86 figure: measure the run's loader on this host"
    )
