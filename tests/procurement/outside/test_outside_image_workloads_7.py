"""A seventh outside practitioner's image cases for issue 29 (review x29g): detection training and TensorRT
export. None of these measurements is used by test_outside_image_workloads.py, _2.py ... _6.py,
image_workload_cases.json or docs/validation.md.

Each case is the spec a practitioner would write for the published run, sized the way a user sizes it
(`manage.py size --gpu SLUG --format json`, `manage.py recommend --format json` on the bundled catalog), and
compared with the published figure. Targets from the issue: memory within 15%, speed within 25%. A case the
product misses is a strict xfail whose reason carries the published figure, the product's, the gap and the
diagnosed cause. Ultralytics' GPU_mem is torch.cuda.memory_reserved() / 1e9: compared with (total - cuda_context_gib)
in GB, as the earlier rounds do.

Sources (figures quoted in each case):
  [3090-Y11] a training log in the public index (find_string id 30034053923 for YOLO11m, 29335361469 for YOLO11s;
      the same console session: 'naquoc17@FAWorkstation:~/TimeOfFlight-Project/Human-detection-Yolo11$ python3
      train.py'): 'Ultralytics 8.3.74 ... torch-2.5.1+cu124 CUDA:0 (NVIDIA GeForce RTX 3090, 24139MiB)';
      imgsz=640, amp=True, deterministic=True, cache=False, workers=1 ('Using 1 dataloader workers'),
      optimizer=auto -> 'AdamW(lr=0.001429, momentum=0.9)'; 12,819 train images (1,832 backgrounds, 13,216 boxes:
      about one object an image), nc=3; 535 validation images each epoch.
        YOLO11s, batch 8 (1,603 it an epoch): epochs 4-20 at 16.52-16.76 it/s (median 16.67 = 133.4 images/s),
          GPU_mem 2.33-2.35G, '20 epochs completed in 0.553 hours.'
        YOLO11m, batch 8: epochs 11-20 at 9.80-9.96 it/s (epoch 20: 9.81 = 78.5 images/s; epochs 4-10
          9.56-9.72), GPU_mem 4.59-4.64G, '20 epochs completed in 0.940 hours.'
        YOLO11m, batch 25 (513 it an epoch, 'Phase 2'): epochs 4-30 at 3.87-3.93 it/s (median 3.90 = 97.5
          images/s), GPU_mem 13.1G, '30 epochs completed in 1.128 hours.'
      The host's vCPUs are not printed; one loader worker fed every run.
      The same console sessions also trained YOLO11l (find_string id 29892360303) and YOLO11x (29251527326) at
      both batches, same settings (workers=1, deterministic=True, AdamW):
        YOLO11l, batch 8: '20 epochs completed in 1.168 hours' (mosaic-off epochs 11-20 at 7.85-7.92 it/s, 63.0
          images/s); batch 25: '30 epochs completed in 1.452 hours' (epochs 21-30 at 3.03-3.04 it/s, 76.0).
        YOLO11x, batch 8: '20 epochs completed in 1.947 hours' (epochs 11-20 at 4.71-5.02 it/s, median 4.985 =
          39.9 images/s); batch 25: '30 epochs completed in 2.589 hours' (epochs 21-30 at 1.65-1.75, median 1.70
          = 42.5), GPU_mem 24.1G of the card's 24 GB.
  [COLAB-T4] a Colab notebook in the public index (find_string id 9108859682, Spanish licence-plate tutorial,
      '!yolo detect train data=placa.yaml model=yolov8n.pt epochs=200 imgsz=640 plots=True'): 'Ultralytics
      8.3.149 ... torch-2.6.0+cu124 CUDA:0 (Tesla T4, 15095MiB)', batch=16 (default), workers=8 -> 'Using 2
      dataloader workers' (a Colab host's 2 vCPUs), 'train: Fast image access ... size: 534.0 KB', 346 train images
      (22 it an epoch), 91 plates in 87 val images, optimizer=auto -> AdamW. Epochs 2-20: 2.51-3.31 it/s, median
      2.82 it/s = 45.1 images/s.
  [TRT-A100] ultralytics/ultralytics docs/en/integrations/tensorrt.md (commit
      0020821830dcedf5f5a4f70bad17663ea8bbc7eb), 'Ultralytics YOLO TensorRT Export Performance', 'NVIDIA A100',
      'Tested with Ubuntu 22.04.3 LTS, python 3.10.12, ultralytics==8.2.4, tensorrt==8.6.1.post1', Detection
      (COCO), yolov8n.engine exported with `model.export(format="engine", imgsz=640, dynamic=True, batch=8,
      workspace=2[, half=True])`, times per image (Ultralytics' speed dict divides by the batch):
        FP32 Predict batch 8: 0.52 ms; FP16 Predict batch 8: 0.34 ms; FP16 COCO val batch 1: 0.33 ms.
      (det29c: the 'COCO val, batch 1' rows ran at batch 8. The page's validation call is
      model.val(data=..., batch=1, imgsz=640) on the dynamic batch-8 engine, and Ultralytics' BaseValidator
      sets `if engine: self.args.batch = model.batch_size` (and rect=False: square 640), AutoBackend taking
      batch_size from the optimisation profile's maximum shape, which it binds for a dynamic engine
      ('if dynamic, this is instead max batch size'; ultralytics/engine/validator.py, nn/autobackend.py). So
      the page publishes no batch-1 time, which is why its two rows agree.)
      The page does not say SXM or PCIe; I size the a100-sxm4-80gb the product's own YOLOv8 A100 TensorRT fit
      (docs/models/yolov8.md) is sized on, and quote the PCIe 40GB beside it. TensorRT builds FP32 engines with
      TF32 on by default; YOLOv8 has no matmuls, so image.tf32_matmul changes nothing here (checked).
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB

MEMORY, SPEED = 0.15, 0.25
GIB = 2.0**30


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _recommend(tmp_path, spec: dict, top: int) -> list[dict]:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", str(top), "--format", "json", stdout=out)
    return json.loads(out.getvalue())["results"]


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _reserved_gb(row: dict) -> float:
    return (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


def _images_per_second(row: dict) -> float:
    return row["throughput"]["training_images_per_second"]


# ---------------------------------------------------------------- [3090-Y11] YOLO11s/m on an RTX 3090


def _yolo11(preset: str, batch: int, epochs: int, vcpus: int) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": batch,
        "optimizer": "adamw",  # optimizer=auto chose AdamW (the log)
        # 13,216 boxes over 12,819 images; 10 is my bound for the densest image (any bound up to 93, the
        # default, moves memory < 1% here).
        "image": {
            "resolution_px": 640,
            "epochs": epochs,
            "dataset_images": 12819,
            "max_objects_per_image": 10,
        },
        # The host's vCPUs are not in the log. 16 is a workstation's; the product is GPU-bound from 6 vCPUs on
        # (YOLO11s at 119.6 images/s over 24.6 a vCPU), so the speed cases below test the GPU side only.
        "host": {"vcpus_per_gpu": vcpus},
    }


# fill44 (stop 44): 142.3 -> 127.4 images/s (+6.7% -> -4.5%): YOLO11s's batch-8 step fills the 3090's 82 SMs 0.819, geforce_detector_rate 1.26.
# Was 127.4 images/s (-4.5%), now 129.4 (-2.9%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step).
@pytest.mark.django_db
def test_yolo11s_batch8_rate_on_a_3090(bundled_catalog, tmp_path):
    """[3090-Y11] 133.4 images/s published (16.67 it/s x 8); product 119.6 (-10.3%); 142.3 (+6.7%)
    since e29's GeForce rate (compute_peak.geforce_rate)."""
    row = _size(tmp_path, _yolo11("yolo11s", 8, 20, 16), "rtx-3090")
    _within(_images_per_second(row), 16.67 * 8, SPEED)


