"""aud48a (stop 48, issue 29): an outside auditor's held-out check of det48's relabel (the YOLO11n Colab validation
pass, test_outside_image_audit_stop47b.py case 1, UNEXPLAINED -> EXPLAINED by the log's own 'postprocess per image').
Two other published Ultralytics training logs, each printing per-epoch validation bars, a final 'Speed: ... ms
preprocess, ... ms inference, ... ms loss, ... ms postprocess per image' line and the run's hours, with the GPU stated.
Sized as a user sizes them (`manage.py size FILE --gpu rtx-3090 --format json`, image.eval_every_epochs /
image.eval_images stated as the run was). Targets: detection speed within 25%. No test in tests/ used these logs
(grepped for 'YOLO11Face', 'widerface', '2.246', '2.883', '3.067', '2.697'); det48's reason cites the first one's
'0.5 ms postprocess' only as a figure (find_string id 847238273), sizes nothing from it.

Sources (opened with git in the zjykzj/YOLO11Face snapshot):
  [Y8FACE-NGC] zjykzj/YOLO11Face@49f519d5445743010de663d8c7ef3f9506565eaa yolo8face/docs/train.md (2025-01-26):
      'Ultralytics YOLOv8.2.103 ... torch-1.14.0a0+410ce96 CUDA:7 (NVIDIA GeForce RTX 3090, 24268MiB)', yolov8n.pt /
      yolov8s.pt, WIDER FACE (12876 train images, 3225 val images, 39675 val instances), batch=16, imgsz=640,
      epochs=100, workers=8, 'Using 8 dataloader workers', amp=True, val=True.
      YOLOv8n (lines 66-90): val bars '101/101 [00:15<00:00,  6.37it/s]' (epoch 1), '101/101 [00:10<00:00,
      9.54it/s]' (99), '101/101 [00:10<00:00,  9.53it/s]' (100); train '805/805 [01:08<00:00, 11.67it/s]' (99);
      '100 epochs completed in 2.246 hours.'; final validation of best.pt (fused): '101/101 [00:18<00:00,
      5.36it/s]', 'Speed: 0.1ms preprocess, 0.4ms inference, 0.0ms loss, 0.5ms postprocess per image'.
      YOLOv8s (lines 149-175): val bars 5.67 / 8.07 / 8.08 it/s (epochs 1 / 99 / 100, 101 batches each);
      '100 epochs completed in 2.697 hours.'; final '101/101 [00:21<00:00,  4.69it/s]', 'Speed: 0.2ms preprocess,
      0.9ms inference, 0.0ms loss, 0.5ms postprocess per image'.
  [Y8FACE-CU113] zjykzj/YOLO11Face@acd555af3bb00e020293acfeb705cb3dbb1196c8 yolo8face/docs/train.md (2025-01-31), the
      same publisher, card model, Ultralytics version, data and command (epochs 100, imgsz 640, default batch 16 and
      workers 8) on 'torch-1.12.1+cu113': YOLOv8n '805/805 [01:30<00:00,  8.92it' (99), '100 epochs completed in
      2.883 hours.'; YOLOv8s '805/805 [01:32<00:00,  8.67it' (99), '100 epochs completed in 3.067 hours.'.
  [UL-8.3.179] ultralytics 8.3.179 (PyPI wheel, opened): engine/validator.py 199-219 (the four ops.Profile phases;
      the loader's `for batch in bar`, update_metrics and callbacks outside them); data/build.py 199 `nw =
      min(os.cpu_count() // max(nd, 1), workers)` (so 'Using 8 dataloader workers' proves >= 8 CPUs: the spec
      states host.vcpus_per_gpu 8, the bound); models/yolo/detect/train.py 89 (validation loader workers * 2).
"""

from __future__ import annotations

import io
import json
import statistics

import pytest
from django.core.management import call_command

SPEED = 0.25
VAL_IMAGES, TRAIN_IMAGES, EPOCHS = 3225, 12876, 100


