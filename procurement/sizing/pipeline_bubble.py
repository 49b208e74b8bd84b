"""The pipeline bubble a spec's micro-batches leave, said where it decides the answer.

training_throughput prices a pipelined step at 1 + (p - 1) / (v m) its compute (interleaved 1F1B, Narayanan et
al. 2021, arXiv:2104.04473 sec. 2.2.2), m the micro-batches a step (gradient_accumulation_steps). A real pipeline
run splits its global batch into many micro-batches (Megatron: global batch / (micro-batch x data-parallel
ranks)); a spec that leaves gradient_accumulation_steps at its default 1 under pipeline_parallel p prices a step
p times its pipelined work, the bubble (p - 1) / (m + p - 1) of it idle (aud51p: Falcon-180B at PP 8, 7.0M
A100-hours published, 53.7M read with one micro-batch a step). With fewer micro-batches than stages the idle
time is at least the work itself (half the step or more at v = 1), so the answer then says so.
"""

from __future__ import annotations


def bubble_share(pipeline_parallel: int, virtual_pipeline: int, micro_batches: int) -> float:
    """The share of a pipelined step the stages sit idle: bubble / (work + bubble), with the bubble
    (p - 1) / (v m) of the work (training_throughput's factor)."""
    idle = (pipeline_parallel - 1) / (virtual_pipeline * micro_batches)
    return idle / (1.0 + idle)


def pipeline_bubble_warning(spec, pipeline_parallel: int) -> str | None:
    """A training candidate split over more pipeline stages than it has micro-batches a step: the bubble's
    share, that it decides the answer, and how to state the run's global batch."""
    micro_batches = spec.gradient_accumulation_steps
    if not spec.is_training or pipeline_parallel <= 1 or micro_batches >= pipeline_parallel:
        return None
    chunks = spec.parallelism.virtual_pipeline
    share = bubble_share(pipeline_parallel, chunks, micro_batches)
    formula = "(p - 1) / (m + p - 1)" if chunks == 1 else f"(p - 1) / (v m + p - 1), v = {chunks}"
    stated = (
        f"the stated global batch ({spec.global_batch_size:,} sequences) gives"
        if spec.global_batch_size is not None
        else "the spec states"
    )
    return (
        f"pipeline bubble decides this answer: {stated} {micro_batches} micro-batch"
        f"{'' if micro_batches == 1 else 'es'} a step over {pipeline_parallel} pipeline stages, so the GPUs sit "
        f"idle {share:.0%} of every step (1F1B bubble {formula}). A pipelined run usually has many "
        "micro-batches a step (Megatron: global batch / (micro_batch_size x data-parallel ranks)): state the "
        "run's global_batch_size (sequences a step) or global_batch_tokens, or gradient_accumulation_steps"
    )
