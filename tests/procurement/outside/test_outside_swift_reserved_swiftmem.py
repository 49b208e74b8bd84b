"""swiftmem (stop 52): why ms-swift's Qwen-1 LoRA memory rows read far above ours ([SWIFT] in
test_outside_qwen_loss_audit_aud50q.py, [SWIFT72] in test_outside_ranking_audit_audr2.py). No engine change: the
reading below is a property of how the run measured, sized only as a spread, so the rows stay UNEXPLAINED.

Read at modelscope/ms-swift @97e4d198b (2024-01-02, "Update benchmark 0101 (#271)", the commit that entered the
Qwen rows; git mirror):
- swift/trainers/trainers.py lines 43-47: after `super().train()`, `torch.cuda.max_memory_reserved(i)` per device
  (one device here: run_loop.py's `CUDA_VISIBLE_DEVICES=0`; two-card rows are printed "a+b", not summed). A reserved
  high-water mark over the whole process (load + every step), no eval (dataset_test_ratio 0).
- scripts/benchmark/test_memory_time/run_single.py: use_flash_attn defaults True (its __post_init__), every sample
  at max_length <= 2,048 (`train_dataset_sample = -1`), 1,000 drawn above it; no truncation_strategy (the
  `truncation_left` of cfcb6726 was dropped in this commit; the Chinese Benchmark.md still printed it until 4312aeb2).
- swift/llm/utils/argument.py lines 67-69: truncation_strategy default 'delete'; template.py lines 219-222: an
  encoded sample longer than max_length is dropped. So the run trains samples of every length from 91 tokens up to
  max_length (Benchmark.md: 3,234.4 +- 2,547.5, min 91, max 19,548, Qwen tokenizer), in random order
  (mixin.py line 452: train_sampler_random -> the HF RandomSampler).
- swift/llm/utils/utils.py data_collate_fn: pads to the longest in the batch (padding_to only for longlora), so at
  batch 1 every step is its sample's own length: `--max_length` does not pad.
- sft.py: bf16 via HF Trainer (accelerate autocast), gradient_checkpointing on (model_info default), tuner_backend
  swift LoRA on DEFAULT = c_attn, device_map 'auto' on one card; model.py get_model_tokenizer_qwen sets config.bf16
  and use_flash_attn, torch_dtype None (the model's own .bfloat16()). The spec already states all of these.
- trainers.py compute_loss: the HF loss (the model's own, under autocast) and `outputs.logits.argmax` for accuracy.

The allocator (c10/cuda/CUDACachingAllocator.cpp header comment, stored copy id 51919916, the same policy qwenq
read at pytorch/pytorch@001074d2): "the smallest cached block that will fit"; a block "may be split"; no block of
one cudaMalloc joins another's; cached blocks are returned to the driver only when a cudaMalloc fails ("free all
cached blocks that are not split and retry"). On an 80 GB A100 with room to spare nothing forces that return, so a
run whose vocabulary-sized tensors change size every step keeps segments of many sizes: max_memory_reserved rises
above the allocated peak by what the sample order makes it.
"""

from __future__ import annotations

import math
import random

import pytest

from tests.procurement.outside.test_outside_qwen_loss_audit_aud50q import (
    SWIFT_LENGTHS,
    SWIFT_MEMORY,
    SWIFT_OURS,
    _swift_spec,
    _total,
)

GIB = 2.0**30
MIB = 2**20
V_QWEN = 151_936
# the engine's weights (GiB) for the three Qwen-1 chat models as _swift_spec states them
WEIGHTS_GIB = {"1.8b": 3.43, "7b": 14.40, "14b": 26.41}
# kept samples a run (cls-fudan-news-zh, 4,959 rows; a lognormal with Benchmark.md's moments: share under
# max_length, x 4,959 at <= 2,048, x 1,000 above): model assumption, the real lengths are unpublished
KEPT_SAMPLES = {512: 52, 1024: 470, 2048: 1880, 4096: 755, 8192: 955}


