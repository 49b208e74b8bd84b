"""Outside audit aud51g of int8gptq (issue 26, stop 51): `inference.quant_kernel: cuda_old`, AutoGPTQ's 8-bit GPTQ
linear in an eager transformers loop, priced as 4 bare ops a quantized linear (torch.zeros of the fp32 output,
x.float(), scales.float(), out.half(); AutoGPTQ qlinear_cuda_old.py @179776bd) at optimizer_op_host_s 7 us
(pytorch/pytorch #41383) on the host floor (serving_host.quant_kernel_bare_op_seconds). int8gptq landed it on the
Qwen2 page's three input-1 Int8 rows; this audit holds it out on a second page and at longer inputs.

Source: [QW25SPEED] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst
("Qwen2.5 Speed Benchmark"): "NVIDIA A100 80GB, CUDA 12.1, Pytorch 2.3.1, Flash Attention 2.5.8, Transformers
4.46.0, AutoGPTQ 0.7.1+cu121 (Compiled from source code)"; every GPTQ-Int8 row's Note column says
"auto_gptq==0.6.0+cu1210"; batch 1, 2,048 generated tokens, one GPU, "(Transformer)" tables, Speed(tokens/s):
    Qwen2.5-0.5B-Instruct input 1      : BF16 47.40, GPTQ-Int8 35.17
    Qwen2.5-1.5B-Instruct input 1      : BF16 39.68, GPTQ-Int8 32.62;  input 30,720: BF16 38.59, GPTQ-Int8 31.04
    Qwen2.5-3B-Instruct   input 1      : BF16 30.80, GPTQ-Int8 25.69
    Qwen2.5-7B-Instruct   input 1      : BF16 40.38, GPTQ-Int8 31.55;  input 6,144: BF16 38.76, GPTQ-Int8 31.26
                          input 14,336 : BF16 29.78, GPTQ-Int8 26.86;  input 30,720: BF16 18.83, GPTQ-Int8 17.59
None of these Int8 rows is in tests/ (the BF16 7B rows are: stop45 / stop48b; they are used here only as pairs).
Shapes (config.json): 0.5B 24 layers, 896, 14 / 2 heads of 64, MLP 4,864; 1.5B 28, 1,536, 12 / 2 of 128, 8,960;
3B 36, 2,048, 16 / 2 of 128, 11,008; all vocab 151,936, tied, qkv bias; 7B = the qwen2.5-7b preset. Stated as run:
hf_eager, eager_layer qwen2 (transformers 4.46.0's Qwen2 layer), attn_implementation flash_attention_2 (as the
stop45 / stop48b audits state this page), weight_quantization int8, quant_kernel cuda_old (AutoGPTQ 0.6/0.7's
dynamically_import_QuantLinear takes exllama / exllamav2 / marlin for 4 bits only: 8 bits run qlinear_cuda_old).
Speed read as 2,048 / the whole generate() (TTFT + 2,048 decode steps). Tolerance: LLM speed 15%.
"""

from __future__ import annotations

import copy
import statistics

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import serving_host
from procurement.sizing.assumptions import OPTIMIZER_OP_HOST_SECONDS
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec

A100 = "a100-sxm4-80gb"
GENERATED = 2048
SPEED = 0.15
_QWEN = {"vocab_size": 151936, "tie_word_embeddings": True, "attention_qkv_bias": True}
SHAPES = {
    "0.5b": dict(
        _QWEN,
        name="Qwen2.5-0.5B-Instruct",
        num_layers=24,
        hidden_size=896,
        num_attention_heads=14,
        num_key_value_heads=2,
        head_dim=64,
        intermediate_size=4864,
    ),
    "1.5b": dict(
        _QWEN,
        name="Qwen2.5-1.5B-Instruct",
        num_layers=28,
        hidden_size=1536,
        num_attention_heads=12,
        num_key_value_heads=2,
        head_dim=128,
        intermediate_size=8960,
    ),
    "3b": dict(
        _QWEN,
        name="Qwen2.5-3B-Instruct",
        num_layers=36,
        hidden_size=2048,
        num_attention_heads=16,
        num_key_value_heads=2,
        head_dim=128,
        intermediate_size=11008,
    ),
    "7b": {"preset": "qwen2.5-7b"},
}
LINEARS = {"0.5b": 24 * 7, "1.5b": 28 * 7, "3b": 36 * 7, "7b": 28 * 7}  # q / k / v / o, gate / up / down


