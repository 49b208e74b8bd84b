"""img47 (stop 47, issue 29): every row of diffusers' 2022 'Memory Efficient Attention' table sized as a user sizes
it (`manage.py size FILE --gpu SLUG --format json` on the bundled catalog). Target: image speed within 25%.

Source:
  [FP16-MDX] huggingface/diffusers docs/source/optimization/fp16.mdx @0f75d572eb103a5b824b6732e69f028519f0f259
      (2022-10-31, 'Removing autocast from optimization markdown'; setup.py at that commit: version 0.7.0.dev0),
      section 'Memory Efficient Attention': "the speedups we obtain on a few Nvidia GPUs when running the inference
      at 512x512 with a batch size of 1 (one prompt)", runwayml/stable-diffusion-v1-5 revision fp16, torch_dtype
      float16, "PyTorch > 1.12", the pipeline's it/s (UNet steps a second, CFG: two samples a step), columns
      'Base Attention FP16' (the model's own CrossAttention._attention) and 'Memory Efficient Attention FP16'
      (`pipe.enable_xformers_memory_efficient_attention()`):
        NVIDIA Tesla T4 3.5 / 5.5; NVIDIA 3060 RTX 4.6 / 7.8; NVIDIA A10G 8.88 / 15.6; NVIDIA RTX A6000 11.7 /
        21.09; NVIDIA TITAN RTX 12.51 / 18.22; A100-SXM4-40GB 18.6 / 29.; A100-SXM-80GB 18.7 / 29.5.
      The same page's latency table ('obtained on NVIDIA TITAN RTX ... single image of size 512x512 ... 50 DDIM
      steps': original 9.50 s, cuDNN auto-tuner 9.37, autocast (fp16) 5.47, fp16 3.61, channels last 3.30, traced
      UNet 3.21, memory efficient attention 2.63) is the TITAN RTX only.

Already tests (not repeated here): the T4 and A10G 'Memory Efficient Attention' cells (5.5 / 15.6) are
test_outside_vision_audit_stop46.py::test_sd15_xformers_unet_rate (A10G passes at -22.7%; T4 strict xfail +27.1%).
The table's other cells were no case anywhere (grepped tests/, docs/, procurement/ for 3.5 / 8.88 / 11.7 / 21.09 /
18.6 / 29.0 / 18.7 / 29.5 / 12.51 / 18.22 / 4.6 / 7.8: only test_outside_vision_audit_stop46.py's XF_SD15_ROWS,
which compares the columns' ratios and sizes the T4's base row inside a gain check, not as a case).
Not sizable: the TITAN RTX rows (both columns) and the TITAN RTX latency table: the card is not in the bundled
catalog (pricing/data/gpu_specs.csv); test_the_2022_table_cards_the_catalog_lacks pins that. (cards, stop 51: the
3060 RTX rows, unsizable until then, are cases since the catalog holds rtx-3060.)

Stated as: `model.preset sd-1.5`, `precision fp16`, `micro_batch_size 1`, `image.resolution_px 512`,
`image.runtime pytorch-2.0` (the product's stack for 'SDPA or xformers attention' diffusers runs; the run predates
PyTorch 2.0, and no value states the 2022 stack), `flash_attention` false for the base column and true for the
xformers one. The product prints a generation's seconds, not a step rate: sized at 50 and at 1 step, the
difference is 49 UNet steps (text encoder and decode cancel), as test_outside_vision_audit_stop46.py does.

What the table shows (test_the_eager_excess_is_score_bytes_not_a_host_floor): on each card the two columns differ
only in the attention, and the base-minus-xformers step time is 103.9 / 48.5 / 38.1 / 19.3 ms (T4 / A10G / A6000
/ A100-40GB), 5.4x apart, while that time x the card's achieved bandwidth (datasheet x 0.70, the engine's
ACHIEVED_BANDWIDTH) is 21.8 / 20.4 / 20.5 / 21.0 GB, within 8% of each other: a fixed number of bytes a step, not a
fixed time (a host floor) and not fixed work (the same gaps x each card's dense fp16 peak spread 3.4-6.8 TFLOP,
2x). In units of the score tensors the engine counts (2 x 732.3 M elements a CFG step, fp16: 2.93 GB) that is
7.4 / 7.0 / 7.0 / 7.2 passes where the engine prices 4 (EAGER_SCORE_PASSES: diffusers >= 0.8's baddbmm, softmax,
bmm). The 2022 code runs more: CrossAttention._attention @0f75d572 (src/diffusers/models/attention.py) is
`torch.matmul(query, key.transpose(-1, -2)) * self.scale`, then `.softmax(dim=-1)`, then `torch.matmul(probs,
value)`: the scale is its own elementwise kernel over the scores (a read and a write, +2 passes: 6; the fused
baddbmm came with diffusers PR #1203, ad935933, 2022-11-21, first in v0.8.0), and the self-attention rows at the
first level are 4,096 fp16 keys (8 KB) wide, past PyTorch's persistent-softmax limit (dim <= 1024 and <= 4 KB), so
they run the block softmax cunn_SoftMaxForward, which sweeps its input three times from global memory (ilpReduce
MaxFloat, ilpReduce SumExpFloat, WriteFpropResultsVectorized: pytorch/pytorch aten/src/ATen/native/cuda/SoftMax.cu
as stored @000cace5a401cabff792f70ee9768708415ec98d, opened; host_softmax sends rows with dim_size <= 1024 and
<= 4,096 bytes to the persistent dispatch_softmax_forward, the rest to the block kernels). The shared-memory copy
that reads the row once, cunn_SoftMaxForwardSmem, came with pytorch/pytorch PR #122970 (2024-03-29, 'Wrote a CUDA
kernel cunn_SoftMaxForwardSmem ... that caches the inputs in shared memory'), so the 2022 releases ran the
three-sweep kernel. Those rows are 91.6% of the score elements. The code's count is 6 DRAM passes plus up to 2
re-reads of the softmax input (6-7.8): the rows' 7.0-7.4 lie inside it. How much of the re-reads L2 serves is not sized
from a source, so no pass count is landed in the engine (and no spec value states the 2022 stack).

fix47i (aud47i): the 'fixed number of bytes' holds on the GA102 pair (A10G / A6000: step gap 1.273x, bandwidth
1.280x, SM x clock 1.105x, fp16 peak 2.21x) but not on Turing: the table's TITAN RTX (sm_75 like the T4, 672 GB/s
datasheet) reads 4.0 passes against the T4's 7.4. The T4 base row is UNEXPLAINED again; the A6000's label rests on
the GA102 pair (6.97 passes, 12.06 it/s, +3.0%) and the A100-40GB's 7.2 is no longer evidence.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from procurement.sizing import image_model
from procurement.sizing.spec import parse_workload_spec

SPEED = 0.25
CATALOG = Path(__file__).resolve().parents[3] / "pricing" / "data" / "gpu_specs.csv"

# [FP16-MDX], it/s: (Base Attention FP16, Memory Efficient Attention FP16), the cards the catalog holds
ROWS = {
    "t4": (3.5, 5.5),
    "a10g": (8.88, 15.6),
    "rtx-a6000": (11.7, 21.09),
    "a100-sxm4-40gb": (18.6, 29.0),
    "a100-sxm4-80gb": (18.7, 29.5),
}
# [FP16-MDX] rows of cards the bundled catalog lacks (recorded, not sized)
# (cards, stop 51: the 3060 RTX row left this dict for the cases, the catalog holding rtx-3060)
NOT_IN_CATALOG = {"NVIDIA TITAN RTX": (12.51, 18.22)}
# the cards whose base-minus-xformers bytes agree (the A100-80GB's do not: A100_80_REASON)
AGREEING = ("t4", "a10g", "rtx-a6000", "a100-sxm4-40gb")


# img48 (stop 48): the table's stack is stated since image.runtime diffusers-0.7 exists (diffusers before 0.8: its
# eager attention scales the scores in a kernel of their own, image_model.DIFFUSERS_0_7_SCORE_SCALE_PASSES); the
# arithmetic tests below keep pytorch-2.0, the statement their figures were computed at
STACK_2022 = "diffusers-0.7"


def _spec(steps: int, xformers: bool, runtime: str = "pytorch-2.0") -> dict:
    return {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "micro_batch_size": 1,
        "flash_attention": xformers,
        "image": {"resolution_px": 512, "steps": steps, "runtime": runtime},
    }


def _seconds(tmp_path, spec: dict, gpu: str) -> float:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate["throughput"]["seconds_per_batch"]


def _steps_per_second(tmp_path, gpu: str, xformers: bool, runtime: str = "pytorch-2.0") -> float:
    many = _seconds(tmp_path, _spec(50, xformers, runtime), gpu)
    one = _seconds(tmp_path, _spec(1, xformers, runtime), gpu)
    return 49.0 / (many - one)


def _bandwidth(gpu: str) -> float:
    """Datasheet bytes/s of a catalog card (pricing/data/gpu_specs.csv memory_bandwidth_gbps)."""
    with CATALOG.open(newline="") as handle:
        (row,) = [row for row in csv.DictReader(handle) if row["slug"] == gpu]
    return float(row["memory_bandwidth_gbps"]) * 1e9


def _fp16_peak(gpu: str) -> float:
    """Dense fp16 FLOP/s of a catalog card (pricing/data/gpu_specs.csv fp16_tflops_dense)."""
    with CATALOG.open(newline="") as handle:
        (row,) = [row for row in csv.DictReader(handle) if row["slug"] == gpu]
    return float(row["fp16_tflops_dense"]) * 1e12


def _score_bytes_a_step() -> float:
    """The engine's eager score tensors of one CFG step at 512 px (two samples, fp16): one pass over them."""
    cost = image_model.spec_network_cost(parse_workload_spec(_spec(50, False)))
    return cost.eager_scores_saved * 2 * 2.0


