"""gpuledger Django project package.

The Celery app (gpuledger/celery.py) is created when Django starts (AccountsConfig.ready) and found by
`celery -A gpuledger`, not imported here: plain-Python modules of this package (input_bounds,
yaml_bounded) are used by the engines, and the runner and engines must import neither Celery nor Django.
"""
