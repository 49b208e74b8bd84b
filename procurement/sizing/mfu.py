"""The MFU a training estimate uses, and the calibration factors fitted from stored benchmarks.

The engine stays ORM-free: the service layer reads the fits (procurement.services.calibration) and
passes a `Calibration` mapping in. A factor is applied only when its group has at least the fit's
minimum sample count; the factor itself is already shrunk toward 1 by the fit
(procurement.benchmarks.calibration), so one odd run moves an estimate little.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from procurement.sizing import fp8_split, image_model
from procurement.sizing import params as counts
from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH,
    LLM_C_CLASSIFIER_BYTES_PER_LOGIT,
    LLM_C_ELEMENTWISE_BYTES,
    LLM_C_GRADIENT_PASS_BYTES_PER_PARAM,
    LLM_C_OPTIMIZER_BYTES_PER_PARAM,
    MFU_FP8_LINEARS,
    MFU_FP8_LINEARS_BLACKWELL,
    MFU_PRETRAIN_AMPERE,
    MOE_HOPPER_FP8_ROUTED_COPY_SECONDS,
    MOE_HYBRIDEP_FIXED_SHARE,
    MOE_LAYER_FIXED_SECONDS,
    MOE_LOCAL_EXPERT_SECONDS,
    MOE_ROUTED_BYTES,
    MOE_ROUTED_BYTES_FP8_SHARE,
    RECOMPUTE_FORWARD_TIME_SHARE,
    TORCHAO_FLOAT8_CAST_K,
    TRAINING_WIDTH_K_AMPERE,
    TRAINING_WIDTH_K_HOPPER,
    TRAINING_WIDTH_PEAK_AMPERE,
    TRAINING_WIDTH_PEAK_AMPERE_GPT_NEOX,
    TRAINING_WIDTH_PEAK_HOPPER,
    TRAINING_WIDTH_PEAK_HOPPER_MEGATRON,
)
from procurement.sizing.clocks import peak_clock_hz, sm_count
from procurement.sizing.efficiency import (
    measured_efficiency,
    measured_matmul_efficiency,
    measured_width_factor,
)
from procurement.sizing.gpus import GpuSpec
from procurement.sizing.spec import WorkloadSpec
from procurement.sizing.throughput import (
    attention_context_tokens,
    attention_forward_flops_per_token,
    mtp_flops_per_token,
    output_layer_flops_per_token,
    training_flops_per_token,
)

AMPERE = 80
HOPPER = 90
BLACKWELL = 100


@dataclass(frozen=True)
class CalibrationFactor:
    """Fitted multipliers for one (GPU model, method): measured / estimated, shrunk toward 1."""

    samples: int
    throughput_factor: float = 1.0  # multiplies the default MFU
    memory_factor: float = 1.0  # multiplies the estimated peak memory per GPU

    def text(self, kind: str = "throughput") -> str:
        factor = self.throughput_factor if kind == "throughput" else self.memory_factor
        return f"calibrated from {self.samples} runs (factor {factor:.2f})"


# How a candidate's `calibration` keys read in a sentence: "speed calibrated from N runs (factor x.xx)".
CALIBRATION_LABELS = (("throughput", "speed"), ("memory", "memory"))

# (GPU slug, method) -> factor; method is the spec's task (pretrain, full_finetune, lora, qlora, inference).
Calibration = Mapping[tuple[str, str], CalibrationFactor]
NO_CALIBRATION: Calibration = {}


def default_mfu(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The uncalibrated MFU: the part's efficiency fitted on published measurements for this task and
    precision where there is one (sizing/efficiency.py, e.g. Gaudi 2 FP8 pretraining on Intel's figures),
    else the card's default, raised for dense pretraining on NVSwitch Ampere
    datacenter cards (A100), where published runs reach 43-55% (assumptions.MFU_PRETRAIN_AMPERE), and for
    16-bit dense pretraining on NVSwitch Hopper and later, whose compute runs at the width ceiling fitted on
    MPT's H100 sweep (the 0.40 default is an end-to-end figure, bubble and communication included); a
    model narrower than the fits' 7B-70B ones reaches at most width_ceiling.
    Diffusion and vision presets: the work-per-kernel efficiency of their micro-batch
    (image_model.training_efficiency at the card's dense peak), fitted on L40S (Ada) and A100 measurements;
    detectors: image_model.detector_training_efficiency (YOLOv5 V100 training times) at the card's clock."""
    arch = spec.model.image_arch
    if arch is not None and arch.family == "detection":
        peak = gpu.dense_tflops(spec.precision)
        bandwidth = gpu.memory_bandwidth_gbps * 1e9 if gpu.memory_bandwidth_gbps else None
        peak_flops = peak * 1e12 if peak else None
        return image_model.detector_training_efficiency(
            spec, peak_flops, bandwidth, peak_clock_hz(gpu), sm_count(gpu)
        )
    if arch is not None:
        peak = gpu.dense_tflops(spec.precision)
        if image_model.is_convnet(spec):  # see convnet_peak_tflops
            peak = convnet_peak_tflops(spec, gpu)
        bandwidth = gpu.memory_bandwidth_gbps * 1e9 if gpu.memory_bandwidth_gbps else None
        return float(
            image_model.training_efficiency(spec, peak * 1e12 if peak else None, bandwidth, gpu.generation)
        )
    dense = dense_efficiency(spec, gpu)
    return dense * moe_efficiency_factor(spec, gpu, dense)


