"""The model's shape and its LoRA adapters: the parts of a workload spec that parameter counting
(params.py) reads. They live apart from the parser (spec.py) so that counting never imports parsing."""

from __future__ import annotations

from dataclasses import dataclass

from procurement.sizing.image_presets import ImageArchitecture
from procurement.sizing.presets import ImageTier


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool = False
    head_dim: int = 0
    gated_mlp: bool = True
    num_experts: int = 1
    experts_per_token: int = 1
    moe_intermediate_size: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    # group-limited routing (DeepSeek-V3: n_group 8, topk_group 4): a token's experts come from at most
    # expert_groups_per_token of expert_groups groups of experts; 0: unlimited
    expert_groups: int = 0
    expert_groups_per_token: int = 0
    attention_qkv_bias: bool = False
    dropout: bool = False
    kv_elems_per_token_per_layer: int | None = None
    # Sliding-window attention (HF config "sliding_window"; GPT-OSS, Gemma 2/3, Mistral 7B v0.1): each query
    # of sliding_window_layers of the layers attends to at most the last sliding_window tokens; 0: none.
    sliding_window: int = 0
    sliding_window_layers: int = 0
    # Multi-head latent attention (DeepSeek-V2/V3, HF config names): queries and keys/values pass through
    # low-rank latents of these widths; head_dim is qk_nope + qk_rope. 0: not MLA (params.py counts MLA's
    # weights from them; a spec states them as config.json does, spec._latent_attention_errors).
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # Multi-token prediction modules trained beside the main model (HF config num_nextn_predict_layers;
    # DeepSeek-V3: 1): each a transformer block of the last layer's kind, a 2h x h projection, and the shared
    # output head applied again (params.mtp_matmul_params); training FLOPs count them, inference does not.
    mtp_layers: int = 0
    # The decoder layer an eager transformers loop runs (inference.engine hf_eager, serving_host.py): llama
    # (transformers' LlamaDecoderLayer, every dense model without a fused-kernel layer of its own), qwen1
    # (Qwen-1's QWenBlock with flash-attn's fused norm and rotary), qwen2 or mistral (transformers' Qwen2 / Mistral
    # layers, priced with the Llama kernels; their code repeats a grouped KV cache, serving_host.REPEAT_KV). A
    # preset sets its architecture's (presets.PRESET_EAGER_LAYERS) unless the spec states one.
    eager_layer: str = "llama"
    params_active: float | None = None
    preset: str | None = None
    image_tier: ImageTier | None = None
    image_arch: ImageArchitecture | None = None  # an image preset sized from its shapes (image_model.py)

    @property
    def is_image(self) -> bool:
        """Any image workload: sized from a preset's shapes or, without a preset, from a tier table."""
        return self.image_tier is not None or self.image_arch is not None

    @property
    def is_image_tier(self) -> bool:
        """Sized from the guides' tier table only (an architecture without a preset)."""
        return self.image_tier is not None

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1


@dataclass(frozen=True)
class LoraSpec:
    rank: int = 8
    targets: tuple[str, ...] = ("q_proj", "v_proj")
    # How the adapters run (lora_host.py): peft_eager (HF PEFT's nn.Module adapters in eager PyTorch, the default)
    # pays a host floor a layer and micro-batch; fused (NeMo / Megatron adapters, unsloth's kernels) and compiled
    # (torch.compile) do not.
    implementation: str = "peft_eager"
    # lora.dropout (PEFT's lora_dropout): above 0 an nn.Dropout kernel before lora_A, forward and backward, an
    # adapted linear (peft tuners/lora/layer.py); 0, PEFT's default, an nn.Identity.
    dropout: float = 0.0
    # lora.adapter_dtype (lora_host.py): base, the adapters in the base weights' dtype (peft 0.6 to 0.11); fp32,
    # fp32 adapters on a 16-bit base under torch autocast (peft 0.5's update_layer moves them by device only; peft
    # >= 0.12's get_peft_model(autocast_adapter_dtype=True) default upcasts them), which adds PEFT's and autocast's
    # casts each way an adapted linear. Language models only (refused on image models).
    adapter_dtype: str = "base"
    # lora.modules_to_save (PEFT's modules_to_save, axolotl's lora_modules_to_save): whole modules trained beside
    # the adapters, each a trainable copy.deepcopy of the frozen original at its dtype (peft v0.5.0
    # src/peft/utils/other.py 151-161, ModulesToSaveWrapper.update): () or any of "embeddings" (the input table)
    # and "output" (the LM head). Priced by params.saved_module_params and bytes_model / throughput / optimizer_step.
    modules_to_save: tuple[str, ...] = ()
