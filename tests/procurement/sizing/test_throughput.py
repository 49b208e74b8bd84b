"""Speed estimates against the guides' reference facts and hand-computed values."""

import numpy as np
import pytest

from procurement.sizing import inference_throughput, training_throughput
from procurement.sizing.throughput import training_flops_per_token
from tests.procurement.sizing.helpers import spec

P7 = 6_738_415_616
# moe42: the matmul weights a token multiplies. The 32,000 x 4,096 input embedding is a row lookup (no FLOPs); the
# output layer (the same size, untied) is a matmul, 6 FLOPs a weight in training whether or not the blocks are
# recomputed (activation checkpointing wraps the blocks only), 4 when adapters freeze it, 2 in a forward.
TABLE = 32_000 * 4_096
BLOCKS7 = P7 - 2 * TABLE
# Causal self-attention per trained token at seq 2048 (Llama-2-7B: 32 layers, d_attn 4096): 3 passes x
# 2 L T d_attn = 6 L T d_attn, PaLM's 12 L H Q T (Chowdhery et al. 2022, appendix B) halved by the causal mask
ATTENTION_2K = 6 * 32 * 2048 * 4096
LLAMA2_EMBEDDING_BYTES = 32000 * 4096 * 2  # the input table is looked up, not read, per token


def _decode(workload, bandwidth_gbps, **kw):
    return inference_throughput(workload, bandwidth_gbps=bandwidth_gbps, peak_tflops=312.0, **kw)


def test_it_bounds_7b_fp16_decode_by_bandwidth():
    # DESIGN: 7B fp16 on a 2 TB/s card <= ~140 tokens/s, 80-120 observed; 1 TB/s about 70, 40-60 observed.
    workload = spec(
        task="inference",
        precision="fp16",
        inference={"concurrency": 1, "context_len": 512, "output_tokens": 256},
    )
    fast, slow = _decode(workload, 2000.0), _decode(workload, 1000.0)
    assert 130 < fast["decode_tokens_per_second_upper_bound"] < 160
    assert 80 <= fast["decode_tokens_per_second_per_stream"] <= 120
    assert 40 <= slow["decode_tokens_per_second_per_stream"] <= 60
    kv = 512 * 1024 * (256 + 128)
    assert fast["decode_tokens_per_second_upper_bound"] == pytest.approx(
        2000e9 / (P7 * 2 - LLAMA2_EMBEDDING_BYTES + kv)
    )


def test_it_aggregates_over_concurrency_until_compute_bound():
    # Llama-3-8B (GQA: 128 KiB per token) with short contexts: 2048 streams x 2N FLOPs outweigh the reads.
    gqa = {"preset": "llama-3-8b"}
    low = spec(task="inference", model=gqa, inference={"concurrency": 1, "context_len": 300})
    high = spec(task="inference", model=gqa, inference={"concurrency": 2048, "context_len": 300})
    one, many = _decode(low, 3350.0), _decode(high, 3350.0)
    assert many["decode_tokens_per_second_total"] > 20 * one["decode_tokens_per_second_total"]
    assert str(one["decode_bound"]) == "memory" and str(many["decode_bound"]) == "compute"
    assert many["decode_tokens_per_second_per_stream"] < one["decode_tokens_per_second_per_stream"]


def test_it_reads_fewer_moe_expert_weights_per_token_than_it_holds():
    mixtral = spec(
        task="inference", model={"preset": "mixtral-8x7b"}, inference={"concurrency": 1, "context_len": 512}
    )
    dense_equivalent = 2000e9 * 0.7 / (46.7e9 * 2)
    assert _decode(mixtral, 2000.0)["decode_tokens_per_second_per_stream"] > 2.5 * dense_equivalent


