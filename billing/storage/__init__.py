"""Where bill lines are kept and where every aggregate of them is computed (issue 28, item 1).

Every import writes its rows as an immutable Parquet dataset by charge month (datasets.py), its files
recorded in PostgreSQL; `ImportDatasets` lists them for a reader (import_datasets.py), and every read
runs SQL of review_sql.py in DuckDB (duckdb_review.py). No bill line is a PostgreSQL row.

One small interface: a store keeps spend rows as columnar files partitioned by charge month
(`ParquetSpendStore`: `write` a frame of review rows, `files` of the months a period touches), and
`duckdb_review.review_sums` computes the review's GPU aggregates over them in DuckDB SQL, reading only
those months and columns, the team scope applied in the query. The pandas engine (review/engine.py) runs
over the rows DuckDB reads; tests/billing/test_storage_duckdb.py proves the DuckDB sums equal its totals
to the cent on every test bill.
"""

from billing.storage.parquet import ParquetSpendStore

__all__ = ["ParquetSpendStore"]  # ImportDatasets reads the ORM: imported from its module by Django code
