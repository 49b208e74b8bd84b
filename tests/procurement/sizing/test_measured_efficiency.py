"""Per-part, per-task efficiencies fitted on published measurements (issue 26, class 5).

procurement/data/measured_efficiency.csv replaces the generic MFU (assumptions.MFU_WORKSTATION, 35%) for a
part, task and precision where the part's own throughput is published. Gaudi 2 FP8 pretraining: 0.42 of its
865 dense FP8 TFLOPS (0.45 since fp826), the median of the efficiencies at which the engine reproduces four of Intel's five
published Gaudi 2 runs (SynapseAI 1.18), 0.45 since fp826 runs the attention core and the output layer at the bf16
peak (sizing/fp8_split.py); the fifth (Llama 2 7B, 68,464 tokens/s) checks it, in
tests/procurement/outside/test_outside_recommendations.py. A100 80GB LoRA in bf16: 0.47 (0.52 before moe42's FLOP
count: the input embedding a lookup, the frozen output layer 4 FLOPs a weight), the median over
Qwen-7B LoRA's four sequence lengths on one A100 (QwenLM/Qwen README); Qwen-14B and the MLPerf reference
LoRA log check it there.
"""

import pytest

from procurement.sizing import parse_workload_spec, size_workload
from procurement.sizing.accelerators import speed_ratio
from procurement.sizing.efficiency import measured_efficiencies
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.mfu import default_mfu


def _spec(task="pretrain", precision="fp8"):
    return parse_workload_spec(
        {
            "name": "g",
            "task": task,
            "model": {"preset": "llama-2-7b"},
            "precision": precision,
            "seq_len": 4096,
            "training_tokens": 1e9,
        }
    )


def test_it_names_what_each_row_was_fitted_on_and_checked_on():
    rows = measured_efficiencies()
    assert rows
    for (slug, task, precision), row in rows.items():
        gpu_by_slug(slug)  # a known part
        assert task in (
            "pretrain",
            "full_finetune",
            "lora",
            "qlora",
            "image",
            "diffusion",
            "unet",
            "inference",
        )
        assert precision in ("fp32", "fp16", "bf16", "fp8", "fp4")
        # a diffusion row may exceed 1: GeForce cards' catalogued fp16 figure is the half-rate
        # fp32-accumulate one (the fp16-accumulate rate is twice it), and they run a UNet above it
        assert 0.1 < row.efficiency < (1.2 if task in ("diffusion", "unet") else 0.8)
        assert row.fitted_on and row.checked_on and row.source_url.startswith("https://")
        assert row.checked_on not in row.fitted_on  # the check is not one of the fitted measurements


def test_it_fits_gaudi2_fp8_pretraining_on_the_median_of_intels_other_runs():
    # Engine-implied efficiencies of Intel's 13B, 3.1 70B, 3.1 8B and 2 70B runs (see the CSV row), with the
    # attention core and the output layer at the bf16 peak (fp826; 0.382, 0.457, 0.327 and about 0.60 before):
    # 0.409, 0.495, 0.385 and 0.61; the median of four is the mean of the middle two.
    assert measured_efficiencies()[("gaudi2", "pretrain", "fp8")].efficiency == pytest.approx(
        (0.409 + 0.495) / 2, abs=0.005
    )


def test_it_fits_a100_lora_on_the_median_of_qwen_7b_lengths():
    # Engine-implied efficiencies of Qwen-7B LoRA on one A100 at 1k/2k/4k/8k: 0.406, 0.448, 0.483, 0.501 (moe42:
    # 0.453, 0.499, 0.536, 0.551 while the 622M-weight input embedding was counted 6 FLOPs a weight and the frozen
    # output layer 6, not 4: each step's FLOPs 0.895-0.910 of the old count).
    assert measured_efficiencies()[("a100-sxm4-80gb", "lora", "bf16")].efficiency == pytest.approx(
        (0.448 + 0.483) / 2, abs=0.005
    )