def _spec(preset: str, evaluated: bool) -> dict:
    image = {"epochs": EPOCHS, "dataset_images": TRAIN_IMAGES, "loader_workers": 8}
    if evaluated:
        image |= {"eval_every_epochs": 1, "eval_images": VAL_IMAGES}
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "micro_batch_size": 16,
        "host": {"vcpus_per_gpu": 8},
        "image": image,
    }


def _size(tmp_path, spec: dict) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", "rtx-3090", "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate["throughput"]


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published:.4g} ({error:+.1%})"


# [Y8FACE-NGC] per-epoch validation bars (it/s, 101 batches of 32) and the final validation's published split (ms an
# image: preprocess + postprocess, the part det48's term would add)
VAL_BARS = {"yolov8n": (6.37, 9.54, 9.53), "yolov8s": (5.67, 8.07, 8.08)}
PRE_POST_MS = {"yolov8n": 0.1 + 0.5, "yolov8s": 0.2 + 0.5}
# ours, seconds a pass (evaluation_hours x 3600 / 100 passes), pinned below
OURS_PASS_S = {"yolov8n": 2.16, "yolov8s": 5.288}


def _published_pass_seconds(preset: str) -> float:
    """101 batches at the median of the three logged bars: 10.60 s (yolov8n), 12.52 s (yolov8s)."""
    return 101 / statistics.median(VAL_BARS[preset])


