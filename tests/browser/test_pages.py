"""The pages as a person uses them in Chromium, at laptop and phone widths.

Each test signs in with a role, does what that person would (search the catalog, size a job with the
form, read an offer's spot history, compute a rent-or-buy study) and reads the page's words back:
numbers formatted for people, never a Python repr or an engine key where a label belongs.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.utils import timezone

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Text a page must never show a reader: Python reprs and raw engine values.
REPR = re.compile(r"\bNone\b|\{'|\['|Decimal\(|\bTrue\b|\bFalse\b")


def visible_text(page) -> str:
    return page.locator("main").inner_text()


def assert_no_reprs(page):
    text = visible_text(page)
    found = REPR.search(text)
    assert found is None, (
        f"{page.url} shows {found.group(0)!r}: ...{text[max(0, found.start() - 80) : found.end() + 80]}..."
    )


def test_a_viewer_searches_the_catalog_and_sees_only_their_links(signed_in_page, gpu_catalog, snap):
    from pricing.ingest import ingest_price_records
    from pricing.providers.records import InstanceTypeRecord, PriceRecord

    # AWS p5.48xlarge on-demand: 98.32 USD/h for 8 H100s (the bundled SkyPilot row) = 12.29 per GPU-hour
    p5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
    ingest_price_records(
        [
            PriceRecord(
                instance=p5,
                region="us-east-1",
                zone="",
                pricing_model="on_demand",
                price_per_hour=Decimal("98.32"),
                currency="USD",
                observed_at=timezone.now(),
                source="test",
            )
        ]
    )
    page = signed_in_page("viewer")
    page.goto("/")
    assert page.locator("h1").inner_text() == "GPU catalog"
    # the bundled gpu_specs.csv; 33 -> 37 when four GeForce 12 / 16 GB cards were added
    assert page.locator("#catalog tbody tr").count() == 37
    nav = page.locator("header nav").inner_text()
    assert "GPU catalog" in nav and "Price status" in nav
    assert "Sizing" not in nav and "Admin" not in nav  # an engineer's and an admin's pages
    assert "viewer" in page.locator("#signed-in").inner_text()
    page.fill("input[name=q]", "h100")
    page.click("form[role=search] button")
    page.wait_for_url(re.compile(r"q=h100"))
    assert page.locator("#catalog tbody tr").count() == 3  # SXM5, PCIe and NVL
    sxm = page.locator("#catalog tbody tr", has_text="h100-sxm5-80gb").inner_text()
    assert "12.29" in sxm and "aws" in sxm  # 98.32 / 8: at most four decimals, as |hourly shows prices
    # Sorting is a static script: clicking the memory header orders the rows by GB
    page.click("#catalog th:nth-child(3)")
    first = page.locator("#catalog tbody tr").first.inner_text()
    assert "80GB" in first.replace(" ", "")
    assert_no_reprs(page)
    snap(page, "catalog")


def test_an_engineer_sizes_a_workload_with_the_form_and_reads_a_report(signed_in_page, gpu_catalog, snap):
    page = signed_in_page("engineer")
    page.goto("/size/")
    page.select_option("#knob-task", "lora")
    page.fill("#knob-name", "browser lora")
    page.fill("#knob-seq_len", "4096")
    page.click("#fields-form button[type=submit]")
    page.wait_for_selector("#candidates")
    summary = page.locator("#sizing-summary").inner_text()
    assert "LoRA fine-tuning of" in summary
    assert re.search(r"\d+(\.\d+)? billion parameters", summary)  # Llama-3.1-8B: 8.03 billion
    headline = page.locator("#headline").inner_text()
    assert headline.startswith("Best card:")
    assert re.search(r"Training speed \(tokens/s\): [\d,]+", headline)
    assert re.search(r"at \d+% of its memory", headline)
    # Memory lines are labelled in words with their unit, figures in GiB with two decimals
    memory = page.locator("#memory").inner_text()
    assert "Weights" in memory and "weights_gib" not in memory
    assert re.search(r"\d+\.\d\d GiB", memory)
    # The best card is the one marked in the table, and every verdict reads in words
    assert page.locator("#candidates tr.headline-row").count() == 1
    verdicts = page.locator("#candidates td[data-label=Verdict] .badge").all_inner_texts()
    assert verdicts and not any("_" in verdict for verdict in verdicts)
    for cell in page.locator("#candidates td[data-label='Memory used']").all_inner_texts():
        assert re.fullmatch(r"[\d,]+%|—", cell.strip()), cell
    # No note is said twice in one row
    for row in page.locator("#candidates tbody tr").all():
        notes = [
            n.strip().lower().removeprefix("fix: ") for n in row.locator("ul.notes li").all_inner_texts()
        ]
        assert len(notes) == len(set(notes))
    assert_no_reprs(page)
    snap(page, "sizing")
    # At phone width the candidates collapse into labelled blocks
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.locator("#candidates thead").is_hidden()
    assert page.locator("#candidates td[data-label=Verdict]").first.is_visible()


def test_an_engineer_ticks_vae_slicing_on_an_sdxl_batch_and_reads_the_smaller_decode(
    signed_in_page, gpu_catalog, snap
):
    """SDXL batch 4 at 1024 px in fp16 (the VAE decode upcast to fp32): the whole batch's decode holds
    4 x 1,088 x 1024^2 x 4 B = 17.00 GiB, one sliced image 4.25 GiB (test_sizing_image_form.py's hand
    count; the decode is the largest transient either way, so it is the activations line)."""
    page = signed_in_page("engineer")
    page.goto("/size/?preset=sdxl-base-1.0")
    assert page.locator("#image-knobs").get_attribute("open") is not None  # an image preset opens it
    page.select_option("#knob-precision", "fp16")
    page.fill("#knob-micro_batch_size", "4")
    page.click("#fields-form button[type=submit]")
    page.wait_for_selector("#candidates")
    activations = page.locator("#memory tr", has_text="Activations").inner_text()
    assert "17.00 GiB" in activations.replace("\t", " "), activations
    slicing = page.get_by_label("VAE slicing")  # found by its label: the control is labelled
    assert not slicing.is_checked()
    assert "one image at a time" in page.locator("#help-vae_slicing").inner_text()
    slicing.check()
    page.click("#fields-form button[type=submit]")
    page.wait_for_selector("#candidates")
    assert page.get_by_label("VAE slicing").is_checked()  # the ticked box comes back ticked
    assert "vae_slicing: true" in page.locator("#spec").input_value()
    activations = page.locator("#memory tr", has_text="Activations").inner_text()
    assert "4.25 GiB" in activations.replace("\t", " "), activations
    assert_no_reprs(page)
    snap(page, "sizing-image")


def test_a_viewer_reads_an_offers_spot_history(signed_in_page, snap):
    from pricing.ingest import ingest_price_records
    from pricing.models import Offer
    from pricing.providers.records import InstanceTypeRecord, PriceRecord

    g5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))
    now = timezone.now()

    def record(price, hours_ago, zone, model="spot"):
        return PriceRecord(
            instance=g5,
            region="us-east-1",
            zone=zone,
            pricing_model=model,
            price_per_hour=Decimal(price),
            currency="USD",
            observed_at=now - dt.timedelta(hours=hours_ago),
            source="test",
        )

    ingest_price_records(
        [
            record("1.006", 1, "", "on_demand"),
            record("0.40", 72, "use1-az1"),
            record("0.50", 24, "use1-az1"),
            record("0.45", 48, "use1-az2"),
        ]
    )
    offer = Offer.objects.get(zone="use1-az1")
    page = signed_in_page("viewer")
    page.goto(f"/offers/{offer.pk}/")
    assert "g5.xlarge" in page.locator("h1").inner_text()
    assert page.locator("svg.chart").count() == 1
    zones = page.locator("#spot-stats tbody tr").all_inner_texts()
    assert len(zones) == 2 and any("use1-az1" in zone for zone in zones)
    assert re.search(r"\d+%", " ".join(zones))  # discount versus on-demand as a percentage
    assert_no_reprs(page)
    snap(page, "offer")


def test_an_engineer_computes_a_rent_or_buy_study(signed_in_page, gpu_catalog, snap):
    page = signed_in_page("engineer")
    page.goto("/tco/")
    snap(page, "tco-list")
    page.locator("form:has(textarea) button[type=submit]").first.click()
    page.wait_for_url(re.compile(r"/tco/\d+/"))
    summary = page.locator("#tco-summary").inner_text()
    # The example server costs 300,000 + 5,000 install: money reads with thousands separators
    assert re.search(r"\d{1,3}(,\d{3})+\.\d\d", summary), summary
    assert re.search(r"\b80(\.0)?%", page.locator(".lede").inner_text())  # utilization 0.8 as a percentage
    assert_no_reprs(page)
    snap(page, "tco-detail")


def test_the_api_docs_render_offline(signed_in_page, snap):
    page = signed_in_page("viewer")
    page.goto("/api/docs/")
    # Swagger UI drew the operations from /api/schema/, with every asset from this server
    page.wait_for_selector(".swagger-ui .opblock-summary-path")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/size/" in p for p in paths) and any("/api/tco/" in p for p in paths)
    assert "gpuledger API" in page.locator(".swagger-ui .title").inner_text()
    snap(page, "api-docs")


def test_the_status_page_reads_in_words(signed_in_page, db, snap):
    from django.core.management import call_command

    call_command("sync_schedule", verbosity=0)
    page = signed_in_page("viewer")
    page.goto("/status/")
    schedule = page.locator("#schedule").inner_text()
    assert "{" not in schedule and '"' not in schedule  # job arguments in words, not JSON
    assert_no_reprs(page)
    snap(page, "status")
