"""sd22 (stop 49, issue 29): the cost of torch.autocast around diffusers' 2022 fp16 Stable Diffusion pipeline,
measured by the [LAMBDA-22] authors themselves on a second set of rows, and what it does to the [LAMBDA-22] cases
(test_outside_diffusers03_audit_stop48.py), whose 'half' rows all ran under autocast.

Source [LAMBDA-AC]: LambdaLabsML/lambda-diffusers pull request #11 ('Fix autocast v fp16 + add benchmark config
instructions in benchmark.md', eolecvk, 2022-10-12; https://github.com/LambdaLabsML/lambda-diffusers/pull/11, head
bb72fa679281f42092576c6f8e6bd4e46bcc3d03, opened in the mirror). The same scripts/benchmark.py as [LAMBDA-22]
(do_inference: `torch.cuda.empty_cache()`, then `with context("cuda")`, context = autocast if use_autocast else
nullcontext; torch.utils.benchmark Timer, 2 warm-up calls, mean of 3; SD v1-4, revision fp16 with torch_dtype
float16 for 'half', 50 steps, PNDM, CFG, 512 px, the safety checker a pass-through), with its autocast flag fixed
("Fixed conditional logic when using autocast in benchmark code": the earlier PR #7 rows' 'no' still ran under
autocast, 4.83 / 4.84 s) and requirements.txt `diffusers==0.4.2`. Rows (PR description, verbatim; the PR is
open, the rows are in no CSV):
    |NVIDIA RTX A6000|single|False|pytorch|1|7.37 |7.73 |
    |NVIDIA RTX A6000|half  |True |pytorch|1|4.39 |4.52 |
    |NVIDIA RTX A6000|half  |False|pytorch|1|3.34 |3.38 |
    |NVIDIA RTX A6000|single|False|pytorch|2|14.0 |9.57 |
    |NVIDIA RTX A6000|half  |True |pytorch|2|8.29 |8.74 |
    |NVIDIA RTX A6000|half  |False|pytorch|2|6.17 |4.92 |
    |NVIDIA RTX A6000|single|False|pytorch|4|27.25|18.4 |
    |NVIDIA RTX A6000|half  |True |pytorch|4|15.73|11.4 |
    |NVIDIA RTX A6000|half  |False|pytorch|4|11.59|8.82 |
(device, precision, autocast, runtime, n_samples, latency s a call, memory GB). diffusers 0.4.2's attention is
the one image.runtime diffusers-0.7 prices (huggingface/diffusers v0.4.2 src/diffusers/models/attention.py
CrossAttention._attention lines 276-284: `torch.matmul(query, key.transpose(-1, -2)) * self.scale`,
`.softmax(dim=-1)`, `torch.matmul(probs, value)`), so its fp16 rows without autocast are sized as stated.

What autocast does (the mechanism): under torch.autocast('cuda') PyTorch runs softmax as fp32_set_opt_dtype and
group_norm / layer_norm as fp32 ops (aten/src/ATen/autocast_mode.cpp; the stored copy read at aud48i), so fp16
weights and activations are upcast around every norm and softmax and cast back by the next matmul or conv:
extra elementwise passes over activations and scores an image, GPU work that grows with the images a call.
The rows size it: True minus False is 1.05 / 2.12 / 4.14 s at 1 / 2 / 4 images, 1.05 / 1.06 / 1.035 s an image
(per image, not per call). aud48i's count of the score casts alone (4 fp16 passes of the scores, AUTOCAST in
test_outside_diffusers03_audit_stop48.py) is 1.11 s an image on this card at the engine's achieved bandwidth,
within 7% of the measured 1.04: the score casts are most of it.

Stop 50: `image.autocast` states the run and counts the casts (norms and scores) from PyTorch's autocast op lists;
the [LAMBDA-22] rows are sized with it in test_outside_diffusers03_audit_stop48.py, and this module's autocast-True
rows are held-out cases in test_outside_image_autocast_stop50.py. The carries below stay as sd22's arithmetic.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

SPEED = 0.25

# [LAMBDA-AC] RTX A6000 rows, seconds a call: n_samples -> (half under autocast, half without, single)
ROWS = {1: (4.39, 3.34, 7.37), 2: (8.29, 6.17, 14.0), 4: (15.73, 11.59, 27.25)}
# datasheet GB/s (pricing/data/gpu_specs.csv memory_bandwidth_gbps), to carry the A6000's cost to the other cards
BANDWIDTH = {"rtx-a6000": 768.0, "rtx-3090": 936.0, "a100-pcie-80gb": 1935.0}
# [LAMBDA-22] half rows under autocast on diffusers 0.3.0 (test_outside_diffusers03_audit_stop48.py PUBLISHED)
LAMBDA_22 = {
    ("a100-pcie-80gb", 1): 3.74,
    ("a100-pcie-80gb", 16): 36.67,
    ("rtx-a6000", 1): 5.03,
    ("rtx-a6000", 16): 63.16,
    ("rtx-3090", 1): 4.83,
    ("rtx-3090", 4): 15.87,
}


def _spec(batch: int, precision: str = "fp16") -> dict:
    return {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": precision,
        "micro_batch_size": batch,
        "flash_attention": False,
        "image": {"resolution_px": 512, "steps": 50, "runtime": "diffusers-0.7"},
    }


def _seconds(tmp_path, gpu: str, batch: int, precision: str = "fp16") -> float:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_spec(batch, precision)))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate["throughput"]["seconds_per_batch"]


def autocast_seconds_per_image() -> float:
    """[LAMBDA-AC]: autocast's cost on the RTX A6000, seconds an image: the least-squares slope of True minus
    False over n_samples through the origin (the differences are per image: 1.05 / 1.06 / 1.035)."""
    numerator = sum(n * (ROWS[n][0] - ROWS[n][1]) for n in ROWS)
    return numerator / sum(n * n for n in ROWS)


def test_autocast_is_a_cost_an_image_not_a_call():
    """[LAMBDA-AC] arithmetic: True minus False grows with the images (1.05 / 2.12 / 4.14 s), ~1.04 s an image on
    the A6000; per image within 3% at 1, 2 and 4 images."""
    per_image = autocast_seconds_per_image()
    assert per_image == pytest.approx(1.04, abs=0.005)
    for n, (on, off, _single) in ROWS.items():
        assert (on - off) / n == pytest.approx(per_image, rel=0.03)


@pytest.mark.parametrize("batch", [1, 2, 4])
def test_lambda_diffusers_0_4_fp16_without_autocast_within_25_percent(bundled_catalog, tmp_path, batch):
    """[LAMBDA-AC] 'half', autocast False (fp16 weights, diffusers 0.4.2, no autocast: what the spec states):
    ours 3.955 / 7.460 / 14.469 s against 3.34 / 6.17 / 11.59 (-15.5% / -17.3% / -19.9%): new cases, passing."""
    published = ROWS[batch][1]
    ours = _seconds(tmp_path, "rtx-a6000", batch)
    error = published / ours - 1.0
    assert abs(error) <= SPEED, f"{ours:.4g} s vs {published:.4g} s published (speed {error:+.1%})"


@pytest.mark.parametrize(
    ("gpu", "batch", "bandwidth_scaled", "unscaled"),
    [
        # diffspd (stop 51), the launch queue's critical path moves the product's figures; before -> after:
        # ours 3.955 -> 3.981 s: +1.04 -> 5.022 (+0.7% -> +0.2%)
        ("rtx-a6000", 1, 0.002, 0.002),
        # ours 3.607 -> 3.633 s: +0.853 (bandwidth-scaled) -> 4.487 (+8.3% -> +7.6%); +1.04 -> 4.674 (+3.9% -> +3.3%)
        ("rtx-3090", 1, 0.076, 0.033),
        # ours 25.155 -> 25.181 s: +16 x 0.413 -> 31.79 (+15.5% -> +15.4%); +16 x 1.04 -> 41.83 (-12.2% -> -12.3%)
        ("a100-pcie-80gb", 16, 0.154, -0.123),
        # the passing rows stay in: A6000 b16 56.552 -> 73.2 (-13.7%); 3090 b4 13.104 -> 16.52 / 17.27 (-3.8% ->
        # -3.9%, -8.0% -> -8.1%)
        ("rtx-a6000", 16, -0.137, -0.137),
        ("rtx-3090", 4, -0.039, -0.081),
    ],
)
def test_the_measured_autocast_cost_lands_the_lambda_rows(
    bundled_catalog, tmp_path, gpu, batch, bandwidth_scaled, unscaled
):
    """The A6000's measured autocast cost an image ([LAMBDA-AC]), added to the product's no-autocast figure, puts
    the [LAMBDA-22] A6000 and 3090 batch-1 rows and the A100 PCIe batch-16 row inside 25%, whether it is carried
    to the other cards at their bandwidth (it is elementwise traffic) or not scaled at all; the two rows that pass
    today stay inside. Not landed (no spec field states autocast yet): the EXPLAINED labels of the two batch-1 GA102
    cases. fix49s, after the audit aud49s: both carries here are assumptions (the bandwidth one unsourced), the
    held-out time ratio (1.31-1.36) is the primary carry in the reasons, and the A100 b16 row is UNEXPLAINED again
    (over-determined: it lands without autocast too)."""
    per_image = autocast_seconds_per_image()
    ours = _seconds(tmp_path, gpu, batch)
    published = LAMBDA_22[(gpu, batch)]
    scaled = ours + batch * per_image * BANDWIDTH["rtx-a6000"] / BANDWIDTH[gpu]
    plain = ours + batch * per_image
    assert published / scaled - 1.0 == pytest.approx(bandwidth_scaled, abs=0.005)
    assert published / plain - 1.0 == pytest.approx(unscaled, abs=0.005)
    assert abs(published / scaled - 1.0) <= SPEED and abs(published / plain - 1.0) <= SPEED


def test_the_a100_batch_1_row_is_not_autocast(bundled_catalog, tmp_path):
    """[LAMBDA-22] A100 80GB PCIe, n_samples 1: 3.74 s; ours 2.098 + the autocast cost (0.413 s scaled, 1.04 s not)
    reads 2.51 / 3.14 s, +49.0% / +19.2% (diffspd, stop 51: were 1.994 s, 2.41 / 3.03 s, +55.4% / +23.2%, before the
    eager step's launch queue was priced as a critical path): inside only if autocast cost the A100 as much time an image as the A6000
    at 2.5x its bandwidth, and no source measures autocast on an A100. The row stays UNEXPLAINED (its 1.54 s a
    call against the GA102 hosts' 1.15)."""
    per_image = autocast_seconds_per_image()
    ours = _seconds(tmp_path, "a100-pcie-80gb", 1)
    scaled = ours + per_image * BANDWIDTH["rtx-a6000"] / BANDWIDTH["a100-pcie-80gb"]
    assert 3.74 / scaled - 1.0 == pytest.approx(0.490, abs=0.005)
    assert 3.74 / (ours + per_image) - 1.0 == pytest.approx(0.192, abs=0.005)