VAL_REASON = (
    "UNEXPLAINED (aud48a): [Y8FACE-NGC] one per-epoch validation of WIDER FACE's 3,225 val images on an RTX 3090"
    " (Ultralytics 8.2.103, 101 batches of 32, median bar) takes 10.60 s (yolov8n) / 12.52 s (yolov8s), 3.3 / 3.9"
    " ms an image; the product's evaluation_hours over 100 passes gives 2.16 s (-79.6%) / 5.29 s (-57.7%). det48's"
    " mechanism, sized the way det48 sized the Colab case (the log's own 'preprocess + postprocess per image' added"
    " to the product's forward): 2.16 + 3,225 x 0.6 ms = 4.10 s (-61.4%) and 5.29 + 3,225 x 0.7 ms = 7.55 s"
    " (-39.7%): still outside, so on this host NMS is not the missing part. The same log's final validation shows"
    " where it is: its timed phases sum to 1.0 / 1.6 ms an image while the bar runs 101 batches in 18 / 21 s (5.8 /"
    " 6.5 ms an image); the rest is outside the four ops.Profile phases ([UL-8.3.179] validator.py 199-219): the"
    " loader's `for batch in bar` (letterboxing WIDER FACE's ~1,024 px JPEGs, workers * 2 requested, train.py 89)"
    " and update_metrics over 39,675 instances (12.3 an image). Neither is sized from a source: no log splits the"
    " loader wait from update_metrics. Best lead: price the validation loader with the engine's own loader model"
    " (loader_images_per_vcpu, without the mosaic's four reads), which needs a sourced letterbox rate. yval48"
    " (stop 48): the gap is inside the bar, not around it: the same log's epochs leave 1.29 s (yolov8n: 80.86 s an"
    " epoch - 68.98 s train bar - 10.59 s validation bar, epoch 99) and 2.01 s (yolov8s: 97.09 - 82.56 - 12.52)"
    " outside both bars (save_model, save_metrics, the end-of-pass metrics: ultralytics 8.3.179"
    " engine/trainer.py 450-482). The bar's time beyond our forwards is 2.62 / 2.24 ms an image (3.29 - 0.67,"
    " 3.88 - 1.64), about the same for both models (a host cost), but [COLAB-Y11N]'s is 5.41 ms (6.87 - 1.46):"
    " one constant fitted on this pair (2.43 ms) puts the Colab pass at 0.549 s (-43.3%), fitted on the Colab"
    " row puts these at +85% / +82%; per loader vCPU (validation workers min(cpu_count // device_count, 2 x"
    " workers): data/build.py 198-199, detect/train.py 89) it is >= 19.4 ms here (8 workers at least) against"
    " 10.8 on the 2-vCPU Colab, so a per-vCPU val-loader term fits both only if WIDER FACE's ~1,024 px JPEGs"
    " cost >= 1.8x the Colab set's to decode, which no opened source sizes (the log prints no image size)."
    " yolohrs (stop 49): the best lead is now update_metrics, located and bracketed, not landed. With plots=True"
    " (the log's args line; ultralytics 8.2.103 cfg/default.yaml line 54) every training-time validation runs"
    " ConfusionMatrix.process_batch once an image (detect/val.py 156-159), whose loops walk CUDA tensors object by"
    " object and index a numpy matrix with CUDA scalars (utils/metrics.py 366-378: one D2H copy and sync an index,"
    " plus the builtin sum(j) / any(m1 == i) scans): per-instance host work, the same for both models, which"
    " matches the bar's model-independent excess. The same loops (YOLOv5 @0a3ff71ae, PR #1474, utils/metrics.py"
    " 144-154 on test.py's device tensors, lines 103 / 125 / 181) cost 'about 5-10 seconds' a YOLOv5m COCO val"
    " ('1:25, up 10 seconds from 1:15'; ultralytics/yolov5 issue #1402, glenn-jocher 2020-11-22) over COCO val's"
    " 36,335 instances: 0.138-0.275 ms an instance, 5.46-10.92 s a pass over this log's 39,675. Added to ours:"
    " yolov8n -28.1% .. +23.4%, yolov8s -14.1% .. +29.5% (both land only for a COCO figure of 5.3-9.5 s; with the"
    " log's own pre + post, 3.5-7.4 s); the bars' own excess reads 7.7 / 6.6 s in COCO terms, inside the quoted"
    " range. Not EXPLAINED: the source is a range whose two ends each leave one row out, on an unstated 2020 host."
    " Not charged either: ultralytics PR #20972 (2025-06, .int().tolist() before the loops; 8.3.179 has it) and"
    " PR #25466 (2026-07, the scans) removed most of it, and no spec field states the Ultralytics release or the"
    " validation set's instance count. What would decide it: this log's host re-run with plots=False, or a replay"
    " of 8.2.103's process_batch on a CUDA host at 12.3 instances an image. yolo51 (stop 51): that lead is ruled"
    " out for the per-epoch passes by 8.2.103's own code (PyPI wheel, opened): a training-time call of the"
    " validator runs `self.args.plots &= trainer.stopper.possible_stop or (trainer.epoch == trainer.epochs - 1)`"
    " (engine/validator.py 119) on its own copy of the args (detect/train.py 96-98, args=copy(self.args)), so"
    " from the first epoch on (possible_stop False until patience - 1 = 99 epochs without a better fitness;"
    " utils/torch_utils.py 691 / 711) plots stays False, and detect/val.py 144-145 / 158-159 run"
    " ConfusionMatrix.process_batch only `if self.args.plots`: no per-epoch bar of this log runs those loops."
    " Only the final validation of best.pt does (trainer.py 680 resets validator.args.plots before it), and the"
    " log shows them there: that bar (101 batches in 18.84 / 21.54 s, 5.84 / 6.68 ms an image) runs 2.56 /"
    " 2.80 ms an image longer than the per-epoch bars although it does less timed work (a fused model, no"
    " model.loss), 8.25 / 9.02 s a pass, 7.55 / 8.26 s in COCO terms: inside #1402's 5-10 s. So the loops are"
    " sized, on the pass that runs them, and the per-epoch excess (2.62 / 2.24 ms an image beyond our"
    " forwards) is something else: what a per-epoch pass runs with plots off, per image, is update_metrics'"
    " host-side loop (detect/val.py 125-165: a boolean-mask select with its nonzero sync, cls.unique(), box_iou,"
    " match_predictions' iou.cpu() and self.iouv.cpu() copies and a 10-threshold numpy loop, validator.py"
    " 233-259; ~50 small ops and ~5 syncs an image, counted, not timed) and model.loss at batch 32. At the"
    " engine's 7 / 31 us an op that is 0.35-1.55 ms an image, 13-69% of the excess: not sized, still"
    " UNEXPLAINED."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "preset",
    [
        pytest.param("yolov8n", marks=pytest.mark.xfail(strict=True, reason=VAL_REASON)),
        pytest.param("yolov8s", marks=pytest.mark.xfail(strict=True, reason=VAL_REASON)),
    ],
)
def test_yolov8_validation_pass_on_an_rtx_3090(bundled_catalog, tmp_path, preset):
    """[Y8FACE-NGC] per-epoch validation pass, seconds. Published 10.60 s (yolov8n) / 12.52 s (yolov8s);
    ours 2.16 s (-79.6%) / 5.29 s (-57.7%)."""
    per_pass = _size(tmp_path, _spec(preset, True))["evaluation_hours"] * 3600.0 / EPOCHS
    _within(per_pass, _published_pass_seconds(preset), SPEED)