def _passes(gpu: str) -> float:
    """Score passes the published base-minus-xformers step time is worth at the engine's achieved bandwidth."""
    base, fast = ROWS[gpu]
    seconds = 1.0 / base - 1.0 / fast
    return seconds * _bandwidth(gpu) * image_model.ACHIEVED_BANDWIDTH.value / _score_bytes_a_step()


# fix47i (aud47i): GDDR_EAGER_REASON, img47's one EXPLAINED label for the T4 and the RTX A6000 base rows, is split.
# The T4's (b) failed the audit (the TITAN RTX row, test_outside_image_audit_stop47b.py
# test_the_2022_tables_turing_pair_does_not_show_fixed_bytes): UNEXPLAINED again. The A6000's (b) is restated on
# the GA102 pair (A10G / A6000) alone, without the A100-40GB, and its landed figure on their mean (6.97 passes).
EAGER_CODE = (
    " diffusers @0f75d572 src/diffusers/models/attention.py CrossAttention._attention: `torch.matmul(q,"
    " k^T) * self.scale`, `.softmax(dim=-1)`, `torch.matmul(probs, v)`: the scale is a separate elementwise kernel"
    " over the scores (+2 passes over the engine's 4, which are diffusers >= 0.8's baddbmm: PR #1203, ad935933), and"
    " the first level's 4,096-key fp16 rows (91.6% of the score elements; 8 KB, past host_softmax's persistent"
    " limit of 1,024 elements and 4 KB) run PyTorch's block softmax cunn_SoftMaxForward, three sweeps of its input"
    " from global memory (pytorch/pytorch aten/src/ATen/native/cuda/SoftMax.cu as stored @000cace5), uncached"
    " before PR #122970 (2024-03-29, cunn_SoftMaxForwardSmem): 6 to 7.8 passes by the code."
)
T4_EAGER_REASON = (
    "UNEXPLAINED (was EXPLAINED at img47; fix47i after aud47i): [FP16-MDX] 'Base Attention FP16' on the T4, 3.5"
    " it/s; ours 4.40 (+25.7%; 4.41, +26.0%, before diffspd's launch queue at stop 51) under image.runtime"
    " diffusers-0.7 (img48: the 2022 code's separate score scale"
    " priced, 6 passes; was 5.03, +43.7%, as pytorch-2.0): 0.7% past the bar, the T4's xformers row +26.6% too (+27.1% before stop 51),"
    " so the T4's step outside the attention is still short. Tried: the 2022 eager attention's score bytes ("
    + EAGER_CODE
    + ") The T4's"
    " base-minus-xformers step (103.9 ms) is 7.4 score passes at its achieved bandwidth, near the GA102 pair's 7.0,"
    " but the same table's TITAN RTX, the T4's architecture (Turing, sm_75: the same 2022 code and kernels) at"
    " 672 GB/s, reads 4.0 passes (5.75 even at 100% of its datasheet), under the 6 DRAM passes the code counts as"
    " the floor: on the two Turing rows the gap is not a fixed number of bytes (T4 / TITAN RTX 1.8x), so the T4's"
    " 7.4 does not show the mechanism's size on its architecture (the 3060's 7.7 and the A100-80GB's 9.5 widen"
    " the table's seven rows to 4.0-9.5). A host floor is ruled out (181.8 ms a step against 31.1 ms of host"
    " time, test_outside_vision_audit_stop46.py); a clock in the rest of the step is argued against by the T4's"
    " torch 2.0 SDPA row, which the product meets (+1.3%). What is left: the 2022 stack on Turing, not sized; no"
    " spec value states it (image.runtime: optimized, pytorch-2.0, both diffusers >= 0.8's 4 passes)."
)
# The RTX A6000 base row's label until img48 (kept as history: the row now passes under image.runtime diffusers-0.7)
GA102_EAGER_REASON = (
    "EXPLAINED: [FP16-MDX] 'Base Attention FP16' (diffusers 0.7.0.dev0's eager CrossAttention) at 512 px batch 1"
    " (CFG) on the RTX A6000, 11.7 it/s; ours 14.98 (+28.0%). (a)"
    + EAGER_CODE
    + " (b) Sized from the table's"
    " GA102 pair (fix47i, after aud47i; test_the_ga102_pairs_pass_count_lands_the_a6000_base_row): the A10G and"
    " the A6000 are both GA102 (sm_86, the same code and kernels) and the two columns differ only in the"
    " attention; their base-minus-xformers steps (48.5 / 38.1 ms) differ by 1.273x, their datasheet bandwidths"
    " by 1.280x, their SMs x boost clock by 1.105x and their dense fp16 peaks by 2.21x: the gap scales with"
    " bandwidth, 7.0 score passes on each (6.97 mean, inside the code's 6-7.8), and at that mean the engine's"
    " eager scores land this row at 12.06 it/s (+3.0%; the A10G -14.4%). The A100-40GB (7.2) is left out of the"
    " evidence: the A100-80GB, the same chip at 1.31x the bandwidth, runs the same it/s (A100_EAGER_REASON), so"
    " the A100s are bound elsewhere and the 40GB's 7.2 is a coincidence. (c) No spec value states the 2022 stack"
    " (image.runtime: optimized, pytorch-2.0; both price diffusers >= 0.8's 4 passes), and the pass count is not"
    " landed: the softmax re-reads' DRAM cost depends on L2 hits no opened source sizes, the two GA102 rows are"
    " the fit with no held-out row (the Turing rows disagree: T4_EAGER_REASON), and the A100s contradict a"
    " bandwidth-bound term."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "published"),
    [
        # diffspd (stop 51): ours 4.41 -> 4.40 it/s (+26.0% -> +25.7%), the launch queue's critical path
        # img48: ours 4.41 it/s (+26.0%) under image.runtime diffusers-0.7 (was 5.03, +43.7%, as pytorch-2.0);
        # with the table's 7.14 passes 4.12 (+17.8%), but the TITAN RTX (same sm_75) reads 4.0 passes, so no
        # pass count is shown for Turing (T4_EAGER_REASON). The T4's xformers row is +27.1% too
        # (test_outside_vision_audit_stop46.py, UNEXPLAINED)
        pytest.param(
            "t4",
            3.5,
            id="t4-base",
            marks=pytest.mark.xfail(strict=True, reason=T4_EAGER_REASON),
        ),
        # img48: ours 8.01 it/s (-9.8%) under diffusers-0.7 (was 9.02, +1.6%), passes; diffspd (stop 51): 7.98
        # (-10.2%), the launch queue's critical path
        pytest.param("a10g", 8.88, id="a10g-base"),
        # diffspd (stop 51): 12.88 -> 12.79 it/s (+9.3%), the launch queue's critical path.
        # img48: ours 12.88 it/s (+10.0%) under diffusers-0.7, passes. Was a strict xfail: 14.98 it/s (+28.0%) as
        # pytorch-2.0, EXPLAINED (GA102_EAGER_REASON). Now 12.88 because the 2022 code's separate score scale is
        # priced (2 passes over the scores, 6 in all: DIFFUSERS_0_7_SCORE_SCALE_PASSES, from diffusers @0f75d572
        # src/diffusers/models/attention.py CrossAttention._attention lines 336-343), stated by image.runtime
        # diffusers-0.7
        pytest.param("rtx-a6000", 11.7, id="rtx-a6000-base"),
        # cards (stop 51): the 3060 RTX row, sizable since the catalog holds rtx-3060 (GA106, 360 GB/s): ours 3.649
        # it/s (-20.7%), passes
        pytest.param("rtx-3060", 4.6, id="rtx-3060-base"),
    ],
)
def test_sd15_2022_base_attention_rate(bundled_catalog, tmp_path, gpu, published):
    """img48: the RTX A6000 row was a strict xfail: 14.98 it/s (+28.0%), EXPLAINED by a pass count fitted on the
    GA102 pair. Now 12.88 it/s (+10.0%) because image.runtime diffusers-0.7 states the table's stack and the
    engine prices its attention's separate score scale (a read and a write of the scores: diffusers @0f75d572
    CrossAttention._attention, `torch.matmul(query, key.transpose(-1, -2)) * self.scale`; 6 passes, not 4),
    no fit; the softmax's re-reads are not counted (xformers PR #412's A100 timing of the operator at this shape
    meets the 4-pass count on a 40GB A100 only, about 5.2 passes on an 80GB: test_outside_eager_a100_stop48.py;
    fix48i after aud48i: the landing does not rest on it, counting the re-reads too keeps this row and the A10G's
    inside)."""
    estimate = _steps_per_second(tmp_path, gpu, xformers=False, runtime=STACK_2022)
    error = estimate / published - 1.0
    assert abs(error) <= SPEED, f"{estimate:.4g} vs {published:.4g} it/s ({error:+.1%})"


