"""The four consumer cards of stop 51 ranked (cards2): Vast's offers mapped, the GeForce image factor checked on
the cards whose peaks are derived, and the first row of three budget workloads judged cost per run, like for like.

Sources:
  [ZZC-3060] github.com/zzc0721/torch-performance-test-data issue #131 (2026-02-02), "NVIDIA GeForce RTX 3060",
      torch 2.7.0 cu128, square torch.matmul: FP16 10240x10240 24.80 TFLOPS (8192: 24.75), BF16 25.47.
  [ZZC-4060TI] the same repository, issue #145 (2026-02-26), "NVIDIA GeForce RTX 4060 Ti", torch 2.2.0: FP16
      10240x10240 47.80 TFLOPS (4096: 45.03, 1024: 41.34), BF16 47.78. (16 GB or 8 GB not stated: the same AD106
      die, 34 SMs, as the 16 GB card; memory does not enter a GEMM's rate.)
  [CHSASANK] github.com/chsasank/device-benchmarks README.md @7ccc883 (benchmark.py: torch.matmul of n x n up to
      n = 6,888 for TFLOPS; a.copy_(b) of up to 0.38 GB for GB/s): "Nvidia 3060 12 GB | 7.4 | 26 | 26 | NA | 330",
      "Nvidia 4060ti | 12 | 42 | 46 | NA | 234", "Nvidia 4070 Ti Super | 31 | 91 | 89 | NA | 602",
      "Nvidia 3090 | 27 | | | | 831", "Nvidia 4090 | 58 | 150 | 168 | NA | 912" (FP32, FP16, BF16 TFLOPS,
      INT8, GB/s).
  [KOHYA-1288] github.com/bmaltais/kohya_ss issue #1288 (FurkanGozukara, 2023-08-01), SDXL LoRA with kohya's
      sdxl_train_network.py at batch 1: "I did a full test today / RTX 3060 is 2.4 second / it ... RTX 3090 [TI] is
      1.23 second / it"; earlier the same day "on rtx 3060 i train 32 network rank". His command for the same
      trainer seven weeks later is kohya-ss/sd-scripts issue #827 (the [KOHYA-827] case of
      test_outside_image_audit_stop50.py: rank 32, Adafactor, --full_bf16, cached latents, text encoders trained).
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from pricing.gpu_mapping import GpuNameResolver
from pricing.models import GpuModel, InstanceType, Provider, UnmappedGpuName
from procurement.ranking import interconnects
from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH,
    GEFORCE_VISION_PEAK_EFFICIENCY,
    LOADER_CROP_IMAGES_PER_VCPU,
)
from tests.procurement.outside.test_outside_recommendations_x26b import describe, ranked

SPEED = 0.25
CENT = Decimal("0.01")
IMAGENET_IMAGES = 1_281_167  # ImageNet-1k train (DeiT, arXiv:2012.12877 section 6)


def _hand_total(row: dict) -> Decimal:
    """price x hours x 1.2 (reruns) + one hour of setup + storage as the row states it (docs/cost-model.md)."""
    price = Decimal(row["effective_price_per_hour"]) * row["instances"]
    total = (
        price * Decimal(str(row["hours"])) * Decimal("1.2")
        + price
        + Decimal(row["cost_breakdown"]["storage"])
    )
    return total.quantize(Decimal("0.01"))


# ---------------------------------------------------------------- Vast's names for the four cards


@pytest.mark.django_db
def test_vast_rows_of_the_three_priced_cards_map_and_their_8_gb_siblings_do_not(bundled_catalog):
    """pricing/data/skypilot/vast/vms.csv writes RTX3060 for 1x-RTX_3060 (12,288 MiB) and for 2x-RTX_3060_Ti (8,192
    MiB a GPU), RTX4060 for 1x-RTX_4060_Ti (16,380 MiB), RTX4070 for 2x-RTX_4070S_Ti (32,752 / 2 MiB). Before:
    all four unmapped (vast:RTX3060, RTX4060, RTX4070 listed); after: three mapped, the 8 GB 3060 Ti not."""
    by_name = {
        it.name: it.gpu.slug if it.gpu else None for it in InstanceType.objects.filter(provider__slug="vast")
    }
    assert by_name["1x-RTX_3060-32-65536"] == "rtx-3060"
    assert by_name["1x-RTX_4060_Ti-32-65536"] == "rtx-4060-ti-16gb"
    assert by_name["2x-RTX_4070S_Ti-32-65536"] == "rtx-4070-ti-super"
    assert by_name["2x-RTX_3060_Ti-32-65536"] is None  # 8 GB RTX 3060 Ti: not in the catalog
    unmapped = set(UnmappedGpuName.objects.filter(provider__slug="vast").values_list("name", flat=True))
    assert "RTX4060" not in unmapped and "RTX4070" not in unmapped
    assert "RTX3060" in unmapped  # still listed: the 3060 Ti row carries that name too


@pytest.mark.django_db
def test_live_vast_names_map_by_memory_where_one_name_covers_two_cards(bundled_catalog):
    """Vast's offer search (tests/pricing/providers/recorded/real/vast_python_search.json.gz, 2024-11): gpu_name
    'RTX 4060 Ti' at gpu_ram 16,380 (18 offers) and 8,188 (2); 'RTX 3060' 12,288; 'RTX 4070S Ti' 16,376;
    'RTX 4080' 16,376; 'RTX 4080S' 16,376 (the SUPER: another part). Instance names as vast_market._instance
    writes them."""
    resolver = GpuNameResolver()
    vast = Provider.objects.get(slug="vast").id
    slug = dict(GpuModel.objects.values_list("id", "slug"))

    def resolved(name, instance, gib):
        gpu_id = resolver.resolve(vast, name, instance, Decimal(1), Decimal(gib))
        return slug.get(gpu_id)

    assert resolved("RTX 4060 Ti", "1x-RTX_4060_Ti-16g-offer1", "16.00") == "rtx-4060-ti-16gb"
    assert resolved("RTX 4060 Ti", "1x-RTX_4060_Ti-8g-offer2", "8.00") is None
    assert resolved("RTX 3060", "1x-RTX_3060-12g-offer3", "12.00") == "rtx-3060"
    assert resolved("RTX 4070S Ti", "1x-RTX_4070S_Ti-16g-offer4", "15.99") == "rtx-4070-ti-super"
    assert resolved("RTX 4080", "1x-RTX_4080-16g-offer5", "15.99") == "rtx-4080"
    assert resolved("RTX 4080S", "1x-RTX_4080S-16g-offer6", "15.99") is None
    # SkyPilot's name for an 8 GB 4060 Ti row: the instance pattern matches, the stated memory does not
    assert resolved("RTX4060", "1x-RTX_4060_Ti-8-32768", "8.00") is None
    # a fractional share states its share's memory and stays mapped (AWS g6f: an eighth of an L4, 2.79 GiB)
    aws = Provider.objects.get(slug="aws").id
    assert slug[resolver.resolve(aws, "L4", "g6f.large", Decimal("0.125"), Decimal("2.79"))] == "l4"


def test_vast_links_of_the_four_cards_are_stated_pcie_and_the_ada_ones_without_peer_to_peer():
    """No NVLink on the RTX 3060 (GA106) or any Ada GeForce card (spec pages; Ada whitepaper). Before: the Vast
    catch-all, PCIe 'assumed'; after: stated."""
    for instance, slug in (
        ("1x-RTX_3060-32-65536", "rtx-3060"),
        ("1x-RTX_4060_Ti-32-65536", "rtx-4060-ti-16gb"),
        ("2x-RTX_4070S_Ti-32-65536", "rtx-4070-ti-super"),
        ("1x-RTX_4080-16g-offer5", "rtx-4080"),
    ):
        link = interconnects.resolve("vast", instance, gpu_by_slug(slug))
        assert link.node_link == "pcie" and link.stated, (instance, link)
        assert interconnects.peer_to_peer(gpu_by_slug(slug)) == (slug == "rtx-3060")
    # the 8 GB 3060 Ti's row keeps the catch-all
    assert not interconnects.resolve("vast", "2x-RTX_3060_Ti-32-65536", gpu_by_slug("rtx-3060")).stated


# ---------------------------------------------------------------- the derived peaks against measured GEMMs


@pytest.mark.parametrize(
    "slug, measured_fp16_tflops, source",
    [
        ("rtx-3060", 24.80, "ZZC-3060 10240^2"),
        ("rtx-3060", 26.0, "CHSASANK"),
        ("rtx-4060-ti-16gb", 47.80, "ZZC-4060TI 10240^2"),
        ("rtx-4060-ti-16gb", 42.0, "CHSASANK"),
        ("rtx-4070-ti-super", 91.0, "CHSASANK"),
    ],
)
def test_derived_fp16_peak_is_what_torch_matmul_measures(slug, measured_fp16_tflops, source):
    """The GeForce image factor (geforce_vision_peak_efficiency 0.886 / vision_peak_efficiency 0.600 = 1.477) says
    a GeForce card's large 16-bit GEMMs run near its half-rate fp32-accumulate peak. On the three cards whose peak
    is derived (SMs x boost x 512), torch.matmul at n >= 6,888 measures 0.95-1.08 of that peak: the peak is right,
    and the factor's 0.886 is below what their GEMMs reach, as on the RTX 3090 it was fitted on. Hand: 24.80 / 25.5
    = 0.973, 26 / 25.5 = 1.020, 47.80 / 44.1 = 1.084, 42 / 44.1 = 0.952, 91 / 88.2 = 1.032."""
    peak = gpu_by_slug(slug).dense_tflops("fp16")
    assert GEFORCE_VISION_PEAK_EFFICIENCY.value <= measured_fp16_tflops / peak <= 1.10, (source, peak)


@pytest.mark.parametrize(
    "slug, measured_gbps",
    [
        ("rtx-3060", 330),
        ("rtx-4060-ti-16gb", 234),
        ("rtx-4070-ti-super", 602),
        ("rtx-3090", 831),
        ("rtx-4090", 912),
    ],
)
def test_image_passes_read_memory_no_faster_than_a_measured_copy(slug, measured_gbps):
    """The eager image step's activation passes run at achieved_bandwidth_fraction (0.70) of the datasheet
    bandwidth on every card; [CHSASANK]'s copy reaches 0.81 of the 4060 Ti's 288 GB/s (the lowest of the five),
    0.92 / 0.90 / 0.89 / 0.90 on the 3060, 4070 Ti SUPER, 3090 and 4090. So the GDDR6 cards' bandwidth-bound
    parts are not priced faster than measured: the 4060 Ti's passes at 0.70 / 0.81 = 0.86 of a copy's rate, the
    3090's at 0.79 (the 4060 Ti is 9% nearer its copy rate than the 3090 the factor was fitted on)."""
    assert ACHIEVED_BANDWIDTH.value * gpu_by_slug(slug).memory_bandwidth_gbps <= measured_gbps


