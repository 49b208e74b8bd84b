"""aud47i (stop 47, issue 29): an outside practitioner's audit of img47 (the diffusers 2022 fp16.mdx table's labels)
and det47 (image.eval_every_epochs / image.eval_images, RT-DETR training), with cases from published data no test
has (grepped tests/ for each figure and source first). Each case is sized as a user sizes it (`manage.py size FILE
--gpu SLUG --format json`, or POST /api/size/ where the report's shape is the point). Targets: image and detection
speed within 25%, memory within 15%.

Sources:
  [COLAB-Y11N] the Colab notebook log test_outside_image_workloads_3.py already uses for memory and run hours
      (find_string id 38022387384): Ultralytics 8.3.179, torch 2.6.0, 'Tesla T4, 15095MiB', 2 CPUs, yolo11n.pt,
      imgsz 640, batch 16, 63 train iterations an epoch, 141 val images. New here, the evaluation rows of the same
      log, which no test reads:
        per-epoch validation bars, 5 batches each (Ultralytics validates at twice the train batch: 32, and in
        fp16 with the EMA model during training, engine/trainer.py _build_train_pipeline `batch_size * 2`,
        validator `half = trainer.amp`): '5/5 [00:0x<00:00, R it/s]' with R = 2.51, 5.60, 5.21, 5.29, 4.76,
        5.45, 2.90, 4.78, 4.36, 5.16 (epochs 1-10) and 5.12, 5.52, 5.41, 3.24 (epochs 452-455);
        the final validation of best.pt (fused, fp32: the trainer's args.half is False; the test loader's batch 32,
        '5/5'): 'Speed: 0.2ms preprocess, 3.5ms inference, 0.0ms loss, 3.9ms postprocess per image';
        the standalone `yolo mode=val` (fp32, batch 16, '9/9'): 'Speed: 1.0ms preprocess, 4.3ms inference, 0.0ms
        loss, 3.7ms postprocess per image'.
  [DEIM-100] github.com/Intellindust-AI-Lab/DEIM/issues/100 (ShihuaHuang95, a DEIM author, 2025-06-13): for the
      'L-Sized RT-DETR architecture' on COCO, 'you can use a single card (4090), one epoch takes about an hour'
      ('一个epoch大概一个小时'), and to reach 52 COCO AP 'one day is enough, about 24 epochs'. DEIM's L models are
      D-FINE-L (HGNetv2-B4, 91 GFLOPs in the D-FINE paper) and RT-DETRv2-L (ResNet-50, the RT-DETR-R50 of the
      product's preset, 136 GFLOPs): the product's rt-detr-r50 carries at least the work of either, so its hours
      are a lower bound for the product's reading of the maintainer's run; the batch is unstated ('fill the
      GPU'), and the product's per-epoch time barely moves with it (0.2821 h at 8, 0.2820 h at 16).
  [FP16-MDX] huggingface/diffusers docs/source/optimization/fp16.mdx @0f75d572 (opened from a mirror of the
      repository), the table img47 made cases of: T4 3.5 / 5.5, 3060 RTX 4.6 / 7.8, A10G 8.88 / 15.6, RTX A6000
      11.7 / 21.09, TITAN RTX 12.51 / 18.22, A100-SXM4-40GB 18.6 / 29., A100-SXM-80GB 18.7 / 29.5 it/s (base /
      memory-efficient attention, fp16, 512 px, batch 1). Datasheet bandwidths of the two cards the catalog lacks:
      TITAN RTX 672 GB/s (TU102, 384-bit GDDR6 at 14 Gbps; NVIDIA TITAN RTX product page), GeForce RTX 3060
      360 GB/s (GA106, 192-bit GDDR6 at 15 Gbps; NVIDIA RTX 3060 family page). SM counts and boost clocks of the
      GA102 pair: A10G 80 SMs at 1.71 GHz (the catalog's note), RTX A6000 84 SMs at 1.80 GHz (NVIDIA RTX A6000
      datasheet).
"""

from __future__ import annotations

import io
import json
import statistics

import pytest
from django.core.management import call_command

SPEED = 0.25

