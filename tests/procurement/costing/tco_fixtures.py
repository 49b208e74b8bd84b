"""The worked example's study (docs/cost-model.md): one 8 x H100 SXM server for 36 months."""

import copy
from decimal import Decimal

from procurement.costing.gpu_catalog import gpu_economics_from_csv

GPUS = gpu_economics_from_csv()  # the bundled repo copy: h100-sxm5-80gb has TDP 700 W, list 33800 USD

WORKED_EXAMPLE = {
    "name": "one 8xH100 server, 3 years",
    "horizon_months": 36,
    "discount_rate_annual": "0.08",
    "currency": "USD",
    "utilization": "1",
    "buy": {
        "servers": 1,
        "gpus_per_server": 8,
        "gpu": "h100-sxm5-80gb",
        "server_price": "300000",
        "install_cost": "5000",
        "server_overhead_kw": "4.6",
        "average_load": "0.7",
        "pue": "1.58",
        "electricity_per_kwh": "0.10",
        "colocation_per_kw_month": "184",
        "maintenance_pct_per_year": "0.10",
        "ops_fte": "0.1",
        "fte_cost_per_year": "150000",
        "residual_pct": "0.20",
        "depreciation_years": 5,
    },
    "rent": {"pricing_model": "on_demand", "price_per_gpu_hour": "2.99"},
}


def study_document(**changes):
    """A deep copy of the worked example with dotted-path changes, e.g. ``{"buy.pue": "1.2"}``."""
    document = copy.deepcopy(WORKED_EXAMPLE)
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = document
        for key in parents:
            target = target[key]
        if value is None:
            target.pop(leaf, None)
        else:
            target[leaf] = value
    return document


D = Decimal