def test_it_computes_time_to_first_token_from_prefill_flops():
    workload = spec(task="inference", inference={"concurrency": 1, "context_len": 2304, "output_tokens": 256})
    ttft = float(_decode(workload, 2039.0, generation=80)["time_to_first_token_seconds"])
    # a prompt token: 2 x (N less the input embedding, a lookup) plus causal attention over the 2,048-token
    # prompt, 2 L T d_attn (forward only), at the A100's 16-bit prefill efficiency (0.68, fitted on TensorRT-LLM
    # v0.9.0's 132.4 ms for this prompt; moe42: 0.69 with the embedding counted)
    assert ttft == pytest.approx((2 * (P7 - TABLE) + 2 * 32 * 2048 * 4096) * 2048 / (312e12 * 0.68))
    assert ttft == pytest.approx(0.133, rel=0.01)


@pytest.mark.parametrize(
    ("fields", "factor"),
    [
        ({}, 6),
        ({"gradient_checkpointing": "full"}, 8),
        ({"task": "lora"}, 4),
        ({"task": "lora", "gradient_checkpointing": "full"}, 6),
    ],
)
def test_it_counts_training_flops_per_token(fields, factor):
    workload = spec(**fields)
    adapters = 6 * 4_194_304 if fields.get("task") == "lora" else 0  # r8 on q,v: 32 x 8 x (4096+4096) x 2
    attention = ATTENTION_2K * (4 / 3 if fields.get("gradient_checkpointing") == "full" else 1)  # a 4th pass
    head = (4 if fields.get("task") == "lora" else 6) * TABLE  # never recomputed; frozen under adapters
    assert training_flops_per_token(workload) == factor * BLOCKS7 + head + adapters + attention


def _train(workload, **rows):
    defaults = {"peak_tflops": 312.0, "gpu_counts": 1, "interconnect_gbps": np.inf, "mfu": 0.4}
    return {k: float(np.asarray(v)) for k, v in training_throughput(workload, **(defaults | rows)).items()}


def test_it_reproduces_llama2_7b_gpu_hours_at_the_default_mfu():
    # Llama 2 model card: 184,320 A100-hours for 2T tokens; 6ND at 40% MFU of 312 TFLOPS gives 179,975 h,
    # with the attention term at 2,048 tokens (4.0% more) 187,136 h; moe42: without the input embedding's
    # 6 x 131M FLOPs a token (a lookup) 183,648 h.
    workload = spec(task="pretrain", training_tokens=2e12)
    hours = _train(workload)["training_hours"]
    assert hours == pytest.approx((6 * (P7 - TABLE) + ATTENTION_2K) * 2e12 / (312e12 * 0.4) / 3600)
    assert hours == pytest.approx(184_320, rel=0.05)


def test_it_hides_fast_gradient_all_reduce_and_exposes_slow_links():
    workload = spec(task="pretrain", training_tokens=1e9, micro_batch_size=4)
    nvlink = _train(workload, gpu_counts=8, interconnect_gbps=240.0)
    pcie = _train(workload, gpu_counts=8, interconnect_gbps=1.0)
    single = _train(workload)
    assert nvlink["training_tokens_per_second"] == pytest.approx(8 * single["training_tokens_per_second"])
    assert pcie["training_tokens_per_second"] < nvlink["training_tokens_per_second"] / 2
    assert pcie["communication_share"] > 0.3 > nvlink["communication_share"]
    # All-reduce volume: 2(n-1)/n x gradient bytes, plus the latency of 169 pretraining bucket calls
    # (Megatron-LM's 40M-parameter buckets: 13,476,831,232 / 8e7 bytes) x (8.4 + 14 x 3.4 = 56 us)
    step = 2048 * 4 * 8 * (6 * (P7 - TABLE) + ATTENTION_2K) / (8 * 312e12 * 0.4)
    comm = 2 * 7 / 8 * P7 * 2 / 1e9 + 169 * 56e-6
    assert pcie["step_seconds"] == pytest.approx(step + comm - 0.67 * step)