# [COLAB-Y11N] the spec test_outside_image_workloads_3.py states for the run (YOLO11N_ASL), on a 2-vCPU host
YOLO11N_ASL = {
    "task": "full_finetune",
    "model": {"preset": "yolo11n"},
    "micro_batch_size": 16,
    "host": {"vcpus_per_gpu": 2},
    "image": {"epochs": 455, "dataset_images": 1008, "max_objects_per_image": 4},
}
ASL_EVAL = YOLO11N_ASL | {"image": YOLO11N_ASL["image"] | {"eval_every_epochs": 1, "eval_images": 141}}
# [COLAB-Y11N] it/s of the 5-batch validation bar, epochs 1-10 and 452-455
VAL_RATES = (2.51, 5.60, 5.21, 5.29, 4.76, 5.45, 2.90, 4.78, 4.36, 5.16, 5.12, 5.52, 5.41, 3.24)


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published:.4g} ({error:+.1%})"


def _validation_pass_seconds() -> float:
    """[COLAB-Y11N] one per-epoch validation: 5 batches at the median logged rate ((5.12 + 5.16) / 2 = 5.14 it/s,
    the 7th and 8th of the 14 sorted rates): 0.973 s."""
    return 5.0 / statistics.median(VAL_RATES)


# ---------------------------------------------------------------- case 1: one YOLO validation pass

YOLO_VAL_REASON = (
    "EXPLAINED: det48 (was UNEXPLAINED, aud47i): [COLAB-Y11N] one per-epoch validation of 141 images on the T4"
    " takes 0.973 s (5 batches of 32 at the median 5.14 it/s of the 14 logged bars, 6.90 ms an image; restated by"
    " audx48b: the median of the 14 VAL_RATES is (5.12 + 5.16) / 2 = 5.14, not 5.16; fix48x corrected the"
    " test's pin from 0.969 to 5 / 5.14 = 0.973 s, so this xfail fails only on its tolerance); the"
    " product's evaluation (training_hours with image.eval_every_epochs 1 / eval_images 141 minus without, over"
    " 455 passes) is 0.2065 s, 1.46 ms an image: -78.8%. (a) Mechanism, ultralytics 8.3.179 (the log's version,"
    " PyPI wheel): engine/validator.py lines 203-219 time four phases a batch, dt[0] preprocess, dt[1] the"
    " model call, dt[2] model.loss (training-time validation only), dt[3] self.postprocess, then"
    " update_metrics outside any timer; models/yolo/detect/val.py 107-129 makes postprocess"
    " ops.non_max_suppression(multi_label=True, max_det 300) at the validator's conf 0.001 (validator.py 122-123),"
    " and utils/ops.py 278-336 runs it image by image in a Python loop (a boolean-mask gather, torch.where over"
    " the classes, torchvision.ops.nms over up to max_nms 30000 boxes: host work and device syncs an image),"
    " none of which evaluation_seconds prices (its docstring: forwards only). (b) Size, from the log's own"
    " published split: 'Speed: 0.2ms preprocess, 3.5ms inference, 0.0ms loss, 3.9ms postprocess per image'"
    " (final validation, batch 32) and 1.0 / 4.3 / 3.7 ms (standalone val, batch 16). The product's forward plus"
    " the published pre- and postprocess: 0.2065 + 141 x (0.2 + 3.9) ms = 0.785 s (-19.3%; postprocess alone"
    " 0.756 s, -22.2%; at the batch-16 row's 1.0 + 3.7 ms 0.869 s, -10.6%): inside 25%. The rest (~0.19 s) is"
    " what the logged split leaves out of a training-time pass: update_metrics per image (detect/val.py 181-195:"
    " box IoU matching and three .cpu().numpy() copies an image), the validation loss (dt[2], 0.0 ms in the"
    " logged non-training run) and the un-fused fp16 EMA forward. (c) To land it the engine needs a host term,"
    " NMS seconds an image of an Ultralytics validation, added in evaluation_seconds for YOLO presets; its size"
    " is the host's and the model's (candidates above conf 0.001 fall as the model trains): other published"
    " 'postprocess per image' lines in the index read 0.5 ms (YOLOv8.2.103, an RTX 3090 server, 3,225 val"
    " images; zjykzj/YOLO11Face@49f519d5 yolo8face/docs/train.md line 90) and 1.0 ms (a Windows run; find_string"
    " id 52984181888) against this 2-vCPU Colab's 3.7-3.9, so one constant would be this log's fit checked on"
    " this log, and host.py has no per-core speed to scale it by. Not landed: one host; a second logged"
    " postprocess with its host stated is needed. aud48a (stop 48): and a host NMS term does not land the class:"
    " on the RTX 3090 server's own YOLOv8n / YOLOv8s validation passes (test_outside_val_audit_stop48.py) the"
    " product plus that log's pre- and postprocess (0.6 / 0.7 ms an image) reads -61.4% / -39.7%, because there"
    " the timed phases add to 1.0 / 1.6 ms an image while the progress bar runs at 5.8 / 6.5: the rest (the"
    " loader, update_metrics) is outside Ultralytics' timers. This EXPLAINED holds for this Colab case only."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=YOLO_VAL_REASON)
