"""Uneven pipeline splits: which transformer layers each pipeline stage holds, and what that costs.

Megatron-LM places ``num_layers / (pp x vp)`` layers in each model chunk, which 126-layer Llama 3.1 405B
cannot tile for any pp x vp. Two ways out are published, and a spec can state either
(docs/workload-spec.md, ``parallelism``):

* ``account_for_embedding`` / ``account_for_loss`` (Megatron-LM ``--account-for-embedding-in-pipeline-split``
  and ``--account-for-loss-in-pipeline-split``; Megatron-Bridge's Llama 3.1 405B recipe sets both): the input
  embedding and the output head with the loss each count as one layer of the split, so 126 + 2 = 128 slots
  tile pp 8 x vp 8 (2 a chunk). The first stage holds one transformer layer fewer, the last one fewer.
* ``pipeline_layers_first`` / ``pipeline_layers_last`` (Megatron-LM ``--decoder-first-pipeline-num-layers``
  / ``--decoder-last-pipeline-num-layers``): the transformer layers of the first / last stage; the others
  share the rest evenly. Meta's Llama 3 405B (arXiv:2407.21783 sec. 3.3.2) "reduce[s] one Transformer layer
  each from the first and the last stages": 7 + 14 x 8 + 7 = 126 on 16 stages.

With a split stated the engine counts the heaviest stage (memory.py) and runs every micro-batch at the
slowest stage's pace (throughput.py). Without one the stages keep the engine's even average
(num_layers / pp, a fraction when it does not divide): the balanced-stage approximation.
"""

from __future__ import annotations

from dataclasses import dataclass

from procurement.sizing.params import block_matmul_params, embedding_params, norm_params

SPLIT_FLAGS = ("account_for_embedding", "account_for_loss")
SPLIT_COUNTS = ("pipeline_layers_first", "pipeline_layers_last")


@dataclass(frozen=True)
class StageSplit:
    """Transformer layers per pipeline stage (first to last); the embedding sits on the first stage and the
    output head and loss on the last (Megatron keeps a copy of a tied embedding there for the head)."""

    layers: tuple[int, ...]

    @property
    def stages(self) -> int:
        return len(self.layers)


def split_stated(par) -> bool:
    return any(getattr(par, key) for key in SPLIT_FLAGS) or any(
        getattr(par, key) is not None for key in SPLIT_COUNTS
    )


def split_problem(par, num_layers: int) -> tuple[str, str] | None:
    """(field, message) when the stated split cannot place the layers; None when it can (or none is stated)."""
    if not split_stated(par):
        return None
    p, v = par.pipeline_parallel, par.virtual_pipeline
    flags = [key for key in SPLIT_FLAGS if getattr(par, key)]
    counts = [key for key in SPLIT_COUNTS if getattr(par, key) is not None]
    field = f"parallelism.{(flags or counts)[0]}"
    if p < 2:
        return field, "splits pipeline stages: needs parallelism.pipeline_parallel > 1"
    if flags and counts:
        return (
            field,
            f"give account_for_embedding/account_for_loss or {counts[0]}, not both (Megatron-LM refuses it)",
        )
    if flags:
        slots = num_layers + len(flags)
        if slots % (p * v):
            named = " + ".join([str(num_layers), *("1" for _ in flags)])
            return field, (
                f"model.num_layers + the accounted embedding/loss ({named} = {slots}) must be divisible by "
                f"pipeline_parallel x virtual_pipeline ({p} x {v})"
            )
        return None
    first, last = par.pipeline_layers_first, par.pipeline_layers_last
    for key, value in (("pipeline_layers_first", first), ("pipeline_layers_last", last)):
        if value is not None and value % v:
            return f"parallelism.{key}", f"must be a multiple of virtual_pipeline ({v}), got {value}"
    rest = num_layers - (first or 0) - (last or 0)
    others = p - len(counts)
    if (others == 0 and rest) or (others and (rest < others * v or rest % (others * v))):
        return field, (
            f"the other {others} stage(s) must share the remaining {rest} of model.num_layers ({num_layers}) "
            f"evenly, in multiples of virtual_pipeline ({v})"
        )
    return None


def stage_split(par, num_layers: int) -> StageSplit | None:
    """The stated split (validated by ``split_problem``), or None for the even split."""
    if not split_stated(par) or split_problem(par, num_layers) is not None:
        return None
    p, v = par.pipeline_parallel, par.virtual_pipeline
    if par.account_for_embedding or par.account_for_loss:
        per_stage = (num_layers + par.account_for_embedding + par.account_for_loss) // (p * v) * v
        layers = [per_stage] * p
        layers[0] -= int(par.account_for_embedding)
        layers[-1] -= int(par.account_for_loss)
        return StageSplit(tuple(layers))
    first, last = par.pipeline_layers_first, par.pipeline_layers_last
    others = p - (first is not None) - (last is not None)
    middle = (num_layers - (first or 0) - (last or 0)) // others if others else 0
    layers = [middle] * p
    if first is not None:
        layers[0] = first
    if last is not None:
        layers[-1] = last
    return StageSplit(tuple(layers))


def in_flight_micro_batches(stage: int, stages: int, chunks: int, micro_batches: float) -> float:
    """Micro-batches whose activations a stage holds at its peak, in whole-stage units. 1F1B: stage r runs
    p - r forwards before its first backward (Narayanan et al. 2021 sec. 2.2). Interleaved (v chunks):
    Megatron's warm-up is 2 (p - r - 1) + (v - 1) p chunk forwards, plus the first steady one, capped by
    all m x v of the step (schedules.py, total_num_microbatches), over v chunks a stage."""
    if chunks <= 1:
        return float(min(micro_batches, stages - stage))
    warm = 2 * (stages - stage - 1) + (chunks - 1) * stages + 1
    return min(micro_batches * chunks, warm) / chunks


def heaviest_stage_layer_batches(split: StageSplit, chunks: int, micro_batches: float) -> tuple[float, float]:
    """(the most layer x micro-batch activations any stage keeps, the last stage's): memory.py's counts."""
    held = [
        layers * in_flight_micro_batches(rank, split.stages, chunks, micro_batches)
        for rank, layers in enumerate(split.layers)
    ]
    return max(held), held[-1]


def _block_and_table(model) -> tuple[float, float, float]:
    """(parameters of an average transformer block, of one vocab table, of an average active block)."""
    table = float(model.vocab_size * model.hidden_size)
    blocks = float(model.params) - embedding_params(model) - norm_params(model)
    active_blocks = float(block_matmul_params(model)) - norm_params(model)
    return blocks / model.num_layers, table, max(active_blocks, 0.0) / model.num_layers


def heaviest_stage_param_share(split: StageSplit, model) -> float:
    """Share of the model's parameters on the heaviest stage (the even split's is 1 / pp): its blocks plus
    the embedding (first stage) or the output head (last stage)."""
    block, table, _ = _block_and_table(model)
    stage = [layers * block for layers in split.layers]
    stage[0] += table
    stage[-1] += table
    return max(stage) / float(model.params)


def slowest_stage_factor(split: StageSplit, model) -> float:
    """The slowest stage's work over the even average: every micro-batch moves at the slowest stage's pace.
    Work is the active block parameters per layer and the output head's vocab x hidden matmul on the last
    stage (the embedding is a lookup: no matmul), 6 FLOPs a parameter a token alike."""
    _, table, block = _block_and_table(model)
    work = [layers * block for layers in split.layers]
    work[-1] += table
    return max(work) / (sum(work) / split.stages)
