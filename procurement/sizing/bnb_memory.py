"""What a QLoRA stack's bitsandbytes NF4 path holds in memory beyond the packed weights (issue 26 item 7, bnb49).

Memory only, stated by the user (spec.quantization); the defaults (bitsandbytes "current", a 16-bit LM head) add
nothing, as before. Counted from the libraries' code, nothing fitted:

1. bitsandbytes before 0.43.2 keeps every 4-bit linear's input: MatMul4Bit.forward sets `ctx.tensors = (A, B)`
   (bitsandbytes 0.41.1, 18e827d6 bitsandbytes/autograd/_functions.py line 523), a ctx attribute the backward never
   frees; 0.43.2 never keeps A: `ctx.tensors = (None, B)` whenever an input needs a gradient, else `(None, None)`
   (9e753741, PR #1270; the 0.43.2+ forward, stored id 102675332). Charged: the inputs no other op
   already keeps (bytes_model.layer_activation_terms counts an adapted linear's input as its adapter's, the same
   tensor when lora.dropout is 0): the attention input (d) and the MLP input (d) unless their linears are adapted
   without dropout, the down projection's input (f) on the same rule, and the output projection's input (heads x
   head_dim) always (the attention output is copied to the (tokens, heads x head_dim) layout the linear reads:
   litgpt 8641822 lit_gpt/model.py `y.transpose(1, 2).reshape(B, T, C)`, transformers' sdpa path `.contiguous()`;
   the engine's attention_output is flash attention's own O). Each at the compute dtype's 2 bytes, a token, a layer
   of the stage, a micro-batch in flight; under full recomputation only the block being recomputed holds them (the
   checkpointed forward runs without autograd, so its ctx is dropped). LitGPT at 8641822, Llama 2 7B, q / v
   adapted with dropout 0.05: (3 x 4,096 + 11,008) x 2 B x 32 layers x 1,304 tokens = 1.944 GB.
   Not counted: a model whose attention and MLP share one norm (phi-1.5's shared_attention_norm) reads one input
   for both, 2d + f; the spec has no field for it, so such a model is charged 3d + f.
2. A 4-bit LM head (quantization.lm_head_4bit): Lightning @71aed751 (litgpt 8641822's pin)
   src/lightning/fabric/plugins/precision/bitsandbytes.py line 130, init_context replaces every torch.nn.Linear
   with its 4-bit class, the output layer included; transformers / peft keep it 16-bit (the engine's default).
   Its weights count the NF4 block linears' bytes (bytes_model.block_linear_bytes) instead of 16 bits: Llama 2 7B
   32,000 x 4,096 x (2 - 0.516) B = -0.195 GB.
3. The unpacked copies alive at the peak. dequantize_4bit writes the weight in quant_state's dtype, the dtype the
   weight was quantized from (quantization.bnb_storage_dtype), and MatMul4Bit copies it `.to(A.dtype)`
   (_functions.py 516 forward, 547 backward). fp16 storage: before 0.43.0 bitsandbytes' Params4bit.cuda stores
   `.half()` weights whatever the load dtype (nn/modules.py line 156 at 0.41.1); at every release Lightning's
   _quantize_weight quantizes from torch.half (71aed751 bitsandbytes.py line 221; unchanged at 7f0c3436cd, aud49b),
   and transformers' bnb loader overrides torch_dtype None with torch.float16 (its "Overriding torch_dtype=None"
   quantizer_bnb_4bit update_torch_dtype, stored id 14084635761). Then under bf16 compute an fp16 copy and its bf16 cast are alive at once, 4
   bytes a weight (2 under fp16 compute: no cast). Unstated, the storage is fp16 with a 4-bit head (only LitGPT /
   Lightning quantize the head, and Lightning from torch.half) or a release before 0.43.0, else the compute dtype.
   The peak is the backward's start, every saved tensor alive, whose first 4-bit op is the LM head's backward
   where the head is 4-bit (its V x d copies; Llama 2 7B 0.524 GB) and otherwise the last block's largest linear.
   Compute-dtype storage: the copy is the compute dtype's alone: a 4-bit head's 2 bytes a weight are charged; a
   block linear's (at most 2 x d x f, 90 MB on a 7B) stays uncounted, as the engine has always left it.
4. NF4 without double quantization (quantization.nf4_double_quant false, LitGPT's bnb.nf4): the block linears at
   4.5 bits (bytes_model.block_linear_bytes, assumption nf4_bits_per_param_without_double_quant), not 4.127.
The LM head's terms sit on the last pipeline stage: left out under pipeline parallelism (the stage the memory
reports is the heaviest, not the last); tensor parallelism divides them as it divides the head.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.bytes_model import DTYPE_BYTES, block_linear_bytes, embedding_bytes
from procurement.sizing.params import output_layer_params

SAVED_INPUTS_FIXED_IN = (0, 43, 2)  # bitsandbytes 9e753741: MatMul4Bit keeps ctx.tensors = (None, B)
FP16_STORAGE_DROPPED_IN = (0, 43, 0)  # Params4bit.cuda's .half() gone; quant_state takes the weight's dtype
ATTENTION_INPUT_LINEARS = frozenset({"q_proj", "k_proj", "v_proj", "qkv_fused"})
MLP_INPUT_LINEARS = frozenset({"gate_proj", "up_proj"})


def applies(spec) -> bool:
    return spec.task == "qlora" and spec.weight_quantization == "nf4" and not spec.model.is_image


def _before(spec, release: tuple[int, ...]) -> bool:
    stated = spec.quantization.release
    return applies(spec) and stated is not None and stated + (0,) * (3 - len(stated)) < release


def keeps_inputs(spec) -> bool:
    """bitsandbytes before 0.43.2: MatMul4Bit's ctx.tensors keeps each 4-bit linear's input."""
    return _before(spec, SAVED_INPUTS_FIXED_IN)


def stores_fp16(spec) -> bool:
    """The 4-bit weights' quant_state is fp16 (module docstring, 3): as stated in quantization.bnb_storage_dtype;
    unstated, with a 4-bit head (Lightning quantizes from torch.half) or before 0.43.0 (Params4bit.cuda's .half())."""
    if not applies(spec):
        return False
    stated = spec.quantization.bnb_storage_dtype
    if stated is not None:
        return stated == "fp16"
    return spec.quantization.lm_head_4bit or _before(spec, FP16_STORAGE_DROPPED_IN)


def lm_head_4bit(spec) -> bool:
    return applies(spec) and spec.quantization.lm_head_4bit


def _q_out(model) -> float:
    return float(
        model.num_attention_heads * (model.head_dim or model.hidden_size // model.num_attention_heads)
    )


def saved_input_bytes_per_layer_token(spec) -> float:
    """Bytes of 4-bit linears' inputs MatMul4Bit keeps a layer and token that no other op keeps (module docstring,
    1); 0 from bitsandbytes 0.43.2."""
    if not keeps_inputs(spec):
        return 0.0
    model, lora = spec.model, spec.lora
    targets = frozenset(lora.targets) if lora is not None else frozenset()
    dropout = lora is not None and lora.dropout > 0

    def extra(linears: frozenset[str]) -> bool:  # the adapter's own saved input is the same tensor otherwise
        return dropout or not (targets & linears)

    width = _q_out(model)  # the output projection's input, always a copy of its own
    width += model.hidden_size if extra(ATTENTION_INPUT_LINEARS) else 0.0
    width += model.hidden_size if extra(MLP_INPUT_LINEARS) else 0.0
    width += model.intermediate_size if extra(frozenset({"down_proj"})) else 0.0
    return width * DTYPE_BYTES[spec.precision]


def saved_input_bytes(spec) -> float:
    """One rank holding every layer, one micro-batch: every layer's inputs, the recomputed block's under full
    recomputation."""
    per_layer = saved_input_bytes_per_layer_token(spec) * spec.micro_batch_size * spec.seq_len
    return per_layer * (1.0 if spec.gradient_checkpointing == "full" else float(spec.model.num_layers))


def lm_head_weight_saving_bytes(spec) -> float:
    """Bytes a 4-bit LM head saves against the engine's 16-bit one (module docstring, 2)."""
    if not lm_head_4bit(spec):
        return 0.0
    return output_layer_params(spec.model) * (embedding_bytes(spec) - block_linear_bytes(spec))


def unpacked_copy_bytes(spec) -> float:
    """The unpacked copies of the first 4-bit weight the backward unpacks, alive at the backward's start (module
    docstring, 3); 0 for compute-dtype storage with a 16-bit head, as before."""
    if not applies(spec):
        return 0.0
    compute = DTYPE_BYTES[spec.precision]
    per_weight = (2.0 + (compute if spec.precision != "fp16" else 0.0)) if stores_fp16(spec) else compute
    if lm_head_4bit(spec):
        return per_weight * output_layer_params(spec.model)
    if not stores_fp16(spec):
        return 0.0
    model = spec.model
    largest = model.hidden_size * max(float(model.intermediate_size), _q_out(model))
    return per_weight * largest


def head_bytes(spec, tp, pp) -> tuple[np.ndarray, np.ndarray]:
    """(weights saved, copies added) on a rank: / tp, none under pipeline parallelism (the head's stage is not
    the one reported)."""
    on_stage = np.where(np.asarray(pp) > 1, 0.0, 1.0) / tp
    copies = unpacked_copy_bytes(spec)
    head_copies = copies if lm_head_4bit(spec) else 0.0
    block_copies = copies - head_copies  # a block linear's, on every stage
    return lm_head_weight_saving_bytes(spec) * on_stage, head_copies * on_stage + block_copies / tp


def text(spec) -> str:
    """The stated stack's terms, in words (empty for the defaults)."""
    parts = []
    if keeps_inputs(spec):
        gb = saved_input_bytes(spec) / 1e9
        parts.append(
            f"bitsandbytes {spec.quantization.bnb_version} keeps every 4-bit linear's input (MatMul4Bit ctx.tensors, "
            f"fixed in 0.43.2): {gb:,.2f} GB a micro-batch on one rank holding every layer, in activations"
        )
    if lm_head_4bit(spec):
        parts.append(
            f"the LM head is 4-bit (LitGPT / Lightning's plugin): {lm_head_weight_saving_bytes(spec) / 1e9:,.2f} GB "
            "off the weights"
        )
    copies = unpacked_copy_bytes(spec)
    if copies:
        kind = "fp16 + bf16" if stores_fp16(spec) and spec.precision != "fp16" else "16-bit"
        parts.append(
            f"{kind} unpacked copies of the {'LM head' if lm_head_4bit(spec) else 'largest block linear'} at the "
            f"backward's start: {copies / 1e9:,.2f} GB (dequantized weights)"
        )
    if applies(spec) and not spec.quantization.nf4_double_quant:
        parts.append(
            "NF4 without double quantization: the block linears at 4.5 bits a weight, in the weights"
        )
    return "QLoRA stack (quantization.*): " + "; ".join(parts) if parts else ""
