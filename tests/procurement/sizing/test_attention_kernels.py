"""attention_kernel: a named kernel's published H100 causal speed (FlashAttention-3 paper, Figs. 5-6, bf16,
head dim 128) bounds training attention, at seq_len / context_parallel tokens a call. Against hand
computations on Llama-2-7B (32 layers, d_attn 4,096) at 8,192 tokens on one GPU: a token's causal forward
attention is 4 x 32 x 4,096 (half the sequence) x 4,096 = 2,147,483,648 FLOPs."""

import numpy as np
import pytest

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.attention_kernels import kernel_tflops
from procurement.sizing.throughput import training_flops_shares
from tests.procurement.sizing.helpers import spec

FORWARD = 4 * 32 * 4096 * 4096 * 8192  # one 8,192-token micro-batch's causal forward attention


def _pretrain(**fields):
    return spec(task="pretrain", training_tokens=1e9, seq_len=8192, parallelism={"gpus": 1}, **fields)


def _compute_s(workload, peak=989.5) -> float:
    rows = training_throughput(workload, peak_tflops=peak, gpu_counts=None, interconnect_gbps=360.0, mfu=0.4)
    return float(np.asarray(rows["compute_seconds"]))


def test_it_reads_the_published_points_and_holds_the_last():
    assert kernel_tflops("flash_attention_2", 8192) == (333.0, 318.0)
    assert kernel_tflops("flash_attention_2", 262144) == (335.0, 322.0)  # held at 16k
    forward, _ = kernel_tflops("cudnn", 4096 * 2**0.5)  # halfway between 4k and 8k in log length
    assert forward == pytest.approx((518.0 + 529.0) / 2)


def test_flash_attention_2_adds_what_the_kernel_needs_beyond_the_engine_s_share():
    engine = _compute_s(_pretrain())
    _, share = training_flops_shares(_pretrain())
    # FlashAttention-2 at 8k: one forward at 333 TFLOPS and a backward of 2.5 forwards at 318
    kernel = FORWARD * (1 / 333e12 + 2.5 / 318e12)
    stated = _compute_s(_pretrain(attention_kernel="flash_attention_2"))
    assert stated == pytest.approx(engine + kernel - engine * share, rel=1e-9)


def test_full_recomputation_runs_the_forward_twice_and_fp8_keeps_16_bit_attention():
    workload = _pretrain(attention_kernel="flash_attention_2", gradient_checkpointing="full")
    _, share = training_flops_shares(workload)
    engine = _compute_s(_pretrain(gradient_checkpointing="full"))
    kernel = FORWARD * (2 / 333e12 + 2.5 / 318e12)
    assert _compute_s(workload) == pytest.approx(engine + kernel - engine * share, rel=1e-9)
    # fp8 passes the 8-bit peak (2 x 989.5): the kernel still runs at the 16-bit rate
    fp8 = _pretrain(attention_kernel="flash_attention_2", precision="fp8")
    engine8 = _compute_s(_pretrain(precision="fp8"), peak=1979.0)
    kernel8 = FORWARD * (1 / 333e12 + 2.5 / 318e12)
    # the fp8 run recomputes nothing: its own attention share (moe42: the full run's equalled it only while the
    # output layer was counted 8 a weight under recomputation, scaling with the blocks)
    _, share8 = training_flops_shares(_pretrain(precision="fp8"))
    assert _compute_s(fp8, peak=1979.0) == pytest.approx(engine8 + kernel8 - engine8 * share8, rel=1e-9)


def test_a_faster_kernel_than_the_engine_changes_nothing():
    engine = _compute_s(_pretrain(), peak=100.0)  # a slow part: the engine's 40 TFLOPS, the kernel's 34+
    assert _compute_s(_pretrain(attention_kernel="cudnn"), peak=100.0) == pytest.approx(engine, rel=1e-12)


def test_it_rejects_an_unknown_kernel():
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain(attention_kernel="xformers")
    assert [error.path for error in raised.value.errors] == ["attention_kernel"]