A100_EAGER_REASON = (
    "UNEXPLAINED: [FP16-MDX] 'Base Attention FP16' on the A100s: 18.6 it/s (40GB) and 18.7 (80GB); ours 23.34"
    " (+25.5%) and 26.13 (+39.7%) under image.runtime diffusers-0.7 (img48: the 2022 code's separate score scale,"
    " 6 passes; were 26.69, +43.5%, and 29.27, +56.5%, as pytorch-2.0). The rows: the 80GB, the same GA100 at 1.31x"
    " the bandwidth (2,039 vs 1,555 GB/s), runs the same it/s in both columns (18.7 / 29.5 against 18.6 / 29.0);"
    " its base-minus-xformers step is 19.6 ms (9.5 score passes at its achieved bandwidth) against the 40GB's 19.3"
    " (7.2 passes, in line with the GDDR cards' 7.0-7.4). A term bound by bandwidth alone cannot give one chip the"
    " same time at two bandwidths. img48's measurement, read again (fix48i after aud48i): xformers PR #412 ('A100"
    " fw', 2022-09-21) times the same eager operator (q * scale, q @ k^T, the 2022 block softmax, @ v) at SD 1.5's"
    " first-level shape (B = 16, M = 4,096, K = 40) at 1,940.7 us (CUTLASS 891.3), but names the card 'A100'"
    " without its memory. On a 40GB it meets the engine's 4-pass count at 0.70 of 1,555 GB/s (+1.6%); on an 80GB"
    " the 4-pass count at 0.70 of 2,039 GB/s is 1.505 ms, -22.5% against the measured 1,940.7 us, i.e. about 5.2"
    " passes: room for the block softmax's re-reads or SM-side cost. So the PR does not rule out the SM-side lead"
    " (the 3-sweep block softmax's per-row reductions, the head-width-40 batched GEMMs, both the same on the two"
    " cards): on either card it only bounds that cost by the measured 1.94 ms a call, and a cost near it would"
    " hide under the 40GB's bandwidth time and bind on the 80GB, one time at two bandwidths. Its 16x the elements in 15.8x"
    " the time (M = 16,384: 30,657.1 us) is no evidence either way: at fixed K the GEMM FLOPs, the softmax's"
    " reductions and the score bytes all grow as M^2. With the 2022 scale kernel at the operator's measured rate,"
    " the attention's excess over the CUTLASS kernel is estimated at ~11.0 ms a step (2.02 ms a first-level call x"
    " 5, extended per element to the other 8.4% of the score elements: an estimate, not a ceiling) of the 19.3 /"
    " 19.6 ms the columns differ by, ~8.3 / 8.6 ms left outside it on that estimate"
    " (test_outside_eager_a100_stop48.py). The same A100 pattern, per image: LambdaLabsML/lambda-diffusers"
    " @0c9fbc7 benchmark.csv (diffusers 0.3.0, 'half' under autocast, A100 80GB PCIe) runs 2.195 s an image"
    " between 1 and 16 images against 1.544 sized (+42%; the GA102 cards of the same CSV +11% / +17%): at 16"
    " images a call the excess is per image, GPU work, not host time (test_outside_diffusers03_audit_stop48.py)."
    " Ruled out: a host floor (test_the_a100_base_step_is_not_the_host: the eager path adds at most 3 kernels a"
    " CrossAttention, 96 a step; at the xformers column's own <= 34.4 us a kernel they cost <= 3.3 ms of the 19.3"
    " ms); a per-step host-device sync as a 2022-only cost (fix48i: diffusers 0.7's PNDM step syncs once a step,"
    " but so does the 2023 stack the rate was fitted on; NOTES stop 48). Best lead: what GA100 pays per image in"
    " the 2022 eager attention (or the rest of its step) that does not scale with bandwidth; a timing of the"
    " operator on a named 40GB and 80GB would decide between the two readings of PR #412."
)
A100_80_REASON = (
    "UNEXPLAINED (diffspd, stop 51): [FP16-MDX] 'Base Attention FP16' on the A100 80GB SXM, 18.7 it/s; ours 24.59"
    " (+31.5%; was 26.13, +39.7%) after the eager step's launch queue is priced as a critical path (image_model"
    ".eager_pass_seconds, no fitted term), which lands the same table's 40GB row (22.91 it/s, +23.2%) and brings"
    " both A100 xformers rows to +2.3% / +1.8% (were +10.8% / +8.9%). What is left is this row's own: the 80GB"
    " runs the 40GB's it/s at 1.31x its bandwidth, so ~12.8 ms a step (53.5 ms published against 40.7 sized) is"
    " not priced, and a bandwidth-bound term cannot give it; unsized. History (the label both A100 rows shared"
    " until stop 51): " + A100_EAGER_REASON[len("UNEXPLAINED: ") :]
)


