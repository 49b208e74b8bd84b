"""One step of torchtune's LoRA recipe at pytorch/torchtune@a95c6b93, on CPU, with torchtune's own modules:
the bytes a layer saves for backward and the step's peak above the weights (issue 26, the README's 7B LoRA rows).

    git -C <torchtune clone> archive a95c6b931dd12a014780ded1581ea504aa4e0129 torchtune | tar -x -C /tmp/tt
    python benchmarks/torchtune_memory_trace.py --torchtune /tmp/tt --layers 2 --seq 128 [--ckpt]

Llama 2 7B widths (h 4,096, 32 heads, vocab 32,000), bf16, LoRA r 8 on q/v, batch 2. The step is the recipe's
train() body (lora_finetune_single_device.py): model, shift + contiguous, nn.CrossEntropyLoss on the transpose,
backward. CUDA's fused dropout (a 1-byte mask) is emulated with torch.native_dropout; at a95c6b93 LoRALinear is
built without the configured lora_dropout (p = 0), so nothing is saved either way. Peak: the profiler's raw
allocation records, summed in time order. Results on 2026-12-06 (torch 2.13 CPU): no checkpointing, 2 layers,
2 x 128 tokens: 131,750 B a token a layer saved (123,556 layer 0, 139,944 layer 1), step peak 787,888 B a token;
with checkpointing 540,812 B a token.
"""

from __future__ import annotations

import argparse
import sys
import types


def _stub_imports() -> None:
    """torchtune/__init__ imports its dataset and tokenizer stack; the modules measured here need none of it."""
    for name in ("datasets", "sentencepiece", "omegaconf", "wandb"):
        module = types.ModuleType(name)
        module.load_dataset = None  # type: ignore[attr-defined]
        module.SentencePieceProcessor = object  # type: ignore[attr-defined]
        module.DictConfig = dict  # type: ignore[attr-defined]
        module.OmegaConf = object  # type: ignore[attr-defined]
        sys.modules.setdefault(name, module)
    resources = types.ModuleType("pkg_resources")
    resources.packaging = __import__("packaging")  # type: ignore[attr-defined]
    sys.modules.setdefault("pkg_resources", resources)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchtune", required=True, help="a directory holding torchtune/ at a95c6b93")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--ckpt", action="store_true", help="enable_activation_checkpointing")
    args = parser.parse_args()
    sys.path.insert(0, args.torchtune)
    _stub_imports()

    import torch
    from torch import nn
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile
    from torchtune import modules, utils
    from torchtune.models.llama2._component_builders import lora_llama2
    from torchtune.modules.peft.peft_utils import get_adapter_params, set_trainable_params

    def dropout_forward(self, x):
        return torch.native_dropout(x, self.p, True)[0] if self.training and self.p > 0 else x

    nn.Dropout.forward = dropout_forward  # CUDA's fused kernel: bool mask
    torch.manual_seed(0)
    with utils.set_default_dtype(torch.bfloat16):
        model = lora_llama2(
            lora_attn_modules=["q_proj", "v_proj"],
            vocab_size=32000,
            num_layers=args.layers,
            num_heads=32,
            num_kv_heads=32,
            embed_dim=4096,
            max_seq_len=4096,
            lora_rank=8,
            lora_alpha=16,
            lora_dropout=0.05,
        )
    set_trainable_params(model, get_adapter_params(model))
    if args.ckpt:
        utils.set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerDecoderLayer})
    model.train()
    loss_fn = nn.CrossEntropyLoss()
    batch, tokens = 2, 2 * args.seq
    ids = torch.randint(0, 32000, (batch, args.seq))
    labels = torch.randint(0, 32000, (batch, args.seq))

    if not args.ckpt:
        owned = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers()]}
        saved: dict[int, int] = {}

        def pack(tensor):
            storage = tensor.untyped_storage()
            if storage.data_ptr() not in owned:
                saved[storage.data_ptr()] = storage.nbytes()
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            hidden = model.tok_embeddings(ids)
            for layer in model.layers:
                hidden = layer(hidden)
        print(f"saved for backward: {sum(saved.values()) / args.layers / tokens:,.0f} B a token a layer")
        del hidden

    def step():
        logits = model(ids)
        logits = logits[..., :-1, :].contiguous()
        logits = logits.transpose(1, 2)
        loss_fn(logits, labels[..., 1:].contiguous()).backward()

    step()
    for parameter in model.parameters():
        parameter.grad = None
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    records: list[tuple[int, int]] = []

    def walk(nodes):
        for node in nodes:
            if node.tag == _EventType.Allocation:
                records.append((node.start_time_ns, node.extra_fields.alloc_size))
            walk(node.children)

    walk(prof.profiler.kineto_results.experimental_event_tree())
    live = peak = 0
    for _, size in sorted(records):
        live += size
        peak = max(peak, live)
    print(
        f"step peak above the weights: {peak / tokens:,.0f} B a token ({args.layers} layers, ckpt {args.ckpt})"
    )


if __name__ == "__main__":
    main()
