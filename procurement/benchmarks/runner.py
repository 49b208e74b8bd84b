"""Run a short representative job for a workload spec and write one benchmark JSON document.

    python -m procurement.benchmarks.runner SPEC --steps N --device cpu|cuda --output FILE
        [--scale-layers K] [--warmup-steps W] [--instance-type T --price-per-hour P --currency USD]

Training specs run forward, backward and an optimizer step at the spec's precision (gradient
checkpointing and LoRA adapters when the spec asks); inference specs run one prefill of the spec's
context for every concurrent stream, then decode steps against the KV cache. Needs torch, psutil and
(for GPU sampling) nvidia-ml-py: requirements-bench.txt. No Django, no database. The format is
documented in docs/benchmark-format.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil
import torch

from procurement.benchmarks import torch_model
from procurement.benchmarks.sampler import Sampler
from procurement.sizing.documents import load_spec_text
from procurement.sizing.spec import WorkloadSpec, WorkloadSpecError, parse_workload_spec

SCHEMA_VERSION = 1
GIB = 2**30
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
# The CPU path exists so the whole loop runs in CI: sizes capped to keep it to seconds.
CPU_LIMITS = {"seq_len": 64, "micro_batch_size": 2, "context_len": 64, "concurrency": 4}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="procurement.benchmarks.runner", description=__doc__.split("\n")[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup-steps", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--scale-layers", type=int, default=None, help="run only K of the spec's layers")
    parser.add_argument("--instance-type", default="")
    parser.add_argument("--price-per-hour", type=float, default=None)
    parser.add_argument("--currency", default="USD")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 1 <= args.steps <= 10_000:
        parser.error("--steps must be between 1 and 10000")
    if not 0 <= args.warmup_steps < 1_000:
        parser.error("--warmup-steps must be between 0 and 999")
    if args.price_per_hour is not None and args.price_per_hour <= 0:
        parser.error("--price-per-hour must be positive")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is visible (use --device cpu)")
    return args


def load_spec(path: Path) -> tuple[dict, WorkloadSpec]:
    data = load_spec_text(path.read_text(encoding="utf-8"), source=str(path))
    return data, parse_workload_spec(data)


def run_shape(spec: WorkloadSpec, *, device: str, scale_layers: int | None) -> tuple[torch_model.Shape, dict]:
    """The shape to run and how it relates to the spec's model (recorded so the import can scale back)."""
    model = spec.model
    if device == "cpu":
        shape = torch_model.TINY_CPU_SHAPE
        return shape, {
            "tiny_cpu_model": True,
            "layers_run": shape.num_layers,
            "layers_in_spec": model.num_layers,
        }
    layers = min(scale_layers or model.num_layers, model.num_layers)
    shape = torch_model.Shape(
        num_layers=layers,
        hidden_size=model.hidden_size,
        num_attention_heads=model.num_attention_heads,
        num_key_value_heads=model.num_key_value_heads,
        intermediate_size=model.intermediate_size,
        vocab_size=model.vocab_size,
        gated_mlp=model.gated_mlp,
    )
    return shape, {"tiny_cpu_model": False, "layers_run": layers, "layers_in_spec": model.num_layers}


def _sizes(spec: WorkloadSpec, device: str) -> dict:
    sizes = {
        "seq_len": spec.seq_len,
        "micro_batch_size": spec.micro_batch_size,
        "context_len": spec.inference.context_len,
        "concurrency": spec.inference.concurrency,
    }
    if device == "cpu":
        sizes = {key: min(value, CPU_LIMITS[key]) for key, value in sizes.items()}
    return sizes


def _synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _memory(device: str) -> dict:
    if device != "cuda":
        return {"max_memory_allocated_bytes": None, "max_memory_reserved_bytes": None}
    return {
        "max_memory_allocated_bytes": int(torch.cuda.max_memory_allocated()),
        "max_memory_reserved_bytes": int(torch.cuda.max_memory_reserved()),
    }


def _timed(step, device: str) -> float:
    _synchronize(device)
    started = time.perf_counter()
    step()
    _synchronize(device)
    return time.perf_counter() - started


def training_steps(spec, model, sizes, *, steps, warmup, device) -> list[dict]:
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-4)
    batch, length = sizes["micro_batch_size"], sizes["seq_len"]
    tokens = torch.randint(0, model.shape.vocab_size, (batch, length + 1), device=device)
    model.train()

    def step():
        logits = model(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1)
        )
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    records = []
    for index in range(warmup + steps):
        seconds = _timed(step, device)
        records.append(
            {
                "index": index,
                "warmup": index < warmup,
                "seconds": seconds,
                "tokens": batch * length,
                **_memory(device),
            }
        )
    return records