# ---------------------------------------------------------------- [KOHYA-1288] SDXL LoRA step on an RTX 3060


def _kohya_sdxl_lora(checkpointing: str) -> dict:
    return {
        "task": "lora",
        "model": {"preset": "sdxl"},
        "precision": "bf16",
        "master_weights_fp32": False,
        "optimizer": "adafactor",
        "micro_batch_size": 1,
        "lora": {"rank": 32, "targets": "all-linear"},
        "gradient_checkpointing": checkpointing,
        "image": {
            "resolution_px": 1024,
            "train_steps": 8320,
            "cache_latents": True,
            "train_text_encoder": True,
            "lora_module": "kohya",
        },
    }


def _step(spec: dict, slug: str) -> dict:
    (candidate,) = size_workload(parse_workload_spec(copy.deepcopy(spec)), [gpu_by_slug(slug)])["candidates"]
    return candidate


@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (cards2): [KOHYA-1288] RTX 3060 SDXL LoRA rank 32, published 2.4 s/it; ours 1.753 s with full "
        "checkpointing (-27.0%; without it the step does not fit 12 GB: 12.74 GiB). The 3090 Ti row of the same "
        "test (1.23 s/it) reads 1.022 s on a 3090 (-16.9%, host floor, passes). The run's checkpointing, attention "
        "(xformers) and Windows launch cost are not stated in the thread; the 3060's own SD 1.5 rows "
        "([FP16-MDX], test_outside_diffusers_2022_stop47.py) read 21-37% slow, so the factor does not err one way "
        "on this card. Left: a 3060 run with its command (checkpointing stated)."
    ),
)
@pytest.mark.django_db
def test_kohya_sdxl_lora_step_on_an_rtx_3060():
    ours = _step(_kohya_sdxl_lora("full"), "rtx-3060")["throughput"]["step_seconds"]
    assert abs(ours / 2.4 - 1) <= SPEED, ours


