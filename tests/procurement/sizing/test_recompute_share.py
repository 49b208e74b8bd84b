"""recompute_forward_time_share (eff42): the forward full recomputation runs again is charged at 0.35 of its FLOPs'
time at the training efficiency, on the settings of its fit rows only; and the fit, re-run on its four tables
(int42: after moe42's FLOP count, 0.35 again).

Fit rows: mosaicml/llm-foundry @c90b9b312c644dbde5c9e6eef75c6f1c117d8782 scripts/train/benchmarking/README.md,
"A100 80GB with 1600 Gbps node-node interconnect (RoCE)", "A100 40GB with 1600 Gbps node-node interconnect (RoCE)",
"H100 80GB BF16" and "H100 80GB BF16 (Large Scale, >= 128 GPUs)", the rows at seq <= 4,096 and d >= 2,048 (model, seq, GPUs, micro-batch, accumulation, tokens/s/GPU as published)."""

from __future__ import annotations

import math

import pytest

from procurement.sizing import parse_workload_spec, training_throughput
from procurement.sizing.assumptions import RECOMPUTE_FORWARD_TIME_SHARE
from procurement.sizing.gpus import gpu_by_slug, hierarchical_links
from procurement.sizing.mfu import default_mfu, recompute_time_share
from procurement.sizing.throughput import training_flops_per_token
from procurement.sizing.validation import Case, _mpt_spec, _training_rows
from tests.procurement.sizing.helpers import spec

A100 = gpu_by_slug("a100-sxm4-80gb")
MPT = {
    "1b": (2048, 24),
    "3b": (2560, 32),
    "7b": (4096, 32),
    "13b": (5120, 40),
    "30b": (7168, 48),
    "70b": (8192, 80),
}
# (model, seq, GPUs, micro-batch, accumulation, tokens/s/GPU)
A100_80GB_WITHOUT = [
    ("13b", 2048, 8, 2, 3, 2262),
    ("7b", 2048, 8, 6, 2, 4641),
    ("3b", 4096, 8, 5, 6, 9457),
    ("3b", 2048, 8, 10, 2, 10811),
    ("3b", 1024, 8, 20, 6, 11580),
    ("3b", 512, 8, 40, 6, 12127),
    ("1b", 4096, 8, 7, 4, 17807),
    ("1b", 2048, 8, 14, 4, 20513),
    ("1b", 1024, 8, 18, 4, 22112),
    ("1b", 512, 8, 56, 4, 23148),
]
A100_80GB_CHECKPOINTED = [
    ("70b", 2048, 64, 8, 4, 410),
    ("70b", 2048, 32, 2, 16, 373),
    ("30b", 4096, 8, 1, 21, 814),
    ("30b", 2048, 8, 3, 21, 916),
    ("30b", 1024, 8, 6, 21, 946),
    ("30b", 512, 8, 12, 21, 967),
    ("13b", 4096, 8, 10, 3, 2060),
    ("13b", 1024, 8, 40, 3, 2330),
    ("7b", 4096, 8, 16, 2, 3684),
    ("7b", 1024, 8, 64, 2, 4357),
]
H100_128_WITHOUT = [
    ("7b", 2048, 512, 6, 1, 9670),
    ("7b", 2048, 256, 6, 1, 10119),
    ("7b", 2048, 128, 6, 1, 10475),
    ("3b", 2048, 512, 8, 1, 21664),
    ("3b", 2048, 256, 8, 1, 22772),
    ("3b", 2048, 128, 8, 1, 23422),
    ("1b", 2048, 512, 12, 1, 39837),
    ("1b", 2048, 256, 12, 1, 42555),
    ("1b", 2048, 128, 12, 1, 44123),
]
H100_128_CHECKPOINTED = [
    ("70b", 2048, 512, 8, 1, 1007),
    ("70b", 2048, 256, 8, 1, 1035),
    ("70b", 2048, 128, 8, 1, 1058),
    ("30b", 2048, 512, 8, 1, 2115),
    ("30b", 2048, 256, 8, 1, 2148),
    ("30b", 2048, 128, 8, 1, 2199),
    ("13b", 2048, 512, 16, 1, 4952),
    ("13b", 2048, 256, 16, 1, 4989),
    ("13b", 2048, 128, 16, 1, 5080),
]