# --- 1. what the table itself shows -----------------------------------------------------------------------------
def test_the_rows_past_the_weights_do_not_depend_on_the_model():
    """Published minus the weights, per max_length: 1.8B / 7B / 14B 3.56 / 3.61 / 3.73, 7.28 / 7.33 / 8.02, 12.92 /
    13.34 / 13.73, 20.37 / 20.91 / 21.54, 33.60 / 34.01 / 34.33 GiB: within 1.2 GiB of each other at every length.
    At 8,192 the spread (0.73) is under a third of what the checkpointed layer inputs alone (layers x hidden x 2 B a
    token: 98 / 262 / 410 KB) put between the 1.8B and the 14B (2.38 GiB), which the engine's allocated peak does
    carry. What sets the rows is a pool sized by length and vocabulary (the three share V 151,936 and, same seed,
    the same samples), into whose free room most of the model's own tensors fit."""
    for i, seq in enumerate(SWIFT_LENGTHS):
        past = [SWIFT_MEMORY[size][i] - WEIGHTS_GIB[size] for size in SWIFT_MEMORY]
        assert max(past) - min(past) < 1.2, (seq, past)
    spread_8k = max(SWIFT_MEMORY[k][-1] - WEIGHTS_GIB[k] for k in WEIGHTS_GIB) - min(
        SWIFT_MEMORY[k][-1] - WEIGHTS_GIB[k] for k in WEIGHTS_GIB
    )
    assert spread_8k == pytest.approx(0.73, abs=0.01)
    kept_14b_minus_1_8b = (40 * 5120 - 24 * 2048) * 2 * 8192 / GIB
    assert kept_14b_minus_1_8b == pytest.approx(2.38, abs=0.01)
    # the engine's allocated peak does carry it (ours minus weights, 14B - 1.8B at 8,192)
    ours_gap = (SWIFT_OURS["14b"][-1] - WEIGHTS_GIB["14b"]) - (SWIFT_OURS["1.8b"][-1] - WEIGHTS_GIB["1.8b"])
    assert ours_gap > 2.0 and spread_8k < ours_gap / 3


def test_the_rows_read_three_to_four_times_the_allocated_vocabulary_chain_at_short_lengths():
    """Past the weights the rows hold 7.5-8.4 MB a token at 512 / 1,024 (49-55 B x V), 6.8-7.2 at 2,048 (45-47),
    4.4-4.5 at 8,192 (29-30); Qwen-1's loss under autocast allocates 12 B x V (aud50q) and at most 16 B x V reserved (qwenq: a fresh
    4 B x V block in backward; accelerate's fp32 copy of the returned logits is another S x V x 4 that the
    (S - 1)-row blocks cannot hold). 16 B x V is 2.4 MB a token: a third of the short rows."""
    for size in SWIFT_MEMORY:
        per_token_b = [
            (SWIFT_MEMORY[size][i] - WEIGHTS_GIB[size]) * GIB / seq for i, seq in enumerate(SWIFT_LENGTHS)
        ]
        assert all(49 < b / V_QWEN < 56 for b in per_token_b[:2]), per_token_b
        assert 28.5 < per_token_b[-1] / V_QWEN < 30
    assert 16 * V_QWEN / 1e6 == pytest.approx(2.43, abs=0.01)


# --- 2. the allocator reading, sized as a spread --------------------------------------------------------------
class _CachingAllocator:
    """torch's large / small pools as the header comment states them: best fit, split, merge only inside a segment,
    nothing returned (no memory pressure on an 80 GB card). Sizes as the source's constants: 512 B rounding; a new
    segment 2 MiB (<= 1 MiB), 20 MiB (< 10 MiB), else rounded to 2 MiB; a large block splits when > 1 MiB is left."""

    def __init__(self):
        self.segments: list[tuple[bool, list[list]]] = []
        self.reserved = self.allocated = self.peak_reserved = self.peak_allocated = 0
        self.next_id = 0

    def malloc(self, size: int) -> int:
        size = max(512, 512 * math.ceil(size / 512))
        small = size <= MIB
        best = None
        for seg_small, blocks in self.segments:
            if seg_small != small:
                continue
            for i, block in enumerate(blocks):
                if block[1] is None and block[0] >= size and (best is None or block[0] < best[0]):
                    best = (block[0], blocks, i)
        if best is None:
            seg = (
                2 * MIB if small else (20 * MIB if size < 10 * MIB else 2 * MIB * math.ceil(size / (2 * MIB)))
            )
            blocks = [[seg, None]]
            self.segments.append((small, blocks))
            self.reserved += seg
            self.peak_reserved = max(self.peak_reserved, self.reserved)
            best = (seg, blocks, 0)
        block_size, blocks, i = best
        rest = block_size - size
        if rest >= (512 if small else MIB + 1):
            blocks.insert(i + 1, [rest, None])
        else:
            size = block_size
        self.next_id += 1
        blocks[i] = [size, self.next_id]
        self.allocated += size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return self.next_id

    def free(self, handle: int) -> None:
        for _, blocks in self.segments:
            for i, block in enumerate(blocks):
                if block[1] == handle:
                    self.allocated -= block[0]
                    block[1] = None
                    if i + 1 < len(blocks) and blocks[i + 1][1] is None:
                        block[0] += blocks.pop(i + 1)[0]
                    if i > 0 and blocks[i - 1][1] is None:
                        blocks[i - 1][0] += blocks.pop(i)[0]
                    return
        raise KeyError(handle)