def test_it_slows_offload_and_qlora_steps_and_costs_zero3_by_its_collectives():
    base = _train(spec(parallelism={"gpus": 1}))["step_seconds"]
    # ZeRO-3 on one GPU gathers nothing: its cost is the collectives (tests/.../test_communication.py)
    zero3 = _train(spec(parallelism={"gpus": 1, "zero_stage": 3}), zero_stage=3)["step_seconds"]
    assert zero3 == pytest.approx(base)
    offload = _train(spec(parallelism={"gpus": 1, "zero_stage": 3, "offload": "optimizer"}), zero_stage=3)
    # fix51e: was base x 1.5 (the flat offload_step_overhead, retired). Now seconds a step (pinned_offload.py):
    # ZeRO-3, accumulation 1, optimizer only: 2 B of gradients out and 4 B of updated 16-bit partition back over
    # pageable copies (pin_memory unstated, DeepSpeed's default: 10.0 GB/s), and the CPU step of all P7 on the
    # assumed 6 physical cores at 81.06e6 parameters a core-second (fix51e2: the ZeRO-Offload paper's Table 4; fix51e
    # 12 at 14.32e6), 13.86 s, above the 48 B / 409.6 GB/s floor, 0.79 s
    assert offload["step_seconds"] == pytest.approx(base + 6 * P7 / 10.0e9 + P7 / (6 * 81.06e6))
    # qlora44: was qlora == lora x 1.3 (the flat assumptions.qlora_dequant_overhead). Now the unpacking is a time a
    # micro-batch (procurement/sizing/qlora_dequant.py): bitsandbytes nf4 under full recomputation dequantizes each
    # block weight in the forward, the recomputed forward and the backward (MatMul4Bit), 2.5 bytes each (read 0.5,
    # write 2), at 0.70 of the card's bandwidth; Llama 2 7B's block linears are P7 - 2 tables - 65 norms of 4,096.
    lora = _train(spec(task="lora", gradient_checkpointing="full"), memory_bandwidth_gbps=2039.0)[
        "step_seconds"
    ]
    qlora = _train(spec(task="qlora", gradient_checkpointing="full"), memory_bandwidth_gbps=2039.0)[
        "step_seconds"
    ]
    # fix46l: at 0.364 of the bandwidth, not 0.70: bitsandbytes 0.41.1's 4-bit dequantization as huggingface/optimum
    # @3ffebf99 tests/benchmark/README.md's A100 prefill rows measure it (assumptions.BNB_NF4_UNPACK_BANDWIDTH;
    # tests/procurement/sizing/test_qlora_dequant.py::test_nf4_rate_is_optimums_bitsandbytes_prefill_rows)
    quantized = P7 - 2 * TABLE - 65 * 4_096
    assert qlora == pytest.approx(lora + 3 * 2.5 * quantized / (2039e9 * 0.364))
    # without a bandwidth figure (inf) the unpacking costs nothing
    assert _train(spec(task="qlora"))["step_seconds"] == pytest.approx(
        _train(spec(task="lora"))["step_seconds"]
    )


def test_it_adds_a_pipeline_bubble():
    workload = spec(gradient_accumulation_steps=8, parallelism={"gpus": 4, "pipeline_parallel": 4})
    piped = _train(workload, gpu_counts=4, pipeline_parallel=4)
    flat = _train(spec(gradient_accumulation_steps=8), gpu_counts=1)
    # Same tokens per step on 4x the GPUs, stretched by (p-1)/m = 3/8.
    assert piped["step_seconds"] == pytest.approx(flat["step_seconds"] / 4 * (1 + 3 / 8))


