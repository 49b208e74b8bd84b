"""diffspd (stop 51): an eager UNet step as the critical path of its launch queue (image_model.eager_pass_seconds),
not the longer of its GPU work and its host launches. A stream runs its kernels in issue order and a launch returns
before the kernel runs (CUDA C++ Programming Guide, 'Asynchronous Concurrent Execution', 'Streams'), so kernel i
ends at max(end of i - 1, launch of i) + its GPU time."""

import pytest

from procurement.sizing import image_model
from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS
from procurement.sizing.spec import parse_workload_spec

H = EAGER_KERNEL_HOST_SECONDS.value  # 31 us a launch


def _sd15(flash: bool, batch: int = 1, autocast: bool = False) -> dict:
    image = {"resolution_px": 512, "steps": 50, "runtime": "diffusers-0.7"}
    return {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "micro_batch_size": batch,
        "flash_attention": flash,
        "image": image | ({"autocast": True} if autocast else {}),
    }


def test_a_hand_queue():
    """Three units: 10 host-only kernels, 2 kernels with 1.0 ms of GPU work, 20 kernels with 0.1 ms. By hand (us):
    unit 1 ends with its last launch, 310; unit 2's first kernel launches at 341 and runs the 1,000 us: 1,341 (its
    last launch, 372, plus half the work, 872, is earlier); unit 3's work follows: 1,441, while its last launch is
    at 992 + 5 us of its share. The step: 1,441 us, against max(G, H) = 1,100 and G + H = 2,092."""
    units = [(10.0, 0.0), (2.0, 1.0e-3), (20.0, 0.1e-3)]
    assert H == 31e-6
    seconds = image_model.eager_pass_seconds(units, 0.0, 1.1e-3)
    assert float(seconds) == pytest.approx(1441e-6, rel=1e-9)
    # the host-bound stretch first, the long kernel last: the host's launches (992 us) and then the unit's
    # first launch to its end: 620 + 31 + 1,000 = 1,651 us
    reordered = image_model.eager_pass_seconds(list(reversed(units)), 0.0, 1.1e-3)
    assert float(reordered) == pytest.approx(1651e-6, rel=1e-9)
    # the pipeline's own kernels after the forward: a host-only tail (13 x 31 = 403 us) past the GPU's end
    assert float(image_model.eager_pass_seconds([(2.0, 0.0)], 13.0, 0.0)) == pytest.approx(15 * H, rel=1e-9)


@pytest.mark.parametrize("flash", [False, True], ids=["eager", "sdpa"])
@pytest.mark.parametrize("autocast", [False, True], ids=["fp16", "autocast"])
def test_the_units_are_the_step_in_order(flash, autocast):
    """The units hold the step's whole GPU work (denoiser_step_gpu_seconds: no rescaling for a UNet) and every
    kernel network_forward_kernels counts; the queue lies between max(G, H) and G + H on an A100-40GB."""
    spec = parse_workload_spec(_sd15(flash, autocast=autocast))
    peak, bandwidth = 312e12, 1555e9
    efficiency = image_model.inference_efficiency(spec, peak)
    step = image_model.denoiser_step_gpu_seconds(spec, peak, bandwidth, efficiency, efficiency)
    units = image_model.eager_step_units(spec, peak, bandwidth, efficiency, efficiency)
    assert sum(seconds for _, seconds in units) == pytest.approx(step, rel=1e-9)
    kernels = image_model.network_forward_kernels(spec)
    assert sum(count for count, _ in units) == pytest.approx(kernels, rel=1e-12)
    host = (kernels + image_model.PIPELINE_STEP_KERNELS) * H
    queue = float(image_model.eager_pass_seconds(units, image_model.PIPELINE_STEP_KERNELS, step))
    assert max(step, host) <= queue <= step + host


def test_the_a100_step_the_totals_hid():
    """SD 1.5 at 512 px, one image with CFG, SDPA, on an A100-40GB: the GPU's work is 26.7 ms a step and the host's
    1,004 launches 31.1 ms, so max(G, H) gave 31.1 ms; the queue gives 33.7 ms, because the first level's attention
    blocks (where the GPU is behind) and the lower levels' ResNets (where the host is) do not share their waits.
    The published 2022 table ([FP16-MDX], test_outside_diffusers_2022_stop47.py) reads 34.5 ms."""
    spec = parse_workload_spec(_sd15(True))
    peak, bandwidth = 312e12, 1555e9
    efficiency = image_model.inference_efficiency(spec, peak)
    step = image_model.denoiser_step_gpu_seconds(spec, peak, bandwidth, efficiency, efficiency)
    units = image_model.eager_step_units(spec, peak, bandwidth, efficiency, efficiency)
    queue = float(image_model.eager_pass_seconds(units, image_model.PIPELINE_STEP_KERNELS, step))
    assert float(step) == pytest.approx(26.7e-3, abs=0.05e-3)
    assert (
        image_model.network_forward_kernels(spec) + image_model.PIPELINE_STEP_KERNELS
    ) * H == pytest.approx(31.1e-3, abs=0.05e-3)
    assert queue == pytest.approx(33.7e-3, abs=0.05e-3)


def test_an_eager_dit_step_is_its_blocks_in_order():
    """ditk: a DiT's units are its blocks (dit_eager_step_units: elementwise kernels counted from diffusers
    v0.32.0 + the block's GEMMs), then the output unit; FLUX.1-dev 19 joint (80 + 15) and 38 single (42 + 7)
    blocks and norm_out + 3 embedding GEMMs (8): 58 units, 3,675 kernels. A ViT still has none (max(G, H))."""
    spec = parse_workload_spec(
        {"task": "inference", "model": {"preset": "flux.1-dev"}, "precision": "bf16", "micro_batch_size": 1}
    )
    units = image_model.eager_step_units(spec, 989e12, 3350e9, 0.5, 0.5)
    assert len(units) == 58
    assert [k for k, _ in units[:1] + units[19:20] + units[-1:]] == [95.0, 49.0, 8.0]
    assert sum(k for k, _ in units) == 3675.0
    vit = parse_workload_spec(
        {"task": "inference", "model": {"preset": "vit-b-16"}, "precision": "fp16", "micro_batch_size": 1}
    )
    assert image_model.eager_step_units(vit, 989e12, 3350e9, 0.5, 0.5) == []
