"""Image workloads ranked like language models (issue 29): same offers, hours from FLOPs per image,
cost per 1,000 images and per training run."""

from decimal import Decimal

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import LOADER_IMAGES_PER_VCPU
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

SDXL_LORA = parse_workload_spec(
    {
        "name": "sdxl-lora",
        "task": "lora",
        "model": {"preset": "sdxl"},
        "lora": {"rank": 16},
        "gradient_checkpointing": "full",
        "image": {"train_steps": 2000},
    }
)
FLUX_BATCH = parse_workload_spec(
    {
        "name": "flux-batch",
        "task": "inference",
        "model": {"preset": "flux.1-schnell"},
        "image": {"images": 10000},
    }
)


def _rows(spec, **options):
    options = {"top": None, "setup_hours": 0.0, "rerun_fraction": 0.0, "storage_gb": 0.0} | options
    return rank_workload(spec, OFFERS, GPUS, RankingOptions(**options), now=NOW).results


def test_training_hours_come_from_flops_per_image():
    (row,) = _rows(SDXL_LORA, providers=("vast",), instance_counts=(1,))
    # 2,000 steps x batch 1 = 2,000 images; RTX 4090 dense bf16 165.2 TFLOPS (gpu_specs.csv) x the
    # work-per-kernel efficiency of one 1024 px SDXL sample (1,317 rows, half-efficiency rows 549 x 165.2 /
    # 312 = 291: 0.534 x 1,317 / 1,608 = 0.437); one GPU, nothing to communicate; the 4090 host's vCPUs
    # decode far more than 2 images/s. Eager passes (image_model.training_eager_seconds_per_image): the
    # UNet's 3,344.96M activation elements per 1024 px sample written and read once in each of 4 passes
    # (forward, recomputed forward, backward x 2), 2 B, at 0.7 x 1,008 GB/s = 75.8 ms. The host's 2,138
    # kernels x 4 passes plus the adapters' (img29d: 560 adapted attention linears x (4 forward x 2 under
    # full recomputation + 6 backward) = 7,840; fp32 adapters, torch AdamW's foreach step uncounted), 16,392
    # x 31 us = 508 ms, outlast the step's 455 ms of GPU work: the step takes the host's time (was 265 ms,
    # hidden, before the adapters' kernels were counted).
    images, flops = 2000, im.training_flops_per_image(SDXL_LORA)
    efficiency = im.training_efficiency(SDXL_LORA, 165.2e12)
    assert efficiency == pytest.approx(0.534 * 1317 / (1317 + 549 * 165.2 / 312), rel=1e-3)
    assert efficiency == pytest.approx(0.437, abs=1e-3)
    traffic = 3344.96e6 * 2 * 2 * 4 / (0.7 * 1008e9)
    host = (2138 * 4 + 560 * (4 * 2 + 6)) * 31e-6
    hours = images * max(flops / (165.2e12 * efficiency) + traffic, host) / 3600
    assert row["hours"] == pytest.approx(hours, abs=6e-4)  # hours: 3 places
    total = Decimal(row["total_cost"])
    assert Decimal(row["unit_costs"]["per_training_run"]) == total
    assert Decimal(row["unit_costs"]["per_thousand_training_images"]) == pytest.approx(
        total / 2, abs=Decimal("0.000001")
    )


