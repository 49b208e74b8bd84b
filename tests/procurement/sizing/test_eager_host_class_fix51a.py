"""fix51a (aud51a FIX LIST): the eager host rate by host class, the FlowMatch loop that never syncs after step 1,
the host note's GPU work with the q / k chains, and its wording for DiTs. Hand computations below.

Host classes (procurement/sizing/assumptions.py): eager_kernel_host_s 31 us (fal's A100 host, torch 2.1,
github.com/fal-ai/stable-diffusion-benchmarks) for generations below Hopper and unknown cards;
eager_kernel_host_s_hopper 28 us for NVIDIA generation >= 90 (assumed from the card: DGX H100 / B200 ship Sapphire /
Emerald Rapids Xeons where DGX A100 ships EPYC Rome), set on ONE row, alexeigor/sd-benchmarks README @85831803
'PT2.0,fp16' H100-PCIe 80GB SD 1.5 50 steps 1.44 s (1.584 s at 31 us -> 1.437 s at 28, -0.2%;
tests/procurement/outside/test_outside_image_workloads_4.py::test_sd15_50_steps_per_card[eager-h100-pcie-80gb]),
held out on the other Hopper rows."""

from __future__ import annotations

import numpy as np
import pytest

from procurement.sizing import image_model as im
from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS, EAGER_KERNEL_HOST_SECONDS_HOPPER
from procurement.sizing.spec import parse_workload_spec

H100_L2 = 50e6
H100_PEAK, H100_BW = 989.5e12, 3350e9


def _spec(preset: str, **image) -> object:
    doc = {"task": "inference", "model": {"preset": preset}, "precision": "bf16", "micro_batch_size": 1}
    return parse_workload_spec(doc | {"image": {"resolution_px": 1024} | image})


def test_host_rate_by_platform_generation():
    assert EAGER_KERNEL_HOST_SECONDS.value == 31e-6 and EAGER_KERNEL_HOST_SECONDS_HOPPER.value == 28e-6
    assert im.eager_host_rate(None) == 31e-6
    assert im.eager_host_rate(80) == 31e-6  # A100
    assert im.eager_host_rate(89) == 31e-6  # Ada (L40S, RTX 4090): no row of its own, fal's host kept
    assert im.eager_host_rate(90) == 28e-6 and im.eager_host_rate(100) == 28e-6
    assert np.allclose(im.eager_host_rate(np.array([0, 80, 90, 100])), [31e-6, 31e-6, 28e-6, 28e-6])


def test_flowmatch_pipelines_do_not_sync_each_step():
    # diffusers@v0.32.0 scheduling_flow_match_euler_discrete.py 104: sigmas kept on the CPU; UNet / PNDM sync
    assert not im.pipeline_syncs_each_step(_spec("flux.1-dev"))
    assert not im.pipeline_syncs_each_step(_spec("sd3.5-large"))
    assert im.pipeline_syncs_each_step(_spec("sd-1.5", resolution_px=512))


def test_a_chained_loop_by_hand():
    """Two units a step: 10 short kernels (1 ms of GPU work) then 1 long kernel (3 ms), host 0.2 ms a kernel.
    Drained step: the 10 short ones end at 10 x 0.2 + 0.1 = 2.1 ms (launch-bound), the long one launches at 2.2 and
    ends at 5.2 ms; no pipeline kernels. Chained: step 1 syncs (index_for_timestep's .item()), so step 2 also starts
    from an empty queue (5.2 ms); from step 3 on the host issues the next step's 11 kernels (2.2 ms) while the long
    kernel runs and the GPU never waits: each step is its 4 ms of work. Over 10 steps: (2 x 5.2 + 8 x 4.0) / 10 =
    4.24 ms."""
    units = [(10.0, 1e-3), (1.0, 3e-3)]
    drained = float(im.eager_pass_seconds(units, 0.0, 4e-3, 2e-4))
    assert drained == pytest.approx(5.2e-3)
    chained = float(im.eager_pass_seconds(units, 0.0, 4e-3, 2e-4, chained_steps=10))
    assert chained == pytest.approx((2 * 5.2e-3 + 8 * 4.0e-3) / 10)
    # host-bound throughout (0.5 ms a kernel: 5.5 ms of host > 4 ms of GPU): the chained loop runs at the host's pace
    # (step from an empty queue: 5.0 + 0.1 ms for the short unit, the long one launched at 5.5 ends at 8.5 ms)
    host_bound = float(im.eager_pass_seconds(units, 0.0, 4e-3, 5e-4, chained_steps=10))
    assert float(im.eager_pass_seconds(units, 0.0, 4e-3, 5e-4)) == pytest.approx(8.5e-3)
    assert host_bound < 8.5e-3 and host_bound >= 5.5e-3


def test_the_host_note_carries_the_chain_spill():
    """SD3.5 Large on an H100 (50 MB L2): the note's GPU work now adds the q / k chains' spill, as the figure
    does (inference_seconds_per_image: step + spill): ditk's 19.4 ms a step."""
    spec = _spec("sd3.5-large")
    without = im.eager_host_rate_steps(spec, H100_PEAK, H100_BW, 90)
    with_l2 = im.eager_host_rate_steps(spec, H100_PEAK, H100_BW, 90, H100_L2)
    spill = float(im.flux_qk_chain_dram_bytes_per_step(spec, H100_L2)) / (H100_BW * 0.70)
    assert spill == pytest.approx(19.4e-3, rel=0.02)
    assert with_l2["gpu_seconds"] - without["gpu_seconds"] == pytest.approx(spill)
    assert with_l2["rate"] == 28e-6


def test_the_note_names_a_dit_step_a_denoiser_step_and_its_host():
    # FLUX.1-dev 512 px on an H100: host-bound (3,675 + 13 kernels x 28 us = 103 ms against less GPU work)
    note = im.eager_host_rate_note(_spec("flux.1-dev", resolution_px=512), H100_PEAK, H100_BW, 90, H100_L2)
    assert note and "eager denoiser step" in note and "UNet" not in note
    assert "28 us a kernel" in note and "Hopper / Blackwell" in note and "carries across steps" in note
    unet = im.eager_host_rate_note(_spec("sd-1.5", resolution_px=512), H100_PEAK, H100_BW, 80)
    assert unet and "eager UNet step" in unet and "fal's A100 host" in unet


def test_flux_dev_512_px_no_longer_reads_one_figure_on_every_card():
    """aud51a pinned 3.22 s on every datacenter card (28 x 3,675 x 31 us). At 28 us a Hopper / Blackwell host
    issues 28 x 3,688 kernels in 28 x 103.3 ms = 2.89 s; an A100 keeps 31 us."""
    spec = _spec("flux.1-dev", resolution_px=512, steps=28)
    hopper = float(im.inference_seconds_per_image(spec, H100_PEAK, H100_BW, 90, None, H100_L2))
    ampere = float(im.inference_seconds_per_image(spec, H100_PEAK, H100_BW, 80, None, H100_L2))
    assert hopper < ampere
    assert ampere / hopper == pytest.approx(31 / 28, rel=0.03)