def test_it_sets_the_mfu_only_for_the_measured_task_and_precision():
    gaudi2 = gpu_by_slug("gaudi2")
    # fp8 divides the linears' efficiency by the bf16 attention core's and output layer's time (fp826). By hand,
    # Llama 2 7B at 4,096: attention 3 x 4 x 2,048 x 4,096 x 32 = 3.221e9 and head 6 x 32,000 x 4,096 = 7.864e8
    # of 6 x (6.738e9 - the 32,000 x 4,096 input embedding, a lookup) + 3.221e9 = 4.287e10 FLOPs a token (9.35%)
    # at half the rate: x 1 / 1.0935 (moe42: 4.365e10, 9.18%, 1.0918 with the embedding counted)
    assert default_mfu(_spec(), gaudi2) == pytest.approx(0.45 / 1.0935, abs=1e-4)
    assert default_mfu(_spec(precision="bf16"), gaudi2) == 0.35  # no BF16 figure: the generic one
    # fine-tuning has no measured row: the generic 0.35, for the linears, with the same bf16 split
    assert default_mfu(_spec(task="full_finetune"), gaudi2) == pytest.approx(0.35 / 1.0935, abs=1e-4)
    # mfu_fp8_linears_hopper 0.42 (int42: refitted after moe42's FLOP count; 0.425 before)
    assert default_mfu(_spec(), gpu_by_slug("h100-sxm5-80gb")) == pytest.approx(0.42 / 1.0935, abs=1e-4)
    # A100 80GB LoRA in bf16: Qwen's measurements; the 40GB card and full fine-tuning keep their defaults
    a100 = gpu_by_slug("a100-sxm4-80gb")
    assert default_mfu(_spec(task="lora", precision="bf16"), a100) == 0.47  # moe42: 0.52 before the refit
    assert default_mfu(_spec(task="lora", precision="bf16"), gpu_by_slug("a100-sxm4-40gb")) == 0.40
    assert default_mfu(_spec(task="full_finetune", precision="bf16"), a100) == 0.40
    # lw44: the row is the die's (efficiency.SAME_DIE_ROWS): the A100 80GB PCIe (GA100, 80 GB HBM2e, the same 312
    # TFLOPS on NVIDIA's A100 datasheet) takes it at ga100_pcie_sustained_share 0.90 for 300 W against 400 W
    # (NVIDIA's launch rating of the PCIe A100 at 90% of the SXM4, AnandTech 15867): 0.47 x 0.90 = 0.423
    pcie = gpu_by_slug("a100-pcie-80gb")
    assert default_mfu(_spec(task="lora", precision="bf16"), pcie) == pytest.approx(0.423, abs=1e-9)
    # no measured full fine-tuning row: the generic figure
    assert default_mfu(_spec(task="full_finetune", precision="bf16"), pcie) == 0.35
    _, why = speed_ratio(_spec(task="lora", precision="bf16"), pcie)
    assert "the a100-sxm4-80gb row of the same die x 0.90 at 300 W against 400 W" in why


def test_it_shows_where_the_speed_comes_from():
    gaudi2 = gpu_by_slug("gaudi2")
    ratio, why = speed_ratio(_spec(), gaudi2)
    assert ratio is None and why.startswith("speed from: gaudi2 pretrain in fp8 at 45%")
    # without a measured efficiency a non-NVIDIA part keeps the H100 cap and says so
    ratio, why = speed_ratio(_spec(precision="bf16"), gaudi2)
    assert ratio == 1.0 and "capped at the H100" in why


def test_it_scales_gaudi2_fp8_pretraining_by_the_fitted_efficiency():
    # Llama 2 7B on 8 HPU, compute bound (communication 0.1% of the step): tokens/s scale with the MFU,
    # 55,485 at the generic 0.35 with every FLOP at the fp8 peak -> 55,485 x 0.45 / 0.35 / 1.0918 = 65,339 with
    # the fitted 0.45 and the bf16 attention core and output layer (fp826; the factor by hand above). moe42:
    # without the input embedding's FLOPs (a lookup) the 0.35 row is 55,485 x 4.365e10 / 4.287e10 = 56,503, and
    # 56,503 x 0.45 / 0.35 / 1.0935 = 66,435.
    spec = parse_workload_spec(
        {
            "name": "g",
            "task": "pretrain",
            "model": {"preset": "llama-2-7b"},
            "precision": "fp8",
            "seq_len": 4096,
            "micro_batch_size": 2,
            "gradient_accumulation_steps": 64,
            "gradient_checkpointing": "selective",
            "parallelism": {"gpus": 8, "zero_stage": 1},
            "training_tokens": 1e9,
        }
    )
    row = size_workload(spec, [gpu_by_slug("gaudi2")])["candidates"][0]
    assert row["throughput"]["training_tokens_per_second"] == pytest.approx(
        55_485 * 43_651_719_168 / 42_865_287_168 * 0.45 / 0.35 / 1.0935, rel=0.002
    )
    assert row["speed_basis"].startswith("speed from: gaudi2")


def test_gaudi2_fp8_serving_runs_at_its_own_measured_efficiency():
    # Intel's Gaudi 2 page: Llama 2 7B FP8 first token at 2,048 tokens in 56.31 ms on one HPU:
    # 2,048 x (2 x (6,738,415,616 - the 32,000 x 4,096 input embedding, a lookup) + 4 x 32 x 1,024 x 4,096) FLOPs
    # / (0.05631 s x 865 TFLOPS) = 0.578 (moe42: 0.589 with the embedding counted)
    flops = 2048 * (2 * (6_738_415_616 - 32_000 * 4096) + 4 * 32 * 1024 * 4096)
    row = measured_efficiencies()[("gaudi2", "inference", "fp8")]
    assert row.efficiency == pytest.approx(flops / (0.05631 * 865e12), abs=0.005)
