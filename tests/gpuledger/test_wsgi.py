"""The WSGI module loads the views and freezes what a worker keeps for life (gpuledger/wsgi.py): a full
garbage collection then no longer walks some 200,000 long-lived objects, a 110-130 ms stall."""

from __future__ import annotations

import subprocess
import sys


def test_a_worker_starts_with_its_views_loaded_and_its_start_up_objects_frozen():
    code = (
        "import gc, sys, time; import gpuledger.wsgi; "
        "started = time.perf_counter(); gc.collect(); took = time.perf_counter() - started; "
        "print(gc.get_freeze_count(), 'procurement.views.costing' in sys.modules, round(took * 1000, 1))"
    )
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "GPULEDGER_VAR_DIR": "/tmp/gpuledger-wsgi-test"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    frozen, views_loaded, full_collection_ms = done.stdout.split()
    assert int(frozen) > 50_000  # Django, DRF, pandas, numpy and the project's modules
    assert views_loaded == "True"
    assert float(full_collection_ms) < 50  # it walked 100,000+ objects, 100+ ms, before