@pytest.mark.django_db
@pytest.mark.parametrize("preset", ["yolov8n", "yolov8s"])
def test_the_quoted_validation_figures(bundled_catalog, tmp_path, preset):
    """Pins the figures VAL_REASON quotes (so the reason cannot go stale silently): ours a pass, the published pass,
    and det48's term added (the log's own pre + post a image) still outside 25%."""
    plain = _size(tmp_path, _spec(preset, False))["training_hours"]
    row = _size(tmp_path, _spec(preset, True))
    per_pass = row["evaluation_hours"] * 3600.0 / EPOCHS
    assert per_pass == pytest.approx(OURS_PASS_S[preset], rel=0.01)
    assert row["training_hours"] - plain == pytest.approx(row["evaluation_hours"], abs=2e-4)
    published = _published_pass_seconds(preset)
    assert published == pytest.approx({"yolov8n": 10.598, "yolov8s": 12.516}[preset], abs=0.002)
    with_det48_term = per_pass + VAL_IMAGES * PRE_POST_MS[preset] / 1e3
    error = with_det48_term / published - 1
    assert error == pytest.approx({"yolov8n": -0.614, "yolov8s": -0.397}[preset], abs=0.005)
    assert abs(error) > SPEED


# yolohrs (stop 49): the confusion-matrix loops of a training-time validation (plots=True in the log's args line).
# ultralytics/yolov5 issue #1402, glenn-jocher 2020-11-22, on PR #1474 (@0a3ff71ae utils/metrics.py 144-154, the loops
# 8.2.103's utils/metrics.py 366-378 keeps): 'The confusion matrix adds about 5-10 seconds of wall clock time to
# test.py, ie. a typical YOLOv5m COCO test.py run will now take 1:25, up 10 seconds from 1:15 before.'
CONFUSION_MATRIX_COCO_S = (5.0, 10.0)
COCO_VAL_INSTANCES = 36335  # COCO val2017 'all 5000 36335' (a YOLOv5 val.py log, find_string id 54402417)
VAL_INSTANCES = 39675  # [Y8FACE-NGC] 'all 3225 39675'


