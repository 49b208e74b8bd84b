"""Every term of the communication and serving-speed model against hand-computed numbers.

Llama-2-7B: 6,738,415,616 parameters, 32 layers, hidden 4096 (the preset). Bandwidths below are per-GPU
collective GB/s as the ranking passes them: node link per direction x 0.8, fabric per instance / GPUs x 0.8.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import inference_throughput, training_throughput
from procurement.sizing.report import communication_warning
from procurement.sizing.throughput import (
    collective_latency_seconds,
    data_parallel_calls,
    decode_read_bytes,
    ring_latency_seconds,
    ring_seconds,
    tree_latency_seconds,
)
from tests.procurement.sizing.helpers import spec

P7 = 6_738_415_616
LAYERS, HIDDEN = 32, 4096
NVLINK = 450 * 0.8  # H100 NVLink 4: 900 GB/s both ways, 450 per direction, at 80% collective efficiency
EFA_PER_GPU = 3200 / 8 / 8 * 0.8  # p5.48xlarge: 3,200 Gb/s EFA = 400 GB/s per instance, 8 GPUs share it
PCIE4 = 32 * 0.8


def _train(workload, **rows):
    defaults = {"peak_tflops": 989.5, "gpu_counts": 1, "interconnect_gbps": NVLINK, "mfu": 0.4}
    return {k: np.asarray(v).item() for k, v in training_throughput(workload, **(defaults | rows)).items()}


def test_a_ring_moves_its_node_share_on_the_link_and_its_node_shard_on_the_fabric():
    # all-reduce of 1 GB over 16 ranks, 8 per node: node 2 x 7/8 x 1e9 / 360e9; fabric 2 x 1/2 x 1e9/8 / 40e9
    node_s, fabric_s = ring_seconds(2.0, 1e9, 16.0, 8.0, 360e9, 40e9)
    assert float(node_s) == pytest.approx(2 * 7 / 8 * 1e9 / 360e9, rel=1e-12)
    assert float(fabric_s) == pytest.approx(2 * 1 / 2 * 1e9 / 8 / 40e9, rel=1e-12)
    # one rank per node is the flat ring on the fabric; one node is the flat ring on the link
    assert float(ring_seconds(2.0, 1e9, 4.0, 1.0, 360e9, 40e9)[1]) == pytest.approx(2 * 3 / 4 * 1e9 / 40e9)
    assert [float(x) for x in ring_seconds(1.0, 1e9, 8.0, 8.0, 360e9, 0.0)] == [7 / 8 * 1e9 / 360e9, 0.0]


def test_it_splits_the_data_parallel_all_reduce_between_nvlink_and_efa():
    # 2 x p5.48xlarge, full fine-tune, bf16 gradients: S = 2 x P7 bytes per rank, once per step
    workload = spec(task="pretrain", training_tokens=1e9)
    rows = _train(workload, gpu_counts=16, gpus_per_node=8, fabric_gbps=EFA_PER_GPU)
    gradient = 2.0 * P7
    assert rows["gradient_seconds_node"] == pytest.approx(2 * 7 / 8 * gradient / (NVLINK * 1e9), rel=1e-12)
    assert rows["gradient_seconds_fabric"] == pytest.approx(2 * 1 / 2 * gradient / 8 / (EFA_PER_GPU * 1e9))
    assert rows["gradient_bytes_per_step"] == pytest.approx(2 * 15 / 16 * gradient)
    assert rows["gather_seconds_node"] == rows["gather_seconds_fabric"] == 0.0


@pytest.mark.parametrize("accumulation", [1, 3])
def test_zero3_reduce_scatters_and_gathers_the_parameters_every_micro_batch(accumulation):
    # ZeRO-3 on 8 GPUs of one node: per micro-batch a reduce-scatter of S and two all-gathers of W,
    # each (n-1)/n of the bytes on NVLink; S = W = 2 x P7 (bf16)
    workload = spec(task="pretrain", training_tokens=1e9, gradient_accumulation_steps=accumulation)
    zero3 = _train(workload, gpu_counts=8, zero_stage=3, gpus_per_node=8, fabric_gbps=0.0)
    weight = 2.0 * P7
    link = NVLINK * 1e9
    assert zero3["gradient_seconds_node"] == pytest.approx(accumulation * 7 / 8 * weight / link, rel=1e-12)
    assert zero3["gather_seconds_node"] == pytest.approx(2 * accumulation * 7 / 8 * weight / link, rel=1e-12)
    assert zero3["gather_bytes_per_step"] == pytest.approx(2 * accumulation * 7 / 8 * weight)
    # ZeRO-2 keeps the data-parallel volume: one all-reduce per step, no gathers
    zero2 = _train(workload, gpu_counts=8, zero_stage=2, gpus_per_node=8, fabric_gbps=0.0)
    assert zero2["gradient_seconds_node"] == pytest.approx(2 * 7 / 8 * weight / link, rel=1e-12)
    assert zero2["gather_seconds_node"] == 0.0


def test_fsdp_gathers_the_frozen_base_weights_of_lora():
    # LoRA r8 q,v: 4,194,304 fp32 adapters; FSDP still all-gathers the bf16 base, twice per micro-batch:
    # W = 6,738,415,616 x 2 + 4,194,304 x 4 = 13,493,608,448 bytes
    workload = spec(task="lora", training_tokens=1e8, parallelism={"gpus": 8, "zero_stage": 3})
    rows = _train(workload, gpu_counts=8, zero_stage=3, gpus_per_node=8, fabric_gbps=0.0)
    assert rows["gather_bytes_per_step"] == pytest.approx(2 * 7 / 8 * 13_493_608_448)
    assert rows["gradient_bytes_per_step"] == pytest.approx(7 / 8 * 4_194_304 * 4)


@pytest.mark.parametrize(("checkpointing", "per_layer"), [("none", 4), ("full", 6)])
def test_it_counts_tensor_parallel_all_reduces_per_layer(checkpointing, per_layer):
    # TP=4 in a node: per micro-batch per layer 4 all-reduces (6 with full recomputation) of
    # s x b x h x 2 bytes = 2048 x 2 x 4096 x 2, each moving 2(t-1)/t of it, plus 20 us latency
    workload = spec(
        task="pretrain",
        training_tokens=1e9,
        micro_batch_size=2,
        gradient_accumulation_steps=2,
        gradient_checkpointing=checkpointing,
    )
    rows = _train(workload, gpu_counts=4, tensor_parallel=4, gpus_per_node=8, fabric_gbps=0.0)
    calls = per_layer * LAYERS * 2
    volume = calls * 2 * 3 / 4 * 2048 * 2 * HIDDEN * 2
    assert rows["tensor_parallel_bytes_per_step"] == pytest.approx(volume, rel=1e-12)
    assert rows["tensor_parallel_seconds"] == pytest.approx(
        volume / (NVLINK * 1e9) + calls * 20e-6, rel=1e-12
    )


def test_pipeline_sends_cross_the_fabric_when_the_stages_outgrow_a_node():
    # TP 8 x PP 2 on 16 GPUs, 8 per node: each micro-batch sends activations forward and gradients back,
    # s x b x h x 2 = 2048 x 1 x 4096 x 2 bytes each, 4 micro-batches, over EFA; each of the 8 TP ranks
    # sends its 1 / 8 (the stage output is split over them under sequence parallelism, Megatron's
    # scatter/gather of stage outputs, Narayanan et al. 2021 sec. 4.1; par26, was the whole message)
    workload = spec(task="pretrain", training_tokens=1e9, gradient_accumulation_steps=4)
    rows = _train(
        workload,
        gpu_counts=16,
        tensor_parallel=8,
        pipeline_parallel=2,
        gpus_per_node=8,
        fabric_gbps=EFA_PER_GPU,
    )
    volume = 2 * 4 * 2048 * HIDDEN * 2 / 8
    assert rows["pipeline_bytes_per_step"] == pytest.approx(volume, rel=1e-12)
    assert rows["pipeline_seconds"] == pytest.approx(volume / (EFA_PER_GPU * 1e9), rel=1e-12)
    assert rows["pipeline_on_fabric"]
    # TP all-reduces: 4 per layer of the stage's 32 / 2 layers, per micro-batch, 2 x 7/8 of the message each
    assert rows["tensor_parallel_bytes_per_step"] == pytest.approx(4 * 16 * 4 * 2 * 7 / 8 * 2048 * HIDDEN * 2)


def test_the_step_exposes_what_overlap_cannot_hide_and_the_share_counts_every_collective():
    # 2 nodes x 8, plain data parallel on a slow 1 GB/s fabric: compute C, all-reduce D (node + fabric +
    # per-call latency); step = C + max(0, D - 0.67 C); share = D / (C + D)
    workload = spec(task="pretrain", training_tokens=1e9, micro_batch_size=4)
    rows = _train(workload, gpu_counts=16, gpus_per_node=8, fabric_gbps=1.0)
    # 6 FLOPs a weight but the 32,000 x 4,096 input embedding's (a lookup; moe42), + causal attention
    compute = (6 * (P7 - 32_000 * HIDDEN) + 6 * 32 * 2048 * 4096) * 2048 * 4 * 16 / (16 * 989.5e12 * 0.4)
    gradient = 2.0 * P7
    # 13,476,831,232 gradient bytes in pretraining buckets of max(40M, 1M x 16) = 40M bf16 parameters
    # (Megatron-LM's default, 80,000,000 bytes): 169 calls, each 8.4 + 28 x 3.4 + 2 x 9.6 = 122.8 us
    latency = 169 * 122.8e-6
    comm = 2 * 7 / 8 * gradient / (NVLINK * 1e9) + 2 * 1 / 2 * gradient / 8 / 1e9 + latency
    assert rows["compute_seconds"] == pytest.approx(compute, rel=1e-12)
    assert rows["step_seconds"] == pytest.approx(compute + comm - 0.67 * compute, rel=1e-12)
    assert rows["communication_share"] == pytest.approx(comm / (compute + comm), rel=1e-12)
    assert rows["training_tokens_per_second"] == pytest.approx(2048 * 4 * 16 / rows["step_seconds"])


def test_a_multi_node_job_without_a_fabric_never_finishes():
    workload = spec(task="pretrain", training_tokens=1e9)
    rows = _train(workload, gpu_counts=16, gpus_per_node=8, fabric_gbps=0.0)
    assert not np.isfinite(rows["training_hours"])


SERVE_8B = {"preset": "llama-3.1-8b"}  # 32 layers, hidden 4096


def test_serving_tensor_parallelism_pays_its_decode_all_reduces_over_pcie():
    # TP=2 on PCIe 4.0: each decode step does 2 x 32 all-reduces of concurrency x 4096 x 2 bytes, moving
    # 2 x 1/2 of it at 25.6 GB/s, plus 20 us each; prefill the same with the prompt's tokens
    workload = spec(
        task="inference",
        model=SERVE_8B,
        precision="bf16",
        inference={"concurrency": 16, "context_len": 2048, "output_tokens": 512},
    )
    kw = {"bandwidth_gbps": 864.0, "peak_tflops": 362.05, "gpu_counts": 4, "tensor_parallel": 2}
    pcie = inference_throughput(workload, tensor_parallel_gbps=PCIE4, **kw)
    fast = inference_throughput(workload, **kw)  # no link given: latency only
    decode_comm = 64 * (2 * 1 / 2 * 16 * 4096 * 2 / (PCIE4 * 1e9) + 20e-6)
    prefill_comm = 64 * (2 * 1 / 2 * 1536 * 4096 * 2 / (PCIE4 * 1e9) + 20e-6)
    assert float(pcie["decode_communication_seconds"]) == pytest.approx(decode_comm, rel=1e-12)
    step = float(fast["decode_step_seconds"]) - 64 * 20e-6 + decode_comm
    assert float(pcie["decode_step_seconds"]) == pytest.approx(step, rel=1e-12)
    ttft = float(fast["time_to_first_token_seconds"]) - 64 * 20e-6 + prefill_comm
    assert float(pcie["time_to_first_token_seconds"]) == pytest.approx(ttft, rel=1e-12)


def test_decode_totals_are_concurrency_over_the_step_times_replicas():
    workload = spec(
        task="inference",
        model=SERVE_8B,
        precision="bf16",
        inference={"concurrency": 16, "context_len": 2048, "output_tokens": 512},
    )
    weight_read, kv_read = decode_read_bytes(workload, 16.0)
    rows = inference_throughput(
        workload, bandwidth_gbps=864.0, peak_tflops=362.05, gpu_counts=4, tensor_parallel=2, generation=89
    )
    # memory bound: the weights read once by the GEMMs, then 16 streams' KV by attention, each over
    # 2 x 864 GB/s x 0.7, plus 64 all-reduce latencies
    step = weight_read / (2 * 864e9 * 0.7) + 16 * kv_read / (2 * 864e9 * 0.7) + 64 * 20e-6
    assert float(rows["decode_step_seconds"]) == pytest.approx(step, rel=1e-12)
    assert float(rows["decode_tokens_per_second_per_stream"]) == pytest.approx(1 / step, rel=1e-12)
    # every 512 steps each stream's 1,536-token prompt is prefilled once at the Ada 16-bit prefill
    # efficiency (0.68); no link given, so its all-reduce bytes cost nothing. moe42: 2 FLOPs a weight but the
    # 128,256 x 4,096 input embedding's (a lookup)
    prompt = (2 * (8_030_261_248 - 128_256 * 4096) + 2 * 32 * 1536 * 4096) * 1536 / (2 * 362.05e12 * 0.68)
    prefill_per_step = 16 * prompt / 512
    assert float(rows["prefill_seconds_per_step"]) == pytest.approx(prefill_per_step, rel=1e-12)
    assert float(rows["decode_tokens_per_second_total"]) == pytest.approx(
        16 / (step + prefill_per_step) * 2, rel=1e-12
    )  # 2 replicas


def test_prefill_compute_divides_by_the_tensor_parallel_gpus():
    # (2 x (8,030,261,248 - the 128,256 x 4,096 input embedding, a lookup) + attention) x 1536 prompt tokens over
    # 2 GPUs x 362.05 TFLOPS x 0.68 (compute bound; Ada is generation 89: the 16-bit prefill efficiency fitted on
    # the A100; moe42: 0.69 and the embedding counted before)
    workload = spec(
        task="inference",
        model=SERVE_8B,
        precision="bf16",
        inference={"concurrency": 1, "context_len": 2048, "output_tokens": 512},
    )
    rows = inference_throughput(
        workload, bandwidth_gbps=864.0, peak_tflops=362.05, gpu_counts=2, tensor_parallel=2, generation=89
    )
    # plus causal attention over the 1,536-token prompt: 2 x 32 layers x 1536 x d_attn 4096 per token
    prefill = (2 * (8_030_261_248 - 128_256 * 4096) + 2 * 32 * 1536 * 4096) * 1536 / (2 * 362.05e12 * 0.68)
    assert float(rows["time_to_first_token_seconds"]) == pytest.approx(prefill + 64 * 20e-6, rel=1e-12)


def test_moe_decode_reads_only_the_experts_some_stream_picks():
    # Mixtral 8x7B: routed experts 32 layers x 8 x 3 x 4096 x 14336 = 45,097,156,608 params; with 4 streams
    # each expert is untouched with probability (6/8)^4, so that share of them is not read
    workload = spec(
        task="inference",
        model={"preset": "mixtral-8x7b"},
        precision="bf16",
        inference={"concurrency": 4, "context_len": 512},
    )
    weight_read, _ = decode_read_bytes(workload, 4.0)
    routed = 32 * 8 * 3 * 4096 * 14336
    untouched = routed * (6 / 8) ** 4
    embedding = 32000 * 4096 * 2
    assert weight_read == pytest.approx(46_702_792_704 * 2 - embedding - untouched * 2, rel=1e-12)


def test_it_reads_the_experts_a_prompt_routes_to_for_the_first_token():
    # fix43s: Mixtral, one stream, a 3-token prompt (context 4, 1 output token). The first token's forward reads
    # the experts its 3 tokens route to, untouched with probability (6/8)^3 (uniform routing); the decode step
    # still reads one stream's, (6/8)^1. H100 SXM, bf16, read-bound: reads at 3,350 GB/s x 0.7 + 32 x 110 us.
    workload = spec(
        task="inference",
        model={"preset": "mixtral-8x7b"},
        precision="bf16",
        inference={"concurrency": 1, "context_len": 4, "output_tokens": 1},
    )
    rows = inference_throughput(workload, bandwidth_gbps=3350.0, peak_tflops=989.5, generation=90)
    routed, embedding = 32 * 8 * 3 * 4096 * 14336, 32000 * 4096 * 2
    prompt_read = 46_702_792_704 * 2 - embedding - routed * (6 / 8) ** 3 * 2
    _, kv_read = decode_read_bytes(workload, 1.0)
    rate = 3350e9 * 0.7
    assert decode_read_bytes(workload, 3.0)[0] == pytest.approx(prompt_read, rel=1e-12)
    ttft = (prompt_read + kv_read) / rate + 32 * 110e-6
    assert float(rows["time_to_first_token_seconds"]) == pytest.approx(ttft, rel=1e-12)
    step_read = 46_702_792_704 * 2 - embedding - routed * (6 / 8) * 2
    assert float(rows["decode_step_seconds"]) >= step_read / rate
    assert float(rows["decode_step_seconds"]) < prompt_read / rate


@settings(max_examples=60, deadline=None)
@given(
    per_node=st.sampled_from([1, 2, 4, 8]),
    nodes=st.integers(1, 8),
    zero=st.sampled_from([0, 3]),
    fabric=st.floats(0.5, 500.0),
    node=st.floats(5.0, 900.0),
    accumulation=st.integers(1, 4),
)
def test_more_bandwidth_never_makes_a_plan_slower(per_node, nodes, zero, fabric, node, accumulation):
    workload = spec(task="pretrain", training_tokens=1e9, gradient_accumulation_steps=accumulation)
    kw = {"gpu_counts": per_node * nodes, "zero_stage": zero, "gpus_per_node": per_node}
    base = _train(workload, interconnect_gbps=node, fabric_gbps=fabric, **kw)["training_hours"]
    doubled_fabric = _train(workload, interconnect_gbps=node, fabric_gbps=2 * fabric, **kw)["training_hours"]
    doubled_node = _train(workload, interconnect_gbps=2 * node, fabric_gbps=fabric, **kw)["training_hours"]
    assert doubled_fabric <= base * (1 + 1e-12)
    assert doubled_node <= base * (1 + 1e-12)
    no_fabric = _train(workload, interconnect_gbps=node, fabric_gbps=0.0, **kw)["training_hours"]
    assert base <= no_fabric  # adding a fabric never makes a plan slower (without one it never finishes)


def test_a_ring_call_costs_nccls_base_latency_plus_one_hop_latency_per_step():
    # NCCL tuning.cc ring / Simple: 8.4 us base, 3.4 us per NVLink step, 9.6 us per network step.
    # All-reduce over 16 ranks on 2 nodes: 2 x 15 = 30 steps, 2 x 1 = 2 across nodes:
    # 8.4 + 28 x 3.4 + 2 x 9.6 = 122.8 us per call
    assert float(ring_latency_seconds(2.0, 10.0, 16.0, 8.0)) == pytest.approx(10 * 122.8e-6, rel=1e-12)
    # all-gather over 1,536 ranks on 192 nodes: 1,535 steps, 191 across nodes:
    # 8.4 + 1,344 x 3.4 + 191 x 9.6 = 6,411.6 us
    assert float(ring_latency_seconds(1.0, 1.0, 1536.0, 8.0)) == pytest.approx(6411.6e-6, rel=1e-12)
    # one node of 8, all-reduce: 14 steps on NVLink: 8.4 + 14 x 3.4 = 56 us
    assert float(ring_latency_seconds(2.0, 1.0, 8.0, 8.0)) == pytest.approx(56e-6, rel=1e-12)
    # one rank, or no calls, costs nothing
    assert (
        float(ring_latency_seconds(2.0, 5.0, 1.0, 1.0))
        == float(ring_latency_seconds(2.0, 0.0, 8.0, 8.0))
        == 0
    )


def test_an_all_reduce_across_many_nodes_pays_the_trees_latency_as_nccl_picks_it():
    # NCCL tuning.cc (commit 01afd20a) tree / Simple: baseLat 0, 28 us per NVLink level, 50 us per network
    # level; latency = 2 x ((ranks per node - 1) x 28 + log2(nodes) x 50) us. NCCL runs the faster algorithm.
    # 256 nodes, one data-parallel rank each (TP 8 fills the node): tree 2 x 8 x 50 = 800 us a call;
    # ring 8.4 + 2 x 255 x 9.6 = 4,904.4 us. 621 buckets of 25 MiB: 0.4968 s on the tree, not 3.05 s.
    assert float(tree_latency_seconds(1.0, 256.0, 1.0)) == pytest.approx(800e-6, rel=1e-12)
    assert float(ring_latency_seconds(2.0, 1.0, 256.0, 1.0)) == pytest.approx(4904.4e-6, rel=1e-12)
    assert float(collective_latency_seconds(2.0, 621.0, 256.0, 1.0)) == pytest.approx(0.4968, rel=1e-12)
    # inside one node the ring is faster (56 us against the tree's 2 x 7 x 28 = 392 us) and is kept
    assert float(collective_latency_seconds(2.0, 1.0, 8.0, 8.0)) == pytest.approx(56e-6, rel=1e-12)
    # 16 ranks on 2 nodes: ring 122.8 us, tree 2 x (7 x 28 + 1 x 50) = 492 us: the ring
    assert float(collective_latency_seconds(2.0, 1.0, 16.0, 8.0)) == pytest.approx(122.8e-6, rel=1e-12)
    # reduce-scatters and all-gathers have only the ring (6,411.6 us over 1,536 ranks on 192 nodes)
    assert float(collective_latency_seconds(1.0, 1.0, 1536.0, 8.0)) == pytest.approx(6411.6e-6, rel=1e-12)


def test_it_counts_bucketed_all_reduces_and_per_layer_zero3_calls():
    # DDP fine-tune: 13,476,831,232 bf16 gradient bytes (Llama-2-7B) / 26,214,400 (PyTorch's 25 MiB) = 514.1
    # -> 515 buckets
    finetune = spec(task="full_finetune", training_tokens=1e9, gradient_accumulation_steps=3)
    ddp = _train(finetune, gpu_counts=8, gpus_per_node=8, fabric_gbps=0.0)
    assert (ddp["gradient_calls_per_step"], ddp["gather_calls_per_step"]) == (515, 0)
    assert ddp["gradient_latency_seconds"] == pytest.approx(515 * 56e-6, rel=1e-12)
    # Pretraining (Megatron-LM DistributedDataParallel): buckets of max(40M, 1M x dp) parameters. 8 ranks:
    # 40M x 2 B = 80 MB, 13,476,831,232 / 8e7 = 168.5 -> 169; 2048 ranks: 2,048M x 2 B, 13.48 GB -> 4 calls
    workload = spec(task="pretrain", training_tokens=1e9, gradient_accumulation_steps=3)
    assert _train(workload, gpu_counts=8, gpus_per_node=8, fabric_gbps=0.0)["gradient_calls_per_step"] == 169
    calls, _ = data_parallel_calls(workload, np.array(False), 2.0 * P7, 1.0, 2048.0, 2.0)
    assert float(calls) == 4.0
    # ZeRO-3: per micro-batch per layer one reduce-scatter and two all-gathers: 32 x 3 = 96 and 192
    zero3 = _train(workload, gpu_counts=8, zero_stage=3, gpus_per_node=8, fabric_gbps=0.0)
    assert (zero3["gradient_calls_per_step"], zero3["gather_calls_per_step"]) == (96, 192)
    # a reduce-scatter or all-gather on 8 ranks: 7 steps, 8.4 + 7 x 3.4 = 32.2 us
    assert zero3["gradient_latency_seconds"] == pytest.approx(96 * 32.2e-6, rel=1e-12)
    assert zero3["gather_latency_seconds"] == pytest.approx(192 * 32.2e-6, rel=1e-12)
    # data_parallel_calls directly, with 2 pipeline stages: 16 layers per stage
    gradient_calls, gather_calls = data_parallel_calls(workload, np.array(True), 1.0, 2.0)
    assert (float(gradient_calls), float(gather_calls)) == (48.0, 96.0)


def test_the_size_report_uses_the_hierarchical_links():
    from procurement.sizing import gpu_by_slug
    from procurement.sizing.gpus import hierarchical_links

    # 16 H100s: 8 per node on NVLink 4 (900 GB/s both ways: 450 x 0.8), 400 Gb/s per GPU between nodes (50 x 0.8;
    # moe26b: DGX H100's 8 x 400 Gb/s ConnectX-7, was 200 Gb/s); A100s keep 200 Gb/s (DGX A100's HDR, 25 x 0.8)
    assert hierarchical_links(gpu_by_slug("h100-sxm5-80gb"), 16) == {
        "gpus_per_node": 8.0,
        "interconnect_gbps": 360.0,
        "fabric_gbps": 40.0,
    }
    assert hierarchical_links(gpu_by_slug("a100-sxm4-80gb"), 16)["fabric_gbps"] == 20.0
    assert hierarchical_links(gpu_by_slug("h100-sxm5-80gb"), 4)["gpus_per_node"] == 4.0


def test_the_zero3_validation_case_pays_288_calls_of_6_4_ms():
    from procurement.sizing import parse_workload_spec
    from procurement.sizing.validation import CASES, _training_rows

    case = CASES["megatron-175b-zero3-1536"]
    rows = _training_rows(parse_workload_spec(case.spec), case)
    # GPT-3 175B: 96 layers, one micro-batch: 96 reduce-scatters + 192 all-gathers over 1,536 ranks / 192 nodes
    assert rows["gather_latency_seconds"] == pytest.approx(192 * 6411.6e-6, rel=1e-9)
    assert rows["gradient_latency_seconds"] == pytest.approx(96 * 6411.6e-6, rel=1e-9)
    # hierarchical: the fabric carries 1/8 of the node's ring volume per GPU: (191/192) x W / 8 / 20 GB/s
    weight = rows["gather_bytes_per_step"] / (2 * 1535 / 1536)  # W: two gathers of (n-1)/n x W per step
    assert rows["gather_seconds_fabric"] == pytest.approx(2 * 191 / 192 * weight / 8 / 20e9, rel=1e-9)


def test_it_states_the_exposed_share_apart_from_all_the_traffic():
    # The same plain data-parallel step as above (compute C, all-reduce D, 0.67 C of it hidden): the share that
    # costs time is max(0, D - 0.67 C) / step, while communication_share keeps D / (C + D) (comm26's
    # definition). pres26: the warning used to state D / (C + D) as "of step time".
    workload = spec(task="pretrain", training_tokens=1e9, micro_batch_size=4)
    rows = _train(workload, gpu_counts=16, gpus_per_node=8, fabric_gbps=1.0)
    compute, step = float(rows["compute_seconds"]), float(rows["step_seconds"])
    exposed = step - compute
    assert rows["exposed_communication_seconds"] == pytest.approx(exposed, rel=1e-12)
    assert rows["data_parallel_exposed_seconds"] == pytest.approx(exposed, rel=1e-12)
    assert rows["exposed_communication_share"] == pytest.approx(exposed / step, rel=1e-12)
    assert rows["exposed_communication_share"] < rows["communication_share"]


def test_the_communication_warning_reads_the_exposed_share():
    # 29% of all traffic but 12% exposed: no warning (the hidden part costs no time); 45% exposed warns and
    # says both figures
    quiet = {"communication_share": 0.29, "exposed_communication_share": 0.12}
    assert communication_warning(quiet) is None
    assert communication_warning({"communication_share": 0.6, "exposed_communication_share": 0.2}) is None
    loud = communication_warning({"communication_share": 0.6, "exposed_communication_share": 0.45})
    assert loud == (
        "communication: 45% of step time exposed (60% counting the traffic hidden under compute): "
        "adding GPUs stops scaling linearly"
    )
