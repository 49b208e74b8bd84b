"""Outside cases for the ResNet-50 (v1.5) preset (issue 29 item 1; helper resnet): the shapes against torchvision,
training and inference images/s against published rates no test used as a ResNet-50 preset check, and a
`recommend` of a 90-epoch ImageNet run with its first row's cost by hand.

Sources (numbers copied from the files):
  [TV] pytorch/vision torchvision/models/resnet.py ResNet50_Weights (IMAGENET1K_V1 and V2 meta): "num_params":
      25557032, "_ops": 4.089 (the docs table prints it as "GFLOPS 4.09"); docs page
      pytorch.org/vision/stable/models/generated/torchvision.models.resnet50.html: the stride on the 3x3 conv,
      "known as ResNet V1.5".
  [DLE] NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md (@291f0d02),
      pytorch-21.03 NGC container, 1 GPU: training images/s, DGX A100 80GB TF32 938 / mixed precision 2470;
      DGX-1 16GB V100 FP32 367 / mixed 1200; DGX-1 32GB V100 FP32 356 / mixed 1156. Inference (V100 16GB and T4),
      "Throughput Avg": V100 mixed batch 1 78, batch 64 2984, batch 256 3382; V100 FP32 batch 256 1261;
      T4 mixed batch 64 1165, batch 256 1198; T4 FP32 batch 256 415. Batches: ConvNets/configs.yml (@097c7ff9)
      resnet50 AMP batch_size 256 with memory_format nhwc on DGX1V / DGXA100 / T4; FP32 112 (DGX1V), TF32 256.
  [LAMBDA] lambdal/deeplearning-benchmark pytorch/pytorch-train-throughput-fp16.csv (@0551cb70), resnet50 column,
      1 GPU, AMP: LambdaCloud V100 16GB 833, RTX 3090 905, LambdaCloud A100 40GB PCIe 1396, A100 80GB PCIe 1527,
      A100 80GB SXM4 1582, RTX 6000 Ada 1146, RTX A6000 916, RTX 4090 1301, H100 80GB PCIe Gen5 1866, H100 80GB
      SXM5 2616. Batches: pytorch/pytorch-train-bs-fp16.csv (@08d77c41) resnet50 256 / 448 / 720 / 1280 / 1280 /
      928 / 928 / 448 / 1280 / 1280 (H100 SXM5's row is not in that file: the 80GB config's 1280,
      scripts/config_v1/config_pytorch_80GB.sh @357c49a7). The run: scripts/benchmark_pytorch.sh (@0a684b62) calls
      DLE's ConvNets main.py directly with `--arch resnet50 --amp --static-loss-scale 256 --batch-size N
      --training-only --data-backend synthetic` (config_pytorch_80GB.sh): no `--memory-format nhwc` (main.py's
      default is contiguous NCHW), where DLE's own table runs launch.py with configs.yml's nhwc.
  (Lambda's 3090 / 4090 rows sit in test_outside_consumer_cards_audit_aud51n.py as a bound on the cards2 cap,
  not as a ResNet-50 preset case: the product had no ResNet-50 preset then.)
  MLPerf Training ResNet time-to-train is not used: its closed-division runs are MXNet / DALI / fused BN-ReLU
  kernels on 8-GPU nodes with LARS to a 75.9% target, not like for like with any spec field.

Model (stated): the preset's efficiency is the other image presets' (image_model.kernel_efficiency at
image_peak_efficiency, fitted on UNets whose FLOPs are mostly convolutions; rows = batch x MACs per weight = batch x
160) plus the eager step's activation traffic (2 x saved elements x 3 passes at the achieved bandwidth); no
constant was fitted on any row below. Synthetic / GPU-resident input is stated as image.data_pipeline
predecoded (Lambda: --data-backend synthetic; DLE's table: the DGX host's loader is not what is checked here).
Memory: no source above publishes memory, so memory is checked by hand only (15% bar not applicable).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from procurement.sizing.resnet_shapes import resnet_cost
from tests.procurement.outside.test_outside_image_workloads_3 import _recommend, _size

SPEED = 0.25
IMAGENET_TRAIN_IMAGES = 1_281_167
RESNET50 = {"stages": [3, 4, 6, 3], "widths": [64, 128, 256, 512], "expansion": 4, "classes": 1000}


def _train(batch: int, precision: str = "fp16") -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "resnet-50"},
        "precision": precision,
        "micro_batch_size": batch,
        "parallelism": {"gpus": 1},
        "image": {"epochs": 1, "dataset_images": 100_000, "data_pipeline": "predecoded"},
    }


def _infer(batch: int, precision: str = "fp16") -> dict:
    return {
        "task": "inference",
        "model": {"preset": "resnet-50"},
        "precision": precision,
        "micro_batch_size": batch,
    }


def _err(estimate: float, published: float) -> float:
    return estimate / published - 1.0


def _within(estimate: float, published: float, target: float = SPEED) -> None:
    error = _err(estimate, published)
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _train_rate(tmp_path, gpu: str, batch: int, precision: str = "fp16") -> float:
    return _size(tmp_path, _train(batch, precision), gpu)["throughput"]["training_images_per_second"]


def _infer_rate(tmp_path, gpu: str, batch: int, precision: str = "fp16") -> float:
    return _size(tmp_path, _infer(batch, precision), gpu)["throughput"]["images_per_second_per_gpu"]


# ---------------------------------------------------------------- shapes against [TV]


def test_resnet50_walk_matches_torchvision_params_and_ops():
    """[TV] 25,557,032 parameters exactly; 4,089,184,256 multiply-adds at 224 px, i.e. torchvision's "_ops 4.089"
    counts MACs (its docs label them GFLOPS): a forward is 2 x 4.089 = 8.18 GFLOP, a training step 3 x that
    (24.5 GFLOP an image). Hand, the fc: 2,048 x 1,000 + 1,000 = 2,049,000 parameters, 2,048,000 MACs."""
    cost = resnet_cost(RESNET50, 224)
    assert cost.params == 25_557_032
    assert cost.macs == 4_089_184_256
    assert round(cost.macs / 1e9, 3) == 4.089
    assert cost.conv_macs == cost.macs - 2048 * 1000


def test_resnet50_preset_states_what_the_walk_counts():
    """The preset's published figures (image_architectures.json) are the walk's, and the engine uses the walk."""
    from procurement.sizing.image_model import network_cost, network_params
    from procurement.sizing.image_presets import image_preset

    convnet = image_preset("resnet-50")["convnet"]
    cost = network_cost("resnet-50", 224)
    assert convnet["params_published"] == cost.params == network_params("resnet-50")
    assert round(cost.macs / 1e9, 3) == convnet["gmacs_published"]
    assert image_preset("resnet50")["slug"] == "resnet-50"


def test_resnet50_saved_activations_by_hand():
    """Saved elements per image, walked by hand (module docstring's rule): stem 3 x 224^2 + 2 x 64 x 112^2 +
    64 x 56^2 x (1 + 4 index units) = 150,528 + 1,605,632 + 1,003,520; per stage (positions 3,136 / 784 / 196 /
    49; the stride-2 block's conv1 runs at the previous side): 2 x w x p_in + 2 x w x p + 4w x p x (2 + downsample).
    Sum 21,878,784 elements = 43.8 MB an image in fp16: at batch 256, 10.43 GiB of activations."""
    positions = {0: (3136, 3136), 1: (784, 3136), 2: (196, 784), 3: (49, 196)}
    total = 3 * 224 * 224 + 2 * 64 * 112 * 112 + 64 * 56 * 56 * 5
    for stage, (blocks, width) in enumerate(zip(RESNET50["stages"], RESNET50["widths"], strict=True)):
        p, p_prev = positions[stage]
        for block in range(blocks):
            p_in = p_prev if block == 0 else p
            total += 2 * width * p_in + 2 * width * p + 4 * width * p * (3 if block == 0 else 2)
    total += 2048
    assert resnet_cost(RESNET50, 224).saved == total == 21_878_784
    assert total * 2 * 256 / 2**30 == pytest.approx(10.43, abs=0.01)


# ---------------------------------------------------------------- AMP training, within the 25% bar


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "batch", "published"),
    [
        ("a100-sxm4-80gb", 256, 2470.0),  # [DLE] DGX A100, mixed precision, nhwc
        ("v100-sxm2-16gb", 256, 1200.0),  # [DLE] DGX-1 16GB
        ("v100-sxm2-32gb", 256, 1156.0),  # [DLE] DGX-1 32GB
        ("rtx-3090", 448, 905.0),  # [LAMBDA]
        ("rtx-4090", 448, 1301.0),  # [LAMBDA]
    ],
)
def test_resnet50_amp_training_rate(bundled_catalog, tmp_path, gpu, batch, published):
    """Product before this preset: no ResNet-50 at all. Now (resnet): A100 3,001 (+21.5%), V100 16GB 1,272 (+6.0%),
    V100 32GB 1,272 (+10.0%), RTX 3090 953 (+5.3%), RTX 4090 1,535 (+18.0%). Hand, the A100: 3 x 8.178 GFLOP /
    (312 TFLOPS x 0.534 x 40,960 / (40,960 + 549)) = 0.149 ms; traffic 2 x 21.88M x 2 B x 3 = 262.5 MB / (0.7 x
    2,039 GB/s) = 0.184 ms; 1 / 0.333 ms = 3,002 images/s."""
    _within(_train_rate(tmp_path, gpu, batch), published)


@pytest.mark.django_db
def test_resnet50_a100_amp_by_hand(bundled_catalog, tmp_path):
    """The A100 row's arithmetic (above) reproduced from the engine's inputs, so the pass is not luck."""
    compute = 3 * 2 * 4_089_184_256 / (312e12 * 0.534 * 40960 / (40960 + 549.0))
    traffic = 2 * 21_878_784 * 2 * 3 / (0.7 * 2039e9)
    assert _train_rate(tmp_path, "a100-sxm4-80gb", 256) == pytest.approx(1 / (compute + traffic), rel=0.01)


# ---------------------------------------------------------------- Lambda's datacenter rows (NCHW), misses

LAMBDA_NCHW_REASON = (
    "UNEXPLAINED: Lambda's datacenter ResNet-50 AMP rows run DLE main.py without --memory-format nhwc "
    "(lambdal/deeplearning-benchmark scripts/config_v1/config_pytorch_80GB.sh @357c49a7; DLE's own table uses "
    "configs.yml's nhwc), located but not sized: the same-card V100 pair (DLE nhwc 1,200 vs Lambda 833, 0.694) "
    "carried to the A100 SXM4 row covers 64% of its gap (3,016 x 0.694 = 2,093 vs 1,582), under the 80% a label "
    "needs; the NCHW<->NHWC transposes cuDNN adds are closed source. GeForce rows of the same CSV pass."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "batch", "published"),
    [
        pytest.param("v100-sxm2-16gb", 256, 833.0, id="lambda-v100-+52.7%"),
        pytest.param("a100-pcie-40gb", 720, 1396.0, id="lambda-a100-40-pcie-+84.1%"),
        pytest.param("a100-pcie-80gb", 1280, 1527.0, id="lambda-a100-80-pcie-+91.8%"),
        pytest.param("a100-sxm4-80gb", 1280, 1582.0, id="lambda-a100-sxm4-+90.6%"),
        pytest.param("rtx-a6000", 928, 916.0, id="lambda-a6000-+38.9%"),
        pytest.param("rtx-6000-ada", 928, 1146.0, id="lambda-6000-ada-+68.7%"),
        pytest.param("h100-pcie-80gb", 1280, 1866.0, id="lambda-h100-pcie-+115.5%"),
        pytest.param("h100-sxm5-80gb", 1280, 2616.0, id="lambda-h100-sxm5-+140.7%"),
    ],
)
@pytest.mark.xfail(strict=True, reason=LAMBDA_NCHW_REASON)
def test_resnet50_lambda_datacenter_amp_training_rate(bundled_catalog, tmp_path, gpu, batch, published):
    """[LAMBDA] 1-GPU AMP rows, each at its CSV batch. Product: V100 1,272, A100 40GB PCIe 2,570, A100 80GB PCIe
    2,928, A100 SXM4 3,016, RTX A6000 1,273, RTX 6000 Ada 1,933, H100 PCIe 4,022, H100 SXM5 6,298 images/s: all
    fast by 39-141%, the gap growing with the card's peak (a fixed per-image cost the product does not count)."""
    _within(_train_rate(tmp_path, gpu, batch), published)


def test_lambda_v100_pair_covers_64_percent_of_the_a100_gap():
    """The sizing behind LAMBDA_NCHW_REASON, as code: the same-card ratio (V100, batch 256, AMP) between Lambda's
    NCHW run and DLE's NHWC run, applied to the product's A100 SXM4 estimate at Lambda's batch."""
    ratio = 833.0 / 1200.0
    product, published = 3015.7, 1582.0
    share = (product - product * ratio) / (product - published)
    assert ratio == pytest.approx(0.694, abs=0.001)
    assert share == pytest.approx(0.64, abs=0.01)


# ---------------------------------------------------------------- TF32 / FP32 training, misses


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED: [DLE] DGX A100 TF32 938 images/s; product 1,504 (+60.3%; 2,930, +212%, before resnet timed "
        "the step against the TF32 peak, mfu.convnet_peak_tflops). cuDNN's TF32 convolutions reaching a lower share "
        "of 156 TFLOPS than fp16 ones of 312 is the lead; no TF32 convolution rate was found to state it."
    ),
)
def test_resnet50_a100_tf32_training_rate(bundled_catalog, tmp_path):
    _within(_train_rate(tmp_path, "a100-sxm4-80gb", 256, "fp32"), 938.0)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED: [DLE] DGX-1 V100 FP32 batch 112: 367 images/s; product 266 (-27.6%). The product runs fp32 "
        "convolutions at fp32_simt_gemm_efficiency of 15.7 TFLOPS as direct GEMMs; cuDNN's fp32 3x3 kernels may "
        "use Winograd (fewer multiplies than 2 x MACs), not located or sized."
    ),
)
def test_resnet50_v100_fp32_training_rate(bundled_catalog, tmp_path):
    _within(_train_rate(tmp_path, "v100-sxm2-16gb", 112, "fp32"), 367.0)