# The other two BF16 tables of the same README (int42: the whole 50-row fit re-run after moe42's FLOP count).
# "A100 40GB with 1600 Gbps node-node interconnect (RoCE)"
A100_40GB_WITHOUT = [
    ("3b", 4096, 8, 2, 8, 8777),
    ("3b", 2048, 128, 6, 1, 9538),
    ("3b", 2048, 64, 6, 1, 9736),
    ("3b", 2048, 32, 6, 1, 9914),
    ("3b", 2048, 16, 5, 1, 9750),
    ("3b", 2048, 8, 5, 8, 10065),
    ("3b", 1024, 8, 10, 8, 10731),
    ("3b", 512, 8, 20, 8, 11324),
    ("1b", 4096, 8, 4, 8, 16856),
    ("1b", 2048, 128, 10, 1, 18647),
    ("1b", 2048, 64, 10, 1, 19001),
    ("1b", 2048, 32, 10, 1, 15555),
    ("1b", 2048, 16, 8, 1, 19085),
    ("1b", 2048, 8, 8, 8, 19271),
    ("1b", 1024, 8, 16, 8, 20959),
    ("1b", 512, 8, 32, 8, 21782),
]
A100_40GB_CHECKPOINTED = [
    ("70b", 2048, 128, 4, 1, 376),
    ("70b", 2048, 64, 2, 1, 276),
    ("30b", 2048, 128, 6, 1, 865),
    ("30b", 2048, 32, 4, 1, 857),
    ("13b", 4096, 8, 2, 16, 1603),
    ("13b", 2048, 128, 16, 1, 1972),
    ("13b", 2048, 64, 16, 1, 1976),
    ("13b", 2048, 32, 14, 1, 1998),
    ("13b", 2048, 16, 10, 1, 1993),
    ("13b", 2048, 8, 4, 16, 1668),
    ("13b", 1024, 8, 8, 16, 1727),
    ("13b", 512, 8, 16, 16, 1763),
    ("7b", 4096, 8, 6, 4, 3366),
    ("7b", 2048, 128, 18, 1, 3623),
    ("7b", 2048, 64, 18, 1, 3665),
    ("7b", 2048, 32, 18, 1, 3725),
    ("7b", 2048, 16, 16, 1, 3645),
    ("7b", 2048, 8, 12, 4, 3679),
    ("7b", 1024, 8, 24, 4, 3854),
    ("7b", 512, 8, 48, 4, 3895),
]
# "H100 80GB BF16"
H100_WITHOUT = [
    ("13b", 2048, 64, 2, 1, 4800),
    ("13b", 2048, 32, 2, 1, 4811),
    ("13b", 2048, 16, 2, 1, 4767),
    ("13b", 2048, 8, 2, 1, 4792),
    ("7b", 2048, 8, 6, 1, 10643),
    ("3b", 4096, 8, 5, 6, 20964),
    ("3b", 2048, 64, 6, 3, 22525),
    ("3b", 2048, 32, 6, 3, 23021),
    ("3b", 2048, 16, 10, 3, 24142),
    ("3b", 1024, 8, 20, 6, 27046),
    ("3b", 512, 8, 40, 6, 27965),
    ("1b", 4096, 8, 7, 4, 38535),
    ("1b", 2048, 64, 20, 1, 44402),
    ("1b", 2048, 32, 20, 1, 45130),
    ("1b", 2048, 16, 20, 1, 46037),
    ("1b", 2048, 8, 14, 1, 45455),
    ("1b", 1024, 8, 18, 4, 48910),
    ("1b", 512, 8, 56, 4, 52275),
]
H100_CHECKPOINTED = [
    ("70b", 2048, 64, 8, 4, 1039),
    ("70b", 2048, 32, 2, 16, 882),
    ("30b", 4096, 8, 1, 21, 1802),
    ("30b", 2048, 32, 14, 3, 2308),
    ("30b", 2048, 16, 10, 3, 2263),
    ("30b", 2048, 8, 3, 21, 2002),
    ("30b", 1024, 8, 6, 21, 2084),
    ("13b", 4096, 8, 10, 3, 4717),
    ("13b", 1024, 8, 40, 3, 5502),
    ("7b", 4096, 8, 16, 2, 8611),
    ("7b", 1024, 8, 64, 2, 10203),
]


