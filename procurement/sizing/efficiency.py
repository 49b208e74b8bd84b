"""Per-part, per-task compute efficiencies fitted on published measurements (issue 26, class 5).

The generic efficiencies of ``assumptions`` (MFU_DATACENTER, MFU_WORKSTATION) stand in for any part and
task. Where a vendor or an independent benchmark publishes measured training throughput for a part, the
efficiency at which the engine reproduces it replaces the generic figure for that part, task and precision
(procurement/data/measured_efficiency.csv). Each row names the measurements it was fitted on and a
different measurement it was checked on, so that no figure is fitted on the case that tests it; the row's
sentence is shown with every estimate it sets ("speed from: ...").
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from procurement.sizing.assumptions import GA100_PCIE_SUSTAINED_SHARE, TRAINING_WIDTH_K_AMPERE

DATA = Path(__file__).resolve().parents[1] / "data" / "measured_efficiency.csv"


@dataclass(frozen=True)
class MeasuredEfficiency:
    efficiency: float  # fraction of the part's dense peak at the task's precision
    fitted_on: str
    checked_on: str
    source_url: str
    note: str
    # where the row is another card's on the same die (SAME_DIE_ROWS): whose, and the share
    borrowed: str = ""

    def text(self, slug: str, task: str, precision: str) -> str:
        return (
            f"speed from: {slug} {task} in {precision} at {self.efficiency:.0%} of its dense peak{self.borrowed}, "
            f"fitted on published measurements ({self.source_url})"
        )


# Cards that take the measured language-model rows of another card on the same die and memory, with that card's
# board power: a row is the die's software efficiency (a fraction of the card's own datasheet peak), not the slug's.
# GA100 with 80 GB of HBM2e (108 SMs, 1,410 MHz boost, 312 dense BF16 TFLOPS on the NVIDIA A100 datasheet): the A100
# 80GB PCIe (1,935 GB/s, 300 W) and the A800 80GB PCIe (the same card with NVLink cut to 400 GB/s) take the A100
# 80GB SXM4's rows (2,039 GB/s, 400 W) at ga100_pcie_sustained_share (0.90, NVIDIA's launch rating of the PCIe
# card against the SXM4) for the lower board power. The 40 GB A100s are left out: their HBM2 runs at 1,555 GB/s,
# 0.76 of the measured card's, and no published LoRA measurement sizes the bandwidth-bound share of the step.
SAME_DIE_ROWS: dict[str, tuple[str, float]] = {
    "a100-pcie-80gb": ("a100-sxm4-80gb", 400.0),
    "a800-pcie-80gb": ("a100-sxm4-80gb", 400.0),
}


@lru_cache(maxsize=1)
def measured_efficiencies() -> dict[tuple[str, str, str], MeasuredEfficiency]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return {
            (row["gpu"], row["task"], row["precision"]): MeasuredEfficiency(
                float(row["efficiency"]), row["fitted_on"], row["checked_on"], row["source_url"], row["note"]
            )
            for row in csv.DictReader(handle)
        }


def measured_efficiency(spec, gpu) -> MeasuredEfficiency | None:
    """The published-measurement efficiency for this part, task and precision; None for a language-model
    task without one (the generic figure applies), and always None for image models. For serving (task
    ``inference``) it is the prefill and batched-decode GEMM efficiency (throughput.prefill_efficiency)."""
    if spec.model.is_image:
        return None
    found = _language_row(gpu.slug, spec.task, spec.precision)
    if found is not None or gpu.slug not in SAME_DIE_ROWS:
        return found
    measured_slug, measured_w = SAME_DIE_ROWS[gpu.slug]
    found = _language_row(measured_slug, spec.task, spec.precision)
    if found is None:
        return None
    share = GA100_PCIE_SUSTAINED_SHARE.value if gpu.tdp_w is not None and gpu.tdp_w < measured_w else 1.0
    borrowed = f" (the {measured_slug} row of the same die"
    borrowed += f" x {share:.2f} at {gpu.tdp_w:.0f} W against {measured_w:.0f} W)" if share < 1.0 else ")"
    return replace(found, efficiency=found.efficiency * share, borrowed=borrowed)


AMPERE = 80  # gpus._GENERATIONS
# d_model of the model the Ampere adapter rows were fitted on: the A100 LoRA row's Qwen-7B (Llama-2-7B shapes, 4,096)
AMPERE_ADAPTER_ROW_WIDTH = 4096.0


def measured_width_factor(spec, gpu) -> float:
    """The measured adapter row's efficiency at this model's width over the one it was fitted at, on Ampere: the
    width ceiling's shape (1 + k / d_fit) / (1 + k / d), k = training_width_k_ampere (621, fitted on llm-foundry's
    MPT A100 80GB sweep, d 768-4,096, each row within 2%), anchored at the row's Qwen-7B (d 4,096): x 0.884 at
    d 2,048, x 1.027 at 5,120, x 1.070 at 8,192. The only Ampere measured rows are the A100 LoRA row (and the same
    die's, SAME_DIE_ROWS), fitted on Qwen-7B's four steps alone; Hopper adapters already run at their width
    ceiling (mfu.width_ceiling). Held out (lw44, not fitted): Qwen-1.8B (d 2,048) at 2k / 4k / 8k +56.9 / +40.6 /
    +25.6% -> +38.7 / +24.3 / +11.0%; Qwen-14B (d 5,120) 1k-8k -3.9 / -10.1 / -12.5 / -14.0% -> -1.3 / -7.7 /
    -10.2 / -11.7%; Qwen-72B (d 8,192, ZeRO-3 on 4) 1k / 2k / 4k / 8k +21.2 / -6.9 / -17.1 / -23.4% -> +29.8 / -0.4
    / -11.3 / -18.0% (1k's fixed gathers, not the width, set its miss); on the all-linear Llama spec of the time, and
    with the README's Qwen-1 targets stated (lw44): 1.8B +39.2 / +24.7 / +11.4%, 14B -1.1 / -7.5 / -10.0 / -11.5%, 72B
    +29.9 / -0.3 / -11.2 / -17.9%. 1 elsewhere."""
    if not spec.uses_adapters or spec.model.is_image or gpu.generation != AMPERE:
        return 1.0
    if measured_efficiency(spec, gpu) is None:
        return 1.0
    k = TRAINING_WIDTH_K_AMPERE.value
    return (1.0 + k / AMPERE_ADAPTER_ROW_WIDTH) / (1.0 + k / float(spec.model.hidden_size))


def _language_row(slug: str, task: str, precision: str) -> MeasuredEfficiency | None:
    rows = measured_efficiencies()
    found = rows.get((slug, task, precision))
    if found is None and task == "qlora":
        # QLoRA's GEMMs are LoRA's 16-bit GEMMs once the base weights are unpacked; the unpacking is a time of its
        # own (qlora_dequant.py), so a part's measured LoRA row stands for them
        found = rows.get((slug, "lora", precision))
    return found


IMAGE_TASK = "image"  # rows for image networks (diffusion, ViT): the card's saturated efficiency


def image_saturation(gpu, precision: str) -> MeasuredEfficiency | None:
    """The fraction of dense peak an image network (UNet, DiT, ViT) reaches on this card at saturating
    work per kernel, where it was measured to differ from the cards assumptions.IMAGE_PEAK_EFFICIENCY was
    fitted on (A100, L40S): e.g. the T4, held to 70 W, runs the same network and container at ~2/3 of a
    V100's rate per peak FLOP. None: image_peak_efficiency applies. fp16 rows serve bf16 specs too."""
    return image_saturation_of(gpu.slug, precision)


def image_saturation_of(slug: str, precision: str) -> MeasuredEfficiency | None:
    """image_saturation by the card's slug."""
    rows = measured_efficiencies()
    return rows.get((slug, IMAGE_TASK, precision)) or rows.get((slug, IMAGE_TASK, "fp16"))


DIFFUSION_TASK = (
    "diffusion"  # rows for diffusion networks only (UNet, DiT), ahead of the card's IMAGE_TASK row
)


# rows for UNet diffusion networks only, ahead of the card's DIFFUSION_TASK row: a GeForce card's card/A100
# ratio measured on SD 1.5 UNet steps (its clocks above the rated boost, its fp32-accumulate figure), which a
# DiT's wide GEMMs do not share. The power-capped cards' rows (T4, L40, RTX 6000 Ada) stay DIFFUSION_TASK:
# a board power limit holds the clocks whatever the network.
UNET_TASK = "unet"


def diffusion_saturation_of(slug: str, precision: str, unet: bool = True) -> MeasuredEfficiency | None:
    """The fraction of dense peak a diffusion network (UNet, DiT) reaches on this card at saturating work
    per kernel, where diffusion pipelines were measured on it beside a reference card (the A100 of
    image_peak_efficiency's fit) in the same benchmark: GeForce cards, whose catalogued fp16 figure is the
    half-rate fp32-accumulate one and whose clocks boost above the rated one, run a UNet above that
    figure; 300 W workstation Ada cards run it far below theirs. None: the card's image row (or
    image_peak_efficiency) applies. fp16 rows serve bf16 specs too. `unet`: the network is a UNet, so the
    card's UNET_TASK row applies first; DiTs never take one."""
    rows = measured_efficiencies()
    tasks = (UNET_TASK, DIFFUSION_TASK) if unet else (DIFFUSION_TASK,)
    for task in tasks:
        row = rows.get((slug, task, precision)) or rows.get((slug, task, "fp16"))
        if row is not None:
            return row
    return None


def serving_efficiency(spec, gpu) -> float:
    """The measured serving efficiency of this part for the spec, NaN where the engine's own applies."""
    row = measured_efficiency(spec, gpu) if not spec.is_training else None
    return float("nan") if row is None else row.efficiency


def efficiency_text(spec, gpu) -> str:
    """The "speed from: ..." sentence of a measured efficiency; "" where the generic figure applies."""
    row = measured_efficiency(spec, gpu)
    if row is None:
        return ""
    width = measured_width_factor(spec, gpu)
    if abs(width - 1.0) < 5e-4:
        return row.text(gpu.slug, spec.task, spec.precision)
    return (
        f"{row.text(gpu.slug, spec.task, spec.precision)}; x {width:.3f} for the model's width (d_model "
        f"{spec.model.hidden_size:,} against the fit's {AMPERE_ADAPTER_ROW_WIDTH:,.0f}, training_width_k_ampere): "
        f"{row.efficiency * width:.1%}"
    )


# Maximum achievable matmul FLOPS (MAMF): one large 16-bit GEMM's measured rate on a card, the ceiling a lone
# vocab x hidden x tokens GEMM runs at (mfu.output_copy_gemm_efficiency), where a whole step's MFU carries norms,
# activations and attention it does not (aud50o). stas00/ml-engineering @b9e29720 compute/accelerator/README.md
# "Maximum Achievable Matmul FLOPS comparison table", **BF16** (the v2 table: a mean of 100 iterations after 50
# warm-up, the cache reset between shapes): NVIDIA A100 SXM 271.2 of 312 (86.9%), A100 PCIe 252.9 (81.1%), H100 SXM
# 794.5 of 989 (80.3%). The older v1 table below it, kept "until the v2 tables are re-populated", reads 267.9
# (85.9%), 256.4 (82.2%) and 792.1 (80.1%). The table names a product, not a memory size: the 40 GB and 80 GB cards
# of one form factor share the die, clocks and board power, and a compute-bound GEMM does not read HBM's speed.
# fp16 runs the same tensor-core rate as bf16 on these parts (the table's peak column is both). Cards without a row
# (the GH200 row is the 900 W 141 GB part, not the bundled 96 GB one; H200, Blackwell, Ada: none measured there)
# keep the width ceiling's e.
MATMUL_DATA = Path(__file__).resolve().parents[1] / "data" / "measured_matmul_flops.csv"


@lru_cache(maxsize=1)
def _measured_matmul_shares() -> dict[str, float]:
    with MATMUL_DATA.open(newline="", encoding="utf-8") as handle:
        return {
            row["gpu"]: float(row["mamf_tflops"]) / float(row["peak_tflops"])
            for row in csv.DictReader(handle)
        }


def measured_matmul_efficiency(slug: str) -> float | None:
    """The card's measured large-GEMM rate as a share of its 16-bit dense peak (MATMUL_DATA); None without a row."""
    return _measured_matmul_shares().get(slug)
