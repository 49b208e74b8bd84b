"""QLoRA's dequantization of the frozen base weights, per micro-batch (issue 26, stop 44).

A QLoRA step's GEMMs are LoRA's 16-bit GEMMs: before each one the library unpacks the whole quantized weight to a
16-bit copy in kernels of its own, whatever the number of tokens. So the cost scales with the base weights read a
micro-batch (passes x quantized weights x bytes a weight at the card's achieved bandwidth), not with the step's
FLOPs; it replaced a flat 30% of the step (assumptions.qlora_dequant_overhead, an estimate), which overcharged long
sequences and undercharged short ones (QwenLM/Qwen README: the Q-LoRA minus LoRA step is about the same at 256 and
at 8k tokens).

Counted from the libraries' code, not fitted:
  nf4 (bitsandbytes Linear4bit, bitsandbytes/autograd/_functions.py MatMul4Bit): forward
    F.linear(A, F.dequantize_4bit(B, quant_state).to(A.dtype).t()); backward
    torch.matmul(grad_output, F.dequantize_4bit(B, ctx.state).to(grad_output.dtype).t()) dequantizes again (the
    16-bit copy is not saved). The 4-bit kernel reads 0.5 byte a weight and writes 2 (image_model
    NF4_DEQUANTIZE_WEIGHT_BYTES; the double-quantized absmax blocks' own two small kernels, 3 a call in all, count
    in lora_host's host floor, their bytes left out). Passes: forward, backward, and the recomputed forward
    under full recomputation: 3 (2 without).
  int4 (GPTQ through transformers' GPTQConfig with the exllama kernels disabled for training, as QwenLM/Qwen's
    finetune.py loads its Int4 models: AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py QuantLinear.forward,
    the path taken at kernel_switch_threshold (128) rows or more): the weight is unpacked by eager PyTorch ops on the
    whole tensor, bitwise_right_shift of the packed int32 (read 0.5, write 4 bytes a weight), .to(int8) (4 + 1),
    bitwise_and (1 + 1), weight - zeros (1 + 1), scales * (...) to fp16 (1 + 2): 16.5 bytes a weight; then
    torch.matmul(x, weight), whose backward uses the saved fp16 weight. Passes: forward and the recomputed forward
    under full recomputation: 2 (1 without).
  int8 (bitsandbytes LLM.int8 MatMul8bitLt): the forward is an int8 GEMM on the int8 weight (no 16-bit copy); the
    backward builds one, CB.to(dtype) then .mul_(SCB / 127) (read 1, write 2; read 2, write 2): 7 bytes a weight,
    1 pass.
First forward (fixc45, for lora_host's synchronised-micro-batch bound, which needs the GPU's work after a
micro-batch's first forward): the unpacking is not spread over the step as its FLOPs are, it runs where its passes
run. GPTQ int4 (AutoGPTQ v0.4.2, the auto-gptq < 0.5 QwenLM/Qwen's README pins with PyTorch 2.0: qlinear_cuda_old
QuantLinear.forward unpacks and calls torch.matmul(x.half(), weight); peft v0.5.0 tuners/lora.py QuantLinear.forward
calls quant_linear_module(x) once): 1 of its 2 passes under full recomputation (the checkpointed block's forward
runs again in the backward), 1 of 1 without. nf4 (bitsandbytes 0.41.1 @18e827d6, 0.45.5, 0.49.2 MatMul4Bit:
dequantize_4bit in forward and backward): 1 of 3, 1 of 2 without. LLM.int8 (MatMul8bitLt at 0.41.1: igemmlt on the
cached CxB where the card supports it, sm 7.5 and later; 0.45.5 int8_linear_matmul, 0.49.2 int8_scaled_mm, on
state.CB; only the backward's CB.to(dtype).mul_(SCB / 127) builds a 16-bit copy): 0.
The bytes run at assumptions.achieved_bandwidth_fraction of the card's HBM bandwidth (elementwise traffic, as the
image engine and DTensor's copies charge it), but GPTQ int4's at assumptions.gptq_eager_unpack_bandwidth_fraction
(0.378, lora46): AutoGPTQ's eager unpacking measured on an A100 80GB at the version QwenLM/Qwen pins (huggingface/
optimum @0963862 tests/benchmark/README.md, prefill-only: autogptq-cuda-old 368.13 ms against fp16 96.38 ms on
Llama-2-13B at 512 tokens, 271.75 ms for 16.5 B x 12.688e9 weights), its broadcast int8 / int32 ops and mixed
int8-fp16 multiply well under a streaming copy's 0.70; and bitsandbytes nf4's at
assumptions.bnb_nf4_unpack_bandwidth_fraction (0.364, fix46l): the same table with bitsandbytes 0.41.1's 4-bit rows
(optimum @3ffebf99: 139.17 ms against fp16 96.38 ms, 42.79 ms for 2.5 B x 12.688e9 weights; fp4 and nf4 share
kDequantizeBlockwise). LLM.int8's backward copy keeps 0.70 (no measurement of it). Below AutoGPTQ's
kernel_switch_threshold, 128 rows (micro-batch x sequence length) a call, qlinear_cuda_old.py QuantLinear.forward
(AutoGPTQ v0.4.2, tag commit ef442d9f) runs its CUDA vecquant4matmul kernel into a fresh torch.zeros output instead (the eager branch
is the else): no unpacking and no saved copy. That kernel's own time is not modelled (the GEMMs stay fp16's), nor
its autograd: the extension writes `out` in place, so no gradient flows back through the frozen weight. transformers
/ optimum build the QuantLinear without trainable=True (optimum/gptq/quantizer.py _replace_by_quant_layers), which
alone would switch the kernel off. Every rank dequantizes its own weights: 1 / (tp x pp) of them, the
routed experts 1 / ep; ZeRO-3 / FSDP gather the quantized shards first, so each data-parallel rank unpacks the
whole layer.

Memory (saved_copy_bytes_per_rank): the unpacked 16-bit copy is transient in every library but one. bitsandbytes
nf4 unpacks again in the backward (MatMul4Bit keeps the packed weight), LLM.int8 keeps the int8 weight; AutoGPTQ's
eager branch ends in out = torch.matmul(x, weight) with x requiring grad (the hidden states carry the adapters'
gradient), and matmul's backward needs the other operand, so autograd keeps `weight`, the unpacked fp16 copy, from
the forward to its backward (the one pass above counts on it): 2 bytes a block weight. Without recomputation
every block's copy is kept, once a micro-batch in flight (Llama 2 7B: 2 x 6,476,005,376 = 12.1 GiB); under full
recomputation the forward runs without autograd and only the block being recomputed in the backward keeps its
copies (the largest block's linears, 2 x 202.4e6 = 0.38 GiB on the 7B). A rank keeps the copies of the weights it
unpacks (1 / (tp x pp), the routed experts 1 / ep; whole layers under ZeRO-3 / FSDP).
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH,
    BNB_NF4_UNPACK_BANDWIDTH,
    GPTQ_EAGER_UNPACK_BANDWIDTH,
)
from procurement.sizing.image_model import NF4_DEQUANTIZE_WEIGHT_BYTES
from procurement.sizing.params import layer_params, quantizable_params

GPTQ_EAGER_DEQUANTIZE_WEIGHT_BYTES = 16.5  # qlinear_cuda_old's five eager ops, counted above
INT8_BACKWARD_DEQUANTIZE_WEIGHT_BYTES = 7.0  # MatMul8bitLt.backward's cast and rescale, counted above
# weight_quantization -> bytes a block weight autograd keeps for the backward (the fp16 copy torch.matmul saves)
SAVED_COPY_BYTES = {"int4": 2.0}

# weight_quantization -> (bytes a weight a pass, passes without recomputation, extra passes under full recomputation)
DEQUANTIZE = {
    "nf4": (NF4_DEQUANTIZE_WEIGHT_BYTES, 2.0, 1.0),
    "int4": (GPTQ_EAGER_DEQUANTIZE_WEIGHT_BYTES, 1.0, 1.0),
    "int8": (INT8_BACKWARD_DEQUANTIZE_WEIGHT_BYTES, 1.0, 0.0),
}
# weight_quantization -> passes of the first forward (of the passes above): nf4's MatMul4Bit.forward and GPTQ's
# QuantLinear.forward unpack once in it, LLM.int8's forward runs an int8 GEMM on the int8 weight (none). Counted,
# not fitted (module docstring, "First forward").
FIRST_FORWARD_PASSES = {"nf4": 1.0, "int4": 1.0, "int8": 0.0}
# weight_quantization -> fraction of the card's bandwidth its unpacking reaches: GPTQ int4 and bitsandbytes nf4
# measured (optimum's prefill tables, assumptions.GPTQ_EAGER_UNPACK_BANDWIDTH / BNB_NF4_UNPACK_BANDWIDTH); LLM.int8's
# backward cast and rescale at the streaming 0.70 (no measurement of it)
ACHIEVED_FRACTION = {
    "nf4": BNB_NF4_UNPACK_BANDWIDTH.value,
    "int4": GPTQ_EAGER_UNPACK_BANDWIDTH.value,
    "int8": ACHIEVED_BANDWIDTH.value,
}
# weight_quantization -> where its rate comes from, in words (only where it is not the streaming default)
RATE_SOURCE = {
    "int4": " (AutoGPTQ's eager ops as huggingface/optimum's A100 prefill benchmark measures them",
    "nf4": " (bitsandbytes 0.41.1's dequantize_4bit as huggingface/optimum's A100 prefill benchmark measures it",
}
# weight_quantization -> the library release and stack its measured rate was taken with (RATE_SOURCE)
RATE_MEASURED_WITH = {
    "int4": "AutoGPTQ 0.4.2 and PyTorch 2.0.1",
    "nf4": "bitsandbytes 0.41.1 and PyTorch 2.0.1",
}
# AutoGPTQ v0.4.2 qlinear_cuda_old.py QuantLinear(kernel_switch_threshold=128): below it (rows of the flattened
# input, x.reshape(-1, infeatures).shape[0]) the forward runs the CUDA vecquant kernel, not the eager unpacking
GPTQ_KERNEL_SWITCH_THRESHOLD = 128
LIBRARY = {
    "nf4": "bitsandbytes NF4 (dequantize_4bit in the forward, the recomputed forward and the backward)",
    "int4": "GPTQ int4 through AutoGPTQ's eager unpacking (transformers GPTQConfig without exllama, as Qwen's "
    "finetune.py runs it: 16.5 bytes a weight, forward and recomputed forward; scope: AutoGPTQ 0.4.2's "
    "qlinear_cuda_old eager path at 128 rows a micro-batch or more, exllama off, desc_act False; AutoGPTQ's "
    "triton trainable path is not modelled)",
    "int8": "bitsandbytes LLM.int8 (a 16-bit copy of each weight in the backward only)",
}


def applies(spec) -> bool:
    return spec.task == "qlora" and spec.weight_quantization in DEQUANTIZE and not spec.model.is_image


def rows_per_micro_batch(spec) -> int:
    """Rows of each linear's flattened input a micro-batch: micro-batch size x sequence length."""
    return int(spec.micro_batch_size) * int(spec.seq_len)