RTX_3060_XFORMERS_REASON = (
    "UNEXPLAINED (cards, stop 51): [FP16-MDX] 'Memory Efficient Attention FP16' on the NVIDIA 3060 RTX, 7.8 it/s; ours"
    " 4.895 (-37.2%) under image.runtime diffusers-0.7, sizable since the catalog holds rtx-3060 (its base column,"
    " 4.6, lands at 3.649, -20.7%). Known: the 3060's tensor peak is derived, not published (28 SMs x 1.777 GHz x"
    " 512 dense FP16 FLOP/clk/SM with FP32 accumulate = 25.5 TFLOPS, the GA102 whitepaper's GeForce rate; NVIDIA"
    " states no tensor table for GA106). The same table's RTX A6000 runs 21.09 / 7.8 = 2.70x the 3060 where the"
    " catalog's fp16 peaks differ 154.8 / 25.5 = 6.07x and the bandwidths 768 / 360 = 2.13x: the published pair"
    " scales with neither peak, so the engine's compute-bound xformers step on the 3060 is the likely short term;"
    " the A10G (derived at the same GA10x rate) reads -23.2% in this column. The GeForce RTX 3090 carries a"
    " measured UNet efficiency (procurement/data/measured_efficiency.csv, 1.161) the 3060 lacks. Nothing of the gap"
    " is sized: which accumulate rate the 2022 stack's fp16 convolutions and GEMMs ran at on GA106 is in no opened"
    " source. Lead: an SD 1.5 UNet timing on a 3060 against its peak, or the cuDNN / cuBLAS compute type of that"
    " stack."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "published"),
    [
        # FIXED (diffspd, stop 51; was a strict xfail, A100_EAGER_REASON): 23.34 -> 22.91 it/s (+25.5% -> +23.2%).
        # The engine took an eager step as the longer of its GPU work and its host launches (max(G, H)); it now
        # walks the step's launch queue in diffusers' forward order (image_model.eager_pass_seconds: a kernel starts
        # at the later of its launch and the previous kernel's end, CUDA's in-order stream), so the GPU's waits on
        # the host in stretches of short kernels (the lower levels' ResNets, 31 us a launch) are not hidden behind
        # the first level's long attention kernels. On the A100 the two totals are close (GPU 42.8 ms, host 31.1
        # ms a step), where max(G, H) is furthest from the queue; no constant was added or refitted
        pytest.param("a100-sxm4-40gb", 18.6, id="a100-40gb-base"),
        # diffspd (stop 51): 26.13 -> 24.59 it/s (+39.7% -> +31.5%), still out: A100_80_REASON
        pytest.param(
            "a100-sxm4-80gb",
            18.7,
            id="a100-80gb-base",
            marks=pytest.mark.xfail(strict=True, reason=A100_80_REASON),
        ),
    ],
)
def test_sd15_2022_base_attention_rate_on_the_a100s(bundled_catalog, tmp_path, gpu, published):
    estimate = _steps_per_second(tmp_path, gpu, xformers=False, runtime=STACK_2022)
    error = estimate / published - 1.0
    assert abs(error) <= SPEED, f"{estimate:.4g} vs {published:.4g} it/s ({error:+.1%})"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "published"),
    [
        # ours 22.23 it/s (+5.4%); diffspd (stop 51): 21.98 (+4.2%), the launch queue's critical path
        pytest.param("rtx-a6000", 21.09, id="rtx-a6000-xformers"),
        # cards (stop 51): the 3060 RTX row, sizable since the catalog holds rtx-3060: ours 4.895 it/s (-37.2%)
        pytest.param(
            "rtx-3060",
            7.8,
            id="rtx-3060-xformers",
            marks=pytest.mark.xfail(strict=True, reason=RTX_3060_XFORMERS_REASON),
        ),
        # ours 32.13 it/s (+10.8%): host-bound in the engine (1,004 kernels x 31 us = 31.1 ms a step); diffspd
        # (stop 51): 29.67 (+2.3%), the launch queue's critical path (33.7 ms a step against the GPU's 26.7 and
        # the host's 31.1: the GPU waits on the host in the short-kernel stretches and the host's lead from the
        # first level's attention is spent before the step ends)
        pytest.param("a100-sxm4-40gb", 29.0, id="a100-40gb-xformers"),
        # ours 32.13 it/s (+8.9%): the same host floor; diffspd (stop 51): 30.02 (+1.8%)
        pytest.param("a100-sxm4-80gb", 29.5, id="a100-80gb-xformers"),
    ],
)
def test_sd15_2022_xformers_rate(bundled_catalog, tmp_path, gpu, published):
    estimate = _steps_per_second(tmp_path, gpu, xformers=True, runtime=STACK_2022)
    error = estimate / published - 1.0
    assert abs(error) <= SPEED, f"{estimate:.4g} vs {published:.4g} it/s ({error:+.1%})"


