"""aud51d (stop 51): outside audit of diffspd, the eager UNet step priced as the critical path of its CUDA launch
queue (image_model.eager_step_units / eager_pass_seconds) instead of max(GPU work, host launches).

An outside diffusion-inference engineer's held-out rows. None of these figures is asserted by another test: the
same document's A100 batch-1 / batch-4 and V100 batch-1 / batch-4 eager rows (tests/procurement/sizing/
test_eager_launches.py), its compiled A100 batch-4 fit point and T4 / 3090 b16 / 3090 b4 / 4090 b4 / V100 b1 rows
(test_image_runtime.py) and its T4 batch-1 row (quoted in a reason, test_outside_vision_audit_stop46.py) are left out.

Source [T20]: huggingface/diffusers docs/source/en/optimization/torch2.0.md @2c529b75bbd25e4c69348bbabd0a1a842d540193,
section 'Benchmark' ('We used `diffusers 0.17.0.dev0`'; PyTorch 2.0; environment in diffusers PR #3313), script
'Stable Diffusion text-to-image': runwayml/stable-diffusion-v1-5, torch_dtype float16, `pipe.unet.to(memory_format=
torch.channels_last)`, default call (512 px, 50 steps, guidance 7.5: CFG), SDPA by default; 'torch 2.0 - compile' wraps
the UNet in torch.compile(mode="reduce-overhead", fullgraph=True) (CUDA graphs). Tables of iterations/s, row
'SD - txt2img':
    RTX 4090 (batch size: 1)   no compile 40.5    compile 44.65
    RTX 3090 (batch size: 1)   no compile 22.56   compile 23.84
    RTX 4090 (batch size: 4)   no compile 12.62
    RTX 3090 (batch size: 4)   no compile 6.46
    RTX 4090 (batch size: 16)  no compile 3.17
    A100 (batch size: 16)      no compile 3.04
    V100 (batch size: 16)      no compile 1.66
One iteration is one denoising step of `batch size` images (two UNet samples each under CFG). The spec is the
run's as its author states it: sd-1.5, fp16, micro_batch_size = the batch, image.runtime 'pytorch-2.0' (the stack
the document names; the field exists for exactly this document's rows), image.fused_kernels for the compiled
column. The product's step is the difference of a 50-step and a 20-step sizing over 30 (encoders and VAE cancel).
The doc names no A100 memory size; the 80GB SXM is sized (the 40GB reads -9.8% at batch 16, same verdict).

Bar: image speed 25%, on the step time (product seconds / published seconds - 1, as test_outside_image_workloads_6.py).
'before' = the same sizing with eager_step_units returning no units (the max(G, H) path diffspd replaced).

Findings (step ms: published / ours after diffspd / ours before):
  4090 b1 eager      24.69 / 34.59 (+40.1%) / 31.12 (+26.0%)   strict xfail, UNEXPLAINED (below)
  4090 b1 compiled   22.40 / 23.53 (+5.1%)  / unchanged         pass (fused: one graph, max kept)
  3090 b1 eager      44.33 / 44.45 (+0.3%)  / 43.92 (-0.9%)     pass
  3090 b1 compiled   41.95 / 38.71 (-7.7%)  / unchanged         pass
  4090 b4 eager      79.24 / 87.79 (+10.8%) / 87.27 (+10.1%)    pass
  3090 b4 eager     154.80 / 150.02 (-3.1%) / 149.49 (-3.4%)    pass
  4090 b16 eager    315.46 / 323.40 (+2.5%) / 322.87 (+2.3%)    pass
  A100 b16 eager    328.95 / 284.85 (-13.4%) / 284.32 (-13.6%)  pass
  V100 b16 eager    602.41 / 688.33 (+14.3%) / 687.80 (+14.2%)  pass
Every GPU-bound row moves by the same +0.53 ms a step: 17 launches (launches_fixed 16 at no GPU time, then the first
unit's first launch) at 31 us before the GPU has work after the step's sync, a start-of-step bubble that is right in
kind (the queue is empty after the scheduler's sync) and 0.2-1.2% in size here.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from procurement.sizing import image_model

SPEED = 0.25
PT20 = {"runtime": "pytorch-2.0"}
COMPILED = {"runtime": "pytorch-2.0", "fused_kernels": True}
SD15_HOST_KERNELS = 1004  # 991 UNet kernels a step + 13 pipeline kernels (test_eager_launches.py)


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _generation(batch: int, steps: int, image: dict) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "micro_batch_size": batch,
        "image": {"steps": steps, **image},
    }


def _step_seconds(tmp_path, gpu: str, batch: int, image: dict) -> float:
    """One denoising step of `batch` images (CFG: two UNet samples each) as [T20]'s it/s counts it."""
    long = _size(tmp_path, _generation(batch, 50, image), gpu)["throughput"]["seconds_per_batch"]
    short = _size(tmp_path, _generation(batch, 20, image), gpu)["throughput"]["seconds_per_batch"]
    return (long - short) / 30


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published:.4g} ({error:+.1%})"