def test_yolo11n_validation_pass_seconds_on_a_colab_t4(bundled_catalog, tmp_path):
    plain = _size(tmp_path, YOLO11N_ASL, "t4")["throughput"]["training_hours"]
    evaluated = _size(tmp_path, ASL_EVAL, "t4")["throughput"]["training_hours"]
    per_pass = (evaluated - plain) * 3600.0 / 455
    # fix48x (audx48b item 3): was approx(0.969, abs=0.001), 5 / 5.16, a stale median; 5 / 5.14 = 0.9728 s
    assert statistics.median(VAL_RATES) == pytest.approx((5.12 + 5.16) / 2)
    assert _validation_pass_seconds() == pytest.approx(0.973, abs=0.001)
    _within(per_pass, _validation_pass_seconds(), SPEED)


# ---------------------------------------------------------------- case 2: the run's hours with validation stated


@pytest.mark.django_db
def test_yolo11n_run_hours_with_validation_stated(bundled_catalog, tmp_path):
    """[COLAB-Y11N] '455 epochs completed in 2.401 hours' holds 455 validations (Ultralytics' default val=True,
    about 455 x 0.973 s = 0.123 h). Stated as the run was (eval every epoch, 141 images): ours 2.611 h (+8.8%);
    without the evaluation fields 2.585 h (+7.7%, test_outside_image_workloads_3.py). The training part alone
    reads 2.585 h against 2.401 - 0.123 = 2.278 h of training (+13.5%): stating the evaluation moves the total
    away from the log because the product prices it at a fifth of its time (case 1) while the step is slow."""
    row = _size(tmp_path, ASL_EVAL, "t4")
    assert row["throughput"]["training_hours"] == pytest.approx(2.611, abs=0.002)
    _within(row["throughput"]["training_hours"], 2.401, SPEED)


# ---------------------------------------------------------------- case 3: the same log's fp32 forward


YOLO_B32_REASON = (
    "UNEXPLAINED (aud47i): [COLAB-Y11N] final validation of best.pt, fused yolo11n, fp32, batch 32 on the T4: 3.5 ms"
    " an image of 'inference'; ours 4.76 ms (+36.1%). The same log's standalone val at batch 16 reads 4.3 ms (ours"
    " 4.79, +11.3%, passes): the log gets 19% cheaper an image from 16 to 32, the product 0.6%. Candidates, none"
    " sized: the fill of yolo11n's narrow convolutions (16-256 channels) at batch 16 vs 32 on the T4's fp32 path"
    " (image_model's fill is counted for training steps at 128 x 128 tiles; the inference path stays flat here);"
    " a clock difference is ruled out in direction (the final validation runs right after 2.4 h of training, a"
    " hot 70 W T4, yet is the faster row). Two short runs (5 and 9 batches) of one host; no fit. det48: the fill"
    " candidate sized and ruled out as the whole cause: the forward-only GEMM fill of yolo11n's convolutions at"
    " 640 px on the T4's 40 SMs (image_model.gemm_fill over image_shapes.yolo_convs, MAC-weighted) is 0.922 at"
    " batch 16 and 0.980 at 32 at the engine's 128 x 128 tile (6.3% cheaper an image; 0.839 / 0.922, 10.0%, at"
    " 256 x 128), against the log's 19%: at the 128 x 128 tile the batch-32 row would read 4.79 x 0.922 / 0.980"
    " = 4.51 ms (+28.8%), still outside. UNEXPLAINED."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("batch", "published_ms"),
    [
        # final validation of best.pt (fused, fp32, the trainer's batch-32 test loader): 3.5 ms; ours 4.76 (+36.1%)
        pytest.param(
            32, 3.5, id="fused-fp32-batch32", marks=pytest.mark.xfail(strict=True, reason=YOLO_B32_REASON)
        ),
        # standalone `yolo mode=val` (fp32, default batch 16): 4.3 ms; ours 4.79 (+11.3%)
        pytest.param(16, 4.3, id="fused-fp32-batch16"),
    ],
)
def test_yolo11n_fp32_forward_per_image_on_a_t4(bundled_catalog, tmp_path, batch, published_ms):
    """[COLAB-Y11N] Ultralytics' 'inference' column (ops.Profile around the model call, CUDA-synchronised), per
    image. Ours: batch 16 4.79 ms (+11.3%), batch 32 4.76 ms (+36.1%, YOLO_B32_REASON)."""
    spec = {
        "task": "inference",
        "model": {"preset": "yolo11n"},
        "precision": "fp32",
        "micro_batch_size": batch,
    }
    row = _size(tmp_path, spec, "t4")
    _within(row["throughput"]["seconds_per_batch"] / batch * 1e3, published_ms, SPEED)


