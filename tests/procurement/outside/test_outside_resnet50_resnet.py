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


def _train(batch: int, precision: str = "fp16", memory_format: str | None = None) -> dict:
    image = {"epochs": 1, "dataset_images": 100_000, "data_pipeline": "predecoded"}
    if memory_format is not None:
        image["memory_format"] = memory_format
    return {
        "task": "full_finetune",
        "model": {"preset": "resnet-50"},
        "precision": precision,
        "micro_batch_size": batch,
        "parallelism": {"gpus": 1},
        "image": image,
    }


def _infer(batch: int, precision: str = "fp16", memory_format: str | None = None) -> dict:
    spec = {
        "task": "inference",
        "model": {"preset": "resnet-50"},
        "precision": precision,
        "micro_batch_size": batch,
    }
    if memory_format is not None:
        spec["image"] = {"memory_format": memory_format}
    return spec


def _err(estimate: float, published: float) -> float:
    return estimate / published - 1.0


def _within(estimate: float, published: float, target: float = SPEED) -> None:
    error = _err(estimate, published)
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _train_rate(
    tmp_path, gpu: str, batch: int, precision: str = "fp16", memory_format: str | None = None
) -> float:
    spec = _train(batch, precision, memory_format)
    return _size(tmp_path, spec, gpu)["throughput"]["training_images_per_second"]


def _infer_rate(
    tmp_path, gpu: str, batch: int, precision: str = "fp16", memory_format: str | None = None
) -> float:
    spec = _infer(batch, precision, memory_format)
    return _size(tmp_path, spec, gpu)["throughput"]["images_per_second_per_gpu"]


# DLE's AMP rows ran nhwc (configs.yml `memory_format: nhwc`), stated so since fixrn2 made nchw the convnet's default
NHWC = "channels_last"


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
    ],
)
def test_resnet50_amp_training_rate(bundled_catalog, tmp_path, gpu, batch, published):
    """Product before this preset: no ResNet-50 at all. Now (resnet): A100 3,001 (+21.5%), V100 16GB 1,272 (+6.0%),
    V100 32GB 1,272 (+10.0%), all in DLE's nhwc (image.memory_format channels_last, stated). [LAMBDA]'s RTX
    3090 / 4090 rows were here at channels_last (953 +5.3%, 1,535 +18.0%); fixrn states them as they ran (NCHW,
    config_pytorch_24GB.sh: no --memory-format) in test_resnet50_lambda_amp_training_rate_as_run. Hand, the A100: 3 x 8.178 GFLOP /
    (312 TFLOPS x 0.534 x 40,960 / (40,960 + 549)) = 0.149 ms; traffic 2 x 21.88M x 2 B x 3 = 262.5 MB / (0.7 x
    2,039 GB/s) = 0.184 ms; 1 / 0.333 ms = 3,002 images/s. Stated channels_last (fixrn2: the unstated layout
    is nchw now; these rows ran nhwc): unchanged."""
    _within(_train_rate(tmp_path, gpu, batch, memory_format=NHWC), published)


@pytest.mark.django_db
def test_resnet50_a100_amp_by_hand(bundled_catalog, tmp_path):
    """The A100 row's arithmetic (above) reproduced from the engine's inputs, so the pass is not luck."""
    compute = 3 * 2 * 4_089_184_256 / (312e12 * 0.534 * 40960 / (40960 + 549.0))
    traffic = 2 * 21_878_784 * 2 * 3 / (0.7 * 2039e9)
    rate = _train_rate(tmp_path, "a100-sxm4-80gb", 256, memory_format=NHWC)
    assert rate == pytest.approx(1 / (compute + traffic), rel=0.01)


# ---------------------------------------------------------------- Lambda's rows, stated as they ran (NCHW)

