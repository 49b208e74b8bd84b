"""DETR (Carion et al. 2020, arXiv:2005.12872) counted from its architecture: a ResNet-50 backbone, a 1x1
input projection to d_model, a post-norm transformer encoder over the stride-32 feature map and a decoder
over the object queries (facebookresearch/detr models/backbone.py, transformer.py, detr.py; mmdetection's
configs/detr use the same shapes).

Counting rules (elements per image, image_shapes.Cost):
- MACs: every conv and linear, attention's QK^T and AV. The paper's '86 GFLOPs' (Table 1) is detectron2's
  flop_count_operators, which counts one 'flop' per multiply-add: this walk gives ~81 G multiply-adds at
  800 x 1067 (COCO's 4:3 images at the 800 px short side), i.e. ~162 GFLOP, twice the table-row count.
- Saved for the backward (training): the stem and layer1 are frozen (`train_backbone` leaves only layer2-4
  trainable; mmdetection frozen_stages=1), so they keep nothing; in layer2-4 each conv's BatchNorm (frozen
  statistics, in eval mode) keeps its input and each ReLU its output (mmdetection's BN with
  requires_grad=False, norm_eval=True); the transformer keeps the Korthikanti-style tensors of a post-norm
  layer with dropout 0.1 (its masks at one byte, a quarter of an fp32 element) and nn.MultiheadAttention's
  explicit softmax (no fused attention), its dropout mask and output: heads x tokens x keys each.
"""

from __future__ import annotations

from procurement.sizing.image_shapes import Cost

# ResNet-50 stages: (bottlenecks, width, output channels, stride of the stage's feature map)
RESNET50_STAGES = ((3, 64, 256, 4), (4, 128, 512, 8), (6, 256, 1024, 16), (3, 512, 2048, 32))
DROPOUT_MASK = 0.25  # a bool mask (1 B) in units of a 4-byte element


def detr_cost(config: dict, height: float, width: float) -> Cost:
    """A DETR forward (and what its training step keeps) at an input of height x width pixels."""
    cost = Cost()
    pixels = height * width
    stem = 49 * 3 * 64
    cost.block(stem, stem * pixels / 4, 0.0, 0.0, conv=True)  # 7x7 stride-2 conv (frozen)
    _resnet50_stages(cost, pixels, first_trainable=1)  # DETR: layer1 frozen with the stem
    _detr_transformer(cost, config, pixels)
    return cost


def _resnet50_stages(cost: Cost, pixels: float, first_trainable: int) -> None:
    """ResNet-50's four stages after the stem; stages from `first_trainable` on keep their tensors (frozen
    BatchNorm: the rule in the module docstring)."""
    c_in = 64
    for index, (blocks, w, c_out, stride) in enumerate(RESNET50_STAGES):
        positions = pixels / stride**2
        trainable = index >= first_trainable
        for block in range(blocks):
            first = block == 0
            # torchvision/mmdetection 'pytorch' style: the 3x3 conv strides, so conv1 runs at the previous
            # stage's resolution in a stage's first block
            conv1_positions = positions * (4 if first and index > 0 else 1)
            shortcut = c_in * c_out if first else 0
            params = c_in * w + 9 * w * w + w * c_out + shortcut
            macs = c_in * w * conv1_positions + (9 * w * w + w * c_out + shortcut) * positions
            saved = 0.0
            if trainable:
                block_input = c_in * conv1_positions if first else 0.0  # later inputs: the last ReLU's output
                saved = block_input + 2 * w * conv1_positions + (2 * w + 2 * c_out) * positions
                saved += c_out * positions if first else 0.0  # the shortcut's BatchNorm input
            cost.block(params, macs, saved, c_out * positions, conv=True)
            c_in = c_out


def _detr_transformer(cost: Cost, config: dict, pixels: float) -> None:
    tokens = pixels / 32**2
    h, heads, ffn = config["d_model"], config["heads"], config["ffn"]
    cost.block(2048 * h, 2048 * h * tokens, h * tokens, 2048 * tokens, conv=True)  # input projection
    for _ in range(config["encoder_layers"]):
        _attention_layer(cost, h, heads, ffn, tokens, tokens, cross=False)
    queries = config["queries"]
    for _ in range(config["decoder_layers"]):
        _attention_layer(cost, h, heads, ffn, queries, tokens, cross=True)
    heads_params = queries * h + h * (config["classes"] + 1) + 2 * h * h + h * 4
    cost.params += heads_params
    cost.macs += (heads_params - queries * h) * queries * config["decoder_layers"]  # auxiliary losses
    cost.tokens = 0.0  # rows per weight: MACs per parameter (image_model.rows_per_sample)
    cost.forward_peak = 2 * 2048 * tokens + 3 * 256 * pixels / 16  # layer1's widest working set


def _attention_layer(cost: Cost, h: int, heads: int, ffn: int, tokens: float, keys: float, cross: bool):
    """A post-norm encoder layer (self-attention + FFN) or decoder layer (self-attention over the queries,
    cross-attention over the encoder's `keys` tokens, FFN): parameters, MACs and saved elements."""
    attention_params = 4 * h * h
    params = attention_params * (2 if cross else 1) + 2 * h * ffn + (6 if cross else 4) * h
    scores = heads * tokens * (tokens + (keys if cross else 0))
    linear = (attention_params + 2 * h * ffn) * tokens
    if cross:  # queries project like tokens; keys and values project the encoder memory
        linear += 2 * h * h * tokens + 2 * h * h * keys
    attention_macs = 2 * h * tokens * (tokens + (keys if cross else 0))
    per_attention = 2 * h + 3 * h + h + (1 + DROPOUT_MASK) * h + h  # inputs, q/k/v, output, dropout, norm
    saved = per_attention * tokens * (2 if cross else 1) + (2 + DROPOUT_MASK) * scores
    saved += (h + (2 + DROPOUT_MASK) * ffn + (1 + DROPOUT_MASK) * h + h) * tokens  # FFN and its norm
    if cross:
        saved += 2 * h * keys  # the memory's key and value projections
    # the explicit softmax is in `saved` whatever flash_attention says: DETR's attention is never fused
    cost.block(params, linear + attention_macs, saved, h * tokens, 0.0, attention_macs)