@pytest.mark.django_db
@pytest.mark.parametrize("preset", ["yolov8n", "yolov8s"])
def test_the_confusion_matrix_bracket_the_reason_quotes(bundled_catalog, tmp_path, preset):
    """VAL_REASON's yolohrs figures: YOLOv5's published 5-10 s over COCO val's instances, scaled to this log's
    39,675, added to ours a pass: the two ends give opposite verdicts for one row each (so not EXPLAINED), and the
    bars' own excess, in COCO terms, sits inside the published range. yolo51 (stop 51): the arithmetic stands,
    the reading does not: at 8.2.103 the per-epoch passes run with plots off (engine/validator.py 119), so the
    confusion-matrix loops are not in these bars (test_the_confusion_matrix_loops_are_in_the_final_bar_only)."""
    ours = _size(tmp_path, _spec(preset, True))["evaluation_hours"] * 3600.0 / EPOCHS
    published = _published_pass_seconds(preset)
    low, high = (s * VAL_INSTANCES / COCO_VAL_INSTANCES for s in CONFUSION_MATRIX_COCO_S)
    assert (low, high) == pytest.approx((5.46, 10.92), abs=0.005)
    errors = [(ours + added) / published - 1 for added in (low, high)]
    expected = {"yolov8n": (-0.281, 0.234), "yolov8s": (-0.141, 0.295)}[preset]
    assert errors == pytest.approx(expected, abs=0.002)
    assert [abs(e) <= SPEED for e in errors] == {"yolov8n": [False, True], "yolov8s": [True, False]}[preset]
    implied_coco_s = (published - ours) * COCO_VAL_INSTANCES / VAL_INSTANCES
    assert implied_coco_s == pytest.approx({"yolov8n": 7.73, "yolov8s": 6.62}[preset], abs=0.01)
    assert CONFUSION_MATRIX_COCO_S[0] < implied_coco_s < CONFUSION_MATRIX_COCO_S[1]


# yolo51 (stop 51): [Y8FACE-NGC]'s final validation of best.pt ('101/101 [00:18<00:00,  5.36it/s]' yolov8n,
# '[00:21<00:00,  4.69it/s]' yolov8s), the one pass of the run with plots on (ultralytics 8.2.103 engine/trainer.py
# 680 `self.validator.args.plots = self.args.plots`; the per-epoch passes force it off, engine/validator.py 119).
FINAL_VAL_BARS = {"yolov8n": 5.36, "yolov8s": 4.69}


@pytest.mark.parametrize("preset", ["yolov8n", "yolov8s"])
def test_the_confusion_matrix_loops_are_in_the_final_bar_only(preset):
    """The plots-on final pass runs longer than the plots-off per-epoch passes by about what YOLOv5 issue #1402
    quotes for the confusion matrix (5-10 s a COCO val), though it does less timed work (fused model, no loss):
    hand: 101 / 5.36 - 10.598 = 8.245 s (yolov8n), 101 / 4.69 - 12.516 = 9.019 s (yolov8s); x 36,335 / 39,675 =
    7.55 / 8.26 s. So the loops are sized on the pass that runs them, and cannot be the per-epoch bars' excess."""
    final_pass = 101 / FINAL_VAL_BARS[preset]
    extra = final_pass - _published_pass_seconds(preset)
    assert extra == pytest.approx({"yolov8n": 8.245, "yolov8s": 9.019}[preset], abs=0.002)
    assert extra / VAL_IMAGES * 1e3 == pytest.approx({"yolov8n": 2.557, "yolov8s": 2.797}[preset], abs=0.001)
    coco = extra * COCO_VAL_INSTANCES / VAL_INSTANCES
    assert coco == pytest.approx({"yolov8n": 7.551, "yolov8s": 8.260}[preset], abs=0.002)
    assert CONFUSION_MATRIX_COCO_S[0] < coco < CONFUSION_MATRIX_COCO_S[1]