# ---------------------------------------------------------------- inference


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "batch", "published"),
    [
        ("v100-sxm2-16gb", 256, 3382.0),  # [DLE] mixed precision
        pytest.param(
            "v100-sxm2-16gb",
            64,
            2984.0,
            marks=pytest.mark.xfail(
                strict=True,
                reason=(
                    "UNEXPLAINED: [DLE] V100 mixed precision batch 64: 2,984 images/s; product 3,787 (+26.9%), just "
                    "past the bar where batch 256 passes (+12.8%): the published rate falls 12% from batch 256 to 64, "
                    "the product's 0.7%; no per-forward floor is counted for a convnet (see the batch-1 row)."
                ),
            ),
            id="v100-64-+26.9%",
        ),
        ("t4", 256, 1198.0),
        ("t4", 64, 1165.0),
    ],
)
def test_resnet50_amp_inference_rate(bundled_catalog, tmp_path, gpu, batch, published):
    """[DLE] inference "Throughput Avg", mixed precision. Product: V100 b256 3,815 (+12.8%), T4 b256 1,311 (+9.4%);
    the batch-64 rows in the module's run (printed by the assertion on a miss)."""
    _within(_infer_rate(tmp_path, gpu, batch), published)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED: [DLE] V100 mixed precision batch 1: 78 images/s (12.8 ms); product ~2,300 (+2,880%). A "
        "convnet forward has no kernel count in the product (image_shapes.Cost.launches is UNet-only), so no host "
        "or launch floor: ~174 eager kernels (stem 4, 16 blocks x 10, 4 downsamples x 2, pool + fc) x 31 us = 5.4 ms "
        "would cover 42% of the 12.8 ms; DLE's timing of the loop (data copy, sync) is not read."
    ),
)
def test_resnet50_v100_batch1_inference(bundled_catalog, tmp_path):
    _within(_infer_rate(tmp_path, "v100-sxm2-16gb", 1), 78.0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "published"),
    [
        pytest.param("v100-sxm2-16gb", 1261.0, id="v100-fp32--36.7%"),
        pytest.param("t4", 415.0, id="t4-fp32--50.8%"),
    ],
)
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED: [DLE] FP32 inference batch 256 (V100 1,261, T4 415); product 798 (-36.7%) and 204 (-50.8%): "
        "the same slow fp32 convolution rate as the V100 FP32 training row (Winograd lead, not sized)."
    ),
)
def test_resnet50_fp32_inference_rate(bundled_catalog, tmp_path, gpu, published):
    _within(_infer_rate(tmp_path, gpu, 256, "fp32"), published)


