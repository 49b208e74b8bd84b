"""fix51l (aud51m2 FIX LIST 1): the L2 table's new rows, each pinned with its source, and the speed note for a card
whose L2 is unknown, where img51's FLUX q / k chain rule would decide (image_model.flux_qk_chain_l2_note)."""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import parse_workload_spec

MIB = 1024 * 1024
UNKNOWN_L2 = "L2 cache size is unknown"


def flux(px: int) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "flux.1-dev"},
        "precision": "bf16",
        "micro_batch_size": 1,
        "image": {"steps": 28, "resolution_px": px, "images": 1000},
    }


@pytest.mark.parametrize(
    ("slug", "mib"),
    [
        (
            "rtx-6000-ada",
            96,
        ),  # AD102 (142 SMs, as the L40S): Ada whitepaper's full AD102 98,304 KB (unverified)
        ("l4", 48),  # AD104 full die: third-party databases (fpsbench / TechPowerUp) 48 MB (unverified)
        ("rtx-5090", 96),  # GB202: HardwareLuxx's 96 MB (unverified)
        ("b200", 126),  # Chips and Cheese's B200 measurement, 126 MB over two dies (unverified)
        ("gb200", 126),  # the same Blackwell GPU
    ],
)
def test_it_tables_the_sourced_l2(slug, mib):
    assert gpu_by_slug(slug).l2_cache_bytes == mib * MIB


@pytest.mark.parametrize("slug", ["h20", "mi300x", "mi325x", "gaudi3"])
def test_it_leaves_unsourced_or_other_level_caches_out(slug):
    assert gpu_by_slug(slug).l2_cache_bytes is None


def test_it_charges_the_l4_at_1024_px_as_the_h100():
    """Joined fp32 tensor 4,608 x 3,072 x 4 B = 56.6 MB > 48 MiB (50.33 MB): spills. The joint image tensor, 4,096 x
    3,072 x 4 = 50,331,648 B, equals 48 MiB exactly: not over it, so it holds, as on the H100. Hence the H100's 119.4 GB
    a step (img51's hand figure)."""
    spec = parse_workload_spec(flux(1024))
    l4 = float(image_model.flux_qk_chain_dram_bytes_per_step(spec, gpu_by_slug("l4").l2_cache_bytes))
    h100 = float(
        image_model.flux_qk_chain_dram_bytes_per_step(spec, gpu_by_slug("h100-sxm5-80gb").l2_cache_bytes)
    )
    assert l4 == pytest.approx(119.418e9, rel=1e-4)
    assert l4 == h100


def test_it_holds_the_1024_px_chains_in_a_96_mib_l2():
    spec = parse_workload_spec(flux(1024))
    for slug in ("rtx-6000-ada", "rtx-5090", "b200"):
        assert (
            float(image_model.flux_qk_chain_dram_bytes_per_step(spec, gpu_by_slug(slug).l2_cache_bytes)) == 0
        )


def test_the_note_states_the_uncharged_bytes():
    """Every chain spilled (L2 0): by hand, 19 joint blocks x 2 (q, k) x 30 B x (4,096 + 512) x 3,072 + 38 single
    blocks x 2 x 30 B x 4,608 x 3,072 + 57 x 2 x 54 B x 4,608 x 3,072 = 135.6 GB a step."""
    tokens = 4608 * 3072
    by_hand = 19 * 2 * 30 * tokens + 38 * 2 * 30 * tokens + 57 * 2 * 54 * tokens
    note = image_model.flux_qk_chain_l2_note(parse_workload_spec(flux(1024)), None, 4.0e12)
    assert note is not None and UNKNOWN_L2 in note
    assert f"{by_hand / 1e9:.1f} GB a step" in note
    assert image_model.flux_qk_chain_l2_note(parse_workload_spec(flux(1024)), 50 * MIB, 4.0e12) is None


def test_no_note_where_the_chains_do_not_run():
    compiled = flux(1024)
    compiled["image"]["fused_kernels"] = True
    assert image_model.flux_qk_chain_l2_note(parse_workload_spec(compiled), None, 4.0e12) is None


@pytest.mark.django_db
def test_the_report_notes_a_card_without_an_entry(bundled_catalog):
    report = size_spec_document(copy.deepcopy(flux(1024)), ["h20", "h100-sxm5-80gb"], calibrate=False)
    notes = {c["gpu"]: [w for w in c["warnings"] if UNKNOWN_L2 in w] for c in report["candidates"]}
    assert notes["h20"] and not notes["h100-sxm5-80gb"]