LAMBDA_H100_SXM5_REASON = (
    "UNEXPLAINED: [LAMBDA] H100 80GB SXM5 AMP batch 1,280: 2,616 images/s; product with image.memory_format nchw "
    "(as run: config_pytorch_80GB.sh @357c49a7, no --memory-format) 3,701 (+41.5%; 6,298, +140.7%, at "
    "channels_last before fixrn). The NCHW transposes (2 x 21.78M conv inputs + outputs x 2 B x 3 passes = 261 MB "
    "an image at 0.7 x 3,350 GB/s = 0.111 ms) land the other nine rows of the same CSV; the H100 SXM5 step still "
    "reads 0.270 ms against the published 0.382 ms. Not located: the H100 SXM5 row is the only one not in "
    "pytorch-train-bs-fp16.csv @08d77c41 (its batch is the 80GB config's), and Hopper's fp16 convolution "
    "efficiency at this size is not measured anywhere the product reads."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "batch", "published"),
    [
        ("v100-sxm2-16gb", 256, 833.0),
        ("a100-pcie-40gb", 720, 1396.0),
        ("a100-pcie-80gb", 1280, 1527.0),
        ("a100-sxm4-80gb", 1280, 1582.0),
        ("rtx-a6000", 928, 916.0),
        ("rtx-6000-ada", 928, 1146.0),
        ("h100-pcie-80gb", 1280, 1866.0),
        pytest.param(
            "h100-sxm5-80gb",
            1280,
            2616.0,
            marks=pytest.mark.xfail(strict=True, reason=LAMBDA_H100_SXM5_REASON),
            id="lambda-h100-sxm5-+41.5%",
        ),
        ("rtx-3090", 448, 905.0),
        ("rtx-4090", 448, 1301.0),
    ],
)
def test_resnet50_lambda_amp_training_rate_as_run(bundled_catalog, tmp_path, gpu, batch, published):
    """[LAMBDA] 1-GPU AMP rows, each at its CSV batch, stated as run: DLE main.py without --memory-format
    (benchmark_pytorch.sh @0a684b62 passes the config's args; config_pytorch_80GB.sh @357c49a7 and
    config_pytorch_24GB.sh @18893649 have --amp and no --memory-format; main.py's default is nchw), so
    image.memory_format nchw. Before (resnet, channels_last, strict xfails UNEXPLAINED) -> after (fixrn, nchw):
    V100 1,272 (+52.7%) -> 833 (-0.0%), A100 40GB PCIe 2,570 (+84.1%) -> 1,589 (+13.8%), A100 80GB PCIe 2,928
    (+91.8%) -> 1,871 (+22.5%), A100 SXM4 3,016 (+90.6%) -> 1,943 (+22.8%), RTX A6000 1,273 (+38.9%) -> 786
    (-14.2%), RTX 6000 Ada 1,933 (+68.7%) -> 1,103 (-3.7%), H100 PCIe 4,022 (+115.5%) -> 2,297 (+23.1%): FIXED;
    H100 SXM5 6,298 (+140.7%) -> 3,701 (+41.5%, strict xfail). The GeForce rows, which passed at channels_last
    (3090 953 +5.3%, 4090 1,535 +18.0%), read 691 (-23.7%) and 979 (-24.8%) as run: still inside, now on the slow
    side. No constant fitted on any of these rows (image_model.nchw_transpose_bytes_per_sample)."""
    _within(_train_rate(tmp_path, gpu, batch, memory_format="nchw"), published)