# ---------------------------------------------------------------- case 4: an RT-DETR-class epoch on one 4090

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

DEIM_REASON = (
    "UNEXPLAINED (aud47i): [DEIM-100] a DEIM author: an L-sized RT-DETR-class model (D-FINE-L, 91 GFLOPs, or"
    " RT-DETRv2-L = R50, 136) trains one COCO epoch in about an hour on one RTX 4090 (24 epochs 'about a day')."
    " The product's rt-detr-r50 (136 GFLOPs, at least either model's work), fp16, batch 8, with the epoch's"
    " COCO val2017 evaluation stated: 0.282 h an epoch, -71.8% against the hour (batch 16: 0.282 h too; it is"
    " not the batch). Same direction and size as det47's own RT-DETR #7 xfail (12.16 h vs >= 48 h, -75%): a"
    " second, independent user-side source (a maintainer of a derived repository, a different card) for"
    " det47's note that the YOLO-fitted rate is several times too fast for this family. Not sized: which of"
    " the deformable-attention sampling and its atomic-add backward, the denoising groups, the CPU Hungarian"
    " matcher or the loader is the 3.5x. detr48 (RT-DETR's own code counted, same as the #7 case): deformable"
    " attention and denoising queries are ~1-2% of the work; the loss (13 sets, 7 CPU Hungarian matches, ~3,680"
    " kernels at batch 8, ~90 syncs) and ModelEMA's per-tensor loop (~2,080 ops) priced serially give 0.449 h"
    " (all at optimizer_op_host_s, 7 us), 0.817 h (loss at eager_kernel_host_s, 31 us; inside) or 1.022 h (all"
    " at 31 us): the per-op constant decides and D-FINE / DEIM's own criterion is not counted, so not landed. "
    + DETR49_PAIR
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=DEIM_REASON)
def test_an_rt_detr_l_class_epoch_on_one_4090_takes_about_an_hour(bundled_catalog, tmp_path):
    spec = {
        "task": "full_finetune",
        "model": {"preset": "rt-detr-r50"},
        "precision": "fp16",
        "optimizer": "adamw",
        "micro_batch_size": 8,
        "image": {"epochs": 1, "dataset_images": 118_287, "eval_every_epochs": 1, "eval_images": 5_000},
    }
    hours = _size(tmp_path, spec, "rtx-4090")["throughput"]["training_hours"]
    assert hours == pytest.approx(0.282, abs=0.002)
    # a lower bound: the product's R50 has at least the work of either L model
    assert hours >= 1.0 * (1.0 - SPEED), f"{hours:.3f} h an epoch against about 1 h"


# ---------------------------------------------------------------- the API a practitioner sees (det47)

RTDETR_API = {
    "task": "full_finetune",
    "model": {"preset": "rt-detr-r50"},
    "precision": "fp32",
    "optimizer": "adamw",
    "micro_batch_size": 4,
    "parallelism": {"gpus": 4},
    "image": {"epochs": 72, "dataset_images": 118_287, "eval_every_epochs": 1, "eval_images": 5_000},
}