@pytest.mark.django_db
def test_kohya_sdxl_lora_step_on_the_3090_beside_it():
    """[KOHYA-1288]'s 3090 Ti row, 1.23 s/it: ours on a 3090 without checkpointing 1.022 s (-16.9%; host-bound, so
    the 3090 Ti's 1.13x peak does not move it), and the 3060 without checkpointing does not fit (12.74 GiB)."""
    ours = _step(_kohya_sdxl_lora("none"), "rtx-3090")
    assert abs(ours["throughput"]["step_seconds"] / 1.23 - 1) <= SPEED
    assert _step(_kohya_sdxl_lora("none"), "rtx-3060")["verdict"] == "does_not_fit"


# ---------------------------------------------------------------- first rows, cost per run, like for like

VIT_B16_300_EPOCHS = {
    "name": "vit-b16-imagenet-300ep",
    "task": "full_finetune",
    "model": {"preset": "vit-b-16"},
    "precision": "bf16",
    "micro_batch_size": 128,
    "image": {"epochs": 300, "dataset_images": IMAGENET_IMAGES},
}


@pytest.mark.django_db
def test_vit_b16_imagenet_first_row_is_the_4060_ti_at_the_loader_rate(bundled_catalog):
    """DeiT-B recipe (300 epochs of ImageNet-1k = 384,350,100 images, bf16, batch 128 a GPU). Before (Vast's
    consumer rows unmapped): first row aws g6.2xlarge L4, 529.6 h, 77.25 USD. After: vast 1x-RTX_4060_Ti at 0.13
    USD/h, 423.67 h, 69.96 USD (-9.4%).
    Why, by hand: the crop loader feeds 10 workers x 25.2 images/s = 252 images/s a GPU (loader_crop_images_per_
    vcpu, DeiT's 8-V100 run: 8 x 252 = 2,016 images/s = 53 h for 300 epochs); the 4060 Ti's GPU side is 253
    images/s (44.1 TFLOPS x the GeForce factor, passes at 0.70 x 288 GB/s), so the run is loader-bound at 252:
    384,350,100 / 252 / 3,600 = 423.67 h. Every card that clears 252 runs at 252 a GPU, so the row is the
    cheapest GPU-hour among them. Like for like, the next card (L4, 202 images/s GPU-bound, 77.25 USD) leads if
    the 4060 Ti's true rate is under 227 images/s (0.13 x 1.2 x h + 0.13 + 3.74 = 77.25: h = 470.4): the first
    row holds to a 10% overestimate of the 4060 Ti's ViT-B rate, whose GEMM peak the measured matmuls above
    confirm; no published 4060 Ti ViT / ResNet training rate was found (the answer warns: derived peaks)."""
    rows = ranked(VIT_B16_300_EPOCHS, top=5)
    first = rows[0]
    assert (first["provider"], first["instance_type"], first["gpu"]) == (
        "vast",
        "1x-RTX_4060_Ti-32-65536",
        "rtx-4060-ti-16gb",
    ), describe(rows)
    loader = 10 * LOADER_CROP_IMAGES_PER_VCPU.value
    assert loader == pytest.approx(252.0)
    assert first["hours"] == pytest.approx(300 * IMAGENET_IMAGES / loader / 3600, rel=1e-4)
    assert abs(Decimal(first["total_cost"]) - _hand_total(first)) <= CENT  # the row rounds its own hours
    assert any("derived peak figures" in w for w in first["warnings"])
    assert any("feeds 252 images/s a GPU against the GPU's 253" in w for w in first["warnings"])
    l4 = next(r for r in rows if r["gpu"] == "l4")
    price = Decimal(first["effective_price_per_hour"])
    break_even_hours = (Decimal(l4["total_cost"]) - price - Decimal(first["cost_breakdown"]["storage"])) / (
        price * Decimal("1.2")
    )
    break_even_rate = 300 * IMAGENET_IMAGES / float(break_even_hours) / 3600
    assert break_even_rate == pytest.approx(227, abs=1.5)


