"""A DiT's work per kernel, eager torchao int8 weight-only traffic and low-bit generations' frozen parts (issue 29,
round 5 of the outside review: sayakpaul/diffusers-torchao@9b9f2383 FLUX.1-dev on an H100 SXM)."""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import eight_bit_rate, spec_peak_tflops
from procurement.sizing.image_shapes import dit_cost
from procurement.sizing.memory import memory_breakdown_scalar


def _spec(**fields):
    return parse_workload_spec(fields)


def _flux(**fields):
    return _spec(task="inference", model={"preset": "flux.1-dev"}, **fields)


def test_it_counts_a_flux_forwards_kernels_as_diffusers_runs_them():
    # 19 joint blocks x (2 streams x (q, k, v, out, 2 MLP, adaLN) + 1 attention = 15) + 38 single blocks x
    # (adaLN, q, k, v, proj_mlp, proj_out + 1 attention = 7) + patch embedding, context embedder, proj_out
    assert im.network_cost("flux.1-dev", 1024).gemm_kernels == 19 * 15 + 38 * 7 + 3 == 554
    assert im.network_cost("sd3-medium", 1024).gemm_kernels == 24 * 15 + 3


def test_it_states_a_dits_tokens_in_the_fit_unets_rows_of_equal_work_per_kernel():
    flux, sdxl = im.network_cost("flux.1-dev", 1024), im.network_cost("sdxl-base-1.0", 1024)
    # per kernel: FLUX 37,189.05 GMAC / 554 = 67.1 GMAC; SDXL 3,380.59 / 930 = 3.64 GMAC over 1,317.42 rows
    assert flux.macs / 554 == pytest.approx(67.13e9, rel=1e-3)
    assert sdxl.macs / sdxl.params == pytest.approx(1317.42, rel=1e-5)
    rows = (37_189.048e9 / 554) / (3_380.593e9 / 930 / 1_317.4157)
    assert im.rows_per_sample(flux) == pytest.approx(rows, rel=1e-6)
    assert rows / 4608 == pytest.approx(5.28, abs=0.01)  # 5.3x the work per row of the fit UNet
    # UNets keep MACs per weight, the fit network unchanged
    assert im.rows_per_sample(sdxl) == pytest.approx(sdxl.macs / sdxl.params, rel=1e-12)


def test_eager_int8_weight_only_pays_the_dequantize_and_the_output_passes():
    spec = _flux(weight_quantization="int8")
    # torchao _linear_fp_act_int8_weight_impl per forward: 11,901.41M weights x (1 B read + 2 B bf16 copy
    # written) + every linear output rescaled and biased (2 x (2 + 2) B): joint blocks write q, k, v, out,
    # MLP up (4h) and down = 9h per token, single blocks q, k, v, MLP up and linear2 = 8h:
    # (19 x 9 + 38 x 8) x 3,072 x 4,608 = 6,723.99M elements; 28 steps, batch 1
    outputs = (19 * 9 + 38 * 8) * 3072 * 4608
    expected = 28 * (11_901.41e6 * 3 + outputs * 8)
    assert im.weight_dequantize_bytes_per_image(spec) == pytest.approx(expected, rel=1e-9)
    assert expected / (0.7 * 3350e9) == pytest.approx(1.07, abs=0.01)  # seconds on an H100 SXM
    # the weights' part is shared by a batch's images, the outputs' is per image
    batch = _flux(weight_quantization="int8", micro_batch_size=4)
    assert im.weight_dequantize_bytes_per_image(batch) == pytest.approx(
        28 * (11_901.41e6 * 3 / 4 + outputs * 8), rel=1e-9
    )
    # compiled (fused into the GEMM) and bf16: nothing added
    assert (
        im.weight_dequantize_bytes_per_image(_flux(weight_quantization="int8", image={"fused_kernels": True}))
        == 0
    )
    assert im.weight_dequantize_bytes_per_image(_flux()) == 0
    # bitsandbytes nf4 (img29d): MatMul4Bit unpacks every weight to bf16 each call, 0.5 B read + 2 B written,
    # compiled or not, and nothing per output: 28 x 11,901.41M x 2.5 B = 833.10 GB
    nf4 = 28 * 11_901.41e6 * 2.5
    assert im.weight_dequantize_bytes_per_image(_flux(weight_quantization="nf4")) == pytest.approx(nf4)
    compiled_nf4 = _flux(weight_quantization="nf4", image={"fused_kernels": True})
    assert im.weight_dequantize_bytes_per_image(compiled_nf4) == pytest.approx(nf4)
    assert im.inference_traffic_bytes_per_image(spec) - im.inference_traffic_bytes_per_image(
        _flux()
    ) == pytest.approx(expected, rel=1e-9)