@pytest.mark.django_db
def test_the_eager_excess_is_score_bytes_not_a_host_floor(bundled_catalog):
    """Arithmetic on [FP16-MDX] and the engine's own score count: the base-minus-xformers step is a fixed number
    of bytes across the GDDR cards and the A100-40GB, not a fixed time; the A100-80GB is the outlier."""
    assert _score_bytes_a_step() == pytest.approx(2.929e9, rel=1e-3)
    gaps = {gpu: 1e3 * (1.0 / base - 1.0 / fast) for gpu, (base, fast) in ROWS.items()}
    assert [round(gaps[gpu], 1) for gpu in AGREEING] == [103.9, 48.5, 38.1, 19.3]
    # a host floor is a time: it would not move 5x across cards
    assert gaps["t4"] / gaps["a100-sxm4-40gb"] > 5.0
    work = {
        gpu: gaps[gpu] * 1e-3 * _fp16_peak(gpu) for gpu in AGREEING
    }  # FLOPs the gap is worth at dense peak
    assert [round(work[gpu] / 1e12, 1) for gpu in AGREEING] == [6.8, 3.4, 5.9, 6.0]
    passes = {gpu: _passes(gpu) for gpu in ROWS}
    assert [round(passes[gpu], 1) for gpu in AGREEING] == [7.4, 7.0, 7.0, 7.2]
    assert max(passes[gpu] for gpu in AGREEING) / min(passes[gpu] for gpu in AGREEING) < 1.08
    assert image_model.EAGER_SCORE_PASSES == 4.0  # the engine's count (diffusers >= 0.8)
    # the code's count at @0f75d572: 6 passes (matmul write, scale read + write, softmax read + write, matmul read)
    # plus up to two re-reads of the 4,096-key rows' softmax input (91.6% of the elements)
    cost = image_model.spec_network_cost(parse_workload_spec(_spec(50, False)))
    first_level = 5 * 8 * 4096**2  # 2 down + 3 up transformer blocks at 64 x 64 latents, 8 heads, one sample
    share = first_level / cost.eager_scores_saved
    assert share == pytest.approx(0.916, abs=0.001)
    assert (
        6.0 < min(passes[gpu] for gpu in AGREEING)
        and max(passes[gpu] for gpu in AGREEING) < 6.0 + 2.0 * share
    )
    assert passes["a100-sxm4-80gb"] == pytest.approx(9.54, abs=0.01)  # same chip as the 40GB, same it/s