# fill44 (stop 44): 0.5003 -> 0.5589 h (-9.5% -> +1.1%).
# Was 0.5589 h (+1.1%), now 0.5502 h (-0.5%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step); validation time is not scaled by it.
@pytest.mark.django_db
def test_yolo11s_batch8_run_hours_on_a_3090(bundled_catalog, tmp_path):
    """[3090-Y11] '20 epochs completed in 0.553 hours' (validation of 535 images each epoch included, ~1.7 s of
    it); product 0.595 h (+7.7%); 0.501 h (-9.5%) since e29's GeForce rate."""
    row = _size(tmp_path, _yolo11("yolo11s", 8, 20, 16), "rtx-3090")
    _within(row["throughput"]["training_hours"], 0.553, SPEED)


@pytest.mark.django_db
def test_yolo11s_batch8_gpu_mem_on_a_3090(bundled_catalog, tmp_path):
    """[3090-Y11] GPU_mem 2.34G (2.33-2.35G over the run); product 2.153 GB (-8.0%)."""
    row = _size(tmp_path, _yolo11("yolo11s", 8, 20, 16), "rtx-3090")
    _within(_reserved_gb(row), 2.34, MEMORY)


# fill44 (stop 44): 74.82 -> 74.23 images/s (-4.7% -> -5.4%): batch-8 fill 0.897, geforce_detector_rate 1.26.
# Was 74.23 images/s (-5.4%), now 75.41 (-3.9%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step).
@pytest.mark.django_db
def test_yolo11m_batch8_rate_on_a_3090(bundled_catalog, tmp_path):
    """[3090-Y11] 78.5 images/s published (epoch 20, 9.81 it/s x 8); product 62.9 (-19.9%), inside the bar
    at its edge: 62.9 images/s x 3 x 68.2 GFLOP = 12.9 TFLOPS, 18% of the 3090's 71 TFLOPS (fp16 with fp32
    accumulate); the log reached 22.6%. Same direction as the 4090 of round 4 (GeForce under-rated). e29:
    74.8 (-4.7%) at the GeForce rate (compute_peak.geforce_rate, 1.19)."""
    row = _size(tmp_path, _yolo11("yolo11m", 8, 20, 16), "rtx-3090")
    _within(_images_per_second(row), 9.81 * 8, SPEED)


# fill44 (stop 44): 0.952 -> 0.959 h (+1.3% -> +2.1%).
# Was 0.959 h (+2.1%), now 0.944 h (+0.5%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step).
@pytest.mark.django_db
def test_yolo11m_batch8_run_hours_on_a_3090(bundled_catalog, tmp_path):
    """[3090-Y11] '20 epochs completed in 0.940 hours'; product 1.133 h (+20.5%); 0.952 h (+1.3%) since e29's
    GeForce rate."""
    row = _size(tmp_path, _yolo11("yolo11m", 8, 20, 16), "rtx-3090")
    _within(row["throughput"]["training_hours"], 0.940, SPEED)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("batch", "published_gb"),
    [
        # GPU_mem 4.59-4.64G; product 4.479 GB (-3.5%).
        pytest.param(8, 4.64, id="batch-8"),
        # GPU_mem 13.0-13.2G (13.1G from epoch 3 on); product 13.279 GB (+1.4%).
        pytest.param(25, 13.1, id="batch-25"),
    ],
)
def test_yolo11m_gpu_mem_on_a_3090(bundled_catalog, tmp_path, batch, published_gb):
    row = _size(tmp_path, _yolo11("yolo11m", batch, 20, 16), "rtx-3090")
    _within(_reserved_gb(row), published_gb, MEMORY)


