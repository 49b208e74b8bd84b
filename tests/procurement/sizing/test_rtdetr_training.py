"""det47 (stop 47, issue 29, aud29's fix list item 3): RT-DETR trains. Before, `task: full_finetune` on
rt-detr-r50 was refused ('sized for inference only'). Its training memory keeps the tensors counted from its
shapes (procurement/sizing/detr_shapes.py rtdetr_training_saved: lyuwenyu/RT-DETR rtdetr_pytorch
configs/rtdetr/include/rtdetr_r50vd.yml @68a7feee, PResNet-50-vd with freeze_at 0 and frozen norms, HybridEncoder
hidden 256 with one AIFI layer and four CSPRepLayers, 6 decoder layers over 300 queries and up to 200 denoising
ones) at the largest multi-scale side, 800 px (its `multi_scale` list, 480-800); its parameters and FLOPs stay
the paper's table (arXiv:2304.08069 Table 2: 42M, 136 GFLOPs at 640), so inference does not move.

No published training figure: the README and the paper give accuracy, FPS and the schedule (72 epochs, 'batch
size 4' a GPU in configs/rtdetr/include/dataloader.yml @5dc64138) but no hours and no memory, and the
maintainers answer time questions with advice only (lyuwenyu/RT-DETR issue #278). What users report is below,
as a strict xfail."""

from __future__ import annotations

import pytest

from procurement.sizing import image_model
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.report import size_workload
from procurement.sizing.spec import parse_workload_spec

COCO_TRAIN = 118_287


def _spec(batch: int = 4, gpus: int = 1, precision: str = "fp32", **image) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "rt-detr-r50"},
        "precision": precision,
        "optimizer": "adamw",  # include/optimizer.yml: AdamW
        "micro_batch_size": batch,
        "parallelism": {"gpus": gpus},
        "image": {"epochs": 72, "dataset_images": COCO_TRAIN, **image},  # rtdetr_r50vd_6x: 72 epochs
    }


def _report(spec: dict, gpu: str) -> dict:
    return size_workload(parse_workload_spec(spec), [gpu_by_slug(gpu)])


def test_rtdetr_r50_trains_with_kept_tensors_per_image():
    one, four = (_report(_spec(batch), "a100-sxm4-80gb") for batch in (1, 4))
    assert one["memory"]["activations_gib"] > 0
    # the kept tensors are per image: 4 images keep 4x what one does
    assert four["memory"]["activations_gib"] == pytest.approx(4 * one["memory"]["activations_gib"], rel=0.01)
    assert four["throughput"]["training_images_per_second"] > 0
    notes = image_model.memory_notes(parse_workload_spec(_spec()))
    assert len(notes) == 1 and "RT-DETR training" in notes[0] and "issues #7, #410" in notes[0]
    inference = _spec() | {"task": "inference", "image": {}}  # epochs are a training run's (refused here)
    assert image_model.memory_notes(parse_workload_spec(inference)) == []


def test_the_kept_tensors_are_counted_at_the_largest_multi_scale_side():
    spec = parse_workload_spec(_spec())
    cost = image_model.training_memory_cost(spec)
    at_800 = image_model.rtdetr_training_saved(
        image_model.image_preset("rt-detr-r50")["detector"]["training"], 800
    )
    assert cost.saved == pytest.approx(at_800.saved)
    # FLOPs stay the paper's 136 GFLOPs at 640 (the multi-scale list's mean side is 640)
    assert 2 * cost.macs / 1e9 == pytest.approx(136)
    assert image_model.network_params("rt-detr-r50") == 42e6


def test_inference_is_unchanged_by_the_training_walk():
    """The held-out TensorRT row (docs/validation.md rt-detr-r50-t4-tensorrt: 108 FPS published, 7.56 ms the
    product, -18.3%) reads the table, not the walk."""
    from procurement.sizing.image_validation import image_cases

    (case,) = [case for case in image_cases() if case.key == "rt-detr-r50-t4-tensorrt"]
    assert case.estimate == pytest.approx(7.56, abs=0.01)


def test_a_detector_lora_is_still_refused():
    from procurement.sizing.spec import WorkloadSpecError

    with pytest.raises(WorkloadSpecError):
        parse_workload_spec(_spec() | {"task": "lora"})


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