@pytest.mark.django_db
def test_the_tables_pass_count_lands_the_gddr_base_rows(bundled_catalog, tmp_path, monkeypatch):
    """fix47i: arithmetic kept, no longer a label's evidence: the T4 is UNEXPLAINED (T4_EAGER_REASON) and the A6000's
    label rests on the GA102 pair's 6.97 (test_the_ga102_pairs_pass_count_lands_the_a6000_base_row).
    With the engine's eager scores at the table's own mean pass count (7.14, GDDR cards and A100-40GB), the
    base rows of the GDDR cards land; the A100-80GB does not (A100_EAGER_REASON). Not landed in the engine."""
    mean = sum(_passes(gpu) for gpu in AGREEING) / len(AGREEING)
    assert mean == pytest.approx(7.14, abs=0.005)
    monkeypatch.setattr(image_model, "EAGER_SCORE_PASSES", mean)
    errors = {gpu: _steps_per_second(tmp_path, gpu, xformers=False) / ROWS[gpu][0] - 1.0 for gpu in ROWS}
    # diffspd (stop 51), the launch queue's critical path: t4 0.178 -> 0.175, a10g -0.152 -> -0.155, rtx-a6000
    # 0.019 -> 0.013, a100-sxm4-40gb 0.171 -> 0.151, a100-sxm4-80gb 0.317 -> 0.272
    expected = {
        "t4": 0.175,
        "a10g": -0.155,
        "rtx-a6000": 0.013,
        "a100-sxm4-40gb": 0.151,
        "a100-sxm4-80gb": 0.272,
    }
    for gpu, error in expected.items():
        assert errors[gpu] == pytest.approx(error, abs=0.002), gpu
    assert all(abs(errors[gpu]) <= SPEED for gpu in AGREEING)
    assert errors["a100-sxm4-80gb"] > SPEED