AGREED = [
    # 3090 batch 1: G 43.92 ms > H 31.12 ms; the queue adds the 0.53 ms start bubble: 44.45 ms (+0.3%; before -0.9%)
    pytest.param("rtx-3090", 1, PT20, 22.56, id="3090-b1-eager"),
    # the compiled column (CUDA graphs: one launch a step, max(G, H) kept): 23.53 ms (+5.1%), unchanged by diffspd.
    # It sizes the card's rate for the failing eager row below: the card model is right at batch 1.
    pytest.param("rtx-4090", 1, COMPILED, 44.65, id="4090-b1-compiled"),
    pytest.param("rtx-3090", 1, COMPILED, 23.84, id="3090-b1-compiled"),  # 38.71 ms (-7.7%), unchanged
    pytest.param("rtx-4090", 4, PT20, 12.62, id="4090-b4-eager"),  # 87.79 ms (+10.8%; before +10.1%)
    pytest.param("rtx-3090", 4, PT20, 6.46, id="3090-b4-eager"),  # 150.02 ms (-3.1%; before -3.4%)
    pytest.param("rtx-4090", 16, PT20, 3.17, id="4090-b16-eager"),  # 323.40 ms (+2.5%; before +2.3%)
    pytest.param("a100-sxm4-80gb", 16, PT20, 3.04, id="a100-b16-eager"),  # 284.85 ms (-13.4%; before -13.6%)
    pytest.param("v100-sxm2-16gb", 16, PT20, 1.66, id="v100-b16-eager"),  # 688.33 ms (+14.3%; before +14.2%)
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "batch", "image", "published_it_s"), AGREED)
def test_t20_sd15_txt2img_step(bundled_catalog, tmp_path, gpu, batch, image, published_it_s):
    _within(_step_seconds(tmp_path, gpu, batch, image), 1.0 / published_it_s, SPEED)


RTX4090_B1_REASON = (
    "UNEXPLAINED (aud51d): [T20] diffusers torch2.0.md @2c529b75, 'RTX 4090 (batch size: 1)', SD - txt2img, "
    "'torch 2.0 - no compile' 40.5 it/s = 24.69 ms a step; ours 34.59 ms (+40.1%), 31.12 ms (+26.0%, already 1.0 "
    "point out) before diffspd: the launch queue moves this held-out row 14 points further out. Sized on the "
    "engine's own parts (test_the_queue_adds_a_third_of_the_4090_gap): GPU work 28.36 ms, host 1,004 x 31 us = "
    "31.12 ms, the critical path 34.59 ms, i.e. 3.47 ms (35% of the 9.90 ms gap) over max(G, H); the host floor "
    "over the published step is the other 6.43 ms. The row bounds both parts itself: 1,004 launches in 24.69 ms is "
    "<= 24.6 us a kernel on this host (the same document's A100 host ~46 us, test_eager_launches.py: one "
    "publisher, a 1.9x spread of hosts), and at 24.6 us the engine's queue gives 30.50 ms (+23.5%), inside the "
    "bar but 5.8 ms over the row, because the engine's eager GPU work alone (28.36 ms) exceeds the whole "
    "published eager step. The compiled column of the same row (44.65 it/s, 22.40 ms) lands at 23.53 ms (+5.1%), "
    "so the card's rate is right and the excess is the eager-only work: ours 28.36 - 23.53 = 4.83 ms (the "
    "activations' elementwise passes at 0.70 of DRAM bandwidth), the table's eager - compiled 2.29 ms "
    "(test_eager_only_work_at_batch_1_is_about_twice_the_published_difference). Ruled out as the reason for that "
    "2x: the 4090's 72 MB L2 (the 3090, 6 MB L2, shows the same 2.2x at batch 1 and passes only because its "
    "compiled step is 7.7% fast). Sized: the host rate is a bound, not a figure (no spec field states the host): "
    "even at the bound it accounts for at most 41% of the gap (34.59 -> 30.50 ms), and the queue's 3.47 ms at the "
    "engine's own G and H is 35%; the other ~2.5 ms of eager-only work on this card is not found. Lead: a per-kernel trace of one eager SD 1.5 step at batch 1 "
    "on a GeForce card (nsys: elementwise kernel times vs their bytes), and whether reduce-overhead's Inductor "
    "graph also fuses the GroupNorm / SiLU / add passes the eager count prices."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=RTX4090_B1_REASON)
def test_t20_sd15_txt2img_step_rtx_4090_batch_1_eager(bundled_catalog, tmp_path):
    _within(_step_seconds(tmp_path, "rtx-4090", 1, PT20), 1.0 / 40.5, SPEED)