BATCH_25_REASON = (
    "[3090-Y11] YOLO11m, batch 25, 640 px, RTX 3090: published 3.90 it/s x 25 = 97.5 images/s vs product 62.9"
    " (-35.5%); '30 epochs completed in 1.128 hours' vs product 1.699 h (+50.6%). The product's detector"
    " training rate does not move with the batch (62.9 images/s at batch 8 and at 25: step 0.127 -> 0.398 s,"
    " exactly x 25/8), while the same card and dataset went 78.5 -> 97.5 images/s (+24%) from batch 8 to 25:"
    " at batch 8 YOLO11m's small late-stage convolutions (20 x 20 and 40 x 40 maps) do not fill the 82 SMs."
    " 97.5 x 3 x 68.2 GFLOP = 19.9 TFLOPS = 28% of the 3090's 71 TFLOPS against the product's 18%. A buyer"
    " sizing a large-batch run on a GeForce card is told it takes half as long again as it does."
    " det29c: the two batches split into 29 ms a step that does not grow with the batch (0.102 s at 8, 0.256 s"
    " at 25: 0.256 - 0.102 = 17 x 9.1 ms) and 9.1 ms an image, 3 x 68.2 GFLOP / 9.1 ms = 22.5 TFLOPS = 32% of"
    " the 3090's peak, 1.75x the product's 18%. A batch term alone (per-step host time, or the 20 x 20 maps'"
    " wave fill on 82 SMs, which the V100 fit's batches of 16-64 already absorbed) slows batch 8, already at"
    " -19.9%: the per-image rate on this GeForce card is the larger miss, and no second GeForce batch sweep"
    " was found to tell a clock or card effect from a network one; other practitioners report no gain from"
    " the batch (ultralytics/ultralytics issue #15054: batch 16 and 32 train in 'almost the same' time)."
)


# fill44 (stop 44): 74.82 -> 80.69 images/s (-23.3% -> -17.2%): batch-25 fill 0.984 against batch 8's 0.897, geforce_detector_rate 1.26.
# Was 80.69 images/s (-17.2%), now 81.97 (-15.9%) because geforce_detector_rate 1.26 -> 1.28 (fixd44, refitted on the
# four GeForce logs once the RTX 2080 SUPER has its 48 SMs): 80.69 x 1.28 / 1.26 = 81.97.
@pytest.mark.django_db
# Was a strict xfail: 62.9 images/s vs 97.5 (-35.5%), the V100-fitted detector step efficiency on the 3090's
# datasheet peak. Now 74.8 (-23.3%) because GeForce cards run image kernels nearer their half-rate
# fp32-accumulate peak than full-rate cards do (compute_peak.geforce_rate, 0.886 / 0.745 = 1.19, the ViT fit's
# ratio, e29); the batch-8 row of the same run goes -19.9% -> -4.7%. The product's rate still does not move with
# the batch (74.8 at 8 and 25, published +24%): see BATCH_25_REASON and the hours case below.
def test_yolo11m_batch25_rate_on_a_3090(bundled_catalog, tmp_path):
    row = _size(tmp_path, _yolo11("yolo11m", 25, 30, 16), "rtx-3090")
    _within(_images_per_second(row), 3.90 * 25, SPEED)


