"""Spreadsheet formula injection: the report renderers use the product's one cell writer
(``gpuledger.spreadsheet``), named here for the modules and tests that import it from the reports."""

from __future__ import annotations

from gpuledger.spreadsheet import FORMULA_TRIGGERS, csv_text, is_formula_like, xlsx_text

__all__ = ["FORMULA_TRIGGERS", "csv_text", "is_formula_like", "xlsx_text"]