def test_generation_job_prices_its_images():
    rows = [row for row in _rows(FLUX_BATCH) if row["fits"]]
    assert rows
    flops = im.inference_flops_per_image(FLUX_BATCH)  # 4 steps, no CFG, + T5/CLIP + VAE decode
    traffic = im.inference_traffic_bytes_per_image(FLUX_BATCH)
    attention = im.attention_flops_per_image(FLUX_BATCH)
    # batch 1, no CFG: 4,096 image + 256 text tokens. dit8: as the fit UNet's rows of equal work per kernel
    # (image_model.dit_equivalent_rows): the forward's 34,730.05 GMAC over 554 kernels against SDXL's
    # 3,380.59 GMAC over 930 kernels and 1,317.42 rows = 22,720 rows (was the 4,352 tokens: 0.474); on an A100
    # (312 TFLOPS, the reference card: 549 half-efficiency rows) 0.534 x 22,720 / 23,269 = 0.5214
    weight_rows = (34_730.045e9 / 554) / (3_380.593e9 / 930 / 1_317.4157)
    assert weight_rows == pytest.approx(22_720, abs=1)
    efficiency_a100 = 0.534 * weight_rows / (weight_rows + 549)
    assert im.inference_efficiency(FLUX_BATCH, 312e12) == pytest.approx(efficiency_a100, rel=1e-6)
    assert efficiency_a100 == pytest.approx(0.5214, abs=1e-4)
    # img51: diffusers' fp32 q / k chains (image_model.flux_qk_chain_dram_bytes_per_step) at 4,352 joined tokens:
    # every block's joined q / k (4,352 x 3,072 = 13.37M elements, 53.5 MB in fp32) through the single blocks'
    # RMSNorm (30 B an element) and RoPE (54 B), the joint blocks' image q / k (12.58M, 50.3 MB) through RMSNorm;
    # each chain in DRAM where its fp32 tensor exceeds the card's L2 (whitepapers: H100 SXM5 and PCIe 51,200 KB, A100 40,960 KB;
    # the L40S's 96 MB holds both), 4 steps an image
    joined, image = 4352 * 3072, 4096 * 3072
    l2_kb = {
        "h100-sxm5-80gb": 51_200,
        "h100-pcie-80gb": 51_200,
        "a100-sxm4-80gb": 40_960,
        "a100-sxm4-40gb": 40_960,
        "l40s": 98_304,
    }
    assert {row["gpu"] for row in rows[:5]} <= set(l2_kb)

    def spill_bytes(slug: str) -> float:
        l2 = l2_kb[slug] * 1024
        chains = joined * (30 * 76 + 54 * 114) if 4 * joined > l2 else 0.0
        return 4 * (chains + (image * 30 * 38 if 4 * image > l2 else 0.0))

    for row in rows[:5]:
        # seconds per image per GPU = FLOPs / (dense bf16 peak x efficiency at that peak) + activation
        # traffic / (bandwidth x 0.7), the attention FLOPs at 35% of peak on Hopper; every GPU a replica
        gpu = GPUS[row["gpu"]]
        peak = gpu.dense_tflops("bf16") * 1e12
        efficiency = 0.534 * weight_rows / (weight_rows + 549 * peak / 312e12)
        ceiling = min(efficiency, 0.35) if gpu.generation == 90 else efficiency
        per_gpu = 1 / (
            (flops - attention) / (peak * efficiency)
            + attention / (peak * ceiling)
            + (traffic + spill_bytes(row["gpu"])) / (gpu.memory_bandwidth_gbps * 1e9 * 0.7)
        )
        assert row["hours"] == pytest.approx(
            10000 / (per_gpu * row["gpus"]) / 3600, abs=6e-4
        )  # hours: 3 places
        assert Decimal(row["unit_costs"]["per_thousand_images"]) == pytest.approx(
            Decimal(row["total_cost"]) / 10, abs=Decimal("0.01")
        )
        # the compute-only cost per 1,000 images: the breakdown's compute part over the 10,000 images
        assert Decimal(row["unit_costs"]["per_thousand_images_compute"]) == pytest.approx(
            Decimal(row["cost_breakdown"]["compute"]) / 10, abs=Decimal("0.01")
        )
        # the rest of the total per 1,000 (setup, storage, reruns) is what the compute-only figure leaves out
        rest = Decimal(row["total_cost"]) - Decimal(row["cost_breakdown"]["compute"])
        assert Decimal(row["unit_costs"]["per_thousand_images"]) - Decimal(
            row["unit_costs"]["per_thousand_images_compute"]
        ) == pytest.approx(rest / 10, abs=Decimal("0.01"))


def test_a_generation_jobs_row_states_the_jobs_hours_and_cost_not_a_month():
    """pres26: a job of 10,000 FLUX images was priced for its hours but its serving object said
    hours_per_month 730 and cost_per_month (the job's total); it now says priced_as "job" with the job's
    images, hours and cost, and no month."""
    row = next(row for row in _rows(FLUX_BATCH) if row["fits"])
    serving = row["serving"]
    assert serving["priced_as"] == "job"
    assert serving["hours_per_month"] is None and serving["cost_per_month"] is None
    assert serving["job_images"] == 10000
    assert serving["job_hours"] == row["hours"] and serving["job_cost"] == row["total_cost"]