def unpacks(spec) -> bool:
    """Whether the library unpacks the weights at all: GPTQ int4 below AutoGPTQ's kernel_switch_threshold (128 rows
    a micro-batch) runs the CUDA kernel instead (module docstring)."""
    if not applies(spec):
        return False
    return spec.weight_quantization != "int4" or rows_per_micro_batch(spec) >= GPTQ_KERNEL_SWITCH_THRESHOLD


def achieved_fraction(spec) -> float:
    """The fraction of the card's bandwidth the library's unpacking reaches (ACHIEVED_FRACTION)."""
    return ACHIEVED_FRACTION.get(spec.weight_quantization, ACHIEVED_BANDWIDTH.value)


def bytes_per_micro_batch(spec) -> float:
    """Bytes of HBM traffic the dequantization of the whole model's quantized weights takes a micro-batch (one rank
    holding every weight); 0 where it does not apply."""
    if not unpacks(spec):
        return 0.0
    per_weight, passes, recomputed = DEQUANTIZE[spec.weight_quantization]
    if spec.gradient_checkpointing == "full":
        passes += recomputed
    return passes * per_weight * quantizable_params(spec.model)


def first_forward_share(spec) -> float:
    """The share of a micro-batch's unpacking that runs in its first forward (the rest in the recomputed forward
    and the backward): nf4 1/3 under full recomputation, 1/2 without; GPTQ int4 1/2 and 1; LLM.int8 0. 0 where the
    unpacking does not apply."""
    if not unpacks(spec):
        return 0.0
    _, passes, recomputed = DEQUANTIZE[spec.weight_quantization]
    if spec.gradient_checkpointing == "full":
        passes += recomputed
    return FIRST_FORWARD_PASSES[spec.weight_quantization] / passes


