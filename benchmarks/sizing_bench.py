"""Sizing engine speed: one workload against the whole catalog, and many random workloads.

Runs without Django: `.venv/bin/python benchmarks/sizing_bench.py [--workloads 10000]`. Each figure
is compared with a plain Python loop over the same inputs measured in the same run (one
`size_workload` call per GPU x count, one scalar memory/throughput call per count). Target: the
whole catalog (29 GPUs x counts 1-8) for one workload in under 5 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from procurement.sizing import (  # noqa: E402
    gpu_by_slug,
    inference_throughput,
    load_bundled_gpus,
    memory_breakdown_gib,
    parse_workload_spec,
    size_workload,
    training_throughput,
)

COUNTS = list(range(1, 9))
TARGET_MS = 5.0
PRESETS = [
    "llama-2-7b",
    "llama-3.1-8b",
    "llama-3.2-3b",
    "mistral-7b",
    "qwen2.5-14b",
    "llama-3-70b",
    "mixtral-8x7b",
]


def _best_ms(function, repeat: int) -> float:
    """Median wall time of `repeat` calls, in ms (the machine is shared: the median resists noise)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def catalog_benchmark(repeat: int) -> None:
    gpus = load_bundled_gpus()
    workloads = {
        "qlora llama-3.1-8b": {"task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e8},
        "full_finetune llama-2-7b (most cards fail: remedies)": {
            "task": "full_finetune",
            "model": {"preset": "llama-2-7b"},
            "micro_batch_size": 4,
            "training_tokens": 1e9,
        },
        "inference llama-3-70b x 32": {
            "task": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {"concurrency": 32, "context_len": 4096},
        },
    }
    print(f"One workload x {len(gpus)} GPUs x counts 1-8 ({len(gpus) * len(COUNTS)} candidates)")
    for label, data in workloads.items():
        spec = parse_workload_spec(data)
        size_workload(spec, gpus, COUNTS)  # warm caches and imports
        vectorized = _best_ms(lambda spec=spec: size_workload(spec, gpus, COUNTS), repeat)
        loop = _best_ms(
            lambda spec=spec: [size_workload(spec, [gpu], [count]) for gpu in gpus for count in COUNTS],
            max(3, repeat // 10),
        )
        verdict = "OK" if vectorized < TARGET_MS else "over target"
        print(
            f"  {label:55s} {vectorized:7.2f} ms  (loop {loop:8.1f} ms, x{loop / vectorized:5.1f})"
            f"  target < {TARGET_MS} ms: {verdict}"
        )


def random_workload(rng: random.Random) -> dict:
    task = rng.choice(["pretrain", "full_finetune", "lora", "qlora", "inference"])
    data = {
        "task": task,
        "model": {"preset": rng.choice(PRESETS)},
        "micro_batch_size": rng.randint(1, 16),
        "seq_len": rng.choice([512, 1024, 2048, 4096, 8192]),
        "gradient_checkpointing": rng.choice(["none", "selective", "full"]),
        "training_tokens": 1e9,
        "inference": {"concurrency": rng.randint(1, 64), "context_len": rng.choice([1024, 4096, 8192])},
        "parallelism": {"gpus": 1, "zero_stage": rng.choice([0, 1, 2, 3]) if task != "inference" else 0},
    }
    return data


def _rows_vectorized(spec, gpu) -> None:
    memory_breakdown_gib(spec, COUNTS)
    _throughput(spec, gpu, COUNTS)


def _rows_loop(spec, gpu) -> None:
    for count in COUNTS:
        memory_breakdown_gib(spec, count)
        _throughput(spec, gpu, count)


def _throughput(spec, gpu, counts) -> None:
    peak = gpu.dense_tflops(spec.precision)
    if spec.is_training:
        training_throughput(spec, peak_tflops=peak, gpu_counts=counts, interconnect_gbps=360.0, mfu=0.4)
    else:
        inference_throughput(
            spec, bandwidth_gbps=gpu.memory_bandwidth_gbps, peak_tflops=peak, gpu_counts=counts
        )


def random_benchmark(count: int) -> None:
    rng = random.Random(20261130)
    specs = [parse_workload_spec(random_workload(rng)) for _ in range(count)]
    gpu = gpu_by_slug("h100-sxm5-80gb")
    print(f"\n{count:,} random workloads x counts 1-8 on {gpu.slug} (memory breakdown + throughput)")
    start = time.perf_counter()
    for spec in specs:
        _rows_vectorized(spec, gpu)
    vectorized = time.perf_counter() - start
    start = time.perf_counter()
    for spec in specs:
        _rows_loop(spec, gpu)
    loop = time.perf_counter() - start
    print(f"  vectorized over counts: {count / vectorized:10,.0f} workloads/s  ({vectorized:.2f} s)")
    print(
        f"  plain loop per count:   {count / loop:10,.0f} workloads/s  ({loop:.2f} s)  ratio x{loop / vectorized:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    catalog_benchmark(args.repeat)
    random_benchmark(args.workloads)


if __name__ == "__main__":
    main()
