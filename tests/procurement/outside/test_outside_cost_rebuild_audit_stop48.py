"""Outside audit aud48r2 (stop 48) of rank48 (0da4143c): every cost part and the total of the top five rows of six
workloads rebuilt by hand, as finance would, from the CATALOG (pricing/data: the offer's listed on-demand or spot
price in its own currency, the stored FX rate, pricing/data/storage_rates.csv) x the quantities the row shows
(hours, instances, setup hours, GB, months, rerun fraction), each part rounded half-up to the cent once, the total
their sum; the ordering checked against the exact (unrounded) totals; the words (cost_basis text) checked to name
each part's figures; the host-RAM demotion (sizing/host.py serving_host_ram) judged on a serving case.

Workloads (published runs; the published figure a spec field takes is quoted):
  [PYTHIA]  EleutherAI/pythia README: every Pythia model "trained for 143000 steps at a batch size of 2M
            (2,097,152 tokens)" = 299,892,736,000 tokens, seq 2048; Pythia-1.4B (24 layers, d 2048, 16 heads,
            MLP 8192, vocab 50304). LLM pretraining with a deadline (--deadline-hours 720, 64 GPUs).
  [ALPACA]  tatsu-lab/stanford_alpaca README: LLaMA-7B fine-tuned on 52K instructions, 3 epochs, max length 512,
            8 x A100 80GB; priced here as a spot fine-tune on AWS (provider aws), where spot rows compete.
  [TRTSRV]  Llama-3.1-8B-Instruct FP8 served (TensorRT-LLM style, compiled engine), 2 requests/s of 256 output
            tokens: the host-RAM rule's own case (aud48r).
  [SDXL]    SDXL base 1.0 generation, 1024 px, 30 steps, 10,000 images: an image job.
  [QLORA]   Guanaco (artidoro/qlora README): QLoRA of LLaMA-7B on one 24 GB consumer GPU; priced in CNY through
            the stored FX (pricing/data/fx_rates.csv CNY 0.13986 USD, 2026-11-30) on AutoDL's CNY catalog.
  [PYTHIA-CNY] the [PYTHIA] job again with --currency CNY (USD offers converted by the stored rate); also
            [PYTHIA] on AWS only, [ALPACA] at 40x its tokens on AWS (4-10 h spot rows), [QLORA] in USD.
The workloads' published figures were taken as recalled from those READMEs (not re-opened in this session): this
module judges money and ordering, not speed, so no published speed is compared. 9 rankings, 43 rows: every part and
total rebuilds to the cent. The host rule: test_host_demotion_* (cudo H100 hosts, Llama-3.1-8B FP8 serving).
"""

from __future__ import annotations

import copy
import csv
import statistics
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path

import pytest

from tests.procurement.outside.test_outside_recommendations_x26b import ranked

DATA = Path(__file__).resolve().parents[3] / "pricing" / "data"
CENT, Q6 = Decimal("0.01"), Decimal("0.000001")

PYTHIA_14B = {
    "name": "pythia-1.4b",
    "num_layers": 24,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "intermediate_size": 8192,
    "vocab_size": 50304,
    "gated_mlp": False,
}
SPECS = {
    "pythia": (
        {
            "task": "pretrain",
            "model": PYTHIA_14B,
            "seq_len": 2048,
            "parallelism": {"gpus": 64, "zero_stage": 1},
            "training_tokens": 299892736000,
        },
        {"deadline_hours": 720},
    ),
    "alpaca": (
        {
            "task": "full_finetune",
            "model": {"preset": "llama-2-7b"},
            "seq_len": 512,
            "micro_batch_size": 4,
            "parallelism": {"gpus": 8, "zero_stage": 3},
            "training_tokens": 52002 * 3 * 512,
        },
        {"providers": ["aws"]},
    ),
    "trtsrv": (
        {
            "task": "inference",
            "model": {"preset": "llama-3.1-8b"},
            "precision": "fp8",
            "inference": {"requests_per_second": 2, "output_tokens": 256},
        },
        {},
    ),
    "sdxl": (
        {
            "task": "inference",
            "model": {"preset": "sdxl"},
            "micro_batch_size": 1,
            "image": {"steps": 30, "resolution_px": 1024, "images": 10000},
        },
        {},
    ),
    "qlora_cny": (
        {
            "task": "qlora",
            "model": {"preset": "llama-2-7b"},
            "seq_len": 512,
            "micro_batch_size": 1,
            "parallelism": {"gpus": 1},
            "training_tokens": 10_000_000,
        },
        {"currency": "CNY", "providers": ["autodl"], "include_illustrative": True},
    ),
    "pythia_aws_spot": (None, {"providers": ["aws"], "deadline_hours": 720}),
    "alpaca_long_spot": (None, {"providers": ["aws"]}),
    "qlora_usd": (None, {"providers": ["autodl"], "include_illustrative": True}),
    "pythia_cny": (None, {"deadline_hours": 720, "currency": "CNY"}),
}