def _post(client_as, spec: dict, gpu: str) -> dict:
    response = client_as("engineer").post(f"/api/size/?gpu={gpu}", spec, content_type="application/json")
    assert response.status_code == 200, response.content[:500]
    return response.json()


@pytest.mark.django_db
def test_the_api_sizes_rt_detr_training_and_hides_the_speed_caveat_in_memory_notes(
    bundled_catalog, client_as
):
    """POST /api/size/ on RT-DETR issue #7's run (4 x RTX 3090, 72 epochs, eval every epoch): 200, 12.33 h with
    the evaluations. det47's 'several times too fast' sentence reaches the user only as
    workload.memory_assumptions[0] (a memory note); the candidate's warnings carry only the consumer-card line,
    and the response's accuracy block tells the same user 'within 25% on 11 of 11 published runs of object
    detectors' for throughput. Pinned as it is; fix list item 1 (aud47i) asks for a throughput warning."""
    body = _post(client_as, RTDETR_API, "rtx-3090")
    (row,) = [c for c in body["candidates"] if c["gpus"] == 4]
    assert row["throughput"]["training_hours"] == pytest.approx(12.33, abs=0.01)
    assert "too fast" in body["workload"]["memory_assumptions"][0]
    # fix47i (aud47i item 1): this line asserted that no candidate warning named RT-DETR; the warning is now
    # there (test_the_rt_detr_speed_caveat_is_a_candidate_warning), so it asserts the warning's content
    (caveat,) = [w for w in row["warnings"] if "RT-DETR" in w]
    assert "YOLO-fitted" in caveat and "3.5-4x" in caveat and "#7" in caveat and "#100" in caveat
    # At merge (stop 47) the outside ledger began counting the image modules, so this class now holds the outside
    # detector training cases (26 of 28 within 25% at the stop-47 ledger): the line no longer tells this user that
    # every run landed (it asserted within == cases, the old 'no published runs' / all-within reading)
    assert 0 < body["accuracy"]["throughput"]["within_target"] < body["accuracy"]["throughput"]["cases"]
    # ... and the accuracy line, its figures unchanged, says it does not cover RT-DETR training
    assert body["accuracy"]["throughput"]["covers_workload"] is False
    assert "RT-DETR" in body["accuracy"]["throughput"]["note"]


# Was a strict xfail: the RT-DETR rate's caveat ('several times too fast'; [DEIM-100] and RT-DETR #7 -72 to -75%)
# reached the user as workload.memory_assumptions[0] only, no candidate warning. Now the candidate's warnings (size
# report and ranking rows) carry image_model.RTDETR_SPEED_WARNING because training_speed_warnings adds it for any
# RT-DETR training spec (fix47i, aud47i item 1).
@pytest.mark.django_db
def test_the_rt_detr_speed_caveat_is_a_candidate_warning(bundled_catalog, client_as):
    body = _post(client_as, RTDETR_API, "rtx-3090")
    (row,) = [c for c in body["candidates"] if c["gpus"] == 4]
    assert any("RT-DETR" in w for w in row["warnings"])


# Was a strict xfail: the size report's throughput had no evaluation_hours (only the ranking rows did). Now
# 0.0257 h (455 x 0.2065 s) because report._throughput_dicts passes throughput.py's evaluation_hours column
# through for image training (fix47i, aud47i item 3).
@pytest.mark.django_db
def test_the_size_report_shows_the_evaluation_hours(bundled_catalog, client_as):
    body = _post(client_as, ASL_EVAL, "t4")
    (row,) = body["candidates"]
    assert row["throughput"].get("evaluation_hours", 0) > 0


