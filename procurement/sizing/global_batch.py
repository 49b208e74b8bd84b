"""A training plan's micro-batches a step at its own data-parallel ranks, and what it says of its global batch.

A stated global batch (global_batch_size / global_batch_tokens) is the recipe's contract: a plan at any GPU count
keeps it and runs global / (micro_batch_size x its data-parallel ranks) micro-batches a step (Megatron's
num_microbatches, NVIDIA/Megatron-LM @6337108c megatron/core/num_microbatches_calculator.py). Without one, a plan
at another GPU count runs the spec's gradient_accumulation_steps, so its global batch changes with its GPUs. The
ranking's rows (ranking/rows.py row_batch) and the size report's candidates (sizing/report.py) say it alike.
"""

from __future__ import annotations

from dataclasses import replace

from procurement.sizing.spec import WorkloadSpec, accumulation_at


def batch_at(spec: WorkloadSpec, data_parallel_ranks: int) -> tuple[WorkloadSpec, str] | None:
    """(the spec at the plan's micro-batches a step, what the plan says of its batch); None for a plan whose
    ranks do not split the stated global batch (Megatron asserts they do) or that has no whole ranks."""
    ranks = data_parallel_ranks
    accumulation = accumulation_at(spec, ranks) if ranks >= 1 else None
    if accumulation is None:
        return None
    sequences = spec.micro_batch_size * accumulation * ranks
    figures = (
        f"micro_batch_size {spec.micro_batch_size} x {accumulation} micro-batches x {ranks:,} data-parallel ranks"
        f" = {sequences:,} sequences ({sequences * spec.seq_len:,} tokens) a step"
    )
    plan_spec = (
        spec
        if accumulation == spec.gradient_accumulation_steps
        else replace(spec, gradient_accumulation_steps=accumulation)
    )
    if spec.global_batch_size is not None:
        return plan_spec, f"global batch kept: gradient_accumulation_steps {accumulation} ({figures})"
    return plan_spec, (
        f"global batch changes with the GPU count: gradient_accumulation_steps {accumulation} as stated "
        f"({figures}); state global_batch_size to keep the run's batch on every row"
    )


def data_parallel_ranks(
    gpus: int, tensor_parallel: int, pipeline_parallel: int, context_parallel: int
) -> int:
    """gpus / (tp x pp x cp), 0 where the model-parallel group does not divide the GPUs."""
    model_parallel = tensor_parallel * pipeline_parallel * context_parallel
    return gpus // model_parallel if model_parallel and gpus % model_parallel == 0 else 0