BATCH_25_HOURS_REASON = (
    "[3090-Y11] YOLO11m, batch 25, 30 epochs: published 1.128 h vs product 1.429 h (+26.6%). loader43 (stop 43),"
    " a per-step fixed cost fitted and checked, not adopted: step = F + batch x the product's per-image time x"
    " 1.19 / G, F on every detector training step and G the GeForce rate refitted with it. Fit on the YOLO11m"
    " and YOLO11l mosaic-off pairs (79.0 / 97.5 and 63.0 / 76.0 images/s, log least squares): F = 28 ms, G ="
    " 1.62; held out, YOLO11x 46.6 / 52.4 images/s (+16.7% / +23.2%), run hours 1.53 / 2.04 (-21.4% / -21.2%),"
    " YOLO11s batch 8 115.5 (-13.4%) and 0.617 h (+11.6%); this case 1.168 h (+3.5%). Fit on l and x instead: F"
    " = 19 ms, G = 1.35, YOLO11m held out at -10.6% (batch 8) and -18.2% (batch 25), this case about 1.34 h"
    " (+19%). Either way every published detection speed case of test_outside_image_workloads*.py stays inside"
    " 25% and validate_sizing's image medians stay 2.4% / 6.3% (its image speed rows are inference), but: the"
    " COCO ranking judgement test_yolo_training_ranking_does_not_lead_with_a_cpu_starved_host fails (F slows the"
    " GPU-bound T4 g5g.xlarge row, 4.66 -> 4.94 / 4.85 USD, past the loader-bound L4 g6.xlarge on 4 vCPUs at"
    " 4.68, which then leads with 'too few vCPUs ... needs 5'); the hand-judged YOLO11m COCO top row's L4 rate"
    " moves 67.14 -> 60.1 / 62.2 images/s with no published L4 figure to say which is right; and F has no"
    " per-step source: the pairs give 28 (m), 32 (l) and 18 ms (x, its batch 25 at 24.1G of the card), against"
    " <= 5 ms of sourced per-step work (the optimizer step with EMA amortised over accumulate, the loss's"
    " syncs; below), and no non-GeForce same-card batch sweep says whether the V100 fit's rows and the T4, L4"
    " and A100 detector rows should pay it. det29 (stop 42):"
    " the same host trained YOLO11l and YOLO11x at the same two batches (test_yolo11l_and_11x_run_hours_on_a_3090,"
    " passing: l -5.5% / +14.0%, x -10.4% / +1.0%). Mosaic-off epochs, batch 8 -> 25: YOLO11m 79.0 -> 97.5"
    " images/s (+23%), YOLO11l 63.0 -> 76.0 (+21%), YOLO11x 39.9 -> 42.5 (+6.5%, its batch 25 at 24.1G of 24 GB);"
    " the product moves none (74.8, 64.5 and 40.8 at both). The gain is the network's width's, not its size's:"
    " a saturating batch term b / (b + h) solved on each pair gives h = 3.1 (m), 2.7 (l), 0.8 (x), and YOLO11m"
    " and YOLO11l have the same channel widths (64 ... 512; the logs' summaries), YOLO11x 1.5x them (96 ... 768),"
    " so h ~ 2.7 / width^2 (x predicted 1.2, measured 0.8): per-kernel latency that a wider layer or a larger"
    " batch hides, as image_half_rows does for diffusion. Not made this stop: the V100 fit"
    " (detector_training_efficiency, YOLOv5 s/m/l/x at batches 64/40/24/16, widths 0.5-1.25) sits at b / (b + h)"
    " = 0.86-0.90 and would need refitting; the term moves every small-batch detector case (YOLO11m batch 8"
    " -4.7% -> about -20%, the 2080 SUPER's YOLOv8x batch 4 about -21%), and with h0 2.7 this case lands at about"
    " +24.9% (1.409 h), on the bar, which is no fix. Tried and not kept: that term (x 1 / 0.89) fails 8"
    " passing cases, all narrow networks at small batches (YOLO11s on this 3090, rate and hours in _5 and _7;"
    " YOLO11n on the L4; the [T4-Y8N] YOLOv8n; two rankings), where 2.7 / width^2 is 11-43 rows: the V100"
    " fit's width slope already holds them. Earlier diagnosis: was 1.699 h,"
    " +50.6%, before e29's GeForce rate, compute_peak.geforce_rate). The product's rate does not move with the"
    " batch (74.8 images/s at batch 8 and at 25) where the run went 78.5 -> 97.5 (+24%); at batch 8 the product"
    " is -4.7%, at 25 -23.3%, and the 1.128 h also holds 30 validation passes (11 batches, ~2.5 s each) the"
    " product does not count. The two batches split into 29 ms a step that does not grow with the batch and"
    " 9.1 ms an image (det29c). e29b, checked against Ultralytics' own per-step work, none of which is 29 ms a"
    " batch: (1) the optimizer step and the EMA update run together (BaseTrainer.optimizer_step: unscale_,"
    " clip_grad_norm_, scaler.step, update, zero_grad, then self.ema.update; ultralytics/ultralytics@00016300"
    " ultralytics/engine/trainer.py) only when ni - last_opt_step >= accumulate, accumulate = round(nbs 64 /"
    " batch): every 8 batches at batch 8 and every 3 at 25, i.e. once per 64 and per 75 images (the log's"
    " AdamW weight decay shows both: 0.0005 x 8 x 8 / 64 = 0.0005 and 0.0005 x 25 x 3 / 64 = 0.000586), so"
    " their cost per image is the same at both batches within 15% of itself. Its size on this host, from the"
    " logs' warmup (accumulate ramps from 1 to nbs / batch over the first 3 epochs, np.interp(ni, [0, nw], [1,"
    " nbs / batch]).round()): at batch 25 accumulate rounds to 1 until iteration 493 of epoch 1's 513, so"
    " epoch 1 stepped the optimizer ~once a batch against once in 3 later, and ran 3.67 it/s against 3.88:"
    " 14.8 ms more a batch for ~0.67 more steps, ~22 ms an optimizer step with its EMA (batch 8's epochs 1-2,"
    " 9.06 and 9.37 it/s against 9.6, give 16-25 ms). At 22 ms that is 0.34 ms an image at batch 8 and 0.29"
    " at 25, against 12.7 and 10.3 ms an image measured: 0.4% of the 24%. Cross-check: ultralytics/ultralytics"
    " pull 26180 profiled YOLO26x at batch 64 (accumulate 1) on a B200: foreach to fused AdamW 3.2 ms a step"
    " (0.2172 -> 0.2140 s), the EMA's per-tensor loop 5.2 ms (0.2140 -> 0.2088 s)."
    " (2) The per-batch host syncs (four in v8DetectionLoss, one in the progress bar's %11.4g of the losses): the same profile took four of them out"
    " for 1.3 ms a step (0.2088 -> 0.2075 s); 29 ms a batch would need ~20x that. A per-step term of the size"
    " these sources support (<= 5 ms) makes both batches slower (batch 8 -4.7% -> ~-9%, batch 25 -23.3% ->"
    " ~-24.4%) and moves this case the wrong way, so none is added. Two candidates remain, unsized: (a) GPU"
    " fill: at batch 8 YOLO11m's 20 x 20 and 40 x 40 stages (and their weight-gradient reductions) underfill the"
    " 3090's 82 SMs, which the V100 fit's batches of 16-64 do not resolve and the product does not count layer"
    " by layer (assumptions detector_training_efficiency); (b) a host floor: with deterministic=True each step"
    " also launches ~2,600 fill kernels (issue 26181: 10,544 FillFunctor kernels per 4 steps, YOLO26x), and the"
    " loss's syncs split the step into segments that each take the longer of host and GPU work. The same host"
    " ran YOLO11s at batch 8 in 60 ms a step, which bounds its launches for YOLO11m (1.28x the modules: 409 vs"
    " 319 layers in the logs' summaries) to <= 77 ms, below the 82 ms of GPU work at batch 25's per-image rate,"
    " so (b) could bind only segment by segment. The product counts no kernels for detector training"
    " (image_model.forward_kernels: 0 for detectors), and no published kernel count, host profile or same-card"
    " batch sweep of a YOLO11 training step was found to tell (a) from (b). det44 (stop 44), (a) counted as a lead,"
    " not adopted: at 640 px YOLO11m's 512-channel stride-32 layers (20 x 20 positions) form GEMMs of batch x 400"
    " rows; in 128 x 128 tiles that is 25 x 4 = 100 tiles at batch 8 on the 3090's 82 SMs (2 waves, 61% full) and"
    " 79 x 4 = 316 at batch 25 (4 waves, 96%), while the stride-16 layers fill 95-98% at both. YOLO11l has the same"
    " widths (the same gain measured, +21%); YOLO11x's 768 channels give 150 tiles at batch 8 (2 waves, 91%) and"
    " 474 at 25 (96%), +5% on those layers against its measured +6.5%. So wave quantization of the deepest stage"
    " has the sign, the width dependence and the order of the sweep. It is not made: the tile shape cuDNN picks"
    " for each layer is not published, the engine carries no per-stage FLOPs for YOLO (image_shapes.yolo11_cost"
    " and yolov8_cost scale the published total by pixels), and the V100 fit's rows (YOLOv5 at batches 64/40/24/16)"
    " would have to be refitted with the term. Earlier diagnosis: "
) + BATCH_25_REASON