def spec_of(name):
    spec, opts = SPECS[name]
    if name == "alpaca_long_spot":  # the Alpaca recipe over 40x the tokens (a 6.4B-token instruction mix)
        spec, opts = copy.deepcopy(SPECS["alpaca"][0]), SPECS[name][1]
        spec["training_tokens"] *= 40
        return spec, opts
    base = {
        "pythia_cny": "pythia",
        "qlora_usd": "qlora_cny",
        "pythia_aws_spot": "pythia",
        "alpaca_long_spot": "alpaca",
    }.get(name, name)
    return copy.deepcopy(spec if spec is not None else SPECS[base][0]), opts


@cache
def catalog_lines(provider: str) -> tuple[dict, ...]:
    """Every line of the provider's bundled catalog file(s), as read from pricing/data (not from the database)."""
    out = []
    files = (
        sorted((DATA / "skypilot" / provider).glob("vms*.csv"))
        if (DATA / "skypilot" / provider).is_dir()
        else []
    )
    files += sorted((DATA / "providers").glob(f"{provider}_*.csv"))
    for f in files:
        with f.open(newline="") as fh:
            for line in csv.DictReader(fh):
                line["_currency"] = line.get("currency") or "USD"
                out.append(line)
    return tuple(out)


def fx_to_usd(currency: str) -> Decimal:
    if currency == "USD":
        return Decimal(1)
    with (DATA / "fx_rates.csv").open(newline="") as fh:
        return next(
            Decimal(r["rate"]) for r in csv.DictReader(fh) if r["currency"] == currency and r["base"] == "USD"
        )


def storage_rate_usd(provider: str) -> Decimal:
    with (DATA / "storage_rates.csv").open(newline="") as fh:
        return next(
            Decimal(r["price_per_gb_month"])
            for r in csv.DictReader(fh)
            if r["provider"] == provider and r["storage_class"] == "block_ssd" and r["currency"] == "USD"
        )


def catalog_prices(row: dict) -> list[Decimal]:
    """The catalog's hourly prices (USD) for the row's instance in its region (and zone), on its pricing model."""
    column = (
        "SpotPrice"
        if row["pricing_model"] == "spot"
        else ("price_per_hour" if row["provider"] == "autodl" else "Price")
    )
    out = []
    for line in catalog_lines(row["provider"]):
        if (line.get("InstanceType") or line.get("instance_type")) != row["instance_type"]:
            continue
        if (line.get("Region") or line.get("region")) != row["region"]:
            continue
        if row.get("zone") and line.get("AvailabilityZone") and line["AvailabilityZone"] != row["zone"]:
            continue
        if row["provider"] == "autodl" and line.get("pricing_model") != row["pricing_model"]:
            continue
        if line.get(column) not in (None, ""):
            out.append(Decimal(line[column]) * fx_to_usd(line["_currency"]))
    if row["provider"] == "gcp":
        # GCP's catalog prices the VM and its GPUs on separate lines (vms.gpu.csv): the hour is their sum
        gpus = [
            Decimal(line[column])
            for line in catalog_lines("gcp")
            if not line.get("InstanceType")
            and line.get("Region") == row["region"]
            and (not row.get("zone") or line.get("AvailabilityZone") == row["zone"])
            and line.get("AcceleratorCount")
            and int(float(line["AcceleratorCount"])) == row["gpus_per_instance"]
            and line.get(column)
        ]
        out = [vm + g for vm in out for g in gpus]
    return out


def c(x: Decimal) -> Decimal:
    return x.quantize(CENT, ROUND_HALF_UP)