def test_a_low_bit_generation_keeps_its_text_encoders_and_vae_in_16_bits():
    # SDXL fp8 (MLPerf's UNet engines): UNet 2,567.46M x 1 B + CLIP-L 123.06M, OpenCLIP-bigG 694.66M and the
    # VAE 83.65M x 2 B = 4.3712 GB = 4.071 GiB (before: every part at 1 B, and the VAE at 4 B as if upcast)
    spec = _spec(task="inference", model={"preset": "sdxl"}, precision="fp8")
    weights = (2_567.46e6 + (123.06e6 + 694.66e6 + 83.65e6) * 2) / 2**30
    assert memory_breakdown_scalar(spec, 1)["weights_gib"] == pytest.approx(weights, rel=1e-6)
    assert weights == pytest.approx(4.071, abs=1e-3)
    # FLUX.1-dev fp8: 11,901.41M x 1 B beside bf16 T5-XXL 4,762M, CLIP-L 123.06M and VAE 83.65M = 20.34 GiB
    # ([TORCHAO] fp8dq model_memory 20.357 GiB)
    fp8 = memory_breakdown_scalar(_flux(precision="fp8"), 1)["weights_gib"]
    assert fp8 == pytest.approx(20.34, abs=0.01)
    # image.quantize_text_encoders states the other recipe: T5's and CLIP's linears go to 1 B (embeddings and
    # T5's fp32 `wo` kept, as under weight_quantization)
    both = _flux(precision="fp8", image={"quantize_text_encoders": True})
    assert im.quantizes_text_encoders(both)
    assert memory_breakdown_scalar(both, 1)["weights_gib"] < fp8 - 1.5
    # training at fp8 keeps the 16-bit working weights it had (compute_bytes 2): unchanged
    assert not im.is_low_bit_generation(
        _spec(task="full_finetune", model={"preset": "sdxl"}, precision="fp8")
    )


def test_a_dits_8_bit_linears_run_at_the_dit_rate_a_unets_at_the_unet_rate():
    sdxl = _spec(task="inference", model={"preset": "sdxl"}, precision="fp8")
    flux = _flux(precision="fp8", image={"fused_kernels": True})
    assert eight_bit_rate(sdxl) == 0.581  # NVIDIA's MLPerf v4.1 SDXL fp8 run: unchanged
    assert eight_bit_rate(flux) == 0.691
    # H100 SXM 1,979 fp8 / 989.5 bf16 (gpu_specs.csv): the harmonic mean over FLUX's quantized share
    share = im.quantized_flops_share(flux)
    assert 0.75 < share < 0.85  # attention, T5, CLIP and the VAE decode are the rest
    peak = spec_peak_tflops(flux, gpu_by_slug("h100-sxm5-80gb"))
    assert peak == pytest.approx(1.0 / (share / (0.691 * 1979) + (1 - share) / 989.5), rel=1e-3)


def test_the_dit_8_bit_rate_reproduces_its_fit_point_cogvideox_5b_on_an_h100():
    """sayakpaul/diffusers-torchao README (0803ee2b) 'CogVideoX Benchmarks', H100, 5B, compile, fuse_qkv: bf16
    87.455 s, fp8 75.255 s (1.162x). CogVideoX-5B as the engine's DiT shapes: 42 single-stream blocks of hidden
    3,072 (12h^2 MACs of linears a token), 17,550 video tokens (13 latent frames x 30 x 45) + 226 text; no
    preset, so the ratio is computed from the engine's pieces: time = FLOPs / (peak x kernel_efficiency at
    that peak), the 8-bit peak the harmonic mean over the linears' share at eight_bit_dit_rate."""
    config = {"hidden": 3072, "heads": 48, "mlp_ratio": 4, "joint_blocks": 0, "single_blocks": 42}
    cost = dit_cost(config | {"in_channels": 16, "patch": 2}, 17_550, 226)
    share = (cost.macs - cost.attention_macs) / cost.macs
    assert share == pytest.approx(0.509, abs=1e-3)
    rows = im.rows_per_sample(cost)

    def seconds(peak):
        return 1.0 / (peak * im.kernel_efficiency(rows, peak))

    bf16, fp8 = 989.4e12, 1978.9e12
    mixed = 1.0 / (share / (0.691 * fp8) + (1 - share) / bf16)
    assert seconds(bf16) / seconds(mixed) == pytest.approx(87.455 / 75.255, rel=2e-3)