# Was 11l 1.132 / 1.532 h (-3.1% / +5.5%), 11x 1.734 / 2.499 h (-10.9% / -3.5%); now 11l 1.115 / 1.508 h
# (-4.6% / +3.8%), 11x 1.707 / 2.460 h (-12.3% / -5.0%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step) (held out).
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("preset", "batch", "epochs", "published_hours"),
    [
        # product 1.104 h (-5.5%)
        pytest.param("yolo11l", 8, 20, 1.168, id="11l-batch-8"),
        # product 1.656 h (+14.0%): the product's rate does not rise with the batch, the run's did +21%
        pytest.param("yolo11l", 25, 30, 1.452, id="11l-batch-25"),
        # product 1.744 h (-10.4%)
        pytest.param("yolo11x", 8, 20, 1.947, id="11x-batch-8"),
        # product 2.616 h (+1.0%)
        pytest.param("yolo11x", 25, 30, 2.589, id="11x-batch-25"),
    ],
)
def test_yolo11l_and_11x_run_hours_on_a_3090(
    bundled_catalog, tmp_path, preset, batch, epochs, published_hours
):
    """[3090-Y11] The same host's YOLO11l and YOLO11x runs ('N epochs completed in H hours', validation
    included): held-out checks of the batch sweep BATCH_25_HOURS_REASON reads, none fitted on."""
    row = _size(tmp_path, _yolo11(preset, batch, epochs, 16), "rtx-3090")
    _within(row["throughput"]["training_hours"], published_hours, SPEED)


