"""The cost engine: job cost, spot economics, commitments and buy-versus-rent TCO.

Plain Python (no Django): money in Decimal, numpy where many rows are priced at once. Django code
(commands, API views, tasks) converts rows to these inputs and the results back to rows.
"""

from procurement.costing.commitments import (
    CommitmentMix,
    break_even_utilization,
    cheapest_commitment_mix,
    commitment_report,
    discount_against,
    effective_hourly,
)
from procurement.costing.documents import DocumentSyntaxError, load_document_file, load_document_text
from procurement.costing.gpu_catalog import GpuEconomics, gpu_economics_from_csv
from procurement.costing.job import (
    JobCostBreakdown,
    JobCostInput,
    StorageFootprint,
    job_cost,
    planning_job_input,
)
from procurement.costing.spot import (
    SpotEconomics,
    SpotJobTraits,
    SpotVerdict,
    band_interruption_rate_per_hour,
    spot_economics,
    spot_verdict,
    young_daly_interval_hours,
)
from procurement.costing.spot_simulation import SpotSimulationInput, SpotSimulationResult, simulate_spot_job
from procurement.costing.studies import evaluate_tco_study
from procurement.costing.tco import TcoResult, run_tco, tco_report
from procurement.costing.tco_spec import OfferRef, RentPrice, TcoStudy, UnknownOffer, parse_tco_study
from procurement.costing.values import CostInputError, round_money, round_price

__all__ = [
    "CommitmentMix",
    "CostInputError",
    "DocumentSyntaxError",
    "GpuEconomics",
    "JobCostBreakdown",
    "JobCostInput",
    "OfferRef",
    "RentPrice",
    "SpotEconomics",
    "SpotJobTraits",
    "SpotSimulationInput",
    "SpotSimulationResult",
    "SpotVerdict",
    "StorageFootprint",
    "TcoResult",
    "TcoStudy",
    "UnknownOffer",
    "band_interruption_rate_per_hour",
    "break_even_utilization",
    "cheapest_commitment_mix",
    "commitment_report",
    "discount_against",
    "effective_hourly",
    "evaluate_tco_study",
    "gpu_economics_from_csv",
    "job_cost",
    "load_document_file",
    "load_document_text",
    "parse_tco_study",
    "planning_job_input",
    "round_money",
    "round_price",
    "run_tco",
    "simulate_spot_job",
    "spot_economics",
    "spot_verdict",
    "tco_report",
    "young_daly_interval_hours",
]
