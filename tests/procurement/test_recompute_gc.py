"""A recompute chunk runs with the garbage collector's thresholds raised (procurement/services/recompute.py,
issue 26 "Speed": ~570 collections of a 600-workload chunk took ~0.5 s of its ~4 s CPU), and puts back
the process's own thresholds afterwards, even when the chunk fails."""

import gc

import pytest

from procurement.services import recompute
from procurement.services.recompute import RECOMPUTE_GC_THRESHOLDS, fewer_gc_passes


@pytest.fixture
def default_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's defaults
    yield
    gc.set_threshold(*before)


def test_a_chunk_ranks_under_raised_thresholds_and_restores_them(default_thresholds, monkeypatch):
    seen = []
    monkeypatch.setattr(recompute, "_recompute_chunk", lambda ids, context: seen.append(gc.get_threshold()))
    recompute.recommendations_recompute_chunk([1, 2], context=object())
    assert seen == [RECOMPUTE_GC_THRESHOLDS]
    assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_are_restored_when_the_block_fails(default_thresholds):
    with pytest.raises(RuntimeError), fewer_gc_passes():
        raise RuntimeError("chunk failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_are_only_raised_and_a_disabled_collector_stays_disabled(default_thresholds):
    gc.set_threshold(50_000, 5, 10)
    with fewer_gc_passes((20_000, 20, 10)):
        assert gc.get_threshold() == (50_000, 20, 10)
    gc.set_threshold(0, 10, 10)
    with fewer_gc_passes():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)
