"""fix51e2 (audoff2's FIX LIST item 3): a ranked offer's own vCPUs price an offloaded optimizer's CPU step
(procurement/ranking/offload_hours.py), as the image loader's bound takes them (configurations.configure).

By hand, one rank's partition of 1e9 trainable parameters, 8 ranks a node, a 10 s step of 100 hours priced on the
assumed 6 physical cores: CPU step 1e9 / (6 x 81.06e6) = 2.0561 s (the node's floor 48 B x 8e9 / 409.6 GB/s =
0.9375 s). An offer's vCPUs a GPU / 2 are its physical cores (vcpus_per_physical_core)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from procurement.ranking.offload_hours import offer_hours
from procurement.sizing import parse_workload_spec

RATE = (
    81.06e6  # assumptions.CPU_ADAM_PARAMS_PER_CORE_SECOND, ZeRO-Offload Table 4 (10B row, 48 physical cores)
)


def _raw(**more) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "llama-3.1-8b"},
        "precision": "bf16",
        "seq_len": 2048,
        "micro_batch_size": 4,
        "gradient_checkpointing": "full",
        "training_tokens": 2e8,
        "parallelism": {"gpus": 8, "zero_stage": 2, "offload": "optimizer"},
    } | more


def _shapes(measured: bool = False) -> SimpleNamespace:
    one = np.ones(1)
    return SimpleNamespace(
        communication={
            "offload_partition_params": 1e9 * one,
            "offload_ranks_per_node": 8.0 * one,
            "step_seconds": 10.0 * one,
        },
        total_gpus=8.0 * one,
        instances=one,
        measured=np.array([measured]),
    )


def test_each_offers_vcpus_set_its_cpu_step():
    spec = parse_workload_spec(_raw())
    shape = np.zeros(4, dtype=int)
    vcpus = np.array([96.0, 240.0, 64.0, np.nan])  # an instance of 8 GPUs: 12, 30, 8 vCPUs a GPU, unknown
    hours = offer_hours(spec, _shapes(), shape, vcpus, np.full(4, 100.0))
    assumed = 1e9 / (6 * RATE)
    assert assumed == pytest.approx(2.0561, abs=1e-4)
    floor = 48 * 1e9 * 8 / 409.6e9  # 15 cores would step in 0.822 s: the node's memory binds
    by_hand = [
        100.0,  # 12 vCPUs a GPU = the assumed 6 cores
        100.0 * (10.0 + floor - assumed) / 10.0,  # 88.81 h
        100.0 * (10.0 + 1e9 / (4 * RATE) - assumed) / 10.0,  # 4 cores: 110.28 h
        100.0,  # unknown: the assumption
    ]
    assert list(hours) == pytest.approx(by_hand, rel=1e-9)
    assert by_hand[1] == pytest.approx(88.81, abs=0.01) and by_hand[2] == pytest.approx(110.28, abs=0.01)


def test_stated_cores_a_stated_host_and_measured_hours_are_not_repriced():
    shape, vcpus, hours = np.zeros(1, dtype=int), np.array([240.0]), np.array([100.0])
    stated = parse_workload_spec(
        _raw(
            parallelism={"gpus": 8, "zero_stage": 2, "offload": "optimizer", "offload_cpu_cores_per_rank": 4}
        )
    )
    assert offer_hours(stated, _shapes(), shape, vcpus, hours)[0] == 100.0
    hosted = parse_workload_spec(_raw(host={"vcpus_per_gpu": 8}))
    assert offer_hours(hosted, _shapes(), shape, vcpus, hours)[0] == 100.0
    spec = parse_workload_spec(_raw())
    assert offer_hours(spec, _shapes(measured=True), shape, vcpus, hours)[0] == 100.0
    plain = parse_workload_spec(_raw(parallelism={"gpus": 8, "zero_stage": 2}))
    assert offer_hours(plain, _shapes(), shape, vcpus, hours)[0] == 100.0