def test_a_generation_jobs_chart_plots_cost_against_its_hours():
    # pres26: a job's rows have hours of their own (images / rate), not the month every serving row shares
    from procurement.views.costing import cost_time_chart

    assert "Cost versus time" in cost_time_chart(_rows(FLUX_BATCH))
    assert "Cost per month versus throughput" in cost_time_chart(_rows(parse_workload_spec(SDXL_SERVING)))


def test_the_recommendation_page_prints_a_jobs_cost_and_a_training_rows_speed():
    from django.template.loader import render_to_string

    def html(spec):
        rows = [row for row in _rows(spec) if row["fits"]][:1]
        return render_to_string(
            "procurement/_recommendation_rows.html", {"answer": {"currency": "USD", "rows": rows}}
        )

    job = html(FLUX_BATCH)
    assert "for the job (10,000 images in" in job and "a month" not in job
    assert "Training: " in html(SDXL_LORA) and " images/s over 1 GPU." in html(SDXL_LORA)


def test_a_month_of_image_serving_stays_a_month():
    row = next(r for r in _rows(parse_workload_spec(SDXL_SERVING)) if r["fits"])
    assert row["serving"]["priced_as"] == "month" and row["serving"]["hours_per_month"] == 730.0
    assert row["serving"]["cost_per_month"] == row["total_cost"] and "job_hours" not in row["serving"]


def test_image_training_rows_state_images_per_second():
    """pres26: image training rows had cost per 1,000 images and per run but no speed; SDXL LoRA, 2,000
    images on one RTX 4090 in the row's hours: images / (hours x 3600) images/s, 3 significant figures."""
    (row,) = _rows(SDXL_LORA, providers=("vast",), instance_counts=(1,))
    training = row["training"]
    assert training["unit"] == "image" and training["training_images"] == 2000
    rate = 2000 / (row["hours"] * 3600)
    assert training["training_images_per_second"] == pytest.approx(rate, rel=2e-3)
    assert training["training_images_per_second_per_gpu"] == training["training_images_per_second"]
    assert training["text"] == f"{training['training_images_per_second']:g} images/s over 1 GPU"


def test_image_plans_are_data_parallel_only():
    rows = _rows(SDXL_LORA, include_infeasible=True)
    assert rows and all(row["plan"]["tensor_parallel"] == 1 for row in rows if row["fits"])


def test_image_training_without_a_run_length_is_refused_with_the_field():
    spec = parse_workload_spec({"task": "lora", "model": {"preset": "sdxl"}})
    with pytest.raises(ValueError, match="image.train_steps"):
        _rows(spec)


def test_epoch_counted_runs_price_each_epoch():
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolov8s"},
            "image": {"epochs": 4, "dataset_images": 5000},
        }
    )
    row = next(row for row in _rows(spec) if row["fits"])
    total = Decimal(row["total_cost"])
    # 4 epochs x 5,000 images = 20,000 images: per epoch = total / 4, per 1,000 images = total / 20
    assert Decimal(row["unit_costs"]["per_epoch"]) == pytest.approx(total / 4, abs=Decimal("0.000001"))
    assert Decimal(row["unit_costs"]["per_thousand_training_images"]) == pytest.approx(
        total / 20, abs=Decimal("0.000001")
    )


def test_detector_training_hours_are_bounded_by_each_offers_vcpus():
    """YOLOv8n on COCO: the GPU side of a row is its shape's hours; the host's loader decodes and augments
    24.64 images/s per vCPU (assumptions.LOADER_IMAGES_PER_VCPU, Ultralytics' one-decode mosaic), so a row
    takes at least images / (vCPUs x instances x 24.64) hours (an offer without a vCPU figure at the host rule's 8 per
    GPU, as `size` assumes), and a row whose host is the bound says so in hours."""
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolov8n"},
            "micro_batch_size": 64,
            "image": {"epochs": 10, "dataset_images": 118287},
        }
    )
    rows = [row for row in _rows(spec) if row["fits"]]
    assert rows
    keys = zip(OFFERS["provider"], OFFERS["instance_type"], strict=True)
    host_vcpus = dict(zip(keys, OFFERS["vcpus"], strict=True))
    bound = 0
    for row in rows:
        vcpus = float(host_vcpus[(row["provider"], row["instance_type"])]) * row["instances"]
        if vcpus != vcpus:  # unknown host: the host rule's 8 vCPUs per GPU, and the row says it is unknown
            assert any("unknown for this offer" in warning for warning in row["warnings"])
            vcpus = 8.0 * row["gpus"]
        loader_hours = 10 * 118287 / (vcpus * LOADER_IMAGES_PER_VCPU.value) / 3600
        assert row["hours"] >= loader_hours - 6e-4
        bound += abs(row["hours"] - loader_hours) < 6e-4
    assert bound  # YOLOv8n outruns the loader of most hosts