def keeps_saved_copy(spec) -> bool:
    return unpacks(spec) and spec.weight_quantization in SAVED_COPY_BYTES


def saved_copy_bytes(spec) -> float:
    """Bytes of unpacked 16-bit weights kept for the backward by one rank holding every weight, one micro-batch:
    every block's without full recomputation, the largest block's with it; 0 where no library keeps them."""
    if not keeps_saved_copy(spec):
        return 0.0
    per_weight = SAVED_COPY_BYTES[spec.weight_quantization]
    if spec.gradient_checkpointing == "full":
        return per_weight * block_linear_params(spec)
    return per_weight * quantizable_params(spec.model)


def block_linear_params(spec) -> float:
    """The largest block's linear weights (its norms left out), with the routed experts of one expert-parallel
    rank."""
    model = spec.model
    return layer_params(model, spec.parallelism.expert_parallel) - 2.0 * model.hidden_size


def seconds_per_step(spec, memory_bandwidth_gbps, weight_share) -> np.ndarray:
    """Seconds a rank spends unpacking weights in one optimizer step: its micro-batches x its share of the weights
    (``weight_share``: 1 / (tp x pp) times the expert share) at the achieved bandwidth. A row without a bandwidth
    figure (inf) costs nothing."""
    traffic = bytes_per_micro_batch(spec) * float(spec.gradient_accumulation_steps) * np.asarray(weight_share)
    bandwidth = np.asarray(memory_bandwidth_gbps, dtype=float) * 1e9 * achieved_fraction(spec)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(traffic > 0, traffic / bandwidth, 0.0)