def convnet_peak_tflops(spec: WorkloadSpec, gpu: GpuSpec) -> float | None:
    """The peak a convolutional classifier's step is timed against: the one its efficiency is applied to
    (compute_peak.spec_peak_tflops: in fp32 on an Ampere or later card the convolutions' TF32 rate, cuDNN's
    default), so the eager traffic is weighed against the compute time the answer states. The datasheet's
    precision peak (19.5 fp32 TFLOPS on an A100 where the convolutions run at 156) made a ResNet-50 fp32 step's
    traffic look 8x smaller than its compute and gave it nearly the AMP rate (2,930 vs 3,001 images/s).
    The other image networks keep the datasheet peak here (their fp32 rows are not re-checked: left for them)."""
    from procurement.sizing.compute_peak import spec_peak_tflops

    return spec_peak_tflops(spec, gpu)


def dense_efficiency(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The language-model efficiency before the MoE costs: the fitted one, held under the width ceiling, and
    under Transformer Engine fp8 divided by the time its bf16 attention core and output layer add
    (fp8_split.time_factor: the fitted fp8 efficiencies are the linears' own)."""
    if _runs_llm_c(spec, gpu):
        return llm_c_efficiency(spec, gpu)
    return min(_fitted_mfu(spec, gpu), width_ceiling(spec, gpu)) / fp8_split.time_factor(spec)


# llm.c's rows were measured at 16,384 to 65,536 tokens a GPU a micro-step (its scripts, PR #378); below that its
# ~400 kernel launches a micro-step and small GEMMs set the pace, which nothing counted here sizes (karpathy/llm.c
# PR #591: one H100 at the default B 4 x T 1024, ~144K tokens/s). The answer's notes say so (llm_c_note).
LLM_C_VALIDATED_MICRO_STEP_TOKENS = 16_384


def _runs_llm_c(spec: WorkloadSpec, gpu: GpuSpec) -> bool:
    """A dense 16-bit model trained on a stated karpathy/llm.c stack (training_stack llm_c) on an NVIDIA part of
    Ampere or later (llm.c's bf16 build needs Ampere; Volta and Turing have no bf16) with a dense peak in the
    spec's precision and a memory bandwidth, and no stated MFU. Elsewhere the unstated stack sizes it and the
    answer's notes say why (llm_c_note)."""
    return not _llm_c_skip_reason(spec, gpu)


def _llm_c_skip_reason(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """Why a stated training_stack llm_c is not applied to this run on this part; "" where it is (or where the
    spec does not state it)."""
    if spec.training_stack != "llm_c":
        return "not stated"
    if not spec.is_training:
        return "llm.c's train_gpt2.cu is a trainer, this is not a training run"
    if spec.mfu:
        return "the spec states its own mfu"
    if spec.model.is_image:
        return "llm.c trains GPT-2-shaped language models, not image models"
    if spec.model.is_moe:
        return "llm.c's train_gpt2.cu has no mixture-of-experts layers"
    if spec.precision not in ("bf16", "fp16"):
        return f"llm.c's counted kernels are its 16-bit build, not {spec.precision}"
    if gpu.generation is None or gpu.generation < AMPERE:
        return f"llm.c's bf16 build needs NVIDIA Ampere or later, which the {gpu.slug} is not"
    if not gpu.dense_tflops(spec.precision) or not gpu.memory_bandwidth_gbps:
        return f"the {gpu.slug} has no dense {spec.precision} peak or memory bandwidth on file"
    return ""


def llm_c_note(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """The answer's note on a stated training_stack llm_c: why it is not applied on this part (the unstated stack
    sizes the run), or that a micro-step below the validated tokens a GPU is sized optimistically; "" otherwise."""
    if spec.training_stack != "llm_c":
        return ""
    reason = _llm_c_skip_reason(spec, gpu)
    if reason:
        return (
            f"training_stack llm_c is stated but not applied on the {gpu.slug} ({reason}): sized as the unstated "
            "stack"
        )
    tokens = spec.micro_batch_size * spec.seq_len
    if tokens < LLM_C_VALIDATED_MICRO_STEP_TOKENS:
        return (
            f"training_stack llm_c is validated only for micro-steps of {LLM_C_VALIDATED_MICRO_STEP_TOKENS:,} tokens "
            f"a GPU or more (llm.c's published rows); at {tokens:,} its kernel launches and small GEMMs, which are "
            "not sized, slow it down: the estimate is optimistic (llm.c's default B 4 x T 1024 ran ~144K tokens/s "
            "on one H100, karpathy/llm.c PR #591)"
        )
    return ""


def llm_c_part_share(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The share of the width ceiling's e the part reaches: 1 on NVSwitch datacenter parts (MPT's sweeps and
    llm.c's rows ran on them); on PCIe, workstation and consumer parts the derating the unstated stack applies,
    its fitted efficiency over the ceiling (gpu.default_mfu, assumptions.mfu_workstation 0.35, against 0.726 /
    (1 + 621 / d): 0.872 for GPT-2 124M on an A100 PCIe). Applied to the GEMMs' rate, not to the bandwidth."""
    if gpu.has_nvlink_switch and not gpu.is_consumer:
        return 1.0
    ceiling = width_ceiling(spec, gpu)
    if ceiling <= 0:
        return 1.0
    return min(1.0, _fitted_mfu(spec, gpu) / ceiling)


def llm_c_step_bytes_per_token(spec: WorkloadSpec) -> float:
    """llm.c's once-a-step memory traffic a GPU, shared over the step's tokens a GPU (micro-batch x sequence x
    accumulation): adamw_kernel3 over the parameters it owns (llm_c_optimizer_bytes_per_param 30 B, 22 B without
    master weights; 1/N of them under ZeRO-1 over N data-parallel GPUs) and the gradient norm and zero-grad over
    all of them (llm_c_gradient_pass_bytes_per_param 4 B), train_gpt2.cu@a0d5dbb."""
    params = float(counts.count_params(spec.model))
    optimizer = LLM_C_OPTIMIZER_BYTES_PER_PARAM.value - (0.0 if spec.master_weights_fp32 else 8.0)
    data_parallel = spec.parallelism.data_parallel
    if spec.parallelism.zero_stage >= 1 and data_parallel > 1:
        optimizer /= data_parallel
    tokens = spec.micro_batch_size * spec.seq_len * max(1, spec.gradient_accumulation_steps)
    return (optimizer + LLM_C_GRADIENT_PASS_BYTES_PER_PARAM.value) * params / max(1, tokens)


def llm_c_efficiency(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """training_stack llm_c: the step's FLOPs at the width ceiling's e (the rate its MPT fit gives a layer's
    matmuls and attention as the memory-bound work vanishes), derated on PCIe and consumer parts as the unstated
    stack derates them (llm_c_part_share), plus llm.c's own memory-bound bytes, counted from
    train_gpt2.cu@a0d5dbb's kernels (assumptions.llm_c_elementwise_bytes_per_d, llm_c_classifier_bytes_per_logit,
    and the once-a-step optimizer passes, llm_c_step_bytes_per_token), at achieved_bandwidth_fraction of the
    datasheet bandwidth, one after the other: e' / (1 + e' x peak x bytes / (achieved x bandwidth x FLOPs)), all a
    token. Not fitted: MPT's k (621 / 838) stands for an eager PyTorch stack's passes, which llm.c fuses (issue
    26, train46). Parts without a peak or bandwidth never get here (_runs_llm_c); the guards keep it total."""
    hopper = (gpu.generation or 0) >= HOPPER
    ceiling_e = (TRAINING_WIDTH_PEAK_HOPPER if hopper else TRAINING_WIDTH_PEAK_AMPERE).value
    e = ceiling_e * llm_c_part_share(spec, gpu)
    peak = gpu.dense_tflops(spec.precision) or 0.0
    bandwidth = gpu.memory_bandwidth_gbps or 0.0
    flops = training_flops_per_token(spec)
    if e <= 0 or peak <= 0 or bandwidth <= 0 or flops <= 0:
        return e
    model = spec.model
    elementwise = LLM_C_ELEMENTWISE_BYTES.value * model.num_layers * model.hidden_size
    classifier = LLM_C_CLASSIFIER_BYTES_PER_LOGIT.value * model.vocab_size
    step = llm_c_step_bytes_per_token(spec)
    memory_seconds = (elementwise + classifier + step) / (ACHIEVED_BANDWIDTH.value * bandwidth * 1e9)
    flop_seconds = flops / (e * peak * 1e12)
    return e / (1.0 + memory_seconds / flop_seconds)


def moe_efficiency_factor(
    spec: WorkloadSpec,
    gpu: GpuSpec,
    dense_mfu: float,
    *,
    hopper_experts: bool = True,
    fixed: bool = True,
) -> float:
    """The share of a training step an MoE model spends on its FLOPs: each token's top-k copies of the
    hidden state go through routing, permutation, the activation and unpermutation, and the grouped
    GEMMs of a few hundred rows run below peak; that memory-bound work costs MOE_ROUTED_BYTES a routed
    element (routed_bytes: MOE_ROUTED_BYTES_FP8_SHARE of it in Transformer Engine fp8) (moe_layers x top-k x hidden per token) at the card's bandwidth. Each MoE layer also costs
    moe_fixed_seconds a micro-batch whatever the card (host launches, the dispatcher's sync of the
    per-expert counts, one grouped-GEMM launch per local expert), spread over the micro-batch's tokens: why
    a B200 gains far less over an H100 on MoE than on dense models, why larger micro-batches help, and why
    a few wide local experts (Mixtral's one of EP 8) pay less than many narrow ones. Both sit beside the token's FLOPs at the
    dense efficiency; a routed element carries 18 x moe_intermediate FLOPs (3 matrices, forward and
    backward), so wide experts barely notice it and narrow ones (Qwen3-30B-A3B's 768) lose most of their
    rate; 8-bit compute doubles its weight (the GEMMs speed up, the rest does not). 8-bit training on
    Hopper also pays MOE_HOPPER_FP8_ROUTED_COPY_SECONDS per routed token copy a MoE layer
    (hopper_fp8_expert_seconds; hopper_experts False leaves it out). fixed False leaves out the
    card-independent seconds (moe_fixed_seconds_per_token), which a part ranked at a measured ratio to the
    H100 pays undivided (accelerators.effective_speed).
    1 for dense models, inference and parts without a bandwidth or peak figure."""
    model = spec.model
    peak = gpu.dense_tflops(spec.precision)
    if not model.is_moe or not spec.is_training or not peak or not gpu.memory_bandwidth_gbps:
        return 1.0
    _, moe_layers = counts.layer_counts(model)
    routed_elements = float(moe_layers * model.experts_per_token * model.hidden_size)
    micro_tokens = float(spec.seq_len * spec.micro_batch_size) / spec.parallelism.context_parallel
    overhead_s = routed_elements * routed_bytes(spec) / (gpu.memory_bandwidth_gbps * 1e9)
    if fixed:
        overhead_s += moe_layers * moe_fixed_seconds(spec) / micro_tokens
    if hopper_experts:
        overhead_s += moe_layers * hopper_fp8_expert_seconds(spec, gpu) / micro_tokens
    flop_s = training_flops_per_token(spec) / (peak * 1e12 * dense_mfu)
    return flop_s / (flop_s + overhead_s)


def moe_fixed_seconds_per_token(spec: WorkloadSpec) -> float:
    """Seconds a token spends on the card-independent MoE cost (moe_fixed_seconds per MoE layer and
    micro-batch, spread over the micro-batch's seq x micro-batch / cp tokens); 0 for dense models and
    inference."""
    if not spec.model.is_moe or not spec.is_training:
        return 0.0
    _, moe_layers = counts.layer_counts(spec.model)
    micro_tokens = float(spec.seq_len * spec.micro_batch_size) / spec.parallelism.context_parallel
    return moe_layers * moe_fixed_seconds(spec) / micro_tokens


def routed_bytes(spec: WorkloadSpec) -> float:
    """Bytes a routed element costs beside its FLOPs: MOE_ROUTED_BYTES, times MOE_ROUTED_BYTES_FP8_SHARE under
    Transformer Engine fp8 training (fp8_split.applies)."""
    share = MOE_ROUTED_BYTES_FP8_SHARE.value if fp8_split.applies(spec) else 1.0
    return MOE_ROUTED_BYTES.value * share


def local_experts(spec: WorkloadSpec) -> float:
    """The experts of a MoE layer each GPU holds: num_experts / expert_parallel."""
    return spec.model.num_experts / spec.parallelism.expert_parallel


def moe_fixed_seconds(spec: WorkloadSpec) -> float:
    """Seconds a MoE layer and micro-batch spend whatever the card: MOE_LAYER_FIXED_SECONDS for the layer
    and MOE_LOCAL_EXPERT_SECONDS for each of its local experts; MOE_HYBRIDEP_FIXED_SHARE of them under
    parallelism.expert_dispatch hybridep, whose fused dispatch permutes and pads in one kernel."""
    seconds = MOE_LAYER_FIXED_SECONDS.value + local_experts(spec) * MOE_LOCAL_EXPERT_SECONDS.value
    if spec.parallelism.expert_dispatch == "hybridep":
        seconds *= MOE_HYBRIDEP_FIXED_SHARE.value
    return seconds


def hopper_fp8_expert_seconds(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """Seconds a MoE layer and micro-batch spend on Hopper's 8-bit grouped-GEMM path beside the FLOPs:
    MOE_HOPPER_FP8_ROUTED_COPY_SECONDS for each routed copy of the micro-batch's tokens (seq x micro-batch
    / cp x top-k), so the cost grows with the tokens each local expert receives, not with the count of
    local experts; 0 for dense models, in 16-bit and off Hopper (Blackwell's MXFP8 recipes run fused
    grouped GEMMs), and under parallelism.expert_dispatch hybridep, whose dispatch and combine kernels permute
    and pad the tokens themselves (assumptions.MOE_HOPPER_FP8_ROUTED_COPY_SECONDS, "HybridEP")."""
    if not spec.model.is_moe or spec.precision != "fp8" or gpu.generation != HOPPER:
        return 0.0
    if spec.parallelism.expert_dispatch == "hybridep":
        return 0.0
    return routed_copies_per_micro_batch(spec) * MOE_HOPPER_FP8_ROUTED_COPY_SECONDS.value


def routed_copies_per_micro_batch(spec: WorkloadSpec) -> float:
    """Token copies a MoE layer routes in one micro-batch of a rank: seq x micro-batch / cp tokens x top-k
    (with balanced routing each GPU's local experts receive as many)."""
    tokens = float(spec.seq_len * spec.micro_batch_size) / spec.parallelism.context_parallel
    return tokens * spec.model.experts_per_token


def measured_part_moe_factor(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The share of the H100's MoE efficiency a part ranked at a measured ratio to it scales: without
    Hopper's FP8 expert cost (the part runs its own kernels) and without the card-independent seconds
    (moe_fixed_seconds_per_token), which a faster card does not shorten and the part pays whole
    (accelerators.effective_speed). 1 for a stated MFU and for dense models."""
    if spec.mfu:
        return 1.0
    dense = dense_efficiency(spec, gpu)
    scaled = moe_efficiency_factor(spec, gpu, dense, hopper_experts=False, fixed=False)
    return moe_efficiency_factor(spec, gpu, dense) / scaled


def hopper_fp8_expert_factor(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The share of the MoE efficiency left after hopper_fp8_expert_seconds (1 where it is not charged): a
    part ranked at a measured ratio to the H100 (accelerators.py) scales the H100's speed without this
    Hopper-only software cost, which the part does not run. 1 for a stated MFU."""
    if spec.mfu:
        return 1.0
    dense = dense_efficiency(spec, gpu)
    portable = moe_efficiency_factor(spec, gpu, dense, hopper_experts=False)
    return moe_efficiency_factor(spec, gpu, dense) / portable


def _fitted_mfu(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The language-model efficiency for this part, task and precision, before the width ceiling."""
    if _runs_torchao_float8(spec, gpu):
        return torchao_float8_efficiency(spec, gpu)
    measured = measured_efficiency(spec, gpu)
    if measured is not None:
        return measured.efficiency * measured_width_factor(spec, gpu)
    if _runs_fp8_linears_on_a_hopper_cluster(spec, gpu):
        blackwell = (gpu.generation or 0) >= BLACKWELL
        return (MFU_FP8_LINEARS_BLACKWELL if blackwell else MFU_FP8_LINEARS).value
    if _runs_gpt_neox_on_an_ampere_cluster(spec, gpu):
        return gpt_neox_efficiency(spec)
    dense_cluster = not spec.model.is_moe and gpu.has_nvlink_switch and not gpu.is_consumer
    if dense_cluster and spec.task == "pretrain" and gpu.generation == AMPERE:
        return MFU_PRETRAIN_AMPERE.value
    if dense_cluster and _runs_dense_gemms_at_the_width_ceiling(spec, gpu):
        # The 0.40 card default was read off end-to-end figures (Llama 3 405B's 38-43%) that already
        # include their pipeline bubble and communication, which the engine adds on top: the compute
        # itself runs at the MPT H100 sweep's width ceiling (issue 26, assumptions.training_width_*).
        return width_ceiling(spec, gpu)
    return gpu.default_mfu


def _runs_gpt_neox_on_an_ampere_cluster(spec: WorkloadSpec, gpu: GpuSpec) -> bool:
    """16-bit dense pretraining stated on the GPT-NeoX stack (training_stack gpt_neox) on an NVSwitch Ampere
    datacenter part: where mfu_pretrain_a100 would apply, and the only setting its rate was fitted and held out on
    (Llemma 7B; Pythia-1B, StableLM-3B, GPT-NeoX-20B, all A100 40GB). Elsewhere a gpt_neox spec is sized as other."""
    dense_cluster = not spec.model.is_moe and gpu.has_nvlink_switch and not gpu.is_consumer
    return (
        spec.training_stack == "gpt_neox"
        and dense_cluster
        and spec.task == "pretrain"
        and gpu.generation == AMPERE
        and spec.precision in ("bf16", "fp16")
    )


def gpt_neox_efficiency(spec: WorkloadSpec) -> float:
    """The share of an A100's 16-bit peak a GPT-NeoX pretraining run reaches at this width: e / (1 + k / d_model),
    MPT's width shape (training_width_k_ampere) with the stack's own e (training_width_peak_ampere_gpt_neox,
    fitted on Llemma 7B's published A100 hours). Pythia-1B (d 2,048): 0.402; Llemma 7B (4,096): 0.455."""
    k = TRAINING_WIDTH_K_AMPERE.value
    return TRAINING_WIDTH_PEAK_AMPERE_GPT_NEOX.value / (1.0 + k / float(spec.model.hidden_size))


# Training tasks whose step is pretraining's dense GEMMs (the task changes which weight gradients are
# computed, not the shape of the matmuls), so 16-bit Hopper runs of them reach the same width ceiling.
# Published (mfu26): NeMo 24.07 FP8 SFT on 8 H100 runs at its pretraining rate (Llama 2 7B 16,891 against
# 16,934 tokens/s/GPU, NVIDIA/NeMo docs/source/performance/performance_summary.md @8e3d65dcfe), and NeMo
# AutoModel's BF16 LoRA rows on H100 (NVIDIA-NeMo/Automodel docs/performance-summary.mdx @2013a4dd6: Qwen2.5
# 7B on 1 GPU, Qwen2.5 32B on 8 and 16, Llama 3 70B on 16, TP 2 x FSDP) ran 12-19% above the 0.40 card
# default and land -8% to +4% at the ceiling. QLoRA keeps the card default on Hopper (no H100 QLoRA speed was
# checked); its dequantization is a time of its own (qlora_dequant.py), and where a part has a measured LoRA row
# its GEMMs run at it (measured_efficiency: after the unpacking they are LoRA's 16-bit GEMMs).
# MoE models keep it too: the MoE costs (moe_efficiency_factor) were fitted on that dense base.
WIDTH_CEILING_TASKS = ("pretrain", "full_finetune", "lora")


def _runs_dense_gemms_at_the_width_ceiling(spec: WorkloadSpec, gpu: GpuSpec) -> bool:
    """16-bit training of a WIDTH_CEILING_TASKS task on Hopper or later."""
    sixteen_bit = spec.precision in ("bf16", "fp16")
    return spec.task in WIDTH_CEILING_TASKS and (gpu.generation or 0) >= HOPPER and sixteen_bit


def _runs_fp8_linears_on_a_hopper_cluster(spec: WorkloadSpec, gpu: GpuSpec) -> bool:
    """Transformer Engine fp8 training (dense or MoE, any training task) on an NVSwitch datacenter part of
    Hopper or later: its linears run at MFU_FP8_LINEARS of the fp8 peak (MFU_FP8_LINEARS_BLACKWELL on
    Blackwell; fitted with the bf16 split, fp8_split.py); elsewhere the card's default stands in."""
    datacenter = gpu.has_nvlink_switch and not gpu.is_consumer
    return fp8_split.applies(spec) and (gpu.generation or 0) >= HOPPER and datacenter


def _runs_torchao_float8(spec: WorkloadSpec, gpu: GpuSpec) -> bool:
    """A dense language model trained (all weights) in fp8 by torchao float8, on a part with 16- and 8-bit
    peaks. MoE experts (grouped GEMMs) and adapters keep the 8-bit efficiency."""
    return (
        spec.precision == "fp8"
        and spec.fp8_recipe == "torchao"
        and spec.is_training
        and not spec.uses_adapters
        and not spec.model.is_moe
        and bool(gpu.dense_tflops("bf16"))
        and bool(gpu.dense_tflops("fp8"))
    )


def _bf16_and_fp8_peaks(gpu: GpuSpec) -> tuple[float, float]:
    """The part's dense bf16 and fp8 peaks (_runs_torchao_float8 admits only parts that have both)."""
    half, eight = gpu.dense_tflops("bf16"), gpu.dense_tflops("fp8")
    if not half or not eight:
        raise ValueError(f"{gpu.slug} has no dense bf16 and fp8 peaks: torchao float8 cannot be sized on it")
    return half, eight


def torchao_float8_efficiency(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The share of the 8-bit peak a torchao float8 run reaches: the part's 16-bit efficiency for the same
    run (width ceiling included), in 8-bit peak units, times torchao_float8_speedup."""
    sixteen = replace(spec, precision="bf16", fp8_recipe="transformer_engine")
    base = min(_fitted_mfu(sixteen, gpu), width_ceiling(sixteen, gpu))
    half, eight = _bf16_and_fp8_peaks(gpu)
    return base * half / eight * torchao_float8_speedup(spec, eight / half)


def torchao_float8_speedup(spec: WorkloadSpec, rate: float = 2.0) -> float:
    """The step-time ratio of 16-bit over torchao float8 training (Amdahl): only the transformer blocks'
    linears move to the 8-bit rate (``rate`` x the 16-bit one); attention (FlashAttention in bf16), the
    output layer (torchtitan converts every nn.Linear but 'output': pytorch/torchtitan @9dec370
    torchtitan/float8.py, module_filter_fn), norms, activations and residual adds keep their 16-bit time,
    the last ones k / d_model of the FLOPs' matmul time (assumptions.training_width_k_hopper); the
    dynamic scaling (amax and casts of each GEMM's operands) adds torchao_float8_cast_k / d_model of the
    linears' 16-bit time. Llama 3.1 8B at 8k: 1.25x; 70B: 1.49x; 405B: 1.69x."""
    model = spec.model
    full = spec.gradient_checkpointing == "full"
    total = training_flops_per_token(spec)
    attention = (4.0 if full else 3.0) * attention_forward_flops_per_token(
        model, attention_context_tokens(spec)
    )
    head = output_layer_flops_per_token(spec)
    linears = total - attention - head
    width = float(model.hidden_size)
    elementwise = total * TRAINING_WIDTH_K_HOPPER.value / width
    sixteen_bit = total + elementwise
    eight_bit = (
        linears / rate + attention + head + elementwise + linears * TORCHAO_FLOAT8_CAST_K.value / width
    )
    return sixteen_bit / eight_bit


def torchao_text(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """The "speed: ..." sentence of a torchao float8 estimate; "" where it does not apply."""
    if spec.mfu or not _runs_torchao_float8(spec, gpu):
        return ""
    half, eight = _bf16_and_fp8_peaks(gpu)
    speedup = torchao_float8_speedup(spec, eight / half)
    return (
        f"speed: torchao float8 runs the block linears in fp8 and the rest in bf16, {speedup:.2f}x the bf16 "
        f"speed of this run ({torchao_float8_efficiency(spec, gpu):.0%} of the {gpu.slug}'s fp8 peak; dynamic "
        "scaling fitted on torchao's Llama3-8b H100 benchmark, 1.25x)"
    )


def packed_text(spec: WorkloadSpec) -> str:
    """The "speed: ..." sentence of a run on packed sequences (packed_sample_tokens); "" otherwise."""
    tokens = attention_context_tokens(spec)
    if not spec.is_training or tokens >= spec.seq_len:
        return ""
    return (
        f"speed: samples of {tokens:,} tokens packed into each {spec.seq_len:,}-token sequence attend only within "
        "themselves: attention is counted over the sample, at the padded kernels' rate. NeMo 24.12 gets this saving "
        "(Llama 3.1 8B SFT at 1.24x its pretraining rate, as estimated here); NeMo 24.07 did not (Llama 2 7B: 16,891 "
        "vs 16,934 tokens/s/GPU), so on older stacks the estimate is optimistic"
    )


def mtp_text(spec: WorkloadSpec) -> str:
    """The "speed: ..." sentence of training with multi-token prediction modules (model.mtp_layers); ""
    otherwise."""
    flops = mtp_flops_per_token(spec) if spec.is_training else 0.0
    if not flops:
        return ""
    share = flops / (training_flops_per_token(spec) - flops)
    modules = spec.model.mtp_layers
    return (
        f"speed: {modules} multi-token prediction module{'s' if modules > 1 else ''} trained beside the model "
        f"(model.mtp_layers, config num_nextn_predict_layers; {counts.mtp_params(spec.model) / 1e9:.2f}B weights "
        f"of its own, not in the memory estimate) add {share:.1%} to the FLOPs a token: a block, the 2h x h "
        "projection and the shared output head again; state mtp_layers 0 for a run without them"
    )


def width_ceiling(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The most of the 16-bit dense peak a language model of this width reaches in training: e / (1 + k /
    d_model), a layer's memory-bound work taking k / d_model of its matmul time (assumptions.
    training_width_*, fitted on MosaicML's MPT sweeps, Ampere and Hopper). 1 (no ceiling) for image models,
    8-bit compute and parts without an NVIDIA generation (no sweep to fit)."""
    generation = gpu.generation
    if spec.model.is_image or generation is None or spec.precision not in ("bf16", "fp16"):
        return 1.0
    hopper = generation >= HOPPER
    peak = (TRAINING_WIDTH_PEAK_HOPPER if hopper else TRAINING_WIDTH_PEAK_AMPERE).value
    if hopper and _runs_megatron_dense(spec):
        peak = TRAINING_WIDTH_PEAK_HOPPER_MEGATRON.value
    k = (TRAINING_WIDTH_K_HOPPER if hopper else TRAINING_WIDTH_K_AMPERE).value
    return peak / (1.0 + k / float(spec.model.hidden_size))


def _runs_megatron_dense(spec: WorkloadSpec) -> bool:
    """A dense language model trained on a stated Megatron stack (training_stack megatron: NeMo, Megatron-Core,
    Megatron-Bridge). MoE models keep the llm-foundry ceiling: the MoE costs (moe_efficiency_factor) were fitted
    on that base."""
    return spec.training_stack == "megatron" and spec.is_training and not spec.model.is_moe


def width_text(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """The "speed: ..." sentence of a training estimate the width ceiling sets; "" where it does not bind
    (or the spec states its own MFU). A stated Megatron stack on Hopper and later is named wherever its
    ceiling is the efficiency (training_stack megatron)."""
    if spec.mfu or not spec.is_training or spec.model.is_image:
        return ""
    if _runs_llm_c(spec, gpu):
        return (
            f"speed: on llm.c (training_stack llm_c) a {spec.model.hidden_size}-wide model trains at "
            f"{llm_c_efficiency(spec, gpu):.0%} of the {gpu.slug}'s dense peak (its fused kernels' memory-bound "
            "passes counted from train_gpt2.cu: 90 B a token and layer per unit of width, 4 B a vocabulary "
            "logit and AdamW's once-a-step bytes; MosaicML's MPT sweep, the unstated stack, would give "
            f"{min(_fitted_mfu(spec, gpu), width_ceiling(spec, gpu)):.0%})"
        )
    ceiling = width_ceiling(spec, gpu)
    fitted = _fitted_mfu(spec, gpu)
    if _runs_gpt_neox_on_an_ampere_cluster(spec, gpu) and measured_efficiency(spec, gpu) is None:
        return (
            f"speed: on GPT-NeoX (training_stack gpt_neox) a {spec.model.hidden_size}-wide model pretrains at "
            f"{min(fitted, ceiling):.1%} of the {gpu.slug}'s dense peak (that stack's A100 rate, MPT's width shape "
            "with an e fitted on Llemma 7B's published A100 hours; the unstated stack takes LLaMA-1's "
            f"{MFU_PRETRAIN_AMPERE.value:.0%})"
        )
    if (gpu.generation or 0) >= HOPPER and _runs_megatron_dense(spec) and ceiling <= fitted:
        return (
            f"speed: on the Megatron stack (training_stack megatron) a {spec.model.hidden_size}-wide model trains at "
            f"{ceiling:.0%} of the {gpu.slug}'s dense peak (that stack's width ceiling, fitted on NeMo 24.09's "
            "Llama 3.1 8B and 70B H100 pretraining rows; the unstated ceiling, from MosaicML's MPT sweep, is "
            f"{TRAINING_WIDTH_PEAK_HOPPER.value / (1.0 + TRAINING_WIDTH_K_HOPPER.value / spec.model.hidden_size):.0%})"
        )
    if ceiling >= fitted:
        return ""
    return (
        f"speed: a {spec.model.hidden_size}-wide model trains at no more than {ceiling:.0%} of the {gpu.slug}'s "
        "dense peak (its norms, activations and residual adds weigh more against narrow matmuls; width "
        "ceiling fitted on MosaicML's MPT sweeps of 125M-7B models)"
    )


def moe_text(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """The "speed: ..." sentence of an MoE training estimate (moe_efficiency_factor); "" where it does not
    apply (dense models, inference, a stated MFU)."""
    if spec.mfu or not spec.is_training or not spec.model.is_moe:
        return ""
    dense = dense_efficiency(spec, gpu)
    factor = moe_efficiency_factor(spec, gpu, dense)
    if factor >= 1.0:
        return ""
    return (
        "speed: MoE routing, permutation, small grouped GEMMs and per-layer launches "
        f"({spec.model.moe_intermediate_size}-wide "
        f"experts, top-{spec.model.experts_per_token}) leave {factor:.0%} of the dense efficiency, "
        f"{dense * factor:.1%} of the {gpu.slug}'s peak at micro-batch {spec.micro_batch_size}"
        f"{_hopper_fp8_clause(spec, gpu)} (fitted on published Megatron and DeepSeek MoE runs)"
    )


def _hopper_fp8_clause(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """The moe_text clause for hopper_fp8_expert_seconds; "" where it is not charged."""
    seconds = hopper_fp8_expert_seconds(spec, gpu)
    if not seconds:
        return ""
    return (
        f", {seconds * 1e3:.1f} ms a MoE layer and micro-batch for Hopper's FP8 expert path "
        f"({routed_copies_per_micro_batch(spec):,.0f} routed token copies)"
    )


def recompute_time_share(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The share of its FLOPs' time the forward that full recomputation runs again costs at this part's
    training efficiency (throughput.costed_flops_per_token; the throughput model applies it to rows without tensor
    or pipeline parallelism only): RECOMPUTE_FORWARD_TIME_SHARE for 16-bit full-parameter training of a dense
    language model, whose efficiencies (the A100 pretraining fit, the width ceilings, the cards' defaults) were
    fitted on runs that did not recompute. A stated training_stack takes it too: no stack has full-recomputation
    rows of its own to fit (stack26 sizes maxtext and torchtitan as the unstated stack the same way). 1 (the
    hardware count charged whole) outside the fit rows' settings: a stated MFU; MoE models (their costs were fitted on the hardware count); image
    models; 8-bit training; adapters (NeMo AutoModel's checkpointed H100 LoRA rows fit the width ceiling at the
    hardware count, -8% to +4%: mfu26); a part's measured efficiency for the task (measured_efficiency.csv rows
    were fitted at the hardware count, e.g. the A100 LoRA row on Qwen-7B's checkpointed runs)."""
    if spec.gradient_checkpointing != "full" or not spec.is_training or spec.mfu or spec.uses_adapters:
        return 1.0
    if spec.precision not in ("bf16", "fp16"):  # every fit row trained in 16 bits
        return 1.0
    if spec.model.is_moe or spec.model.is_image:
        return 1.0
    if measured_efficiency(spec, gpu) is not None:
        return 1.0
    return RECOMPUTE_FORWARD_TIME_SHARE.value


def output_copy_gemm_efficiency(spec: WorkloadSpec, gpu: GpuSpec) -> float:
    """The share of the 16-bit dense peak lora.modules_to_save's output copy's weight-gradient GEMM runs at
    (throughput.output_copy_gemm_flops_per_token: one vocab x hidden x tokens GEMM a micro-batch, e.g. 151,936 x
    4,096 x 8,192 on Qwen-7B at 8k): the card's measured large-GEMM rate where one is published
    (efficiency.measured_matmul_efficiency, stas00/ml-engineering @b9e29720's MAMF table: A100 SXM 0.869, H100 SXM
    0.803; fix50o, aud50o), else the width ceiling's e (training_width_peak_ampere / _hopper), the rate its
    fit gives a layer with no memory-bound work (d_model -> infinity); not the whole step's MFU, whose norms,
    activations and attention the GEMM does not carry (aud49e fix list 4: at the model's MFU the long Qwen LoRA
    (emb) rows over-charge the copy's delta 1.5-2.5x). NaN (charged at the step's MFU) without an output copy,
    outside 16-bit compute or on a part without an NVIDIA generation (no sweep to fit)."""
    trains_output_copy = (
        spec.uses_adapters and spec.lora is not None and "output" in spec.lora.modules_to_save
    )
    if not trains_output_copy or spec.model.is_image or gpu.generation is None:
        return math.nan
    if spec.precision not in ("bf16", "fp16"):
        return math.nan
    measured = measured_matmul_efficiency(gpu.slug)
    if measured is not None:
        return measured
    hopper = gpu.generation >= HOPPER
    return (TRAINING_WIDTH_PEAK_HOPPER if hopper else TRAINING_WIDTH_PEAK_AMPERE).value


def recompute_text(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    """The "speed: ..." sentence of a full-recomputation estimate the share applies to; "" elsewhere."""
    share = recompute_time_share(spec, gpu)
    if share >= 1.0:
        return ""
    return (
        f"speed: the forward full recomputation runs again costs {share:.0%} of its FLOPs' time at this efficiency "
        "on plans without tensor or pipeline parallelism (the efficiencies were fitted on runs that did not "
        "recompute; share fitted on llm-foundry's checkpointed FSDP runs); the FLOPs shown count all of it"
    )


def calibration_factor(
    spec: WorkloadSpec, gpu: GpuSpec, calibration: Calibration | None
) -> CalibrationFactor | None:
    """The fitted factor for this GPU model and method, if one was passed in."""
    if not calibration:
        return None
    return calibration.get((gpu.slug, spec.task))


def estimate_mfu(spec: WorkloadSpec, gpu: GpuSpec, calibration: Calibration | None = None) -> float:
    """The MFU a training estimate uses: the spec's own if set (a stated figure is never recalibrated),
    else the default times the fitted throughput factor."""
    if spec.mfu:
        return spec.mfu
    factor = calibration_factor(spec, gpu, calibration)
    return default_mfu(spec, gpu) * (factor.throughput_factor if factor else 1.0)


def bandwidth_factor(spec: WorkloadSpec, gpu: GpuSpec, calibration: Calibration | None = None) -> float:
    """The calibrated throughput factor estimate_mfu applies, for the GPU's bandwidth-bound work beside the FLOPs
    (QLoRA's unpacking, qlora_dequant.py): a factor fitted on measured runs of this GPU and method is the whole
    step's. 1 where the spec states its MFU or nothing is calibrated."""
    if spec.mfu:
        return 1.0
    factor = calibration_factor(spec, gpu, calibration)
    return factor.throughput_factor if factor else 1.0


def memory_factor(spec: WorkloadSpec, gpu: GpuSpec, calibration: Calibration | None = None) -> float:
    factor = calibration_factor(spec, gpu, calibration)
    return factor.memory_factor if factor else 1.0