def test_a_loader_bound_rows_breakdown_prices_the_hours_it_bought():
    """pres26: the breakdown read the shape's GPU hours while the total bought the loader's, so a host-bound
    row's reruns were a share of the wrong compute (g6.xlarge YOLOv8n, 3.334 h at 0.8048/h: compute 2.97,
    reruns 0.25, 8.4% of compute) and its cost per GPU-hour divided by 1.54 GPU-hours. One rule: compute
    = P x the row's hours x N, reruns = 20% of that compute (2.68 and 0.54), per GPU-hour over the row's
    GPU-hours."""
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolov8n"},
            "micro_batch_size": 64,
            "image": {"epochs": 10, "dataset_images": 118287},
        }
    )
    rows = [row for row in _rows(spec, rerun_fraction=0.2, setup_hours=1.0) if row["fits"]]
    cent = Decimal("0.011")
    for row in rows:
        parts = row["cost_breakdown"]
        price = Decimal(row["effective_price_per_hour"]) * row["instances"]
        # hours are shown to 3 places: half a thousandth of an hour at the price, plus the cent
        compute = price * Decimal(str(row["hours"]))
        assert Decimal(parts["compute"]) == pytest.approx(compute, abs=cent + price * Decimal("0.0005"))
        assert Decimal(parts["reruns"]) == pytest.approx(Decimal(parts["compute"]) / 5, abs=cent)
        gpu_hours = Decimal(row["gpus"]) * Decimal(str(row["hours"]))
        assert Decimal(row["unit_costs"]["per_gpu_hour"]) == pytest.approx(
            Decimal(row["total_cost"]) / gpu_hours, rel=Decimal("0.0005") / Decimal(str(row["hours"]))
        )
    g6 = next(row for row in rows if row["instance_type"] == "g6.xlarge")
    assert (g6["cost_breakdown"]["compute"], g6["cost_breakdown"]["reruns"]) == ("2.68", "0.54")


SDXL_SERVING = {"task": "inference", "model": {"preset": "sdxl"}, "image": {"steps": 30}}


@pytest.mark.parametrize("demand", [None, 2.0])
def test_image_serving_rows_speak_images(demand):
    """A serving row of an image job: a request is one image, so the token keys carry images (kept for the
    clients that read them) and the image keys say so in its own units, to 3 significant figures."""
    spec = SDXL_SERVING | ({"inference": {"requests_per_second": demand}} if demand else {})
    row = next(r for r in _rows(parse_workload_spec(spec)) if r["fits"])
    serving = row["serving"]
    assert serving["unit"] == "image" and serving["images_per_batch"] == 1
    assert serving["demand_images_per_second"] == demand
    per_instance, batch_s = serving["images_per_second_per_instance"], serving["seconds_per_batch"]
    assert batch_s == pytest.approx(serving["time_per_output_token_ms"] / 1000.0, rel=0.005)
    assert per_instance == pytest.approx(1.0 / batch_s, rel=0.01)
    assert serving["images_per_second"] == pytest.approx(per_instance * serving["instances"], rel=0.01)
    assert "images/s" in serving["text"] and "tokens/s" not in serving["text"]
    assert f"{batch_s:g} s a batch of 1 image" in serving["text"]


def test_language_model_serving_rows_have_no_image_keys():
    llm = {"task": "inference", "model": {"preset": "llama-3.1-8b"}, "inference": {"concurrency": 8}}
    row = next(r for r in _rows(parse_workload_spec(llm)) if r["fits"])
    assert "unit" not in row["serving"] and "tokens/s" in row["serving"]["text"]
