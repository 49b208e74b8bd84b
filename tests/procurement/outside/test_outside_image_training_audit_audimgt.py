"""Outside image-training audit (audimgt, stop 52): issue 29's training side, FLUX.1-dev NF4 LoRA on an RTX 4090.

An image practitioner's cases, chosen from a trainer's own documentation that publishes step times WITH the run's
settings. Not in tests/ before: grepped 'seconds per step', '3.5', '1.4 it', 'iterations per second on a 4090'
(the same page's 'Hardware requirements' VRAM rows and its 'Lowest VRAM config' 9,090 MiB are already cases:
image_workload_cases.json simpletuner-flux-nf4-*, image_validation.py simpletuner-flux-lora-r16-*).

Source [ST-FLUX]: github.com/bghira/SimpleTuner documentation/quickstart/FLUX.md (stored copy at commit
0496be2d92af170dcd9901ece9b355bb0c52456b, read_file id 12059046037):
  - 'NF4-quantised training': "Upping the resolution from 512px to 1024px slows training down from, for example,
    1.4 seconds per step to 3.5 seconds per step (batch size of 1, 4090)".
  - 'Lowest VRAM config' (the same NF4 recipe at 512 px): bnb-nf4 base, Lion 8Bit Paged, 512px, batch 1, no
    accumulation, gradient checkpointing, PyTorch 2.6 nightly, sageattention; "Speed was approximately 1.4
    iterations per second on a 4090" (0.714 s a step). The page states the 512 px NF4 step two ways (1.4 s/step and
    1.4 it/s); both readings are kept below, each labelled.
  - Recipe the page and the trainer fix: LoRA rank 16 (the 'Hardware requirements' rows; SimpleTuner's default
    lora_rank), `flux_lora_target: all` (the attention projections of both block kinds, no feed-forward: the
    product's `lora.targets: attention`), VAE latents and text embeds cached before training ('This will begin the
    text embed and VAE output caching to disk'), bf16 mixed precision, T5 at the Flux default 512 tokens (the
    preset's).
Settings the spec cannot state (a finding, not a fix here): the optimizer (Lion 8-bit paged; stated as
`paged_adamw_8bit`, whose second state a rank-16 adapter set hardly notices in memory, and whose step time the
engine does not count on a DiT), `--attention_mechanism=sageattention` (8-bit attention; only `flash_attention`
true/false exists), the PyTorch build (2.6 nightly), `--quantize_via=cpu`.

Bars: speed 25% (image). Engine code unchanged.
"""

from __future__ import annotations

import copy
import io
import json

import pytest
from django.core.management import call_command

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH
from procurement.sizing.gpus import gpu_by_slug

SPEED = 0.25
RTX_4090 = "rtx-4090"

ST_NF4 = {
    "task": "lora",
    "model": {"preset": "flux.1-dev"},
    "precision": "bf16",
    "weight_quantization": "nf4",
    "optimizer": "paged_adamw_8bit",  # Lion 8Bit Paged: no spec value (see the module docstring)
    "lora": {"rank": 16, "targets": "attention"},
    "gradient_checkpointing": "full",
    "micro_batch_size": 1,
    "image": {"cache_latents": True, "resolution_px": 1024},
}


def _spec(resolution_px: int) -> dict:
    spec = copy.deepcopy(ST_NF4)
    spec["image"]["resolution_px"] = resolution_px
    return spec


def _size(spec: dict, gpu: str = RTX_4090) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)


def _step(resolution_px: int, gpu: str = RTX_4090) -> float:
    return float(_size(_spec(resolution_px), gpu)["throughput"]["step_seconds"])


def _err(ours: float, published: float) -> float:
    return ours / published - 1.0


# ---------------------------------------------------------------- [ST-FLUX] step times on an RTX 4090


@pytest.mark.django_db
def test_st_flux_nf4_1024px_rtx_4090_step(bundled_catalog):
    """[ST-FLUX] 3.5 s a step at 1024 px, batch 1, RTX 4090: product 2.926 s (-16.4%), inside 25%."""
    ours = _step(1024)
    assert ours == pytest.approx(2.926, rel=0.01)
    assert abs(_err(ours, 3.5)) <= SPEED, ours


R_ST_512 = (
    "UNEXPLAINED (audimgt): [ST-FLUX] 'NF4-quantised training' 1.4 s a step at 512 px, batch 1, RTX 4090; product "
    "0.883 s (-36.9%). One located, unpriced cost: NF4 training pays no bitsandbytes unpacking time "
    "(image_model.weight_dequantize_bytes_per_image returns 0 for training), though MatMul4Bit dequantizes each "
    "weight in the forward, again in the checkpointed recompute and again in the backward for grad_A "
    "(bitsandbytes autograd/_functions.py MatMul4Bit.backward, stored copy id 8010181156): 3 x 11.9e9 x 2.5 B at "
    "0.7 x 1,008 GB/s = +0.127 s, which leaves 1.010 s (-27.9%), 25% of the gap. The same page's other reading of "
    "the 512 px run, 1.4 it/s (0.714 s, test_st_flux_lowest_vram_512px_iterations_per_second), lands at +23.7% "
    "without that term and +41.5% with it: the page disagrees with itself by 2x, so no sibling check holds. Left: "
    "one SimpleTuner NF4 512 px log with s/it on a named card."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_ST_512)
def test_st_flux_nf4_512px_rtx_4090_step(bundled_catalog):
    ours = _step(512)
    assert ours == pytest.approx(0.883, rel=0.01)
    assert abs(_err(ours, 1.4)) <= SPEED, ours