RTDETR_3090_REASON = (
    "UNEXPLAINED: lyuwenyu/RT-DETR issue #7 (49xiyu, 2023-07-13, a user reproducing the paper's run): '4卡RTX "
    "3090光是训练就要至少两天' (on 4 RTX 3090s the training alone takes at least two days) for the default "
    "72-epoch COCO schedule; the model is not named. Product, rt-detr-r50 at 4 images a GPU, fp32 (the slower of "
    "its readings; fp16 9.49 h): 12.16 h, a quarter of the bound. Any RT-DETR variant reads faster in the "
    "product than this (R18 and R34 have less work, R101, 259 GFLOPs in the paper's Table 2, about 259 / 136 x 12.16 = 23 h at the same rate), so the miss does not hang "
    "on the unnamed model. Candidates, none sized: the step runs at detector_training_efficiency, fitted on "
    "YOLOv5's convolutions (assumptions.py), while RT-DETR adds multi-scale deformable attention (grid_sample "
    "forward and an atomic-add backward), 200 denoising queries and the Hungarian matcher on the CPU each step, "
    "none priced; the user's host and loader are unstated. Other users' reports point the same way, too loosely "
    "for a case: issue #410 (fym202: 2 x 2080 Ti, R50 on COCO 'close to a week'; Yikkkkk: one 4090, 28 epochs in "
    "about four days, product 20.96 h for 72). detr48 counted the step from the code (rtdetr_pytorch @a4a0c6a3 "
    "rtdetr_criterion.py, matcher.py, box_ops.py, denoising.py, det_engine.py; optim/ema.py @3330eca6): 13 loss "
    "sets (the last layer, 6 aux incl. the encoder's top-k, 6 denoising), 7 Hungarian matches, ~3,360 loss kernels "
    "and ~90 syncs a step, plus ModelEMA's per-tensor loop (~2,080 ops); the deformable attention (3 grid_samples "
    "a layer) and the <= 200 denoising queries are ~1-2% of the work. Priced serially: 17.8 h with every op at "
    "optimizer_op_host_s (7 us), 29.9 h with the loss at eager_kernel_host_s (31 us) and the EMA at 7 us, 37.3 h "
    "(inside) with all at 31 us: the per-op constant decides, so it is not landed (NOTES, stop 48). "
    + DETR49_PAIR
    + " det51 (stop 51), the EMA read at the run's code: the default config used it (configs/rtdetr/include/"
    "optimizer.yml @a4a0c6a3 `use_ema: True`, included by every COCO config; src/solver/solver.py @a4a0c6a3 "
    "setup moves it to each rank's GPU), so its fp32 copy is now counted in memory (+168 MB a GPU, "
    "image_model.trainer_keeps_fp32_ema), which moves no hours. Its loop runs every iteration "
    "(src/solver/det_engine.py @a4a0c6a3: `if ema is not None: ema.update(model)` after each optimizer step; "
    "the YOLOv5 steps behind detector_training_efficiency run theirs once an accumulation of 64 images): "
    "~2,080 ops x 7 us = 14.6 ms a step x 72 x 7,393 steps = 2.15 h, 6.0% of the 35.8 h gap (9.5 h, 26.6%, "
    "at 31 us an op): a part, not its size; not landed for detr48's reason (the per-op constant decides). "
    "det51, the run's code re-dated: at the issue's date the repository's only RT-DETR trainer was Paddle's "
    "(lyuwenyu/RT-DETR @60b6e83, 2023-07-13: rtdetr_pytorch/readme.md '# Coming soon' and a backbone; its "
    "training code landed in a4a0c6a, 2023-08-21), so the user ran rtdetr_paddle (ppdet/engine/trainer.py: "
    "ModelEMA on every rank, updated every iteration, 126-139 / 392-393; _base_/rtdetr_r50vd.yml norm_type "
    "sync_bn, converted at 273-276 when nranks > 1; rtdetr_r50vd_6x_coco.yml find_unused_parameters: True; "
    "fp32 unless --amp). detr48's PyTorch counts above are of code the user could not have run, and detr49's "
    "first objection (the pair is Paddle, not the case's code) falls for this case: its PaddleDetection "
    "RT-DETR rows are the run's code family. Sized with the pair's own H and c at 4 images a card (0.115 + 4 x "
    "0.0367 = 0.262 s a step) over 72 x 7,392 steps (drop_last): 38.7 h (-19.4%, inside), 74% of the 35.8 h "
    "gap, short of 80%; the pair's cards are unprinted (the same user's mmdet runs: 4 x A40, a GA102 like the "
    "3090) and its c stays 1.9x the product's per image, so the rate is borrowed, not a mechanism located. "
    "Lead: the Paddle step's sync_bn collectives over the encoder's BatchNorms on four PCIe 3090s and the "
    "per-tensor EMA, counted from rtdetr_paddle @60b6e83."
)


@pytest.mark.xfail(strict=True, reason=RTDETR_3090_REASON)
def test_rtdetr_72_epochs_on_four_rtx_3090s_takes_at_least_two_days():
    hours = _report(_spec(gpus=4), "rtx-3090")["throughput"]["training_hours"]
    assert hours >= 48 * 0.75, f"{hours:.2f} h against at least 48 h"