def _spec(size: str, prompt: int, quant: str, kernel: str | None = None, engine: str = "hf_eager") -> dict:
    spec = {
        "name": f"aud51g-qwen2.5-{size}-{prompt}-{quant}",
        "task": "inference",
        "model": dict(SHAPES[size], eager_layer="qwen2"),
        "weight_quantization": quant,
        "inference": {
            "concurrency": 1,
            "context_len": prompt + GENERATED,
            "output_tokens": GENERATED,
            "engine": engine,
        },
    }
    if engine == "hf_eager":
        spec["inference"]["attn_implementation"] = "flash_attention_2"
        # qwen2up2: the page's transformers (4.46.0, its speed_benchmark setup), stated: 42 kernels a layer + 8 a token
        # at hf_generate_release_kernel_host_s 19.68 us (serving_host.RELEASE_LAYER_KERNELS)
        spec["inference"]["transformers_release"] = "4.46.0"
    if kernel:
        spec["inference"]["quant_kernel"] = kernel
    return spec


def _as_published(size: str, prompt: int, quant: str, kernel: str | None = None) -> float:
    t = size_spec_document(copy.deepcopy(_spec(size, prompt, quant, kernel)), [A100], calibrate=False)[
        "throughput"
    ]
    return GENERATED / (
        t["time_to_first_token_seconds"] + GENERATED / t["decode_tokens_per_second_per_stream"]
    )


# id: (size, input, published BF16, published Int8, ours Int8 unstated, ours Int8 cuda_old, ours BF16)
# qwen2up2: the rows stated as run, transformers 4.46.0 (42 kernels a layer + 8 a token at 19.68 us, was 51 at
# 16.99 us); host-bound rows move, before -> after (against the published):
#   0.5B Int8 unstated 46.933 -> 48.575; cuda_old 38.445 (+9.3%) -> 39.540 (+12.4%); BF16 46.933 -> 48.575
#   1.5B 40.365 -> 41.852; cuda_old 33.045 (+1.3%) -> 34.035 (+4.3%); BF16 40.365 -> 41.851
#   3B 31.539 -> 32.779; cuda_old 25.798 (+0.4%) -> 26.622 (+3.6%); BF16 31.538 -> 32.778
#   7B 40.361 -> 41.847; cuda_old 33.042 (+4.7%) -> 34.032 (+7.9%); BF16 40.359 -> 41.845 (-0.1% -> +3.6%)
#   7B 6,144 40.018 -> 41.478; cuda_old 32.812 (+5.0%) -> 33.787 (+8.1%); BF16 40.018 -> 41.478
#   1.5B 30,720 39.720 -> 41.158; cuda_old 32.611 (+5.1%) -> 33.574 (+8.2%); BF16 39.720 -> 41.158
#   7B 14,336 39.474 -> 40.895; cuda_old 32.446 (+20.8%) -> 33.399 (+24.3%, still out); BF16 37.330 (GPU-bound)
#   7B 30,720: GPU-bound, unchanged (23.865 / 23.736 / 22.188)
# The host-bound rows move with the floor (7B: 1,214 kernels x 19.68 us = 23.89 ms, was 1,458 x 16.99 = 24.77).
ROWS = {
    "0.5b-1": ("0.5b", 1, 47.40, 35.17, 48.575, 39.540, 48.575),
    "1.5b-1": ("1.5b", 1, 39.68, 32.62, 41.852, 34.035, 41.851),
    "3b-1": ("3b", 1, 30.80, 25.69, 32.779, 26.622, 32.778),
    "7b-1": ("7b", 1, 40.38, 31.55, 41.847, 34.032, 41.845),
    "7b-6144": ("7b", 6144, 38.76, 31.26, 41.478, 33.787, 41.478),
    "1.5b-30720": ("1.5b", 30720, 38.59, 31.04, 41.158, 33.574, 41.158),
    # fixtr: 33.399 -> 33.391 (4.46.0 at 1,215 kernels x 19.67 us, the model-level rotary 9 a token: step +0.03%)
    "7b-14336": ("7b", 14336, 29.78, 26.86, 40.895, 33.391, 37.330),
    # int8gpu: cuda_old 23.865 (+35.7%) -> 23.736 (+34.9%): the 4 bare ops' GPU bytes (326.6 MB, 0.229 ms a token)
    "7b-30720": ("7b", 30720, 18.83, 17.59, 23.865, 23.736, 22.188),
}
_REASON = {
    "7b-14336": "UNEXPLAINED (aud51g): [QW25SPEED] Qwen2.5-7B-Instruct GPTQ-Int8, 1 x A100, input 14,336, cuda_old: "
    "published 26.86 tokens/s, ours 33.39 (+24.3%; unstated 40.90, +52.3%; qwen2up2: the row stated as run, "
    "transformers 4.46.0, 42 kernels a layer + 8 a token at 19.68 us, was 32.45, +20.8%, on the 51 count at 16.99 "
    "us; fixtr: 9 a token at 19.67 us, 33.40 -> 33.39). The miss is the BF16 pair's: the same "
    "page's BF16 row reads 37.33 against 29.78 (+25.4%, stop48b's row, the GPU step priced 26.9 ms against the run's "
    "33.0); the Int8 / BF16 ratio is 0.895 against the published 0.902 (-0.8%), so cuda_old's own term is inside "
    "the bar here and none of this gap is sized by it; the BF16 class's gap is unsized (stop48b).",
    "7b-30720": "UNEXPLAINED (aud51g): [QW25SPEED] Qwen2.5-7B-Instruct GPTQ-Int8, 1 x A100, input 30,720, cuda_old: "
    "published 17.59 tokens/s, ours 23.74 (+34.9%; int8gpu: 23.87, +35.7%, before the 4 bare ops' GPU bytes, "
    "326.6 MB a token, 0.23 ms: the step is GPU-bound). Two parts: (1) the BF16 pair's own +17.8% (22.19 against "
    "18.83, stop48b's strict xfail); (2) the Int8 / BF16 ratio: published 0.934 (Int8 3.7 ms a token SLOWER), ours "
    "1.070 (Int8 ~2.8 ms FASTER, its 8-bit weights read at int8_decode_bandwidth_efficiency 0.765, gpt-fast's "
    "kernel): vecquant8matmul_old's own read rate is not priced. This pair alone would set it at 0.361 (int8gpu, "
    "by bisection; 20.48 tokens/s, +16.5%), but the Qwen-1 README's GPU-bound Qwen-72B Int8 row (stop43d, the same "
    "kernel) sets it at 0.503 and reads 6.72 tokens/s (-25.7%) at 0.361, and the held-out 7B 14,336 row does not "
    "move (host-bound): one page, not checked on a second, so not landed. No per-kernel GPU floor is priced for the "
    "784 kernels a token (the engine has none).",
}