# ---------------------------------------------------------------- recommend: a 90-epoch ImageNet run


@pytest.mark.django_db
def test_recommend_ranks_resnet50_imagenet_training_first_row_by_hand(bundled_catalog, tmp_path):
    """A ResNet-50 ImageNet run (90 epochs of 1,281,167 images, AMP, batch 256, one GPU, the preset's crop loader)
    ranks offers, and the first row's cost follows by hand from its own price and hours: hours = images / the
    loader-bound 252 images/s (10 workers x 25.2, the vision crop pipeline) = 115,305,030 / 252 / 3,600 = 127.10 h;
    compute = effective price x hours; setup = 1 h at the effective price; storage = GB x rate x months (run +
    setup over 730 h, + the retention months); reruns = 20% of compute."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": "resnet-50"},
        "precision": "fp16",
        "micro_batch_size": 256,
        "parallelism": {"gpus": 1},
        "image": {"epochs": 90, "dataset_images": IMAGENET_TRAIN_IMAGES},
    }
    results = _recommend(tmp_path, spec, top=3)
    assert results
    first = results[0]
    assert first["fits"] and first["gpus"] == 1
    images = 90 * IMAGENET_TRAIN_IMAGES
    assert float(first["hours"]) == pytest.approx(images / 252.0 / 3600, rel=0.002)
    hours = Decimal(str(first["hours"]))
    price = Decimal(first["effective_price_per_hour"])
    cents = Decimal("0.01")
    compute = (price * hours).quantize(cents, ROUND_HALF_UP)
    basis = first["cost_basis"]["storage"]
    storage = (
        Decimal(basis["gb"]) * Decimal(basis["rate_per_gb_month"]) * Decimal(basis["months"])
    ).quantize(cents, ROUND_HALF_UP)
    setup = price.quantize(cents, ROUND_HALF_UP)
    reruns = (compute * Decimal("0.2")).quantize(cents, ROUND_HALF_UP)
    breakdown = first["cost_breakdown"]
    assert Decimal(breakdown["compute"]) == compute
    assert Decimal(breakdown["storage"]) == storage
    assert Decimal(breakdown["setup"]) == setup
    assert Decimal(breakdown["reruns"]) == reruns
    assert Decimal(first["total_cost"]) == compute + storage + setup + reruns
    # ranked: no later row is cheaper than the first
    assert all(Decimal(r["total_cost"]) >= Decimal(first["total_cost"]) for r in results[1:])
