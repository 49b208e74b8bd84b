"""An import's dataset folder left behind by a rolled-back import (or by a database flushed since, whose ids
come back) does not stop the next import that gets the same id. Found while the CFO analyst's tests ran
(issue 27): 'Directory not empty' when a bill import followed the demo's in another test."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from billing.storage.datasets import SCHEMA, DatasetWriter


def _one_row_in(month_day: dt.datetime) -> pa.Table:
    columns = {field.name: pa.nulls(1, type=field.type) for field in SCHEMA}
    columns["charge_period_start"] = pa.array([month_day], type=SCHEMA.field("charge_period_start").type)
    return pa.table(columns, schema=SCHEMA)


def test_it_replaces_an_orphan_folder_of_the_same_name(tmp_path):
    orphan = tmp_path / "import=1" / "month=2026-04"
    orphan.mkdir(parents=True)
    (orphan / "part-00000.parquet").write_bytes(b"left by a rolled-back import")

    writer = DatasetWriter(tmp_path)
    writer.write(_one_row_in(dt.datetime(2026, 5, 3)))
    files = writer.finish("import=1")

    assert [(f.path, f.rows) for f in files] == [("import=1/month=2026-05/part-00000.parquet", 1)]
    assert [p.name for p in (tmp_path / "import=1").iterdir()] == ["month=2026-05"]  # the orphan is gone
    assert not list(tmp_path.glob(".incoming-*"))