def _params() -> list:
    return [
        pytest.param(
            key, id=key, marks=[pytest.mark.xfail(strict=True, reason=_REASON[key])] if key in _REASON else []
        )
        for key in ROWS
    ]


# Cases 1-8: each Int8 row stated as run, within 15%. Passing (before int8gptq -> after, cuda_old stated):
# 0.5B 46.93 (+33.4%) -> 38.45 (+9.3%); 1.5B 40.37 (+23.7%) -> 33.05 (+1.3%); 3B 31.54 (+22.8%) -> 25.80 (+0.4%);
# 7B 40.36 (+27.9%) -> 33.04 (+4.7%); 7B 6,144 40.02 (+28.0%) -> 32.81 (+5.0%); 1.5B 30,720 39.72 (+28.0%) ->
# 32.61 (+5.1%). Out: 7B 14,336 (+20.8%) and 7B 30,720 (+35.7%), above. qwen2up2 (transformers 4.46.0 stated, its
# count at 19.68 us): +12.4 / +4.3 / +3.6 / +7.9 / +8.1 / +8.2%, still inside; 7B 14,336 +24.3%, 7B 30,720 +34.9%.
@pytest.mark.parametrize("key", _params())
def test_qwen25_gptq_int8_rows_as_run_with_cuda_old(bundled_catalog, key):
    size, prompt, _bf16, published, unstated, cuda_old, _ours_bf16 = ROWS[key]
    ours = _as_published(size, prompt, "int8", "cuda_old")
    assert ours == pytest.approx(cuda_old, rel=0.002)  # pinned figure
    assert _as_published(size, prompt, "int8") == pytest.approx(unstated, rel=0.002)  # before the change
    assert ours == pytest.approx(published, rel=SPEED)