QLORA_8B = {"task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 200_000_000}


@pytest.mark.django_db
def test_qlora_8b_first_row_stays_the_l4_and_the_4060_ti_costs_more_per_run(bundled_catalog):
    """Llama 3.1 8B QLoRA, 200 M tokens. First row before and after: aws g6.xlarge L4, 50.19 h, 7.59 USD. The 4060
    Ti (0.13 USD/h) runs 451.9 tokens/s where the L4 runs 1,106.9 (its 121 TFLOPS dense fp16 against 44.1):
    122.95 h, 0.13 x 1.2 x 122.95 + 0.13 = 19.31 USD before storage, 2.5x the L4's run; it is not near the top,
    as a per-run comparison says it should not be."""
    rows = ranked(QLORA_8B, top=3)
    assert (rows[0]["provider"], rows[0]["gpu"]) == ("aws", "l4"), describe(rows)
    assert abs(Decimal(rows[0]["total_cost"]) - _hand_total(rows[0])) <= CENT
    hours = _step(QLORA_8B, "rtx-4060-ti-16gb")["throughput"]["training_hours"]
    ti_run = Decimal("0.13") * Decimal("1.2") * Decimal(str(hours)) + Decimal("0.13")
    assert ti_run > 2 * Decimal(rows[0]["total_cost"])


SDXL_LORA = {
    "name": "sdxl-lora-naruto",
    "task": "lora",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    "micro_batch_size": 1,
    "lora": {"rank": 4},
    "image": {"resolution_px": 1024, "epochs": 2, "dataset_images": 1221, "loader_workers": 1},
}


@pytest.mark.django_db
def test_sdxl_lora_first_row_stays_the_l4(bundled_catalog):
    """diffusers' SDXL LoRA example on the Naruto set (rank 4, fp16, batch 1, 1,024 px, 2 epochs of 1,221). First
    row before and after: aws g6.2xlarge L4, 0.6 h, 1.21 USD. The 2 x 4070 Ti SUPER row (0.36 USD/h for two
    cards, 0.3 h) costs 1.75 USD: the hour of setup at twice the GPUs dominates a 20-minute run. The 16 GB cards'
    single-GPU rows need 14.0 GiB at peak, over 16.0 GiB with the 20% headroom: tight, ranked low."""
    rows = ranked(SDXL_LORA, top=3)
    assert (rows[0]["provider"], rows[0]["gpu"]) == ("aws", "l4"), describe(rows)
    assert abs(Decimal(rows[0]["total_cost"]) - _hand_total(rows[0])) <= CENT