@pytest.mark.django_db
def test_lambda_v100_nchw_row_by_hand(bundled_catalog, tmp_path):
    """The V100 row's arithmetic: the channels_last step (1 / 1,271.8 images/s = 0.7863 ms an image) plus the
    transposes, 3 passes x 2 x 21,776,384 elements x 2 B = 261.3 MB at 0.7 x 900 GB/s = 0.4148 ms: 1.2011 ms,
    832.6 images/s against Lambda's 833. The same-card ratio 832.6 / 1,271.8 = 0.655 sits beside the published
    pairs: Lambda / DLE V100 833 / 1,200 = 0.694; the PyTorch channels-last tutorial's apex O2 ResNet-50 on
    Volta, 0.198 / 0.259 s an iteration = 0.764 (pytorch/tutorials intermediate_source/memory_format_tutorial.py,
    '22% performance gain')."""
    nhwc = _train_rate(tmp_path, "v100-sxm2-16gb", 256, memory_format=NHWC)
    nchw = _train_rate(tmp_path, "v100-sxm2-16gb", 256, memory_format="nchw")
    assert _train_rate(tmp_path, "v100-sxm2-16gb", 256) == nchw  # fixrn2: unstated is nchw
    transposes = 3 * 2 * 21_776_384 * 2 / (0.7 * 900e9)
    assert transposes == pytest.approx(0.4148e-3, rel=0.001)
    assert nchw == pytest.approx(1 / (1 / nhwc + transposes), rel=0.001)
    assert nchw == pytest.approx(832.6, abs=0.5)
    assert nchw / nhwc == pytest.approx(0.655, abs=0.002)


def test_lambda_v100_pair_covers_64_percent_of_the_a100_gap():
    """The sizing behind resnet's label for Lambda's rows (UNEXPLAINED, before fixrn stated them nchw and
    counted the transposes: test_resnet50_lambda_amp_training_rate_as_run), kept as arithmetic: the same-card ratio (V100, batch 256, AMP) between Lambda's
    NCHW run and DLE's NHWC run, applied to the product's A100 SXM4 estimate at Lambda's batch."""
    ratio = 833.0 / 1200.0
    product, published = 3015.7, 1582.0
    share = (product - product * ratio) / (product - published)
    assert ratio == pytest.approx(0.694, abs=0.001)
    assert share == pytest.approx(0.64, abs=0.01)


# ---------------------------------------------------------------- TF32 / FP32 training, misses