def test_the_pipeline_bubble_is_p_minus_1_over_the_micro_batches_only_with_pipeline_stages():
    # GPipe/1F1B (Narayanan et al. 2021 §2.2): ideal time x (1 + (p - 1) / m), m micro-batches per step.
    # 2 stages x 1 GPU, 4 micro-batches of 2048 tokens: 6 x (P7 less the input embedding, a lookup) x 8192 /
    # (2 x 312e12 x 0.4) x (1 + 1/4).
    staged = spec(
        task="pretrain", gradient_accumulation_steps=4, parallelism={"gpus": 2, "pipeline_parallel": 2}
    )
    rows = _train(staged, gpu_counts=2, pipeline_parallel=2)
    assert rows["compute_seconds"] == pytest.approx(
        (6 * (P7 - TABLE) + ATTENTION_2K) * 8192 / (2 * 312e12 * 0.4) * 1.25
    )
    # 8 stages with the same 4 micro-batches: more stages idle longer, 1 + 7/4 of the ideal.
    worst = _train(staged, gpu_counts=8, pipeline_parallel=8, zero_stage=0)
    flat = spec(task="pretrain", gradient_accumulation_steps=1)
    assert _train(flat)["compute_seconds"] == pytest.approx(
        (6 * (P7 - TABLE) + ATTENTION_2K) * 2048 / (312e12 * 0.4)
    )  # no stages, no bubble
    assert worst["compute_seconds"] == pytest.approx(
        (6 * (P7 - TABLE) + ATTENTION_2K) * 8192 * 1 / (8 * 312e12 * 0.4) * (1 + 7 / 4)
    )


def test_it_charges_lora_offload_for_the_adapters_and_the_fetched_base_weights():
    """offl (aud51u's fix list 2): DeepSpeed's offloaded optimizer holds only requires_grad parameters
    (stage3.py@v0.14.2 _get_trainable_parameter_groups), so LoRA's offload moves and steps its adapters only.
    Llama 2 7B, rank 8 on every linear: per layer q, k, v, o 4 x 8 x (4,096 + 4,096) = 262,144, gate and up
    2 x 8 x (4,096 + 11,008) = 241,664, down 8 x (11,008 + 4,096) = 120,832; x 32 layers = 19,988,480.
    fix51e: was base x (1 + 0.5 x the adapters' share) (the flat offload_step_overhead, retired); now the
    adapters' seconds a step (pinned_offload.py), pageable copies (pin_memory unstated) at 10.0 GB/s."""
    lora = {"rank": 8, "targets": "all-linear"}
    base = _train(spec(task="lora", lora=lora, parallelism={"gpus": 1, "zero_stage": 3}), zero_stage=3)
    optimizer = _train(
        spec(task="lora", lora=lora, parallelism={"gpus": 1, "zero_stage": 3, "offload": "optimizer"}),
        zero_stage=3,
    )
    adapters = 19_988_480
    # ZeRO-3, accumulation 1: 2 B gradients out, 4 B updated partition back; CPU step on the assumed 6 physical
    # cores at 81.06e6 a core-second (fix51e2), 41.1 ms
    offload_s = 6 * adapters / 10.0e9 + adapters / (6 * 81.06e6)
    assert optimizer["step_seconds"] == pytest.approx(base["step_seconds"] + offload_s)
    # parameter offload: each pass (forward and backward, no checkpointing) copies the 16-bit base and the
    # fp32 adapters (the bytes model's resident weights) host -> GPU, pageable (pin_memory unstated): 10.0 GB/s,
    # one micro-batch; the updated partition now stays on the host (no 4 B copy back under optimizer_and_params)
    both = _train(
        spec(
            task="lora",
            lora=lora,
            parallelism={"gpus": 1, "zero_stage": 3, "offload": "optimizer_and_params"},
        ),
        zero_stage=3,
    )
    fetched = 2 * (P7 * 2 + 19_988_480 * 4) / 10.0e9
    assert both["step_seconds"] == pytest.approx(optimizer["step_seconds"] + fetched - 4 * adapters / 10.0e9)
    # pinned (parallelism.offload_pin_memory): the same bytes at PCIe 4.0 x16's 31.5 GB/s
    pinned = _train(
        spec(
            task="lora",
            lora=lora,
            parallelism={
                "gpus": 1,
                "zero_stage": 3,
                "offload": "optimizer_and_params",
                "offload_pin_memory": True,
            },
        ),
        zero_stage=3,
    )
    pinned_s = 2 * (P7 * 2 + adapters * 4) / 31.5e9 + 2 * adapters / 31.5e9 + adapters / (6 * 81.06e6)
    assert pinned["step_seconds"] == pytest.approx(base["step_seconds"] + pinned_s)
