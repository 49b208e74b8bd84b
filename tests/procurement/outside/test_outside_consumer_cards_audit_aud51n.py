"""Outside audit of cards2 (aud51n, an ML engineer who buys GeForce cards): does a 4060 Ti 16GB really train
ViT-B/16 at ~253 images/s, and is the restated first-row cap ("no faster than the measured RTX 3090 per
catalogued TFLOPS") a sound bound for Ada cards?

Sources (read by aud51n; numbers copied from the files):
  [TIMM-TRAIN] huggingface/pytorch-image-models results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv
      (@aa4b5850, unchanged since bd6d377c): "vit_base_patch16_224,390.86,490.391,192,224,86.57" (AMP, eager
      attention: PyTorch 1.12, batch 192, synthetic input on the GPU).
  [TIMM-INF-3090] results/benchmark-infer-amp-nchw-pt240-cu124-rtx3090.csv (@aa4b5850):
      "vit_base_patch16_224,224,1570.66,651.945,1024" (PyTorch 2.4, AMP, batch 1024).
  [TIMM-INF-4090] results/benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv (@aa4b5850):
      "vit_base_patch16_224,224,2787.15,367.372,1024" (same stack and batch as the 3090 row).
  [LAMBDA] lambdal/deeplearning-benchmark pytorch/pytorch-train-throughput-fp16.csv (@0551cb70), AMP training,
      one GPU: "RTX 3090,1.0,350.0,2750.0,236.0,172.0,52.0,86080.0,25118176.0,905.0,..." and
      "RTX 4090,1.0,450.0,2125.0,379.0,297.0,93.0,159511.0,32192491.0,1301.0,..." (columns ssd, bert_base_squad,
      bert_large_squad, gnmt, ncf, resnet50: ResNet-50 905 and 1,301 images/s; BERT-base 172 / 297; BERT-large
      52 / 93).
  No published ViT / ResNet / YOLO training rate on a 4060 Ti, 4070 Ti SUPER, 4080 or 3060 was found in the stores
  (timm publishes 3090 / 4090 / 5090 / Pro 6000 CSVs only; Lambda's CSV has no 40-series card under the 4090;
  Tom's Hardware and Puget charts are images; a d2l log with "RTX 4060 Ti (8G)" rows is fp32 AlexNet / VGG-11 /
  NiN on Fashion-MNIST, networks the product has no preset for).

Model assumption (stated, not published): Ada GeForce cards share one rate per catalogued TFLOPS relative to
Ampere GeForce, the one published Ada/Ampere pair on the same network, stack and batch: ViT-B/16 AMP inference,
(2787.15 / 165.2) / (1570.66 / 71) = 0.763. The Ada-anchored training rate of an Ada card is then the measured
3090's 390.86 / 71 images/s a TFLOPS x 0.763 x its TFLOPS (eager attention, as [TIMM-TRAIN] ran).
"""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug
from procurement.sizing.compute_peak import is_geforce
from tests.procurement.outside.test_outside_image_workloads_3 import _recommend, _size, _vit_train

SPEED = 0.25
IMAGES_300_EPOCHS = 300 * 1_281_167  # DeiT: 300 epochs of ImageNet-1k train

TIMM_3090_VIT_B_TRAIN = 390.86  # [TIMM-TRAIN], eager attention, batch 192
TIMM_3090_VIT_B_INFER = 1570.66  # [TIMM-INF-3090]
TIMM_4090_VIT_B_INFER = 2787.15  # [TIMM-INF-4090]
LAMBDA_3090_RESNET50 = 905.0  # [LAMBDA]
LAMBDA_4090_RESNET50 = 1301.0  # [LAMBDA]


def _tflops(slug: str) -> float:
    return gpu_by_slug(slug).dense_tflops("fp16")


def _ada_per_ampere_tflops() -> float:
    """Ada's images/s per catalogued TFLOPS over Ampere GeForce's, ViT-B AMP inference, same stack: 0.763."""
    return (TIMM_4090_VIT_B_INFER / _tflops("rtx-4090")) / (TIMM_3090_VIT_B_INFER / _tflops("rtx-3090"))


def _cards2_cap_rate(slug: str, rate_3090: float) -> float:
    """The cards2 bound: the measured 3090's rate per catalogued TFLOPS times the card's TFLOPS."""
    return rate_3090 / _tflops("rtx-3090") * _tflops(slug)


def _err(estimate: float, published: float) -> float:
    return estimate / published - 1.0


def _timm_train_spec() -> dict:
    """[TIMM-TRAIN] as it ran: batch 192, AMP, eager attention, input already on the GPU."""
    spec = _vit_train("vit-b-16", 192) | {"flash_attention": False}
    spec["image"]["data_pipeline"] = "predecoded"
    return spec


# ---------------------------------------------------------------- the restated cap on published Ada rows


