"""aud29 (stop 47, issue 29): an outside practitioner's audit of the product's image and detection numbers as they
stand, on six published measurements no test, fixture, validation row or NOTES line uses (grepped tests/,
docs/validation.md, procurement/sizing/image_validation.py and procurement/data/reference/ for the sources, the
rows and the figures). Each case is the spec a practitioner writes for the published run, sized as a user sizes
it (`manage.py size FILE --gpu SLUG --format json` on the bundled catalog). Targets: image speed within 25%,
memory within 15%.

Sources:
  [DETR-283] github.com/facebookresearch/detr/issues/283 (fmassa, 2020-11-09, maintainer's answer): detr-r50 'Trained
      on 32 GPUs, batch size 2 (per GPU), Training + eval time for 500 epochs: 85h', V100s ('slightly different
      flavors of V100 GPUs (16GB or 32GB)'). The run is facebookresearch/detr main.py (read at 04d5706a): fp32
      (no AMP), AdamW, and `evaluate(...)` on COCO val after every epoch, so the 85 h holds 500 evaluations. The
      paper's own run (16 V100 x 4 images, 300 epochs, 3 days) is test_outside_detection_audit_stop44.py's.
  [DIFF-BENCH] huggingface.co/datasets/diffusers/benchmarks/blob/24c44cb4ebd707dbc38abfb8ea46dca782eaee21/
      collated_results.csv ('upload from sha: 152f7ca357c066c4af3d1a58cdf17662ef5a2f87'), written by
      huggingface/diffusers benchmarks/benchmarking_utils.py (@1683c47b: five warm-up forwards, then
      torch.utils.benchmark blocked_autorange mean of one forward; memory max_memory_allocated / 1024**3) and
      benchmarking_{flux,ltx}.py (LTX @3b0a540a: hidden_states (1, 7392, 128), 256 text tokens, bf16). The runner
      is taken as an L40S, as docs/validation.md reads it (an aws-g6e runner), but that is not proven: the
      benchmarks/README.md I opened (@2998b52f) says 'We use an L40 GPU with 128GB RAM', the stored versions of
      .github/workflows/benchmark.yml show other runners (docker-gpu; an A10 label at a2212539), and only
      diffusers' torchao tests name 'aws-g6e-xlarge-plus runners' (find_string id 272317611). On an L40 (181
      dense bf16 TFLOPS, half the L40S's) the product reads the two forwards below +51% (nf4, 0.775 s) and +41%
      (LTX, 2.022 s): the cases pass only on the L40S reading. Rows used:
        black-forest-labs/FLUX.1-dev-bnb-nf4 ... time_plain_s 0.512 (0.525)  (nf4, bf16 compute,
          BitsAndBytesConfig without double quantization, 512 text tokens, 1024 px)
        Lightricks/LTX-Video-0.9.7-dev-bf16 ... time_plain_s 1.434 (1.44)
      validation.md uses the dc778b00 upload (FLUX bf16 0.535 s, LTX 1.607 s, the nf4 row's memory only); the
      nf4 forward's time is in no test, and the weekly uploads show the spread a reader should allow: nf4
      0.512 / 0.523 / 0.563 / 0.564 / 0.57 s, LTX 1.434 / 1.439 / 1.601 / 1.656 / 1.681 s (uploads 24c44cb,
      7b8aaac, benchmark-analyzer a09768f2, c352d63, the 67ffa703 viewer), about +-8% around the middle.
  [XDIT] xdit-project/xDiT docs/performance/flux.md (read at 0124baf9): 'FLUX.1 [dev] with 28 diffusion steps ...
      | 1 GPU | 6.71 | 4.30 |' (PyTorch / torch.compile seconds, H100, 1024 px), and 'Generating a 2048px image
      using the schnell variant with 4 sampling steps on a single A100 GPU takes approximately 10 seconds'.
      The script, examples/flux_example.py (read at 0058bb00): bf16 everywhere, max_sequence_length=256, the
      timed call is pipe(...) whole (text encoders, denoiser, VAE decode). Not in tests/ or docs/ (grepped xDiT).

The product states a generation's seconds, not one forward: the [DIFF-BENCH] forwards are read as a user can, the
difference between the generation sized at 2 and at 1 step (guidance: the preset's distilled FLUX, none for LTX;
text encoders and decode cancel).

Judged, not a test: the SD3 blog's compiled row (huggingface/blog sd3.md @04fdd03d, '0.585 seconds' for 20 steps
on an A100 80GB) cannot be met by any card model: the product counts 372.1 TFLOP for that image (20 steps x 2 CFG
passes of the 2B MMDiT at 1024 px), 636 TFLOPS at 0.585 s, twice the A100's 312 dense fp16; a case on it would fit
noise. Not sizable: RT-DETR training ('task: rt-detr-r50 is sized for inference only'), and every video model but
LTX-Video 0.9.7 (CogVideoX, SVD, HunyuanVideo, Wan: no preset, and image models cannot be stated by shape).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

SPEED = 0.25
COCO_TRAIN_IMAGES = 118_287
COCO_VAL_IMAGES = 5_000  # det47: val2017, the set main.py evaluates


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _forward_seconds(tmp_path, spec: dict, gpu: str) -> float:
    """One denoiser forward as a user reads it: the generation at 2 steps less the generation at 1."""
    image = spec.get("image", {})
    one = _size(tmp_path, spec | {"image": image | {"steps": 1}}, gpu)
    two = _size(tmp_path, spec | {"image": image | {"steps": 2}}, gpu)
    return two["throughput"]["seconds_per_batch"] - one["throughput"]["seconds_per_batch"]


# ---------------------------------------------------------------- DETR-R50, 32 V100s x 2 images [DETR-283]


def _detr_32x2() -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "detr-r50"},
        "precision": "fp32",  # main.py: no AMP
        "optimizer": "adamw",
        "micro_batch_size": 2,  # 'batch size 2 (per GPU)'
        "parallelism": {"gpus": 32},  # 'Trained on 32 GPUs' (4 nodes of 8)
        # det47: 'Training + eval time': main.py @04d5706a evaluates COCO val2017 (5,000 images) after every epoch
        "image": {
            "epochs": 500,
            "dataset_images": COCO_TRAIN_IMAGES,
            "eval_every_epochs": 1,
            "eval_images": COCO_VAL_IMAGES,
        },
    }


# detr49 (issue 29): one held-out reading shared by the three DETR-family speed xfails (NOTES, stop 49).
DETR49_PAIR = (
    "detr49, a held-out size for a fixed step cost, not landed: open-mmlab/mmdetection PR #10498 (nijkah, "
    "2023-07-04) quotes two PaddleDetection RT-DETR runs of the same 7,329-iteration COCO epoch: 16 images on"
    " one card, batch_cost 0.7022 s (ips 22.78), and 8 a card on 2 cards, 0.4085 s (ips 19.58), both at "
    "iteration 50. Read as step = H + b x c: H = 0.115 s a step, c = 0.0367 s an image. Added serially to the"
    " product's step, H gives DETR 32 x 2 79.0 h (-7.0%), the paper's 16 x 4 77.1 h (+7.1%), DEIM #100 0.754 "
    "h (-24.6%, at the bar) and RT-DETR #7 29.2 h (-39.2%, still out). Not landed: the pair is Paddle, not "
    "the code of any case; the model and cards are not printed with the ppdet lines (the same user's mmdet "
    "runs print 4 x A40, PyTorch 1.9.1); iteration 50 is inside the first windows; the 2-card row carries an "
    "all-reduce the 1-card row lacks (H is an upper reading); and its c is 1.9x the product's A40 fp32 rt-"
    "detr-r50 time an image (0.0196 s), so the pair does not show the missing time is per-step host time "
    "alone."
)

DETR_REASON = (
    "UNEXPLAINED: DETR-R50, 500 epochs on 32 V100s at 2 images a GPU: published 85 h (training + an evaluation each "
    "epoch), product 49.49 h (-41.8%; was 48.71 h, -42.7%, before det47 added image.eval_every_epochs / "
    "eval_images: main.py @04d5706a evaluates COCO val2017, 5,000 images, after every epoch, now priced as 500 "
    "passes of the inference path's fp32 batch-2 forward, 0.0358 s an image on a V100, over 32 GPUs: +0.78 h). "
    "Per GPU: published 6.04 images/s; the paper's 16 x 4-image run 8.56 (test_outside_detection_audit_stop44.py, "
    "72 h; the product 59.38 h with its evaluations, -17.5%); the product 10.54 at both shapes (step 0.1898 s for "
    "2 images, 0.3795 s for 4: exactly linear in the batch; loader 0.015 s hidden). Checked, none proven: (i) the "
    "evaluations' forwards are 0.78 h of the 36 h gap; the COCO evaluator's CPU work (pycocotools on rank 0) "
    "is not sized and no published row gives its size; (ii) the fp32 gradient all-reduce (41M parameters, 164 MB "
    "a step) is priced: hierarchical, NVLink in a node and internode_bandwidth_gbps_per_gpu 25 GB/s between the "
    "4 nodes, 0.0057 s a step (communication_share 0.029), hidden under 0.67 x the 0.19 s step; closing the gap "
    "with it alone needs ~0.27 s of traffic a step, a fabric ~46x slower (~0.5 GB/s a GPU), and issue #283 names "
    "no fabric ('the cost for communication between nodes depends on the number of machines used'); `size` has "
    "no spec field for the fabric (ranking takes each instance's own), (iii) a batch-2 penalty: DETR's step has "
    "no layer walk for GEMM fill (detector_step_fill keeps the YOLOv5 fit's mean), and no published pair of "
    "rows differs only in the batch. The publisher's per-GPU rate falls 29% from 16 x 4 to 32 x 2 while both "
    "GPU count and batch change, so no one factor is proven from the rows. det48, (iv) the CPU Hungarian matcher "
    "and the per-layer losses, counted from the code and ruled out as the whole cause: SetCriterion.forward "
    "(facebookresearch/detr models/detr.py @0217b40f) runs the matcher on the output and on each of the 5 "
    "aux_outputs, 6 a step; each call (models/matcher.py @589107f3) builds the cost from ~50 small kernels, "
    "ends in C.cpu() (a device sync) and runs scipy linear_sum_assignment per image on a 100 x n matrix (COCO "
    "7.3 boxes an image: microseconds); each layer's loss_labels / loss_boxes / loss_cardinality adds ~70 more, "
    "and util/box_ops.py generalized_box_iou asserts (...).all() on CUDA tensors twice a call (two more syncs), "
    "so the loss is ~720 forward kernels and ~30 syncs a step with no GPU work queued to hide them, plus ~550 "
    "backward kernels of its differentiable part. At the engine's 31 us a host kernel "
    "(EAGER_KERNEL_HOST_SECONDS) that is ~0.04 s a step: the 2-image step 0.190 -> 0.230 s, 59.8 h (-29.7%), "
    "still outside, and the paper's 16 x 4 row 59.4 -> ~65.5 h (-9.0%). Best lead, not landed: a fixed host time "
    "H a step (serial with the GPU: the syncs above leave nothing queued) costs an image H / 2 at 32 x 2 and "
    "H / 4 at 16 x 4, the rows' direction, and lands both inside 25% for 0.056 <= H <= 0.20 s (H 0.10: 75.2 h, "
    "-11.6%, and 74.6 h, +3.6%). The loss's ~0.04 s is short of that; the rest of the step's host-only work is "
    "the train loop's (engine.py train_one_epoch, the stored copy @0d44f335): utils.reduce_dict (an all-reduce "
    "of the loss dict across the 32 ranks), losses_reduced_scaled.item(), optimizer.zero_grad, "
    "clip_grad_norm_ (main.py --clip_max_norm default 0.1, find_string id 38771699836) and AdamW over DETR-R50's "
    "235 trainable tensors (layer2-4's 42 conv weights, the transformer's 180, the heads' 13), and the metric "
    "logger's .item() of ~50 reduced losses; under DETR's torch 1.5 (no foreach optimizer) that is thousands "
    "of per-tensor kernels, but torch 1.5's adamw.py / clip_grad.py were not opened here and the 31 us is a "
    "diffusers calibration (torch 2.1), so H is not sized from a source; no published DETR profile splits "
    "the step. The kernel counts above are read off the code, not profiled. Sized with the engine's own "
    "constants (~1,270 loss kernels; zero_grad and clip_grad_norm_ ~2 ops a tensor each; ~9 a tensor for a "
    "per-tensor AdamW, the torch 1.x loop's count, not opened): H = 0.030 s with every op at "
    "OPTIMIZER_OP_HOST_SECONDS (7 us, pytorch issue #41383): 57.3 h (-32.6%; 16 x 4: 64.0 h, -11.1%); H = 0.061 "
    "s with the loss at EAGER_KERNEL_HOST_SECONDS (31 us) and the rest at 7 us: 65.1 h (-23.4%, inside; 16 x 4: "
    "68.6 h, -4.7%). Which constant a DETR loss op costs decides the case, and choosing it after seeing the "
    "case is a fit on the case, so it is not landed. " + DETR49_PAIR
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=DETR_REASON)
def test_detr_r50_500_epochs_on_32_v100s_at_two_images(bundled_catalog, tmp_path):
    """[DETR-283] 85 h for 500 epochs, training and evaluation, 32 V100s x 2 images. The variant is not
    stated; the product gives the same hours on the 16 GB and the 32 GB part."""
    row = _size(tmp_path, _detr_32x2(), "v100-sxm2-32gb")
    _within(row["throughput"]["training_hours"], 85.0, SPEED)


# ---------------------------------------------------------------- one denoiser forward on an L40S [DIFF-BENCH]


@pytest.mark.django_db
def test_flux_nf4_transformer_forward_on_an_l40s(bundled_catalog, tmp_path):
    """[DIFF-BENCH] FLUX.1-dev-bnb-nf4, one forward: 0.512 s. Product 1.2252 - 0.6745 = 0.551 s (+7.6%; the
    bf16 row of the same upload, 0.493 s, reads 0.501 s, +1.7%): the nf4 unpacking costs 0.049 s a forward
    here against 0.019 s published. Inside 25% and inside the weekly uploads' own 0.512-0.570 s."""
    spec = {
        "task": "inference",
        "model": {"preset": "flux.1-dev"},
        "precision": "bf16",
        "weight_quantization": "nf4",
        "micro_batch_size": 1,
        # benchmarking_flux.py: BitsAndBytesConfig(load_in_4bit, nf4, bf16 compute), no double quantization;
        # 512 text tokens
        "image": {"nf4_double_quant": False, "text_tokens": 512},
    }
    _within(_forward_seconds(tmp_path, spec, "l40s"), 0.512, SPEED)


