"""Parameters, MACs and saved activations of a torchvision ResNet (bottleneck, v1.5), walked layer by layer.

The walk follows torchvision's models/resnet.py (pytorch/vision v0.15+, unchanged in the ResNet body since
v0.2): conv1 7x7 stride 2 (3 -> 64), bn1, relu, maxpool 3x3 stride 2; four stages of Bottleneck blocks
(`stages`: 3, 4, 6, 3 for ResNet-50) at widths 64, 128, 256, 512 with expansion 4, the stride-2 of stages
2-4 on the 3x3 conv2 (the "v1.5" placement: torchvision's docs, "places the stride for downsampling to the
second 3x3 convolution"), a 1x1 conv + BatchNorm downsample on each stage's first block; adaptive average
pool and a fc to `classes`. Convolutions have no bias; every BatchNorm has a weight and a bias.

Counting rules (stated so they can be checked):
- MACs: c_in x c_out x k^2 per output position (one multiply-add, 2 FLOPs), plus the fc's 2,048 x classes.
  BatchNorm, ReLU, the residual add and the pools are elementwise and not counted. At 224 px this gives
  4,089,184,256 MACs for ResNet-50: torchvision's "GFLOPS 4.09" (ResNet50_Weights meta `_ops: 4.089`) is
  this multiply-add count, so a forward is 8.18 GFLOP in FLOPs.
- Saved activations (training, eager autograd, per sample, in elements): every Conv -> BatchNorm keeps the
  conv's output (BatchNorm's backward reads its input); a ReLU (inplace in torchvision) keeps its output,
  which is also the next conv's saved input and the downsample's; the stem's conv keeps the image (its
  weight gradient), the maxpool its output and its int64 indices (counted as 4 16-bit elements each).
  The residual add keeps nothing. So a Conv-BN-ReLU costs 2 x its output and a Conv-BN before the add 1 x.
- Kernels (an eager no-grad forward, as the UNets' are counted: Cost.launch closes a unit, `gemm_kernels` the
  convolutions and the fc): eager PyTorch runs every module as its own kernel in eval and in channels-last alike
  (Conv2d has no bias and nothing fuses BatchNorm into it without torch.fx / torch.jit.freeze / torch.compile):
  the stem's conv1 (GEMM) + bn1, relu, maxpool (3); a Bottleneck's conv1-3 (3 GEMMs) + bn1-3, relu x 2, the
  residual add and the last relu (7), its downsample 1 GEMM + 1 BatchNorm; the head's avgpool (1; flatten is a
  view) and fc (1 addmm). ResNet-50: 4 + 16 x 10 + 4 x 2 + 2 = 174 kernels a forward. torch.autocast's weight
  casts (one a convolution and the fc's weight and bias, every forward: the cast cache lives for one autocast
  context) are not counted here: a 16-bit model has none.
"""

from __future__ import annotations

from procurement.sizing.image_shapes import Cost

# Elementwise / normalization kernels of one eager Bottleneck (bn1-3, relu after bn1 and bn2, the add, the last
# relu), its downsample's BatchNorm on top (module docstring, Kernels).
BOTTLENECK_KERNELS = 7
MAXPOOL_INDEX_ELEMENTS = 4.0  # int64 indices in 16-bit element units (2 in fp32: stated, not resolved)


def resnet_cost(config: dict, side: int) -> Cost:
    """A torchvision bottleneck ResNet at a square `side` (the preset's `convnet` entry)."""
    cost = Cost()
    expansion = config.get("expansion", 4)
    stem = config.get("stem_channels", 64)

    def conv(c_in: int, c_out: int, k: int, positions: float, positions_in: float | None = None) -> float:
        cost.params += c_in * c_out * k * k + 2 * c_out  # the weight, and the BatchNorm after it
        macs = c_in * c_out * k * k * positions
        cost.macs += macs
        cost.conv_macs += macs
        cost.conv_io += c_in * (positions if positions_in is None else positions_in) + c_out * positions
        return c_out * positions  # its output elements

    s = (side + 1) // 2  # conv1: 7x7, stride 2, padding 3
    out = conv(3, stem, 7, s * s, side * side)
    cost.saved += 3 * side * side + 2 * out  # the image, bn1's input, relu's output
    cost.gemm_kernels += 1
    cost.launch(3, 2 * out)  # bn1, relu, maxpool
    peak = 3 * side * side + 2 * out
    s = (s + 1) // 2  # maxpool 3x3 stride 2 padding 1
    cost.saved += stem * s * s * (1 + MAXPOOL_INDEX_ELEMENTS)
    c_in = stem
    for stage, (blocks, width) in enumerate(zip(config["stages"], config["widths"], strict=True)):
        for block in range(blocks):
            stride = 2 if (block == 0 and stage > 0) else 1
            out_side = s // stride
            positions_in, positions = float(s * s), float(out_side * out_side)
            c_out = width * expansion
            saved = 2 * conv(c_in, width, 1, positions_in)  # conv1 -> bn1 -> relu
            saved += 2 * conv(width, width, 3, positions, positions_in)  # conv2 (the stride) -> bn2 -> relu
            saved += conv(width, c_out, 1, positions)  # conv3 -> bn3
            if block == 0:  # downsample: 1x1 conv (stride) -> BatchNorm
                saved += conv(c_in, c_out, 1, positions, positions_in)
            saved += c_out * positions  # the ReLU after the residual add
            cost.saved += saved
            cost.gemm_kernels += 4 if block == 0 else 3
            cost.launch(BOTTLENECK_KERNELS + (1 if block == 0 else 0), saved)
            cost.blocks += 1
            peak = max(peak, (c_in * positions_in + 2 * c_out * positions))
            c_in, s = c_out, out_side
    classes = config["classes"]
    cost.params += c_in * classes + classes
    cost.macs += c_in * classes
    cost.saved += c_in  # the pooled features (fc's weight gradient)
    cost.gemm_kernels += 1  # fc
    cost.launch(1, c_in * s * s)  # avgpool
    cost.checkpoint_inputs = cost.saved  # torchvision's ResNet has no activation checkpointing
    cost.forward_peak = peak
    return cost