# Case 9: the 7 us and the 4-op count held out. On the page's host-bound pairs (both rows on the host floor: input 1,
# 6,144, and 1.5B at 30,720), (1 / Int8 - 1 / BF16) / (linears x 4) is the published excess an op: 0.5B 10.9,
# 1.5B 7.0, 3B 6.4, 7B 8.8, 7B 6,144 7.9, 1.5B 30,720 8.0 us; median 7.97 us, 1.14x the 7 us (within 15%, near the
# bar). It is an upper bound on the host ops (the published excess also holds the extra kernels' GPU time, the 8-bit
# GEMV's own rate and any module Python beyond the counted linear). The product's per-row step ratio (Int8 / BF16
# 0.818-0.821 on every host-bound row) does not follow the published spread (0.742-0.834): the size-independent
# term is right on the median, not row by row (0.5B +9.3% is the worst).
def test_bare_op_rate_held_out_on_the_qwen25_pairs():
    assert serving_host.CUDA_OLD_BARE_OPS == 4.0
    assert OPTIMIZER_OP_HOST_SECONDS.value == pytest.approx(7e-6)
    per_op = {}
    for key, (size, _prompt, bf16, int8, *_rest) in ROWS.items():
        if key in _REASON:
            continue
        per_op[key] = (GENERATED / int8 - GENERATED / bf16) / GENERATED / (LINEARS[size] * 4)
    assert per_op["0.5b-1"] == pytest.approx(10.9e-6, rel=0.01)
    assert per_op["3b-1"] == pytest.approx(6.4e-6, rel=0.01)
    assert min(per_op.values()) > 6.0e-6 and max(per_op.values()) < 11.0e-6
    median = statistics.median(per_op.values())
    assert median == pytest.approx(7.97e-6, rel=0.01)
    assert median == pytest.approx(OPTIMIZER_OP_HOST_SECONDS.value, rel=SPEED)


# Case 10 (neighbours): cuda_old is refused where AutoGPTQ's 8-bit linear does not run (int4 checkpoints take
# exllama / exllamav2 / marlin; vLLM's engines and compiled loops have their own 8-bit GPTQ kernels), and it moves
# nothing on a BF16 row (the term is 0 off cuda_old).
def test_cuda_old_refused_off_its_loop_and_silent_elsewhere(bundled_catalog):
    for quant, engine in (("int4", "hf_eager"), ("int8", "compiled"), ("int8", "vllm_v0")):
        with pytest.raises(WorkloadSpecError) as exc:
            size_spec_document(_spec("7b", 1, quant, "cuda_old", engine), [A100], calibrate=False)
        assert "inference.quant_kernel" in str(exc.value)
    assert _as_published("7b", 1, "none") == pytest.approx(ROWS["7b-1"][6], rel=0.002)


# Case 11 (int8gpu, aud51g FIX LIST 1): the 4 bare ops' GPU bytes by hand, Qwen2.5-7B at batch 1 (config.json:
# 28 layers, 3,584 wide, 28 / 4 heads of 128, MLP 18,944). Per layer the casts read / write: x.float() 6 bytes an
# input (q / k / v / gate / up read 3,584 each, o 3,584, down 18,944: 40,448), zeros + out.half() 10 bytes an output
# (q 3,584, k / v 512 each, o 3,584, gate / up 18,944 each, down 3,584: 49,664): 242,688 + 496,640 = 739,328 bytes,
# x 28 = 20,701,184. scales.float(): 6 bytes a scale (fp16 read, fp32 write; AutoGPTQ qlinear_cuda_old.py
# @179776bd), one scale per 128 weights (AutoGPTQ's default group_size): the block weights (233,046,016 a layer in
# the linears, + 4,608 qkv bias + 7,168 norm gains, x 28, + 3,584 final norm = 6,525,621,760) / 128 x 6 =
# 305,888,520. At 0.70 x 2,039 GB/s: 326,589,704 / 1.4273e12 = 0.2288 ms, the 7B 30,720 step's move
# (1 / 23.736 - 1 / 23.865 = 0.228 ms at the whole-generate rate).
def test_cuda_old_gpu_bytes_by_hand(bundled_catalog):
    spec = parse_workload_spec(_spec("7b", 30720, "int8", "cuda_old"))
    assert serving_host.quant_kernel_gpu_bytes(spec) == pytest.approx(20_701_184 + 305_888_520, rel=0.001)
    assert serving_host.quant_kernel_gpu_seconds(spec, 0.70 * 2039e9) == pytest.approx(0.2288e-3, rel=0.002)
    assert 1 / ROWS["7b-30720"][5] - 1 / ROWS["7b-30720"][4] == pytest.approx(0.228e-3, rel=0.02)
    # the GPU-bound row moves by them (its xfail above cannot show it): 23.865 -> 23.736; the host-bound 7B 14,336
    # row does not (its GPU step stays under the host floor; qwen2up2: 32.446 -> 33.399, the release's count at 19.68 us)
    assert _as_published("7b", 30720, "int8", "cuda_old") == pytest.approx(23.736, rel=0.001)
    assert _as_published("7b", 14336, "int8", "cuda_old") == pytest.approx(
        33.391, rel=0.001
    )  # fixtr: 33.399 on 8
    # silent off cuda_old: the same row stated without the kernel moves no bytes
    assert serving_host.quant_kernel_gpu_bytes(parse_workload_spec(_spec("7b", 30720, "int8"))) == 0.0