# Was a strict xfail: 1.429 h vs 1.128 (+26.6%), the detector rate did not move with the batch (BATCH_25_HOURS_REASON,
# kept as the history). Now 1.324 h (+17.4%) because fill44 counts each convolution's wave quantization on the card's
# SMs (image_model.yolo_step_fill, 128 x 128 implicit-GEMM tiles as CUTLASS's Ampere conv example): YOLO11m's step
# fills the 3090's 82 SMs 0.897 at batch 8 and 0.984 at 25; the V100 fit and geforce_detector_rate (1.19 -> 1.26)
# were refitted on their own rows with the fill counted.
# Was 1.324 h (+17.4%), now 1.303 h (+15.5%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step) (held out).
@pytest.mark.django_db
def test_yolo11m_batch25_run_hours_on_a_3090(bundled_catalog, tmp_path):
    row = _size(tmp_path, _yolo11("yolo11m", 25, 30, 16), "rtx-3090")
    _within(row["throughput"]["training_hours"], 1.128, SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "EXPLAINED: [3090-Y11] YOLO11s, batch 8, one loader worker: published 133.4 images/s vs product 24.6"
        " (-81.5%). The product's loader rate (loader_images_per_vcpu, 40.6 ms of a vCPU a sample) is a cloud"
        " vCPU's share, not the work Ultralytics does for a sample on one dedicated core. det45b (stop 45), counted"
        " from the log's version (ultralytics 8.3.74, the PyPI wheel): data/base.py load_image decodes only the"
        " sample's own image (the log's cache=False), the three mosaic partners come from self.buffer"
        " (max_buffer_length min(12,819, 8 x 8, 1000) = 64, so a new index is already decoded 0.5% of the time);"
        " data/augment.py Mosaic._mosaic4 fills a 1280 px canvas, RandomPerspective warps it to 640 (cv2.warpAffine),"
        " RandomHSV (two cvtColor, three LUTs), RandomFlip (p 0.5), Albumentations (Blur, MedianBlur, ToGray,"
        " CLAHE, each p 0.01), Format; with mosaic off (epochs 11-20) LetterBox and a 640 px warp. Timed op by op"
        " in CPU time on one AMD EPYC core, opencv-python-headless 4.10.0.84's libjpeg-turbo"
        " (benchmarks/ultralytics_loader_ops_bench.py, four runs on a busy shared host): a 640 x 480 JPEG decode"
        " 1.7 ms (640 x 640 2.2; published check: ultralytics/yolov3 issue #1096, Glenn Jocher's line profile,"
        " cv2.imread 4.72 ms a COCO image, 96.5% of load_image, on a Mac: the profile's /Users/ path), the warp 2.0-2.7, HSV 2.3-2.5, flip"
        " and Format ~2: a mosaic sample 8.4-10.9 ms = 91-119 a second a core, a mosaic-off sample the same"
        " 8.1-11.1 ms, as the log's constant rate across the mosaic's close says. The log's <= 7.5 ms a sample"
        " is this count on a desktop core ('FAWorkstation'), 0.69-0.89x of it. Collate (torch.stack of eight"
        " 1.2 MB images, in the worker: ~0.1 ms a sample) and pin memory (a thread of the main process) do not"
        " change it; 8.3.74's build.py passes no prefetch_factor (PyTorch's 2 batches a worker), a queue that"
        " overlaps the GPU but does not raise the worker's rate. Size: at the count one worker gives 91-119"
        " images/s, so the case would read -32..-11% (GPU side 129.4, -2.9%) where the product's 40.6 ms gives"
        " -81.5%: the 4-5x is the host's per-sample CPU rate. The product's rate is right for its own rows, which"
        " are cloud vCPUs: YOLOv5's 15.4 a worker (four decodes, ultralytics/yolov5 issue #4252's A100 host), the"
        " Colab workers' 23.1 ([T4-Y8N], two workers and the training process on 2 vCPUs) and [COLAB-T4]"
        " (+9.3%, loader-bound at 2 x 24.6; its GPU side alone 162), which a rate of 91-119 a vCPU would put at"
        " +260%, and the ranking judgements whose L4 rows are loader-bound on 4 vCPUs at it: one rate cannot give"
        " both. What a spec would need: the host's per-core loader rate (a dedicated desktop"
        " core against a shared cloud vCPU), which no field states; adding one needs a rate measured on such a"
        " host, which this log bounds (<= 7.5 ms) and this count (8.4-10.9 ms on a server core) brackets."
        " History: [3090-Y11] YOLO11s, batch 8, ONE dataloader worker (the log's workers=1, 'Using 1 dataloader workers',"
        " cache=False), stated as image.loader_workers 1 (e29; was host.vcpus_per_gpu 1, same figure): published"
        " 133.4 images/s vs product 24.6 (-81.5%). loader43 (stop 43): the frames' size cannot close it. The"
        " product's loader is already per-pixel (host.mosaic_images_per_vcpu: a sample is 32.5 ms of canvas work"
        " at 640 px + 8.1 ms x image.source_megapixels / 0.29 of decode, fitted on YOLOv5 issue #4252's 15.4"
        " samples/s a worker and PR #4049's half decode share). At 0 MP one worker gives 15.4 / 0.5 = 30.8"
        " images/s (-76.9%), a 320 x 240 ToF frame (0.077 MP) 28.9 (-78.3%), 640 x 480 24.3 (-81.8%): 133.4 needs"
        " <= 7.5 ms a sample, under the canvas term alone, so no source size is plausible or even possible. Nor"
        " are these sensor originals: the log's file names (video_001_mp4-0002_jpg.rf.<hash>.jpg, three exports"
        " of each frame) are a Roboflow export of video frames, whose size the log does not print. No constants"
        " shared by the three measured hosts fit: this workstation forces the canvas term <= 7.5 ms; the Colab"
        " workers' 43.3 and 44.3 ms a sample ([T4-Y8N], [COLAB-T4]) then need >= 35.8 ms of decode (1.28 MP at"
        " the fit's 28 ms a megapixel), and the YOLOv5 fit row (65 ms for a canvas and four 0.29 MP decodes)"
        " >= 49.5 ms a megapixel against the 28 of its PR #4049 decode share. So at equal pixels a sample's CPU"
        " time differs >= 4.3x between hosts: the core's rate (a workstation core against a cloud vCPU"
        " hyperthread shared with the other workers and the training process), which no spec field states and"
        " the log does not print. Ultralytics checked (ultralytics/data/build.py @002363f1 build_dataloader: nw"
        " = min(os.cpu_count() // max(nd, 1), workers), prefetch_factor 4, which queues batches and does not"
        " raise a worker's steady rate over 1,603 batches an epoch). Earlier: the loader bound of one worker at"
        " loader_images_per_vcpu"
        " (24.6 images/s, 40.6 ms of CPU a sample: YOLOv5's measured 15.4 a worker on COCO, ultralytics/yolov5"
        " issue #4252's A100 host, less three of its four decodes). Its GPU side"
        " is 142.3 (+6.7%, the batch-8 case above). Cause, quantified from the log: the one worker delivered a"
        " sample every <= 7.5 ms (133.4 a second, mosaic on in epochs 1-10 and off in 11-20 at the same rate, so"
        " the loader never bound), 5.4x the fitted per-worker rate. A worker's per-sample CPU time is a property"
        " of the host's core and of the source frames; the spec has a field for the frames"
        " (image.source_megapixels: the decode, 8.1 of the 40.6 ms) but none for the host's per-core speed, and"
        " the canvas work (32.5 ms at the fit) alone exceeds the 7.5 ms measured here. What misleads: the"
        " ranking's vCPU need (images/s over 24.6, at least 4 a GPU) and its loader bound treat every host like"
        " the fit's. det29 (stop 42): two more measured hosts bracket the per-worker rate. A Colab host"
        " (2 vCPUs, [T4-Y8N] in test_outside_image_workloads_8.py: YOLOv8n, 640 px, mosaic and mixup 0.15 on video"
        " frames) delivered 46.24 images/s = 23.1 a worker, the fit's 24.6 within 6%; this workstation's one"
        " worker at least 133.4 (>= 5.4x). The same workstation's YOLO11x run (workers=1, batch 8) sped up from"
        " 4.47 to 5.0 it/s when the mosaic closed, where YOLO11s kept its rate: 24 ms a step that the mosaic adds"
        " outside the worker (which fed YOLO11s a sample every 7.5 ms, where YOLO11x's steps take 28 ms a"
        " sample), e.g. the assigner's work on four images' boxes. The log prints no CPU model; a spec field for a host's per-core rate has no"
        " published value to state here, so none was added. det44 (stop 44), no parallelism hides inside the one"
        " worker: Ultralytics calls cv2.setNumThreads(0) at import ('prevent OpenCV from multithreading',"
        " ultralytics/ultralytics@002217d4 ultralytics/utils/__init__.py), which a forked DataLoader worker inherits, and"
        " PyTorch's worker loop sets torch.set_num_threads(1) (torch/utils/data/_utils/worker.py), so the <= 7.5 ms"
        " a sample is one core's time. The sample's work at this Ultralytics version is also what the loader term"
        " already counts (one decode, three buffered partners, the 2 x imgsz canvas and its warp). What is left is"
        " the core's speed, which a spec could state only with a per-core loader rate measured on such a"
        " workstation: this log gives a lower bound (the loader never bound), not a rate, so no field is added."
    ),
)
def test_yolo11s_one_loader_worker_on_a_3090(bundled_catalog, tmp_path):
    spec = _yolo11("yolo11s", 8, 20, 16)
    spec["image"]["loader_workers"] = 1  # the log's workers=1
    row = _size(tmp_path, spec, "rtx-3090")
    _within(_images_per_second(row), 16.67 * 8, SPEED)


