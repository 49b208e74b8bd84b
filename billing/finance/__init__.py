"""Showback, budgets and anomalies: the engines (allocation.py, budgets.py, anomalies.py, plain Python), their
reads, writes, report sections, charts, pages and API."""
