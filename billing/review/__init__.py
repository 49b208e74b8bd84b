"""The GPU spend review: its engine (plain pandas), the reads behind it, savings, commitments, FX by month, its
cache, report data object, charts, page and API."""