@pytest.mark.django_db
def test_st_flux_lowest_vram_512px_iterations_per_second(bundled_catalog):
    """[ST-FLUX] 'Lowest VRAM config': 'approximately 1.4 iterations per second on a 4090' = 0.714 s a step at
    512 px (Lion 8-bit paged and sageattention, neither statable): product 0.883 s (+23.7%), inside 25% but at its
    edge, and only if the page's 'iterations per second' is read as written (its NF4 paragraph says 1.4 s per step
    for what reads as the same run, the strict xfail above)."""
    ours = _step(512)
    assert abs(_err(ours, 1.0 / 1.4)) <= SPEED, ours


@pytest.mark.django_db
def test_the_product_prices_no_nf4_unpacking_in_training(bundled_catalog):
    """The FIX LIST item, sized by hand. bitsandbytes Linear4bit on a DiT's token rows runs
    F.linear(A, F.dequantize_4bit(B).to(A.dtype).t()) in the forward and matmul(grad_output, dequantize_4bit(B))
    in MatMul4Bit.backward; full checkpointing runs the forward twice. So a step unpacks every transformer weight
    3 times, 2.5 B a weight (image_model.NF4_DEQUANTIZE_WEIGHT_BYTES: 0.5 read, 2 written), at the card's achieved
    bandwidth. The engine charges it for generation only. Hand: 11.9e9 x 2.5 x 3 = 89.3 GB; RTX 4090 1,008 GB/s x
    0.70 -> 0.127 s a step. 1024 px: 2.926 -> 3.052 s (-12.8% vs 3.5, still inside); 512 px: 0.883 -> 1.010 s
    (-27.9% vs 1.4 s/step; +41.5% vs the 1.4 it/s reading)."""
    spec = _spec(1024)
    params = image_model.network_params("flux.1-dev")
    assert params == pytest.approx(11.9e9, rel=0.01)
    unpack_bytes = 3 * params * image_model.NF4_DEQUANTIZE_WEIGHT_BYTES
    bandwidth = gpu_by_slug(RTX_4090).memory_bandwidth_gbps * 1e9 * ACHIEVED_BANDWIDTH.value
    unpack_seconds = unpack_bytes / bandwidth
    assert unpack_seconds == pytest.approx(0.127, rel=0.03)
    # the engine counts none of it in training (the generation path counts one unpacking a denoiser call)
    from procurement.sizing.spec import parse_workload_spec

    assert image_model.weight_dequantize_bytes_per_image(parse_workload_spec(copy.deepcopy(spec))) == 0.0
    with_unpack_1024 = _step(1024) + unpack_seconds
    with_unpack_512 = _step(512) + unpack_seconds
    assert _err(with_unpack_1024, 3.5) == pytest.approx(-0.128, abs=0.01)
    assert _err(with_unpack_512, 1.4) == pytest.approx(-0.279, abs=0.01)
    assert _err(with_unpack_512, 1.0 / 1.4) == pytest.approx(0.415, abs=0.01)


# ---------------------------------------------------------------- ranking: a 2,000-step run, first row by hand


def _recommend(tmp_path, spec: dict, top: int = 3) -> list[dict]:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", str(top), "--format", "json", stdout=out)
    return json.loads(out.getvalue())["results"]


@pytest.mark.django_db
def test_st_flux_nf4_2000_steps_first_row_and_cost_by_hand(bundled_catalog, tmp_path):
    """2,000 steps of the [ST-FLUX] NF4 recipe at 1024 px. Judgement: it needs ~9 GiB (the page: '1024px requires
    >= 12G VRAM'), so any 16-48 GB card fits; the run is compute-bound, so the cheapest card-hour a fast Ada card
    gives should win. The product's first row: AWS g6e.2xlarge spot (one L40S, 0.2944 USD/h), 0.895 h, a card I
    would buy for this. By hand: the product's L40S step 1.611 s x 2,000 / 3,600 = 0.895 h; compute = price x
    hours = 0.2635 USD, 0.26 in the breakdown's cents (the spot overhead rides in effective_price_per_hour). Carried from the published 4090 row at
    the product's own L40S / 4090 ratio (1.611 / 2.926): 3.5 x 0.551 = 1.927 s a step, 1.071 h, 0.315 USD of
    compute: the product's 0.264 is -16.4%, the 1024 px case's error, inside 25%. No published L40S Flux LoRA step
    was found to check the carry. The run's 2.46 USD total is 11% compute: storage 1.86 USD is docs/cost-model.md's
    7 days' retention of the disk after the run, setup 0.29 (documented assumptions, not judged here)."""
    spec = _spec(1024)
    spec["image"]["train_steps"] = 2000
    rows = _recommend(tmp_path, spec)
    first = rows[0]
    assert first["fits"] and first["gpus"] == 1
    assert first["memory_per_gpu_gib"] == pytest.approx(8.99, abs=0.05)
    step = _step(1024, first["gpu"])
    hand_hours = 2000 * step / 3600
    assert float(first["hours"]) == pytest.approx(hand_hours, rel=0.005)
    price = float(first["price_per_hour"])
    compute = float(first["cost_breakdown"]["compute"])
    assert compute == pytest.approx(price * float(first["hours"]), abs=0.006)  # the breakdown is in cents
    total = float(first["total_cost"])
    parts = sum(
        float(v) for k, v in first["cost_breakdown"].items() if k != "total"
    )  # compute, setup, storage, reruns
    assert total == pytest.approx(parts, abs=0.02)
    carried_step = 3.5 * step / _step(1024)
    hand_compute = 2000 * carried_step / 3600 * price
    assert abs(_err(compute, hand_compute)) <= SPEED, (compute, hand_compute)
