"""Writes of the procurement app: evaluate and store TCO studies and ranked recommendations, recompute
them when prices change, and tell owners when a decision changed.

Django-side glue around the plain-Python engines, one module per concern:
``tco`` (studies), ``recommendations`` (rankings), ``recompute`` (stored decisions against current
prices), ``notifications`` (change events), ``currency`` (results in another currency).
"""