@pytest.mark.django_db
def test_resnet50_a100_tf32_training_rate(bundled_catalog, tmp_path):
    """FIXED (fixrn2, audrn item 2): [DLE] DGX A100 TF32 938 images/s ran NCHW (configs.yml's TF32 entry states
    no memory_format; DLE main.py's default nchw), stated so by the default. TF32 convolutions run on tensor
    cores (torch.backends.cudnn.allow_tf32 defaults True: pytorch/pytorch aten/src/ATen/Context.h `bool
    allow_tf32_cudnn = true;`), so they pay the NCHW transposes as 16-bit ones do, at 4 B: 2 x 21,776,384 x 4 B x
    3 passes = 522.6 MB an image at 0.70 x 2,039 GB/s = 0.366 ms on the channels_last step (1 / 1,504): 970
    images/s (+3.4%; was 1,504, +60.3%, strict xfail UNEXPLAINED; 2,930, +212%, before resnet timed the step
    against the TF32 peak). The sibling, DLE's V100 FP32 row (SIMT, no TF32), is unmoved
    (test_resnet50_v100_fp32_training_rate)."""
    rate = _train_rate(tmp_path, "a100-sxm4-80gb", 256, "fp32")
    nhwc = _train_rate(tmp_path, "a100-sxm4-80gb", 256, "fp32", memory_format=NHWC)
    assert nhwc == pytest.approx(1504, rel=0.01)
    assert rate == pytest.approx(1 / (1 / nhwc + 2 * 21_776_384 * 4 * 3 / (0.70 * 2039e9)), rel=0.001)
    assert rate == pytest.approx(970, rel=0.01)
    _within(rate, 938.0)


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
    # DLE's FP32 configs state no memory_format (nchw, the default): on the V100 no transposes either way (fixrn2)
    nchw = _train_rate(tmp_path, "v100-sxm2-16gb", 112, "fp32")
    assert nchw == _train_rate(tmp_path, "v100-sxm2-16gb", 112, "fp32", memory_format=NHWC)
    _within(nchw, 367.0)


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
                    "UNEXPLAINED: [DLE] V100 mixed precision batch 64: 2,984 images/s (23.18 ms an iteration); "
                    "product 3,787 (+26.9%) -> 3,780 (+26.7%) with fixrn's kernel count: the host's 174 x 31 us = "
                    "5.39 ms runs ahead of the batch's 16.9 ms of GPU work and hides, as the launch queue says "
                    "(only the last kernels' tail shows, 0.03 ms). The published rate falls 12% from batch 256 to "
                    "64; the gap here (6.3 ms an iteration) is about the batch-1 row's unexplained 7.4 ms, which "
                    "reads like a per-iteration cost of DLE's validate loop (loss, top-k accuracy, three .item() "
                    "syncs, torch.cuda.synchronize inside the timed compute_time) not located or sized."
                ),
            ),
            id="v100-64-+26.7%",
        ),
        ("t4", 256, 1198.0),
        ("t4", 64, 1165.0),
    ],
)
def test_resnet50_amp_inference_rate(bundled_catalog, tmp_path, gpu, batch, published):
    """[DLE] inference "Throughput Avg", mixed precision. Product (resnet -> fixrn, with the eager kernel count):
    V100 b256 3,815 (+12.8%) -> 3,814 (+12.8%), T4 b256 1,311 (+9.4%) -> 1,310 (+9.4%), T4 b64 1,307 (+12.2%) ->
    1,306 (+12.1%): the host's 5.39 ms a forward hides behind the batch's GPU work. Stated channels_last
    (configs.yml benchmark_inference AMP: nhwc; fixrn2 made nchw the unstated default): unchanged."""
    _within(_infer_rate(tmp_path, gpu, batch, memory_format=NHWC), published)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED: [DLE] V100 mixed precision batch 1: 78 images/s = 1 / 12.78 ms, the 'Latency Avg' of "
        "val.compute_latency: DLE's validate loop (image_classification/training.py) times, per iteration and "
        "without the loader's wait, the eager forward under torch.cuda.amp.autocast (no TensorRT, no DALI: "
        "configs.yml benchmark_inference, data_backend pytorch, nhwc), the loss, top-1 / top-5 accuracy, three "
        ".item() syncs and torch.cuda.synchronize. Product 2,326 (+2,883%) -> 185.4 (+137.7%) with fixrn's eager "
        "count (174 kernels x 31 us = 5.39 ms, host-bound through the launch queue): 42% of the 12.78 ms. "
        "autocast's weight casts (53 convolutions + the fc's weight and bias: 55 more, not counted for a convnet) "
        "would make 229 x 31 us = 7.1 ms, 56%. The page's own rows say the floor is per iteration and host-side: "
        "batch 1 to 16 stay 12.8-14.0 ms, the T4 reads 12.96 ms, FP32 10.37 ms (fewer kernels, no casts); that "
        "is ~51 us a kernel on the DGX-1's host in the 21.03 container, not the product's 31 us (a host rate, "
        "kept as is here; the count is the product's)."
    ),
)
def test_resnet50_v100_batch1_inference(bundled_catalog, tmp_path):
    _within(_infer_rate(tmp_path, "v100-sxm2-16gb", 1, memory_format=NHWC), 78.0)


@pytest.mark.django_db
def test_resnet50_batch1_is_the_host_floor_by_hand(bundled_catalog, tmp_path):
    """At batch 1 the eager forward is host-bound on both DLE cards: 174 kernels (resnet_shapes' count) x 31 us
    (eager_kernel_host_s) = 5.394 ms, so 185.4 images/s on the V100 and the T4 alike, as DLE's own batch-1 rows
    are alike across the two cards (78 and 79 images/s). Before fixrn: 2,326 and 1,074 (no floor)."""
    floor = 174 * 31e-6
    for gpu in ("v100-sxm2-16gb", "t4"):
        assert _infer_rate(tmp_path, gpu, 1) == pytest.approx(1 / floor, rel=0.002)


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
