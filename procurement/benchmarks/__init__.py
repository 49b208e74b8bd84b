"""Measured benchmarks: the runner (torch, no Django), the document format, diagnostics and calibration.

`runner.py`, `torch_model.py` and `sampler.py` run on a GPU box with only requirements-bench.txt installed.
`document.py`, `diagnostics.py`, `unit_costs.py` and `calibration.py` are plain Python used by the web app;
nothing in this package imports Django.
"""