def test_the_4090_batch_1_row_bounds_its_own_host():
    """[T20]: 1 / 40.5 it/s = 24.69 ms for a step whose host issues 1,004 kernels one by one: <= 24.6 us a kernel
    (GPU time that does not overlap only lowers it), against eager_kernel_host_s 31 us. The compiled row (CUDA
    graphs, no per-kernel host) is 22.40 ms: the eager step is only 2.29 ms longer than the graph replay."""
    eager, compiled = 1.0 / 40.5, 1.0 / 44.65
    assert eager / SD15_HOST_KERNELS == pytest.approx(24.6e-6, abs=0.05e-6)
    assert image_model.EAGER_KERNEL_HOST_SECONDS.value == pytest.approx(31e-6)
    assert (eager - compiled) * 1e3 == pytest.approx(2.29, abs=0.01)


@pytest.mark.django_db
def test_the_queue_adds_a_third_of_the_4090_gap(bundled_catalog, tmp_path, monkeypatch):
    """The engine's own decomposition of the 4090 batch-1 eager step: after diffspd 34.59 ms; with no units (the
    max(G, H) path) 31.12 ms = the host's 1,004 x 31 us; GPU work alone 28.36 ms. The queue's 3.47 ms is 35% of
    the 9.90 ms gap to the published 24.69 ms: G and H are within 9% of each other, where the critical path
    exceeds the longer of the two most."""
    after = _step_seconds(tmp_path, "rtx-4090", 1, PT20)
    monkeypatch.setattr(image_model, "eager_step_units", lambda *args, **kwargs: [])
    before = _step_seconds(tmp_path, "rtx-4090", 1, PT20)
    monkeypatch.setattr(image_model, "eager_launch_seconds_per_image", lambda *args, **kwargs: 0.0)
    gpu = _step_seconds(tmp_path, "rtx-4090", 1, PT20)
    published = 1.0 / 40.5
    assert [round(value * 1e3, 2) for value in (after, before, gpu)] == pytest.approx(
        [34.59, 31.12, 28.36], abs=0.02
    )
    assert before == pytest.approx(SD15_HOST_KERNELS * 31e-6, rel=1e-3)
    assert (after - before) / (after - published) == pytest.approx(0.35, abs=0.01)


@pytest.mark.django_db
def test_gpu_bound_rows_pay_only_the_start_of_step_bubble(bundled_catalog, tmp_path, monkeypatch):
    """Where the GPU's work is far longer than the host's (3090 batch 4: 149.5 ms against 31.1), the queue adds
    only the launches issued before the GPU has work after the step's sync: launches_fixed (16, no GPU time) and
    the first unit's first launch, 17 x 31 us = 0.53 ms."""
    after = _step_seconds(tmp_path, "rtx-3090", 4, PT20)
    monkeypatch.setattr(image_model, "eager_step_units", lambda *args, **kwargs: [])
    before = _step_seconds(tmp_path, "rtx-3090", 4, PT20)
    assert image_model.network_cost("sd-1.5", 512).launches_fixed == 16
    assert after - before == pytest.approx(17 * 31e-6, abs=0.02e-3)


@pytest.mark.django_db
def test_eager_only_work_at_batch_1_is_about_twice_the_published_difference(
    bundled_catalog, tmp_path, monkeypatch
):
    """The GPU work the eager column carries over the compiled one ([T20], same row, same host), at batch 1 on the
    two GeForce cards: published 24.69 - 22.40 = 2.29 ms (4090) and 44.33 - 41.95 = 2.38 ms (3090), which also
    hold any host stall; the engine's GPU-only eager step minus its compiled step 4.83 ms and 5.21 ms: 2.1x and
    2.2x, on a 72 MB-L2 card and a 6 MB-L2 card alike. At batch 4 and 16 on the 4090 the ratio is 1.4x
    (13.97 / 55.0 ms published, 19.35 / 77.4 ours): the engine's eager-only bytes grow with the batch, the
    published difference grows 6.1x from batch 1 to 4."""
    monkeypatch.setattr(image_model, "eager_launch_seconds_per_image", lambda *args, **kwargs: 0.0)
    ratios = {}
    for gpu, eager_it_s, compiled_it_s in (("rtx-4090", 40.5, 44.65), ("rtx-3090", 22.56, 23.84)):
        ours = _step_seconds(tmp_path, gpu, 1, PT20) - _step_seconds(tmp_path, gpu, 1, COMPILED)
        ratios[gpu] = ours / (1.0 / eager_it_s - 1.0 / compiled_it_s)
    assert ratios["rtx-4090"] == pytest.approx(2.11, abs=0.05)
    assert ratios["rtx-3090"] == pytest.approx(2.19, abs=0.05)