# ---------------------------------------------------------------- [COLAB-T4] YOLOv8n on 2 Colab vCPUs


@pytest.mark.django_db
def test_yolov8n_colab_t4_is_bound_by_two_vcpus(bundled_catalog, tmp_path):
    """[COLAB-T4] 45.1 images/s published (median 2.82 it/s x 16 over epochs 2-20, two loader workers on the
    Colab host's 2 vCPUs, 534 KB source photos); product 49.3 (+9.3%), bound by its loader: 2 vCPUs x 24.6
    images/s (det29's one-decode mosaic rate, not fitted on this run). The GPU side alone would run 162 images/s
    (the same spec at 8 vCPUs), so the published rate is the host's, as the product says: this is the new
    loader rate and the vCPU bound, tested on a run none of its fits used."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolov8n"},
        "precision": "fp16",
        "micro_batch_size": 16,
        "optimizer": "adamw",  # optimizer=auto chose AdamW(lr=0.002) (the log)
        "image": {"resolution_px": 640, "epochs": 200, "dataset_images": 346, "max_objects_per_image": 5},
        "host": {"vcpus_per_gpu": 2},
    }
    row = _size(tmp_path, spec, "t4")
    throughput = row["throughput"]
    assert throughput["loader_seconds"] == pytest.approx(throughput["step_seconds"], rel=0.01)
    _within(_images_per_second(row), 2.82 * 16, SPEED)


# ---------------------------------------------------------------- [TRT-A100] YOLOv8n TensorRT on an A100


def _trt(precision: str, batch: int, **image) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "yolov8n"},
        "precision": precision,
        "micro_batch_size": batch,
        "image": {"fused_kernels": True, **image},  # TensorRT engine
    }


def _ms_per_image(row: dict) -> float:
    return 1000.0 / row["throughput"]["images_per_second"]


@pytest.mark.django_db
def test_trt_fp32_over_fp16_at_batch8_on_an_a100(bundled_catalog, tmp_path):
    """[TRT-A100] FP32 / FP16 at batch 8: 0.52 / 0.34 = 1.53 published; product 0.466 / 0.340 ms = 1.37
    (-10.3%; was 0.362 / 0.237 = 1.53, +0.1%, before det29c gave narrow networks a lower rate, which the
    TF32 peak's half point, half of fp16's, lowers less). TensorRT's FP32 engine runs YOLOv8n's convolutions
    in TF32 (its default), the product's convolutions in TF32 (cudnn allow_tf32). Stating image.tf32_matmul changes nothing (YOLOv8 has no matmuls), as it should."""
    fp16 = _ms_per_image(_size(tmp_path, _trt("fp16", 8), "a100-sxm4-80gb"))
    fp32 = _ms_per_image(_size(tmp_path, _trt("fp32", 8), "a100-sxm4-80gb"))
    tf32 = _ms_per_image(_size(tmp_path, _trt("fp32", 8, tf32_matmul=True), "a100-sxm4-80gb"))
    assert tf32 == pytest.approx(fp32, rel=1e-6)
    _within(fp32 / fp16, 0.52 / 0.34, SPEED)


# Was a strict xfail: FP16 0.34 ms published vs product 0.237 (-30.2%), FP32 0.52 vs 0.362 (-30.4%): a flat
# detector_tensorrt_efficiency priced YOLOv8n's 8.7 GFLOP at YOLOv8x's rate. Now FP16 0.340 ms (-0.1%, a fit
# point of det29c's three-row solve: detector_tensorrt_forward_overhead_s 0.743 ms and a rate by work per
# image, detector_tensorrt_half_gflops, YOLOv8n at 0.140 of peak), FP32 0.466 ms (-10.4%, held out: TF32
# peak, not fitted) (det29c). PCIe 40GB: 0.354 ms (+4.2%), 0.496 ms (-4.7%).
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("precision", "published_ms"),
    [pytest.param("fp16", 0.34, id="fp16"), pytest.param("fp32", 0.52, id="fp32")],
)
def test_trt_batch8_ms_per_image_on_an_a100(bundled_catalog, tmp_path, precision, published_ms):
    _within(_ms_per_image(_size(tmp_path, _trt(precision, 8), "a100-sxm4-80gb")), published_ms, SPEED)


# Was a strict xfail: sized at batch 1, product 1.025 ms vs 0.33 published (+211%). The row is a batch-8 run
# (the validator takes an engine's batch: module docstring), so it is sized at batch 8: now 0.340 ms (+2.9%)
# (det29c). No batch-1 time of this stack is published; yolov8.md's batch-1 0.99 ms is a fit point.
@pytest.mark.django_db
def test_trt_fp16_coco_val_at_the_engines_batch_on_an_a100(bundled_catalog, tmp_path):
    _within(_ms_per_image(_size(tmp_path, _trt("fp16", 8), "a100-sxm4-80gb")), 0.33, SPEED)


# ---------------------------------------------------------------- ranking judgement: YOLO11m on COCO