def rate_source(spec, gpu_slug: str | None = None) -> str:
    """Where the unpacking's rate comes from, in words ("" for the streaming default); on a card other than an A100
    it says the rate was measured on the A100 only, with the library release it was measured with."""
    source = RATE_SOURCE.get(spec.weight_quantization, "")
    if not source:
        return ""
    if gpu_slug is not None and not gpu_slug.startswith("a100"):
        source += (
            f"; measured on the A100 only, with {RATE_MEASURED_WITH[spec.weight_quantization]}: this card takes "
            "the same fraction of its bandwidth, an assumption"
        )
    return source + ")"


def text(spec, gpu_slug: str | None = None) -> str:
    """The assumption, in words, where it decides the step (``gpu_slug``: the card, for where the rate was
    measured)."""
    if not applies(spec):
        return ""
    if not unpacks(spec):
        return (
            f"QLoRA dequantization: none charged, {rows_per_micro_batch(spec):,} rows a micro-batch is under AutoGPTQ "
            f"0.4.2's kernel_switch_threshold of {GPTQ_KERNEL_SWITCH_THRESHOLD}, where qlinear_cuda_old runs its CUDA "
            "kernel on the packed weights instead of the eager unpacking (that kernel's own time is not modelled, "
            "and it passes no gradient back through the frozen weight)"
        )
    gigabytes = bytes_per_micro_batch(spec) / 1e9
    return (
        f"QLoRA dequantization: {LIBRARY[spec.weight_quantization]}, {gigabytes:,.1f} GB of memory traffic a "
        f"micro-batch at {achieved_fraction(spec):.0%} of the card's bandwidth"
        f"{rate_source(spec, gpu_slug)}, whatever the sequence length"
    )


def memory_text(spec) -> str:
    """The saved copy's assumption, in words, where the memory breakdown counts it (no engine keys: the page shows
    it beside the labelled breakdown)."""
    if not keeps_saved_copy(spec):
        return ""
    gib = saved_copy_bytes(spec) / 2**30
    line = "its own memory line, dequantized weights kept for backward"
    if spec.gradient_checkpointing == "full":
        return (
            "GPTQ int4 (AutoGPTQ's eager unpacking): torch.matmul keeps each frozen linear's unpacked 16-bit weight "
            "for the backward; under full recomputation only the block being recomputed keeps them, "
            f"{gib:,.2f} GiB on one rank holding the whole block ({line})"
        )
    return (
        "GPTQ int4 (AutoGPTQ's eager unpacking): torch.matmul keeps each frozen linear's unpacked 16-bit weight for "
        f"the backward, 2 bytes a block weight, every block's without full recomputation: {gib:,.2f} GiB a "
        f"micro-batch in flight on one rank holding every weight ({line})"
    )