def test_ada_per_ampere_rate_per_tflops_is_0_763():
    """Hand: (2787.15 / 165.2) / (1570.66 / 71) = 16.87 / 22.12 = 0.763."""
    assert _ada_per_ampere_tflops() == pytest.approx(0.7627, abs=0.0005)


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED: the cards2 first-row cap (the 3090's rate per catalogued TFLOPS) put on the one Ada card "
    "with a published training rate, [LAMBDA] ResNet-50 AMP: 905 / 71 x 165.2 = 2,105.7 images/s on the 4090 "
    "against 1,301 measured (+61.9%). The rule scales Ampere's rate by the catalogued peak, which over-credits Ada "
    "(BERT-base 172 -> 297 is 1.73x, BERT-large 1.79x, ResNet-50 1.44x, against 2.33x in TFLOPS): as a bound on an "
    "Ada first row it is loose by 1.3-1.6x before the test's 25% slack.",
)
def test_cards2_cap_rule_on_lambda_resnet50_4090():
    predicted = _cards2_cap_rate("rtx-4090", LAMBDA_3090_RESNET50)
    assert predicted == pytest.approx(2105.7, abs=0.5)
    assert abs(_err(predicted, LAMBDA_4090_RESNET50)) <= SPEED


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED: the cards2 cap rule on the ViT-B AMP inference pair of one stack (timm pt240): "
    "1570.66 / 71 x 165.2 = 3,654.6 images/s on the 4090 against 2,787.15 measured (+31.1%). Same finding as the "
    "Lambda row, on the network the cap is used for.",
)
def test_cards2_cap_rule_on_timm_vit_b_inference_4090():
    predicted = _cards2_cap_rate("rtx-4090", TIMM_3090_VIT_B_INFER)
    assert predicted == pytest.approx(3654.6, abs=0.5)
    assert abs(_err(predicted, TIMM_4090_VIT_B_INFER)) <= SPEED


# ---------------------------------------------------------------- the product's GeForce ViT training rates


@pytest.mark.django_db
def test_product_4090_over_3090_vit_b_training_ratio_follows_the_published_ada_ratio(
    bundled_catalog, tmp_path
):
    """The product does not use the cap's per-TFLOPS rule: its [TIMM-TRAIN] step on the 4090 over the 3090 is
    724.0 / 418.9 = 1.728, against the published Ada/Ampere ViT-B ratio 2787.15 / 1570.66 = 1.775 (-2.6%) and
    the cap rule's 2.327 (-25.7%). (3090 alone: 418.9 vs 390.86, +7.2%.)"""
    rate = {
        card: _size(tmp_path, _timm_train_spec(), card)["throughput"]["training_images_per_second"]
        for card in ("rtx-3090", "rtx-4090")
    }
    ratio = rate["rtx-4090"] / rate["rtx-3090"]
    assert abs(_err(ratio, TIMM_4090_VIT_B_INFER / TIMM_3090_VIT_B_INFER)) <= SPEED
    assert abs(_err(rate["rtx-3090"], TIMM_3090_VIT_B_TRAIN)) <= SPEED


# product (eager, batch 192, predecoded) vs the Ada-anchored (or, for the Ampere 3060, the 3090-anchored) rate:
#   4060 Ti 200.1 vs 185.2 (+8.1%); 4070 Ti SUPER 427.8 vs 370.3 (+15.5%); 4080 465.6 vs 409.4 (+13.7%);
#   3060 153.7 vs 140.4 (+9.5%, control: Ampere, where the cards2 rule is the same-architecture scaling).
@pytest.mark.django_db
@pytest.mark.parametrize("card", ["rtx-4060-ti-16gb", "rtx-4070-ti-super", "rtx-4080", "rtx-3060"])
def test_vit_b_eager_training_on_the_stop_51_cards_against_the_anchored_rate(bundled_catalog, tmp_path, card):
    anchored = TIMM_3090_VIT_B_TRAIN / _tflops("rtx-3090") * _tflops(card)
    if card != "rtx-3060":  # Ada: AD106 / AD103
        anchored *= _ada_per_ampere_tflops()
    rate = _size(tmp_path, _timm_train_spec(), card)["throughput"]["training_images_per_second"]
    assert abs(_err(rate, anchored)) <= SPEED, (card, rate, anchored)


# ---------------------------------------------------------------- the first row cards2 moved


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED: DeiT-B 300 epochs, batch 128, one GPU: the first row is vast 1x-RTX_4060_Ti at 423.7 "
    "GPU-hours (252 images/s, the loader; GPU side 253 with SDPA). Under the Ada-anchored bound (185.2 images/s, "
    "576.6 GPU-hours) it reads -26.5%, just past the bar; under the cards2 bound (242.8, 439.7 h) -3.6%. Not like "
    "for like on attention: the anchor ran eager (PyTorch 1.12) and the row is SDPA; the product gives the 4060 Ti "
    "+26.5% for SDPA (200.1 -> 253.2) and the 3090 +15.5% (418.9 -> 484.0). No published SDPA-vs-eager ViT-B "
    "training pair on a GeForce card was found, so the row's margin over the L4 (it leads only above 227 "
    "images/s) is unverified: a 4060 Ti at the anchored 185 images/s puts the L4 first.",
)
def test_vit_b16_imagenet_first_row_against_an_ada_anchored_bound(bundled_catalog, tmp_path):
    spec = _vit_train("vit-b-16", 128, gpus=1, epochs=300, images=1_281_167)
    (first,) = _recommend(tmp_path, spec, top=1)
    gpu = gpu_by_slug(first["gpu"])
    assert is_geforce(gpu)
    rate = TIMM_3090_VIT_B_TRAIN / _tflops("rtx-3090") * _tflops(first["gpu"])
    if first["gpu"] not in ("rtx-3060", "rtx-3090"):
        rate *= _ada_per_ampere_tflops()
    hand_gpu_hours = IMAGES_300_EPOCHS / rate / 3600
    gpu_hours = float(first["hours"]) * first["gpus"]
    assert gpu_hours >= hand_gpu_hours * (1 - SPEED), (first["instance_type"], gpu_hours, hand_gpu_hours)