YOLO11M_COCO = {
    "task": "full_finetune",
    "model": {"preset": "yolo11m"},
    "precision": "fp16",
    "micro_batch_size": 16,
    "optimizer": "sgd",
    "image": {"resolution_px": 640, "epochs": 100, "dataset_images": 118287},
}


@pytest.mark.django_db
def test_yolo11m_coco_top_row_by_hand(bundled_catalog, tmp_path):
    """Ranking as a buyer reads it: YOLO11m, 100 epochs of COCO train2017 (118,287 images), batch 16.

    First row: AWS g6.xlarge spot, eu-south-2 eus2-az3, 1 x L4, pricing/data/skypilot/aws/vms.gpu.csv line 1275
    ('g6.xlarge,L4,1.0,4.0,16.0,...,0.848,0.091300,eu-south-2,eus2-az3'): 4 vCPUs, 16 GiB, spot 0.0913 USD/h.
    Hours: 11,828,700 images / 67.14 images/s (the product's L4 rate, GPU-bound) = 48.94 h. By hand:
      P = 0.0913 x 1.00115 (spot overhead) = 0.091405 USD/h
      compute = P x 48.993 h (the P90 wall clock)      = 4.478
      reruns  = 0.2 x P x 48.939 h (compute hours)      = 0.895
      setup   = P x 1 h                                 = 0.091
      storage = 43 GB x 0.08 x (48.939 + 1 + 168) / 730 = 1.03
      total                                             = 6.49 USD (the row's 6.49)
    Host: 4 vCPUs x 24.6 images/s = 98.4 images/s of mosaics against 67.1 needed; [COLAB-T4] above measured
    22.5 images/s a vCPU on 534 KB photos, i.e. 90 images/s here: adequate either way, and the row rightly
    carries no vCPU warning. The 'host RAM too small: 16 GiB ... needs 22.4 GiB' warning is the rule of thumb
    (RAM >= GPU memory), marked 'not a limit'; an Ultralytics run with 4 workers and cache=False needs well under
    16 GiB, so it is conservative but honest about being a rule.
    Not checked by hand: the L4's 67 images/s itself (no published L4 YOLO11m run found). Note the product
    rates the 72 W L4 above the RTX 3090 for this run (62.5 images/s), while the 3090 measured 78.5-97.5
    ([3090-Y11]); the ranking's order between GeForce and data-centre cards is the part I trust least."""
    # fixr44 moved the first row to g6.2xlarge 7.92 (the 16 GiB g6.xlarge under the L4's 22.4 GiB card rule,
    # ordered like a tight fit). hostfix44 (outside audit aud44r) orders on what the stack holds on the host
    # (sizing.host.stack_host_ram): YOLO11m's 20.1M fp32 weights 0.08 GiB + 8 workers (the per-GPU bound; 4 run on 4
    # vCPUs) x min(118,287, 16 x 8, 1000) = 128 mosaic-buffer images x 640 x 640 x 3 B = 1.17 GiB
    # (ultralytics/data/base.py max_buffer_length, cache=False by default: ultralytics/cfg/default.yaml) + 3.5 GiB
    # runtime = 4.8 GiB < 16 GiB: no doubt, no warning, and the g6.xlarge above is first again at 6.47 (vms.gpu.csv
    # line 'g6.xlarge,L4,...,0.091300,eu-south-2,eus2-az3'). By hand: P = 0.0913 x 1.00116 = 0.091406; P x H x 1.2 =
    # 0.091406 x 48.783 x 1.2 = 5.3509; setup 0.0914; storage 43 x 0.08 x 217.783 / 730 = 1.0263; total 6.4686 ->
    # 6.47, the row's. The compute line carries the parts' rounding remainder (procurement/ranking/breakdown.py), so
    # it is checked as total minus the other parts and the total by hand to the cent.
    (first,) = _recommend(tmp_path, YOLO11M_COCO, 1)
    assert (first["provider"], first["instance_type"], first["zone"], first["gpu"]) == (
        "aws",
        "g6.xlarge",
        "eus2-az3",
        "l4",
    )
    assert not any(w.startswith("host RAM too small") for w in first["warnings"])
    assert first["pricing_model"] == "spot"
    assert Decimal(first["price_per_hour"]) == Decimal("0.091300")
    price = float(first["effective_price_per_hour"])
    assert price == pytest.approx(0.0913, rel=0.005)
    hours = first["hours"]
    # Was 67.14 images/s, now 67.35 because fill44 counts the step's GEMM fill (YOLO11m at batch 16 on the L4's 58
    # SMs fills 0.974 against the V100 fit rows' 0.979, so the refitted fit, 0.254 x work ^ 0.466 x fill, leaves
    # the L4 0.3% faster); no published L4 figure exists to say which is closer.
    assert hours == pytest.approx(118287 * 100 / 67.35 / 3600, rel=0.01)
    breakdown = {k: float(v) for k, v in first["cost_breakdown"].items()}
    storage = 43 * 0.08 * (hours + 1 + 168) / 730
    assert breakdown["storage"] == pytest.approx(storage, abs=0.006)
    assert breakdown["reruns"] == pytest.approx(0.2 * price * hours, abs=0.006)
    assert breakdown["setup"] == pytest.approx(price, abs=0.006)
    by_hand = price * hours * 1.2 + price + storage
    assert float(first["total_cost"]) == pytest.approx(by_hand, abs=0.006)
    assert float(first["total_cost"]) == pytest.approx(6.47, abs=0.001)
    rest = breakdown["reruns"] + breakdown["setup"] + breakdown["storage"]
    assert breakdown["compute"] == pytest.approx(breakdown["total"] - rest, abs=1e-9)
    assert breakdown["total"] == float(first["total_cost"])
    assert not any("vCPU" in warning for warning in first["warnings"])
    assert 4 * 24.6 >= 118287 * 100 / (hours * 3600)