HOURS_REASON = (
    "UNEXPLAINED (aud48a): [Y8FACE-CU113] YOLOv8n, WIDER FACE, 100 epochs on an RTX 3090 with its per-epoch"
    " validation: published 2.883 h; ours 1.874 h (-35.0%). The same publisher's run of the same command, card"
    " model, Ultralytics 8.2.103 and data on NGC's torch 1.14.0a0 ([Y8FACE-NGC]) took 2.246 h (ours -16.5%,"
    " passes): the two published runs differ by 28% (train bars 8.92 vs 11.67 it/s at epoch 99) in what the spec"
    " can state; the framework build (torch-1.12.1+cu113 vs 1.14.0a0+410ce96) and whatever else shared the server"
    " (the runs sit on CUDA:5-7 of one host) are not spec fields. The YOLOv8s pair passes both ways (+12.0%,"
    " -1.5%) on the same stacks. Not sized: no source opened splits the cu113 run's slower step (loader or GPU)."
    " yval48 (stop 48): not the GPU. On torch-1.12.1+cu113 the train bar is the same for every model the"
    " publisher ran (epochs 99 / 100: YOLOv8n 8.92 / 8.74 it/s, YOLOv8s 8.67 / 8.72, YOLOv5nu 8.30 / 8.34,"
    " YOLOv5su 8.20 / 8.19; zjykzj/YOLO11Face@acd555af yolo8face/docs/train.md lines 14-112), where on NGC's"
    " torch 1.14 it scales with the model (YOLOv8n 11.67, YOLOv8s 9.75, YOLOv5n / YOLOv5su 11.31 / 9.84 at epoch 100 / 99;"
    " @49f519d5 lines 73-422): the cu113 runs sit on a host-side bound of 131-143 images/s (16 x 8.2-8.9) that"
    " the NGC runs exceed (YOLOv8n 187), so the 28% is that environment's loader or per-step host time, which no"
    " spec field states (yolov8s cu113 passes because its GPU step, 156 images/s on NGC, is near that bound)."
    " Which part of the environment (torch, Python 3.8, the OpenCV build, a shared server) is not shown."
    " yolohrs (stop 49): the validation's confusion-matrix loops (VAL_REASON: 5.46-10.92 s a pass from YOLOv5"
    " issue #1402's 5-10 s over 36,335 instances) would add 0.152-0.303 h: this run -29.7% .. -24.5% (inside only"
    " at the range's top, by 0.5 points; the YOLOv8s NGC row would read +17.6% .. +23.2%, still inside); the gap is"
    " the train bar (8.92 vs 11.67 it/s), not the validation, so the label stays. yolo51 (stop 51): nor do those"
    " loops run in a per-epoch pass at 8.2.103 (plots forced off: engine/validator.py 119; VAL_REASON), so that"
    " bracket does not apply to this run's 100 validations; the label stays."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("preset", "published_hours"),
    [
        # [Y8FACE-NGC] torch 1.14.0a0 (NGC): ours 1.8745 h (-16.5%)
        pytest.param("yolov8n", 2.246, id="yolov8n-ngc-torch1.14"),
        # [Y8FACE-NGC]: ours 3.0206 h (+12.0%)
        pytest.param("yolov8s", 2.697, id="yolov8s-ngc-torch1.14"),
        # [Y8FACE-CU113] torch 1.12.1+cu113: ours 1.8745 h (-35.0%)
        pytest.param(
            "yolov8n",
            2.883,
            id="yolov8n-cu113-torch1.12",
            marks=pytest.mark.xfail(strict=True, reason=HOURS_REASON),
        ),
        # [Y8FACE-CU113]: ours 3.0206 h (-1.5%)
        pytest.param("yolov8s", 3.067, id="yolov8s-cu113-torch1.12"),
    ],
)
def test_yolov8_widerface_run_hours_with_validation_stated(
    bundled_catalog, tmp_path, preset, published_hours
):
    """'100 epochs completed in N hours' (Ultralytics' own clock: training plus the 100 validations), sized with the
    evaluation stated as the run was (every epoch, 3,225 images)."""
    hours = _size(tmp_path, _spec(preset, True))["training_hours"]
    assert hours == pytest.approx({"yolov8n": 1.8745, "yolov8s": 3.0206}[preset], abs=0.002)
    _within(hours, published_hours, SPEED)
