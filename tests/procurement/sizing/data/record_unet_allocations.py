"""Records sd14_unet_forward_allocations.json: the allocations and frees, in order, of one no-grad forward of
diffusers 0.11.0's UNet2DConditionModel (the CompVis/stable-diffusion-v1-4 layout: 320/640/1280/1280 channels,
2 layers a level, cross-attention width 768; random weights) on CPU, as LambdaLabsML/lambda-diffusers'
benchmark ran it (diffusers 0.11.0, enable_xformers_memory_efficient_attention). xformers needs CUDA, so its
processor's attention call is replaced by PyTorch's flash kernel for CPU on the same head-batched q, k and v
(neither materializes the scores); every other line of the forward is diffusers' own.

Channels are divided by 5 (64/128/256/256, every tensor that matters scales with them) and fp32 CPU tensors
are recorded at a batch of 8 samples to keep the run short; the test scales the sizes up. Not part of the
product or its requirements. Reproduce with a separate environment:

    pip install diffusers==0.11.0 huggingface_hub==0.11.1 torch
    python record_unet_allocations.py 8 5 sd14_unet_forward_allocations.json

Each event is [n, bytes] for the n-th allocation or [-1 - n, bytes] for its free.
"""

import json
import sys

import torch
from diffusers import UNet2DConditionModel
from diffusers.models import attention
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile


def _attention_without_scores(self, query, key, value, attention_mask):
    q, k, v = (t.contiguous().unsqueeze(1) for t in (query, key, value))
    out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0]
    return self.reshape_batch_dim_to_heads(out.squeeze(1))


def _allocations(node, found):
    if node.typed[0] == _EventType.Allocation:
        found.append((node.start_time_ns, node.typed[1].ptr, node.typed[1].alloc_size))
    for child in node.children:
        _allocations(child, found)


def main(batch: int, divisor: int, path: str) -> None:
    attention.CrossAttention._memory_efficient_attention_xformers = _attention_without_scores
    channels = tuple(c // divisor for c in (320, 640, 1280, 1280))
    unet = UNet2DConditionModel(cross_attention_dim=768, sample_size=64, block_out_channels=channels).eval()
    for module in unet.modules():
        if isinstance(module, attention.CrossAttention):
            module._use_memory_efficient_attention_xformers = True
    sample, context = torch.randn(batch, 4, 64, 64), torch.randn(batch, 77, 768)
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        unet(sample, torch.tensor(500), encoder_hidden_states=context)
    found = []
    for root in prof.profiler.kineto_results.experimental_event_tree():
        _allocations(root, found)
    live, events, count = {}, [], 0
    for _, ptr, size in sorted(found):
        if size > 0:
            live[ptr], count = count, count + 1
            events.append([live[ptr], size])
        elif ptr in live:
            events.append([-1 - live.pop(ptr), -size])
    record = {
        "channels": channels,
        "batch": batch,
        "bytes_per_element": 4,
        "latent_side": 64,
        "events": events,
    }
    with open(path, "w") as out:
        json.dump(record, out, separators=(",", ":"))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