def rebuild(row: dict, currency: str) -> list[str]:
    """What a finance reader cannot rebuild to the cent from the catalog x the row's shown quantities."""
    miss = []
    to_row = Decimal(1) / fx_to_usd(currency)  # USD -> row currency through the stored rate
    basis, parts = row["cost_basis"], row["cost_breakdown"]
    listed = catalog_prices(row)
    shown_listed = Decimal(str(row["price_per_hour"]))
    match = [p for p in listed if abs(p * to_row - shown_listed) <= Decimal("0.000001")]
    tag = f"{row['provider']} {row['instance_type']} {row['region']} {row['pricing_model']}"
    if not match:
        # a spot row ranks at the sibling zones' median where its own quote is flagged: accept the median
        med = statistics.median(listed) if listed else None
        if med is None or abs(med * to_row - shown_listed) > Decimal("0.000001"):
            miss.append(f"{tag}: listed {shown_listed} not in the catalog {sorted(set(listed))[:4]} x FX")
            return miss
        match = [med]
    catalog = match[0] * to_row  # exact, in the row currency
    hours, n = Decimal(basis["compute"]["hours"]), row["instances"]
    if Decimal(str(row["hours"])).quantize(Q6) != hours:
        miss.append(f"{tag}: hours shown {row['hours']} != priced {hours}")
    effective = Decimal(basis["compute"]["price_per_hour"])
    if Decimal(str(row["effective_price_per_hour"])) != effective:
        miss.append(f"{tag}: effective price shown {row['effective_price_per_hour']} != priced {effective}")
    if row["pricing_model"] == "spot":
        text = basis["compute"]["text"]
        if f"the spot price {c6(catalog)}" not in text:
            miss.append(f"{tag}: spot text does not name the catalog spot price {c6(catalog)}: {text}")
        pct = Decimal(text.split("(1 + ")[1].split("%")[0]) / 100
        # the words' overhead (2 decimals of a percent) rebuilds the effective price to within half a basis point
        if abs(catalog * (1 + pct) - effective) > catalog * Decimal("0.00005") + Decimal("0.000001"):
            miss.append(f"{tag}: spot {c6(catalog)} x (1 + {pct}) != effective {effective}")
        price = (
            effective  # the overhead's exact value is not in the catalog: price on the shown effective price
        )
    else:
        price = catalog
        if c6(catalog) != effective:
            miss.append(f"{tag}: catalog {catalog} x FX -> {c6(catalog)} != effective {effective}")
    setup_h = Decimal(basis["setup"]["hours"])
    gb = Decimal(basis["storage"]["gb"])
    srate = storage_rate_usd(row["provider"]) * to_row
    held = Decimal(basis["storage"]["text"].split("setup, ")[1].split(" h at")[0])
    months_hand = held / 730 + Decimal(7 * 24) / 730
    if abs(months_hand - Decimal(basis["storage"]["months"])) > Decimal("0.0000005"):
        miss.append(
            f"{tag}: months {basis['storage']['months']} != ({held} h)/730 + 7 days = {months_hand:.7f}"
        )
    if c6(srate) != Decimal(basis["storage"]["rate_per_gb_month"]):
        miss.append(f"{tag}: storage rate {basis['storage']['rate_per_gb_month']} != catalog {c6(srate)}")
    frac = Decimal(basis["reruns"]["fraction"])
    hand = {
        "compute": c(price * hours * n),
        "setup": c(price * setup_h * n),
        "storage": c(gb * srate * Decimal(basis["storage"]["months"])),
    }
    hand["reruns"] = c(frac * hand["compute"])
    for k, v in hand.items():
        if Decimal(parts[k]) != v:
            miss.append(f"{tag}: {k} shown {parts[k]}, by hand {v}")
    total = sum(hand.values())
    if Decimal(parts["total"]) != total or Decimal(row["total_cost"]) != total:
        miss.append(f"{tag}: total shown {row['total_cost']} / {parts['total']}, by hand {total}")
    # the words name every figure
    words = [
        basis["compute"]["text"],
        basis["setup"]["text"],
        basis["storage"]["text"],
        basis["reruns"]["text"],
    ]
    for fig, text in [
        (basis["compute"]["hours"], words[0]),
        (basis["storage"]["gb"], words[2]),
        (basis["storage"]["months"], words[2]),
        (parts["compute"], words[3]),
    ]:
        if str(fig) not in text:
            miss.append(f"{tag}: the words '{text[:60]}' do not name {fig}")
    return miss


def c6(x: Decimal) -> Decimal:
    return x.quantize(Q6, ROUND_HALF_UP)