def _rate(row, gpu: str, checkpointing: str, share: float | None = None) -> float:
    model, seq, gpus, micro_batch, accumulation, _ = row
    width, layers = MPT[model]
    data = _mpt_spec(width, layers, micro_batch, accumulation, gpus, checkpointing) | {"seq_len": seq}
    workload = parse_workload_spec(data)
    if share is None:
        rows = _training_rows(workload, Case(data, "train_tps", gpu))
        return rows["training_tokens_per_second"] / gpus
    card = gpu_by_slug(gpu)
    rows = training_throughput(
        workload,
        peak_tflops=card.dense_tflops("bf16"),
        gpu_counts=gpus,
        tensor_parallel_gbps=card.interconnect_bandwidth_gbps(1),
        **hierarchical_links(card, gpus),
        mfu=default_mfu(workload, card),
        memory_bandwidth_gbps=card.memory_bandwidth_gbps,
        recompute_share=share,
    )
    return float(rows["training_tokens_per_second"]) / gpus


def _log_errors(without, checkpointed, gpu: str, share: float) -> list[float]:
    """Each checkpointed row's log error less the geometric-mean log error of the table's rows without it."""
    base = sum(math.log(_rate(row, gpu, "none") / row[-1]) for row in without) / len(without)
    return [math.log(_rate(row, gpu, "full", share) / row[-1]) - base for row in checkpointed]


@pytest.mark.parametrize(
    ("without", "checkpointed", "gpu", "best"),
    [
        (A100_80GB_WITHOUT, A100_80GB_CHECKPOINTED, "a100-sxm4-80gb", 0.25),
        (H100_128_WITHOUT, H100_128_CHECKPOINTED, "h100-sxm5-80gb", 0.35),
    ],
)
def test_the_fit_on_two_of_its_tables(without, checkpointed, gpu, best):
    def loss(share: float) -> float:
        return sum(error * error for error in _log_errors(without, checkpointed, gpu, share))

    grid = [step / 20 for step in range(21)]
    assert min(grid, key=loss) == best
    # the whole charge puts the checkpointed rows 13-18% below the table's own level; the share within 3%
    whole = math.exp(sum(_log_errors(without, checkpointed, gpu, 1.0)) / len(checkpointed))
    share = RECOMPUTE_FORWARD_TIME_SHARE.value
    fitted = math.exp(sum(_log_errors(without, checkpointed, gpu, share)) / len(checkpointed))
    assert whole == pytest.approx(0.84, abs=0.03)
    assert fitted == pytest.approx(1.0, abs=0.04)


