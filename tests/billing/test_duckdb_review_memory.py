"""The review's rows of a month two imports both hold, read within DuckDB's memory limit (issue 28: "a
50M-row month imported and reviewed on this 2-core machine"). The 50M-row benchmark's first review died in
`engine_rows` with "could not allocate block of size 256.0 KiB (121.9 MiB/122.0 MiB used)": each row key
was counted once by a DISTINCT ON, whose first() states of the text columns never spill. Here the same
at small scale: 3M rows of three imports' datasets, the limit lowered to 96 MB (the DISTINCT ON ran out
of it within 5 s, "could not allocate block of size 256.0 KiB (91.5 MiB/91.5 MiB used)", 3 runs of 3;
the repeated keys' aggregate and the semi joins pass in 6 s, 4 of 4; at 64 MB they passed 2 runs of 3)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from billing.storage import duckdb_review

ROWS = 1_000_000  # per import
REPEATED = 1_000  # the rows of import 2 that import 1 holds too (same key, another team)

DATASET = """
COPY (SELECT ({first} + i)::UBIGINT AS row_key_hi, (({first} + i) * 7)::UBIGINT AS row_key_lo,
  TIMESTAMPTZ '2026-01-01' + to_hours(i % 744) AS charge_period_start,
  TIMESTAMPTZ '2026-01-01' + to_hours(i % 744 + 1) AS charge_period_end, NULL::TIMESTAMPTZ AS commitment_end,
  'usage' AS charge_category, 'AWS' AS provider, 'us-east-1' AS region, 'i-' || ({first} + i) AS resource_id,
  'p4d.24xlarge' AS instance_type, 'a100' AS gpu, 8000000::BIGINT AS gpus_per_instance_micros,
  'on_demand' AS pricing_category, '' AS commitment_status, '' AS commitment_discount_id, '' AS commitment_type,
  '' AS commitment_family, false AS commitment_gpu_scope, 'Compute' AS service_category, 'USD' AS currency,
  '{team}' AS team, 'p' || (i % 3) AS project, '{{"team": "{team}", "line": "' || i || '"}}' AS tags,
  (1000000 + i % 97)::BIGINT AS billed_micros, (1000000 + i % 97)::BIGINT AS effective_micros,
  (2000000 + i % 89)::BIGINT AS list_micros, 1000000::BIGINT AS instance_hours_micros,
  8000000::BIGINT AS gpu_hours_micros
FROM range({rows}) AS t(i)) TO '{path}' (FORMAT parquet)
"""


class Datasets:
    """Three imports' datasets of January 2026 (ImportDatasets' layout: import=<id>/month=YYYY-MM/)."""

    def __init__(self, root: Path):
        self.paths = []
        connection = duckdb.connect()
        connection.execute("SET TimeZone = 'UTC'")
        starts = {1: 0, 2: ROWS - REPEATED, 3: 10 * ROWS}
        for number, first in starts.items():
            folder = root / f"import={number}" / "month=2026-01"
            folder.mkdir(parents=True)
            self.paths.append(folder / "part-00000.parquet")
            sql = DATASET.format(first=first, rows=ROWS, team=f"team-{number}", path=self.paths[-1])
            connection.execute(sql)

    def files(self, start: dt.date, end: dt.date) -> list[Path]:
        return self.paths

    @staticmethod
    def may_repeat_rows(files) -> bool:
        return True


def test_a_month_of_three_imports_is_read_within_a_lowered_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(duckdb_review, "MEMORY_LIMIT", "96MB")
    monkeypatch.setattr(duckdb_review, "SPILL_FOLDER", tmp_path / "spill")
    frame = duckdb_review.engine_rows(
        Datasets(tmp_path / "datasets"),
        dt.date(2026, 1, 1),
        dt.date(2026, 2, 1),
        interruptible_tag="interruptible",
        grouped=True,
        per_resource=False,
    )
    # each of the 3M - 1,000 keys once, the repeated ones from import 1 (its team)
    assert int(frame["row_count"].sum()) == 3 * ROWS - REPEATED
    by_team = frame.groupby("team", observed=True)["row_count"].sum().to_dict()
    assert by_team == {"team-1": ROWS, "team-2": ROWS - REPEATED, "team-3": ROWS}
    per_import = sum(1000000 + i % 97 for i in range(ROWS))
    repeated = sum(1000000 + i % 97 for i in range(REPEATED))
    assert int(frame["effective_micros"].sum()) == 3 * per_import - repeated
