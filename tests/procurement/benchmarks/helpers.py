"""Synthetic runner documents for tests: the runner's schema, numbers chosen for hand computation."""

from __future__ import annotations

import copy

QLORA_SPEC = {
    "name": "llama-8b-qlora",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "seq_len": 2048,
    "lora": {"rank": 16, "targets": "all-linear"},
    "training_tokens": 2.0e8,
}


def gpu_document(**changes) -> dict:
    """A one-GPU H100 run: 10 steps of 1.0 s, 4096 tokens/step -> 4096 tokens/s, price 4.00 USD/h."""
    steps = [
        {
            "index": i,
            "warmup": i < 2,
            "seconds": 1.0,
            "tokens": 4096,
            "max_memory_allocated_bytes": 20 * 2**30,
            "max_memory_reserved_bytes": 22 * 2**30,
        }
        for i in range(12)
    ]
    document = {
        "schema_version": 1,
        "runner": "gpuledger-benchmark-runner",
        "measured_at": "2026-11-20T10:00:00+00:00",
        "workload": {"name": "llama-8b-qlora", "task": "qlora", "spec": copy.deepcopy(QLORA_SPEC)},
        "run": {
            "mode": "training",
            "precision": "bf16",
            "layers_run": 32,
            "layers_in_spec": 32,
            "tiny_cpu_model": False,
            "flops_per_token": 3.2e10,
            "micro_batch_size": 2,
            "seq_len": 2048,
        },
        "environment": {
            "device": "cuda",
            "gpu_name": "NVIDIA H100 80GB HBM3",
            "gpu_count": 1,
            "gpus_used": 1,
            "price_per_hour": 4.0,
            "currency": "USD",
            "instance_type": None,
        },
        "steps": steps,
        "summary": {
            "measured_steps": 10,
            "step_seconds_median": 1.0,
            "tokens_per_step": 4096,
            "tokens_per_second_median": 4096.0,
            "peak_memory_allocated_gib": 20.0,
        },
        "samples": [
            {
                "t_s": i * 0.2,
                "gpu": 0,
                "gpu_util_pct": 95.0,
                "memory_used_gib": 22.0,
                "memory_total_gib": 79.6,
                "cpu_util_pct": 10.0,
            }
            for i in range(20)
        ],
    }
    for path, value in changes.items():
        node = document
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return document