@pytest.mark.django_db
def test_the_a100_base_step_is_not_the_host(bundled_catalog):
    """The A100-40GB's base step (53.8 ms) against its xformers step (34.5 ms) on the same table: the 2022 eager
    path launches at most 3 kernels a CrossAttention more than the xformers one (the separate scale, the softmax and the
    second matmul against one memory_efficient_attention call; the q / k / v head copies and the output copy are
    in both: attention.py @0f75d572), 32 CrossAttentions a UNet forward (16 transformer blocks x 2). If the
    xformers step were all host (<= 34.5 ms over the engine's >= 1,004 kernels: <= 34.4 us each), the eager
    kernels would add <= 3.3 ms, a sixth of the 19.3 ms seen."""
    spec = parse_workload_spec(_spec(50, True))
    kernels = image_model.network_forward_kernels(spec) + image_model.PIPELINE_STEP_KERNELS
    assert kernels == 1004.0
    base, fast = ROWS["a100-sxm4-40gb"]
    per_kernel = (1.0 / fast) / kernels
    assert per_kernel == pytest.approx(34.3e-6, abs=0.1e-6)
    extra = 3 * 32 * per_kernel
    assert extra == pytest.approx(3.3e-3, abs=0.05e-3)
    assert extra < (1.0 / base - 1.0 / fast) / 5.0