@pytest.mark.django_db
def test_a_yolo_spec_without_evaluation_fields_prices_no_validation(bundled_catalog, client_as):
    """Ultralytics validates every epoch by default (val=True; the [COLAB-Y11N] log shows a bar each epoch), but a
    YOLO spec that does not state image.eval_* gets none and no warning says so. The detector training rate was
    fitted on the YOLOv5 README's COCO days, which hold YOLOv5's per-epoch validation (train.py validates unless
    --noval), so part of it is already in the rate: stating the fields on a COCO run counts it twice, leaving
    them out under-counts a small-data run (141 val to 1,008 train images here). Pinned; fix list item 2."""
    plain = _post(client_as, YOLO11N_ASL, "t4")
    evaluated = _post(client_as, ASL_EVAL, "t4")
    (row,) = plain["candidates"]
    (row_eval,) = evaluated["candidates"]
    assert row_eval["throughput"]["training_hours"] > row["throughput"]["training_hours"]
    # fix47i (aud47i item 2): this line asserted that no warning said so; now the spec without image.eval_* gets
    # image_model.UNPRICED_VALIDATION_WARNING and the spec that states them does not
    assert any("validation not priced" in w for w in row["warnings"])
    assert not any("validation not priced" in w for w in row_eval["warnings"])
    assert row["throughput"]["evaluation_hours"] == 0.0


# ---------------------------------------------------------------- img47's (b), checked on the whole table

FP16_MDX = {  # card: (base it/s, xformers it/s, datasheet GB/s)
    "t4": (3.5, 5.5, 300.0),  # the catalog's 300 (T4 datasheet)
    "rtx-3060": (4.6, 7.8, 360.0),
    "a10g": (8.88, 15.6, 600.0),
    "rtx-a6000": (11.7, 21.09, 768.0),
    "titan-rtx": (12.51, 18.22, 672.0),
    "a100-sxm4-40gb": (18.6, 29.0, 1555.0),
    "a100-sxm4-80gb": (18.7, 29.5, 2039.0),
}
SCORE_BYTES = 2.929e9  # img47's one pass over a CFG step's eager scores (its test pins the same value)


def _passes(card: str, fraction: float = 0.70) -> float:
    base, fast, gbps = FP16_MDX[card]
    return (1.0 / base - 1.0 / fast) * gbps * 1e9 * fraction / SCORE_BYTES


def test_the_2022_tables_turing_pair_does_not_show_fixed_bytes():
    """img47's (b) for the T4: 'a fixed number of bytes a step' across T4 / A10G / A6000 / A100-40GB (7.0-7.4
    passes). The same table's TITAN RTX, the T4's architecture (Turing, sm_75, the same 2022 code and kernels) at
    2.2x its bandwidth, reads 4.0 passes, and even at 100% of its datasheet 5.75, under the 6 DRAM passes img47
    counts from the code as the floor; the 3060 (Ampere) reads 7.7. Its card is not in the catalog, but the pass
    arithmetic needs only a datasheet bandwidth, so the row is evidence the label left out. Seven rows: 4.0 to 9.5
    passes."""
    passes = {card: round(_passes(card), 1) for card in FP16_MDX}
    assert passes == {
        "t4": 7.4,
        "rtx-3060": 7.7,
        "a10g": 7.0,
        "rtx-a6000": 7.0,
        "titan-rtx": 4.0,
        "a100-sxm4-40gb": 7.2,
        "a100-sxm4-80gb": 9.5,
    }
    assert _passes("titan-rtx", fraction=1.0) < 6.0
    assert _passes("t4") / _passes("titan-rtx") > 1.8  # one architecture, one code path


def test_the_ga102_pair_isolates_bandwidth():
    """img47's (b) for the RTX A6000 holds on a cleaner footing than the label gives: the A10G and the A6000 are
    both GA102, the same code and kernels; their base-minus-xformers steps (48.5 / 38.1 ms) differ by 1.273x,
    their bandwidths by 1.280x, their SM x boost clock by 1.105x and their dense fp16 peaks by 2.21x: a two-row
    pair of the same table differing in the factor, as explain-rules (b) asks."""
    gap = {card: 1.0 / FP16_MDX[card][0] - 1.0 / FP16_MDX[card][1] for card in ("a10g", "rtx-a6000")}
    ratio = gap["a10g"] / gap["rtx-a6000"]
    assert ratio == pytest.approx(1.273, abs=0.002)
    assert ratio == pytest.approx(768.0 / 600.0, rel=0.01)
    assert abs(ratio - (84 * 1.80) / (80 * 1.71)) > 0.15
    assert abs(ratio - 154.8 / 70.0) > 0.9