def padded_canvas(config: dict, short_side: float, reference_side: float, batch: int) -> tuple[float, float]:
    """Height x width a training batch is padded to at its worst, for peak memory. DETR's collate pads
    every image of a batch to the batch's largest height and largest width (facebookresearch/detr
    util/misc.py nested_tensor_from_tensor_list: `max_size = _max_by_axis(...)`, zero-filled with a
    mask; mmdetection's DetDataPreprocessor pads the same way), and training resizes each image to a
    random short side of at most `short_side` with its long side capped at max_size_px (datasets/coco.py:
    T.RandomResize(scales, max_size=1333)). One image alone is at most short_side x max_size; two meet at
    max_size x max_size when a portrait and a landscape image, each elongated enough to hit the cap
    (5:3 or flatter at the largest short side), share a batch. Sized at that bound: the step that OOMs is
    the worst one the resize rule allows, whether or not a given epoch draws it. The cap scales with the
    short side when a spec changes it from the preset's `reference_side` (800)."""
    long_side = config["max_size_px"] * short_side / reference_side
    if batch <= 1:
        return short_side, long_side
    return long_side, long_side


def rtdetr_training_saved(config: dict, side: float) -> Cost:
    """What an RT-DETR-R50 training step keeps for the backward at a side x side input (elements per image:
    `saved`, `checkpoint_inputs`, `largest_block_saved`), counted with DETR's rules where they apply; its
    parameters and FLOPs stay the paper's table (Zhao et al. 2023, arXiv:2304.08069, Table 2), which the
    TensorRT row of docs/validation.md holds out. Shapes: lyuwenyu/RT-DETR rtdetr_pytorch
    configs/rtdetr/include/rtdetr_r50vd.yml (@68a7feee): PResNet depth 50 variant d, freeze_at 0 (the stem
    only frozen: layer1-4 train, unlike DETR's layer1), freeze_norm (FrozenBatchNorm2d, as DETR's);
    HybridEncoder hidden 256 over strides 8/16/32, one AIFI layer on stride 32 (8 heads, FFN 1024), CCFM of
    four CSPRepLayers (expansion 1.0: conv1 and conv2 1x1 to 256 with BatchNorm + SiLU, three RepVggBlocks of
    a 3x3 and a 1x1 conv with BatchNorm each, summed, SiLU), trainable BatchNorm (keeps its input) and SiLU
    (keeps its input); RTDETRTransformer: 6 decoder layers, 300 queries plus the denoising groups
    (num_denoising 100: at most 200 queries), deformable cross-attention over the three levels' tokens
    (value_proj over every token per layer, kept for grid_sample). Not counted: the loss's Hungarian
    matching (CPU) and the grid_sample offsets (queries x 8 heads x 3 levels x 4 points). An assumption, no
    published training memory checks it."""
    cost = Cost()
    pixels = side * side
    cost.block(0.0, 0.0, 0.0, 0.0, conv=True)  # the three-conv 'd' stem: frozen, keeps nothing
    _resnet50_stages(cost, pixels, first_trainable=0)
    h = config.get("hidden", 256)
    p8, p16, p32 = pixels / 8**2, pixels / 16**2, pixels / 32**2
    tokens = p8 + p16 + p32
    conv_norm_act = 3 * h  # a ConvNormLayer's input, BatchNorm input and SiLU input, per position
    csp = 2 * h + 2 * 2 * h + 3 * 4 * h  # concat input; conv1/conv2's norm + act; 3 RepVggBlocks
    cost.block(0.0, 0.0, h * tokens, h * tokens)  # input projections: BatchNorm inputs
    _attention_layer(cost, h, 8, config.get("ffn", 1024), p32, p32, cross=False)  # AIFI
    # CCFM: FPN (lateral 1x1 + CSP at 16 and at 8), PAN (3x3 stride-2 down + CSP at 16 and at 32)
    fpn_pan = (
        conv_norm_act * p32 + csp * p16,  # lateral 1x1 at stride 32, CSP at 16
        conv_norm_act * p16 + csp * p8,  # lateral 1x1 at stride 16, CSP at 8
        h * p8
        + 2 * h * p16
        + csp * p16,  # 3x3 stride-2 down from 8 (input at 8, norm and act at 16), CSP at 16
        h * p16 + 2 * h * p32 + csp * p32,  # down from 16, CSP at 32
    )
    for saved in fpn_pan:
        cost.block(0.0, 0.0, saved, 0.0)
    # decoder: per-level input projections (conv input + BatchNorm input), the encoder head over every
    # token (memory, LayerNorm input, score and box MLP inputs), then each layer's value_proj output
    cost.block(0.0, 0.0, 2 * h * tokens + 6 * h * tokens + config.get("classes", 80) * tokens, h * tokens)
    queries = config.get("queries", 300) + 2 * config.get("denoising", 100)
    for _ in range(config.get("decoder_layers", 6)):
        cost.block(0.0, 0.0, h * tokens, h * queries)
        _attention_layer(cost, h, 8, config.get("ffn", 1024), queries, 0.0, cross=False)
    return cost