def exact_total(row: dict, currency: str) -> Decimal:
    """The unrounded total by hand: finance's ordering key."""
    b = row["cost_basis"]
    p = Decimal(b["compute"]["price_per_hour"])
    n = row["instances"]
    compute = p * Decimal(b["compute"]["hours"]) * n
    storage = (
        Decimal(b["storage"]["gb"])
        * storage_rate_usd(row["provider"])
        / fx_to_usd(currency)
        * Decimal(b["storage"]["months"])
    )
    return compute * (1 + Decimal(b["reruns"]["fraction"])) + p * Decimal(b["setup"]["hours"]) * n + storage


def audit(name: str) -> list[str]:
    spec, opts = spec_of(name)
    rows = ranked(spec, top=5, **opts)
    currency = opts.get("currency", "USD")
    if not rows:
        return ["no row"]
    miss = []
    for r in rows:
        miss += rebuild(r, currency)
    totals = [exact_total(r, currency) for r in rows]
    shown = [Decimal(r["total_cost"]) for r in rows]
    for i in range(len(rows) - 1):
        if totals[i] > totals[i + 1] + Decimal("0.005") or shown[i] > shown[i + 1]:
            miss.append(
                f"rows {i + 1}/{i + 2} out of cost order: exact {totals[i]:.4f} > {totals[i + 1]:.4f}"
                f" or shown {shown[i]} > {shown[i + 1]}"
            )
    return miss


@pytest.mark.parametrize("name", list(SPECS))
def test_cost_rebuild(name, bundled_catalog):
    miss = audit(name)
    assert not miss, "\n".join(miss)


SERVE_8B = {
    "task": "inference",
    "model": {"preset": "llama-3.1-8b"},
    "precision": "fp8",
    "inference": {"requests_per_second": 2, "output_tokens": 256},
}


def host_rows(engine: str | None):
    spec = copy.deepcopy(SERVE_8B)
    if engine:
        spec["inference"]["engine"] = engine
    rows = ranked(spec, top=8, providers=["cudo"], gpus=["h100-sxm5-80gb"])
    return rows


def held(row) -> bool:
    return not any("host RAM too small" in x for x in row["reasons"] + row["warnings"])


def test_host_demotion_trtllm_compiled(bundled_catalog):
    """[TRTSRV] on cudo's H100 hosts (sapphire-rapids-h100_1x2v4gb 4 GiB, _1x4v8gb 8 GiB, _2x8v16gb 16 GiB for two
    processes): every host below min(5 GB, 8.03 GB) + 3.5 GiB = 8.2 GiB a process sits below the first host that
    holds it, and the row says why. For TensorRT-LLM this is a floor (loadEngine reads the whole ~8 GB engine)."""
    rows = host_rows(None)
    first = next(i for i, r in enumerate(rows) if held(r))
    assert first == 0, [(r["instance_type"], r["total_cost"]) for r in rows]
    short = [r for r in rows if not held(r)]
    assert {r["instance_type"] for r in short} >= {
        "sapphire-rapids-h100_1x2v4gb",
        "sapphire-rapids-h100_1x4v8gb",
    }
    # the demoted rows are cheaper (that is why they needed demoting); the held ones stay in cost order
    assert all(Decimal(r["total_cost"]) < Decimal(rows[0]["total_cost"]) for r in short)
    ok = [Decimal(r["total_cost"]) for r in rows if held(r)]
    assert ok == sorted(ok)


def test_host_demotion_vllm_engine_keeps_an_8gib_host(bundled_catalog):
    """[TRTSRV] stated as vLLM (engine vllm_v0): the cheapest H100 host with 8 GiB of RAM can load the model.
    Was a strict xfail: UNEXPLAINED, the 8 GiB host demoted by an engine-blind rule (one 5 GB shard 4.7 GiB + 3.5 GiB
    runtime = 8.2 GiB > 8 GiB). Now held: the largest tensor, Llama-3.1-8B's embedding 128256 x 4096 x 2 B = 1.05 GB
    (0.98 GiB) + 3.5 GiB = 4.5 GiB < 8 GiB, because vLLM streams one tensor at a time from a safe_open memory map
    (vllm-project/vllm @0a1ee72ed53f07ca8e57e5e82fdbd89734b39026 vllm/model_executor/model_loader/weight_utils.py
    safetensors_weights_iterator; sizing.host.serving_host_ram, fix48r)."""
    rows = host_rows("vllm_v0")
    eight = next(r for r in rows if r["instance_type"] == "sapphire-rapids-h100_1x4v8gb")
    assert held(eight)