def test_the_2022_table_cards_the_catalog_lacks():
    """[FP16-MDX]'s TITAN RTX rows (and the TITAN RTX latency table) are not sizable: the bundled catalog lacks the
    card. A catalog that adds one should turn its rows into cases here. cards (stop 51): the catalog now holds
    rtx-3060, and its two rows are cases (test_sd15_2022_base_attention_rate / _xformers_rate, rtx-3060 ids);
    restated: 'neither rtx-3060 nor titan-rtx in the catalog, 2 rows recorded' -> 'rtx-3060 in, titan-rtx not, 1'."""
    with CATALOG.open(newline="") as handle:
        slugs = {row["slug"] for row in csv.DictReader(handle)}
    assert set(ROWS) | {"rtx-3060"} <= slugs
    assert "titan-rtx" not in slugs
    assert len(NOT_IN_CATALOG) == 1


# fix47i (aud47i): the RTX A6000 row's (b) restated on the GA102 pair alone; the A100-40GB (its 7.2 a coincidence
# once the A100s are bound elsewhere: A100_EAGER_REASON) is out of the evidence and of the mean
GA102 = ("a10g", "rtx-a6000")
# SMs and boost clocks: A10G 80 SMs at 1.71 GHz (the catalog's note), RTX A6000 84 SMs at 1.80 GHz (NVIDIA RTX A6000
# datasheet), as test_outside_image_audit_stop47b.py states them


@pytest.mark.django_db
def test_the_ga102_pairs_pass_count_lands_the_a6000_base_row(bundled_catalog, tmp_path, monkeypatch):
    """The A10G and the RTX A6000 are both GA102 (same code, same kernels, sm_86): their base-minus-xformers steps
    (48.5 / 38.1 ms) differ by 1.273x where their datasheet bandwidths differ by 1.280x (768 / 600), their SMs x
    boost clock by 1.105x and their dense fp16 peaks by 2.21x: two rows of the same table differing in the factor.
    Their mean pass count (6.97) priced in the engine's eager scores lands both: A10G -14.4%, A6000 12.06 it/s
    (+3.0%)."""
    gaps = {gpu: 1.0 / ROWS[gpu][0] - 1.0 / ROWS[gpu][1] for gpu in GA102}
    ratio = gaps["a10g"] / gaps["rtx-a6000"]
    assert ratio == pytest.approx(1.273, abs=0.002)
    assert _bandwidth("rtx-a6000") / _bandwidth("a10g") == pytest.approx(1.280, abs=0.001)
    assert (84 * 1.80) / (80 * 1.71) == pytest.approx(1.105, abs=0.001)
    assert _fp16_peak("rtx-a6000") / _fp16_peak("a10g") == pytest.approx(2.21, abs=0.01)
    mean = sum(_passes(gpu) for gpu in GA102) / len(GA102)
    assert mean == pytest.approx(6.97, abs=0.005)
    monkeypatch.setattr(image_model, "EAGER_SCORE_PASSES", mean)
    errors = {gpu: _steps_per_second(tmp_path, gpu, xformers=False) / ROWS[gpu][0] - 1.0 for gpu in GA102}
    # diffspd (stop 51): A10G -0.144 -> -0.148, A6000 +0.030 -> +0.024 (12.06 -> 11.98 it/s), the launch queue's
    # critical path
    assert errors == pytest.approx({"a10g": -0.148, "rtx-a6000": 0.024}, abs=0.002)  # A6000 11.98 it/s
    assert all(abs(error) <= SPEED for error in errors.values())