def _vocabulary_chain(alloc: _CachingAllocator, seq: int) -> None:
    """One micro-batch's vocabulary-sized tensors in the order the located code makes them (Qwen-1's forward:
    bf16 lm_logits, `[..., :-1, :].contiguous()`, autocast's fp32 cast, log_softmax's saved output; accelerate's
    fp32 copy of the returned logits; backward: nll_loss's zeros, log_softmax's gradient, the bf16 cast back, the
    slice's zero-filled gradient). Per-layer tensors are left out: run with them (a scratch run, not committed) the
    reserved peak moved by under 1 GiB (0.9 at 8,192)."""
    m, f, n = alloc.malloc, alloc.free, seq - 1
    logits, shifted, cast, logp = m(seq * V_QWEN * 2), m(n * V_QWEN * 2), m(n * V_QWEN * 4), m(n * V_QWEN * 4)
    f(cast)
    f(shifted)
    fp32_logits = m(seq * V_QWEN * 4)
    f(logits)
    f(fp32_logits)
    zeros, grad = m(n * V_QWEN * 4), m(n * V_QWEN * 4)
    f(zeros)
    f(logp)
    back = m(n * V_QWEN * 2)
    f(grad)
    sliced = m(seq * V_QWEN * 2)
    f(back)
    f(sliced)


def _lengths(count: int, max_length: int, seed: int) -> list[int]:
    """Model assumption: a lognormal with Benchmark.md's moments (3,234.4 +- 2,547.5), min 91, 'delete' over
    max_length, random order. The run's own lengths and order are unpublished (result.jsonl not committed)."""
    rng = random.Random(seed)
    var = math.log(1 + (2547.5 / 3234.4) ** 2)
    mu = math.log(3234.4) - var / 2
    out: list[int] = []
    while len(out) < count:
        x = int(math.exp(rng.gauss(mu, math.sqrt(var))))
        if 91 <= x <= max_length:
            out.append(x)
    return out


def _excess_gib(seq: int, seed: int) -> float:
    alloc = _CachingAllocator()
    for length in _lengths(KEPT_SAMPLES[seq], seq, seed):
        _vocabulary_chain(alloc, length)
    return (alloc.peak_reserved - alloc.peak_allocated) / GIB


# reserved minus allocated peak (GiB), sample orders 1-5 (by the code below)
EXCESS_GIB = {512: (3.3, 0.6, 2.2, 1.9, 2.8), 2048: (12.5, 22.7, 13.3, 10.7, 24.6)}


@pytest.mark.parametrize("seq", sorted(EXCESS_GIB))
def test_the_allocator_reading_is_large_enough_but_not_sized(seq):
    """At 512 tokens (7B: published 18.01, ours 16.87, gap 1.14 GiB) five orders leave 0.6-3.3 GiB cached past the
    allocated peak (0.5-2.9x the gap): the published row sits inside. At 2,048 (gap 7.55) they leave 10.7-24.6
    (1.4-3.3x): ours + excess 30.9-44.8 GiB against 27.74, every order over. The mechanism is the right size and
    shape (model-independent; the 1.8B / 14B rows move with the 7B, part 1), but its amount turns on the sample
    order and lengths nobody published, and this model of it overshoots the long rows (4,096 / 8,192: 2-4.5x the
    gap in a scratch run): not sized to a row, so no EXPLAINED."""
    excess = tuple(round(_excess_gib(seq, seed), 1) for seed in range(1, 6))
    assert excess == pytest.approx(EXCESS_GIB[seq], abs=0.05)
    i = SWIFT_LENGTHS.index(seq)
    gap = SWIFT_MEMORY["7b"][i] - SWIFT_OURS["7b"][i]
    ours = _total(_swift_spec("7b", seq))
    assert ours == pytest.approx(SWIFT_OURS["7b"][i], abs=0.01)
    assert max(excess) > gap
    predicted = [ours + e for e in excess]
    inside = min(predicted) <= SWIFT_MEMORY["7b"][i] <= max(predicted)
    assert inside is (seq == 512)