def inference_steps(spec, model, sizes, *, steps, warmup, device) -> tuple[float, list[dict]]:
    """One prefill of `context_len` tokens per stream, then `warmup + steps` decode steps (one token per stream)."""
    streams, context = sizes["concurrency"], sizes["context_len"]
    model.eval()
    caches = [{} for _ in model.layers]
    prompt = torch.randint(0, model.shape.vocab_size, (streams, context), device=device)
    records = []
    with torch.inference_mode():
        prefill_s = _timed(lambda: model(prompt, caches), device)
        next_token = torch.zeros((streams, 1), dtype=torch.long, device=device)
        for index in range(warmup + steps):
            seconds = _timed(lambda: model(next_token, caches), device)
            records.append(
                {
                    "index": index,
                    "warmup": index < warmup,
                    "seconds": seconds,
                    "tokens": streams,
                    **_memory(device),
                }
            )
    return prefill_s, records


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(records: list[dict], device: str) -> dict:
    measured = [r for r in records if not r["warmup"]] or records
    seconds = [r["seconds"] for r in measured]
    median = statistics.median(seconds)
    tokens = measured[0]["tokens"]
    allocated = [
        r["max_memory_allocated_bytes"] for r in records if r["max_memory_allocated_bytes"] is not None
    ]
    reserved = [r["max_memory_reserved_bytes"] for r in records if r["max_memory_reserved_bytes"] is not None]
    return {
        "measured_steps": len(measured),
        "step_seconds_median": median,
        "step_seconds_p10": _percentile(seconds, 0.1),
        "step_seconds_p90": _percentile(seconds, 0.9),
        "step_seconds_spread": (max(seconds) - min(seconds)) / median if median > 0 else 0.0,
        "tokens_per_step": tokens,
        "tokens_per_second_median": tokens / median if median > 0 else None,
        "peak_memory_allocated_gib": max(allocated) / GIB if allocated else None,
        "peak_memory_reserved_gib": max(reserved) / GIB if reserved else None,
    }


def environment(device: str, args) -> dict:
    gpu_count = torch.cuda.device_count() if device == "cuda" else 0
    gpu_name = torch.cuda.get_device_name(0) if gpu_count else None
    driver = None
    if gpu_count:
        try:
            import pynvml

            pynvml.nvmlInit()
            driver = pynvml.nvmlSystemGetDriverVersion()
        except Exception:  # noqa: BLE001  (no NVML: the driver stays unknown, the run still counts)
            driver = None
    return {
        "device": device,
        "gpu_name": gpu_name,
        "gpu_count": gpu_count,
        "gpus_used": 1 if gpu_count else 0,
        "driver": driver,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu_count": psutil.cpu_count(),
        "host_ram_gib": round(psutil.virtual_memory().total / GIB, 2),
        "instance_type": args.instance_type or None,
        "price_per_hour": args.price_per_hour,
        "currency": args.currency if args.price_per_hour is not None else None,
    }


def _spec_summary(spec: WorkloadSpec) -> dict:
    model = spec.model
    return {
        "name": spec.name,
        "task": spec.task,
        "precision": spec.precision,
        "weight_quantization": spec.weight_quantization,
        "gradient_checkpointing": spec.gradient_checkpointing,
        "lora_rank": spec.lora.rank if spec.lora else None,
        "lora_targets": list(spec.lora.targets) if spec.lora else None,
        "model": {
            "preset": model.preset,
            "params": model.params,
            "num_layers": model.num_layers,
            "hidden_size": model.hidden_size,
            "num_attention_heads": model.num_attention_heads,
            "num_key_value_heads": model.num_key_value_heads,
            "intermediate_size": model.intermediate_size,
            "vocab_size": model.vocab_size,
        },
    }


def build_model(spec: WorkloadSpec, shape, device: str, dtype) -> tuple[torch.nn.Module, int, int]:
    checkpointing = spec.gradient_checkpointing != "none" and spec.task != "inference"
    model = torch_model.DecoderModel(shape, checkpointing=checkpointing).to(device=device, dtype=dtype)
    params = torch_model.parameter_count(model)
    trainable = params
    if spec.task in ("lora", "qlora") and spec.lora:
        trainable = torch_model.lora_apply(model, rank=spec.lora.rank, targets=spec.lora.targets)
        model.to(device=device, dtype=dtype)
    return model, params, trainable


def run(args) -> dict:
    torch.manual_seed(args.seed)
    spec_data, spec = load_spec(args.spec)
    device = args.device
    shape, scale = run_shape(spec, device=device, scale_layers=args.scale_layers)
    # fp8 training needs Transformer Engine; the runner measures bf16 instead and says so.
    run_precision = (
        "fp32" if device == "cpu" else ("bf16" if spec.precision in ("fp8", "fp4") else spec.precision)
    )
    model, params, trainable = build_model(spec, shape, device, DTYPES[run_precision])
    sizes = _sizes(spec, device)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    gpu_indices = (0,) if device == "cuda" else ()
    prefill_s = None
    with Sampler(gpu_indices=gpu_indices) as sampler:
        if spec.task == "inference":
            prefill_s, records = inference_steps(
                spec, model, sizes, steps=args.steps, warmup=args.warmup_steps, device=device
            )
        else:
            records = training_steps(
                spec, model, sizes, steps=args.steps, warmup=args.warmup_steps, device=device
            )
    summary = summarize(records, device)
    if prefill_s is not None:
        summary["prefill_seconds"] = prefill_s
        summary["ttft_seconds"] = prefill_s
    return {
        "schema_version": SCHEMA_VERSION,
        "runner": "gpuledger-benchmark-runner",
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "workload": _spec_summary(spec) | {"spec": spec_data},
        "run": {
            "mode": "inference" if spec.task == "inference" else "training",
            "precision": run_precision,
            "base_weights_dtype": run_precision,
            "steps": args.steps,
            "warmup_steps": args.warmup_steps,
            "params_run": params,
            "trainable_params_run": trainable,
            "flops_per_token": torch_model.training_flops_per_token(params, trainable / params)
            if spec.task != "inference"
            else 2.0 * params,
            **scale,
            **sizes,
        },
        "environment": environment(device, args),
        "steps": records,
        "summary": summary,
        "samples": sampler.samples,
    }


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        document = run(args)
    except (WorkloadSpecError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    args.output.write_text(json.dumps(document, indent=1), encoding="utf-8")
    summary = document["summary"]
    print(
        f"{document['workload']['name']}: {summary['measured_steps']} steps, median {summary['step_seconds_median']:.4f} s, "
        f"{summary['tokens_per_second_median']:,.1f} tokens/s -> {args.output}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