def test_the_whole_fit_on_its_fifty_rows():
    """int42: the fit re-run on all four tables' 50 checkpointed rows after moe42's FLOP count (no input embedding
    FLOPs, the output layer not recomputed): each table alone 0.25 / 0.30 / 0.50 / 0.35 as before, jointly 0.35 on
    the 0.05 grid (0.36 on a 0.01 grid), root mean square log error 8.1% (19.1% at the whole charge; 8.2% / 19.5%
    under the old count)."""
    tables = [
        (A100_80GB_WITHOUT, A100_80GB_CHECKPOINTED, "a100-sxm4-80gb"),
        (A100_40GB_WITHOUT, A100_40GB_CHECKPOINTED, "a100-sxm4-40gb"),
        (H100_WITHOUT, H100_CHECKPOINTED, "h100-sxm5-80gb"),
        (H100_128_WITHOUT, H100_128_CHECKPOINTED, "h100-sxm5-80gb"),
    ]
    assert sum(len(checkpointed) for _, checkpointed, _ in tables) == 50

    def errors(share: float) -> list[float]:
        return [e for without, ckpt, gpu in tables for e in _log_errors(without, ckpt, gpu, share)]

    grid = [step / 20 for step in range(21)]
    losses = {share: sum(e * e for e in errors(share)) for share in grid}
    assert min(grid, key=losses.get) == RECOMPUTE_FORWARD_TIME_SHARE.value == 0.35
    assert math.sqrt(losses[0.35] / 50) == pytest.approx(0.081, abs=0.001)
    assert math.sqrt(losses[1.0] / 50) == pytest.approx(0.191, abs=0.001)
    alone = [min(grid, key=lambda s, t=t: sum(e * e for e in _log_errors(*t, s))) for t in tables]
    assert alone == [0.25, 0.30, 0.50, 0.35]


def _pretrain(**fields):
    data = {
        "task": "pretrain",
        "precision": "bf16",
        "seq_len": 4096,
        "micro_batch_size": 2,
        "gradient_checkpointing": "full",
        "parallelism": {"gpus": 8, "zero_stage": 3},
    }
    return spec(**(data | fields))


def test_it_charges_the_recomputed_forward_at_the_share_and_shows_the_hardware_flops():
    workload = _pretrain()
    kwargs = {"peak_tflops": 312.0, "gpu_counts": 8, "interconnect_gbps": 240.0, "mfu": 0.51}
    whole = training_throughput(workload, **kwargs)
    shared = training_throughput(workload, recompute_share=0.35, **kwargs)
    hardware = training_flops_per_token(workload)
    without = training_flops_per_token(_pretrain(gradient_checkpointing="none"))
    assert float(shared["flops_per_token"]) == float(whole["flops_per_token"]) == hardware
    charged = without + 0.35 * (hardware - without)
    assert float(shared["compute_seconds"] / whole["compute_seconds"]) == pytest.approx(charged / hardware)
    # Llama 2 7B at 4,096 tokens: 8N + 4 attention passes against 6N + 3, the input embedding a lookup and the
    # output layer not recomputed (moe42's count; 0.837 when both were counted)
    assert charged / hardware == pytest.approx(0.840, abs=0.001)


def test_tensor_or_pipeline_parallel_rows_keep_the_whole_charge():
    workload = _pretrain(parallelism={"gpus": 8, "zero_stage": 1, "tensor_parallel": 2})
    kwargs = {"peak_tflops": 312.0, "gpu_counts": 8, "interconnect_gbps": 240.0, "mfu": 0.51}
    whole = training_throughput(workload, **kwargs)
    shared = training_throughput(workload, recompute_share=0.35, **kwargs)
    assert float(shared["compute_seconds"]) == float(whole["compute_seconds"])


@pytest.mark.parametrize(
    ("fields", "share"),
    [
        ({}, 0.35),
        ({"precision": "fp16"}, 0.35),
        ({"task": "full_finetune"}, 0.35),
        ({"gradient_checkpointing": "selective"}, 1.0),
        ({"precision": "fp8"}, 1.0),
        ({"task": "lora", "lora": {"rank": 16, "targets": "all-linear"}}, 1.0),
        ({"training_stack": "torchtitan"}, 0.35),
        ({"training_stack": "maxtext"}, 0.35),
        ({"training_stack": "megatron"}, 0.35),
        ({"mfu": 0.5}, 1.0),
        ({"model": {"preset": "mixtral-8x7b"}, "parallelism": {"gpus": 8, "zero_stage": 3}}, 1.0),
    ],
)
def test_the_share_applies_only_on_the_fit_rows_settings(fields, share):
    assert recompute_time_share(_pretrain(**fields), A100) == share