@pytest.mark.django_db
def test_ltx_video_transformer_forward_on_an_l40s(bundled_catalog, tmp_path):
    """[DIFF-BENCH] LTX-Video-0.9.7-dev-bf16, one forward over 7,392 video tokens: 1.434 s. Product, on the
    user's path: 2.7992 - 1.4160 = 1.383 s (-3.5%; validation.md's internal forward gives 1.38 against the
    older upload's 1.607). The one video model the product carries lands on this upload too."""
    spec = {
        "task": "inference",
        # the preset is the benchmark's shape: 512 x 704 x 161 frames, 256 text tokens
        "model": {"preset": "ltx-video-0.9.7-dev"},
        "precision": "bf16",
        "micro_batch_size": 1,
        "image": {"guidance": "none", "text_encoder_offload": True},  # one forward, the transformer alone
    }
    _within(_forward_seconds(tmp_path, spec, "l40s"), 1.434, SPEED)


# ---------------------------------------------------------------- FLUX.1 on one GPU [XDIT]


def _flux(preset: str, **image) -> dict:
    return {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "bf16",  # flux_example.py: torch_dtype=torch.bfloat16
        "micro_batch_size": 1,
        "image": {"text_tokens": 256, **image},  # flux_example.py: max_sequence_length=256
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fused", "published"),
    [
        # product 5.049 s (-24.8%): inside, at the edge; the held-out [TORCHAO] H100 eager row (6.573 s at 512
        # tokens) reads 5.39 s (-18%): two publishers put FLUX eager on an H100 18-25% slower than the product,
        # 292 (xDiT) and 319 (torchao) TFLOPS achieved against the product's 388 (39% of the dense 989)
        pytest.param(False, 6.71, id="pytorch"),
        # product 4.005 s (-6.9%)
        pytest.param(True, 4.30, id="torch-compile"),
    ],
)
def test_flux_dev_28_steps_on_one_h100(bundled_catalog, tmp_path, fused, published):
    """[XDIT] '| 1 GPU | 6.71 | 4.30 |': FLUX.1-dev, 28 steps, 1024 px, one H100, the whole pipeline call.
    img51: eager 5.05 -> 6.40 s (-24.8% -> -4.7%; diffusers' fp32 q / k chains over the H100's L2,
    image_model.flux_qk_chain_dram_bytes_per_step); the compiled row does not move (its chains are fused)."""
    row = _size(tmp_path, _flux("flux.1-dev", fused_kernels=fused), "h100-sxm5-80gb")
    _within(row["throughput"]["seconds_per_batch"], published, SPEED)


@pytest.mark.django_db
def test_flux_schnell_2048px_4_steps_on_one_a100(bundled_catalog, tmp_path):
    """[XDIT] 'a 2048px image using the schnell variant with 4 sampling steps on a single A100 GPU takes
    approximately 10 seconds'. Product 12.263 s (+22.6%; 10.894 s, +8.9%, before img51 priced diffusers' fp32
    q / k chains, 16,640 x 3,072 elements a tensor, 204 MB in fp32, over the A100's 40 MB L2) on the 80 GB part (the page's A100s are 80 GB; at
    42.5 GiB the product refuses the 40 GB one, 'does_not_fit'). The schnell preset and a 16,384-token
    image had no case before this one."""
    row = _size(tmp_path, _flux("flux.1-schnell", resolution_px=2048, steps=4), "a100-sxm4-80gb")
    _within(row["throughput"]["seconds_per_batch"], 10.0, SPEED)
