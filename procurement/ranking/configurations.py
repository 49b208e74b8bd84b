"""Configurations: offers joined to their shapes, priced with the job-cost formula, filtered, ordered.

Order (``ranked_order``): rows without a doubt first, by (total cost, hours, catalog order); the doubted rows
cheaper than that first row right below it, fewest doubts first, then the rest. Each doubt counts one: a tight
fit, GPUs talking over a link the catalog does not state, a consumer serving split, and the HOST. The host is
one doubt, counted alike whether it is known and below its rule (RAM under what the stack holds, vCPUs under
the per-GPU rule: ``host_shortfall``) or not known at all where production serving checks it
(``host_unknown``: a marketplace catalog's placeholder figures, read as unknown by pricing/providers/
skypilot_csv.py). An unknown host is not a host that meets the rule (outside audit aud51x, stop 52: a Vast row
whose host nobody checked ranked first over a known host 0.3 GiB short). Where the source carries the
machine's own figures (Vast's marketplace offer, pricing/providers/vast_market.py) the host is checked like any.
Doubts are counted from the fewest any fitting row has: a doubt every row shares orders nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from procurement.costing.spot import BAND_MONTHLY_INTERRUPTION, GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS
from procurement.ranking.offers import PreparedOffers
from procurement.ranking.offload_hours import offer_hours
from procurement.ranking.options import HOURS_PER_MONTH, PLAN_NAMES, RankingOptions
from procurement.ranking.shapes import Shapes
from procurement.ranking.sizing_memo import arrays_key, memoized
from procurement.ranking.spot_inputs import job_spot_timing
from procurement.sizing import WorkloadSpec
from procurement.sizing.host import feeds_loader
from procurement.sizing.throughput import loader_bound_hours


@dataclass(frozen=True)
class Configurations:
    """The configurations worth ranking: every valid one with include_infeasible, else only those that fit
    (infeasible ones can never be returned, so they are not priced)."""

    offer: np.ndarray  # index into the offer table
    shape: np.ndarray  # index into the shapes
    offer_price_per_hour: np.ndarray  # per offer: instance-hour, USD, as listed
    effective_price_per_hour_of: np.ndarray  # per configuration: spot with the overhead at its instances
    hours: np.ndarray
    total_cost: np.ndarray
    fits: np.ndarray
    spot_refused: np.ndarray
    selected: np.ndarray  # passes fits (unless include_infeasible) and every filter
    considered: int  # every valid configuration (offer x instance count x plan), priced or not
    offer_listed_price_per_hour: np.ndarray  # per offer: the quote itself (an outlier ranks at a robust one)
    host_blocked: np.ndarray  # the plan's offloaded state does not fit the host RAM
    # (below the guides' host rules of thumb is a warning, worked out for the returned rows only:
    # procurement/ranking/warnings.py, ``host_shortfall`` for a whole table)
    tight: np.ndarray  # feasible, but the peak fits without the spec's headroom: ranked after the rest
    instances: np.ndarray  # per configuration: instances of its shape
    # spot on several instances at once: their simultaneous capacity is not modelled (a job needs all N
    # granted together), so like a tight fit it ranks after the rows whose capacity is not in doubt
    multi_instance_spot: np.ndarray
    # the plan's GPUs talk to each other (tensor, pipeline or expert parallel, or training on several GPUs)
    # over an intra-node link the catalog does not state (PCIe assumed): costed on an assumption nobody
    # sourced, so like a tight fit it ranks below the first row whose link is documented (issue 26, item 4)
    unstated_link: np.ndarray
    # the host is below what the row warns about (RAM under what its training stack holds, vCPUs under the
    # rule a GPU: ``host_shortfall``), where the shortfall is not costed (an image loader's vCPUs are: its
    # hours): like a tight fit it ranks below the first row whose host meets it (issue 26, stop 44: SDXL LoRA's
    # 16 GiB host under the 16.4 GiB its diffusers script holds ranked first by 5 cents; aud44r: the card rule
    # RAM >= GPU memory only warns)
    host_doubt: np.ndarray
    # a serving replica split over several consumer (GeForce) cards: flagged by ranking/warnings.py ("prefer a
    # data-center card that holds the model on fewer GPUs"), so like a tight fit it ranks below the first row
    # that is not one (aud48r / aud49r: a flagged 3-4 x RTX 3090 split ranked first for Mixtral serving)
    consumer_split: np.ndarray
    # production serving on a host whose RAM (where the serving stack is known) or vCPUs the catalog does not
    # know: the host rule decides a serving row's order, and nobody checked it, so it is one host doubt, the
    # same as a known host below the rule (aud51x, stop 52)
    host_unknown: np.ndarray | None = None
    # a known host short beyond HOST_SHORT_TOLERANCE of the RAM its stack holds, or missing both the RAM and the
    # vCPU rule: a second host doubt, so it ranks after an unknown host (audhd, stop 52: a 4 GiB host under an
    # 8.2 GiB serving rule, certain to fail at load, ranked above an unlisted Vast host on 15 cents)
    host_severe: np.ndarray | None = None
    # every fitting row's host is unknown where it is checked (``--provider vast``): the doubt orders nothing,
    # and the rows do not claim a rank below a known host no row has (rows.reasons_for, audhd)
    host_unknown_everywhere: bool = False

    @property
    def host_doubted(self) -> np.ndarray:
        """Per configuration: one host doubt, known and short or unknown where checked."""
        return self.host_doubt if self.host_unknown is None else self.host_doubt | self.host_unknown

    @property
    def host_doubts(self) -> np.ndarray:
        """Per configuration: host doubts counted, 0, 1 (unknown, or short within the tolerance) or 2 (severe)."""
        doubts = self.host_doubted.astype(np.int8)
        return doubts if self.host_severe is None else doubts + self.host_severe

    def price_per_hour(self, index: int) -> float:
        """The instance-hour price ranked (USD): the quote, or the robust price of a spot outlier."""
        return float(self.offer_price_per_hour[self.offer[index]])

    def listed_price_per_hour(self, index: int) -> float:
        return float(self.offer_listed_price_per_hour[self.offer[index]])

    def effective_price_per_hour(self, index: int) -> float:
        return float(self.effective_price_per_hour_of[index])


def spot_overhead_by_band(
    band: np.ndarray,
    write_hours: float,
    restart_hours: float,
    background_write_hours: float = 0.0,
    instances: np.ndarray | int = 1,
) -> np.ndarray:
    """C/tau + (tau/2 + R) lambda with tau = max(min(Young/Daly, 15 min), W), per offer (docs/cost-model.md);
    C (blocking), R and an asynchronous save's background write W are the job's own (ranking/spot_inputs.py,
    costing.spot.chosen_interval_hours). lambda is the job's: ``instances`` x the band's per-instance rate,
    as any one reclaimed instance stops the job (independent reclaims; costing.spot module doc)."""
    monthly = np.array([float(p) for p in BAND_MONTHLY_INTERRUPTION])[band]
    rate = -np.log1p(-monthly) / HOURS_PER_MONTH * instances
    interval = np.minimum(np.sqrt(2.0 * write_hours / rate), float(GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS))
    interval = np.maximum(interval, background_write_hours)
    return write_hours / interval + (interval / 2.0 + restart_hours) * rate


EFFECTIVE_PRICES_KEPT = 64  # per prepared table: price columns (one per checkpoint timing and instance count)


def _effective_prices(prepared: PreparedOffers, timing, instance_counts: np.ndarray) -> np.ndarray:
    """Per offer and instance count (columns in ``instance_counts``' order): the price with the spot
    overhead at the job's checkpoint write and restart times and its N-fold interruption rate, memoized on
    the prepared table (workloads of one size share a timing). The overhead is worked out per band (five
    values) and instance count and read per offer: the same figures as per offer."""
    counts = tuple(int(count) for count in instance_counts)
    key = (timing.checkpoint_write_hours, timing.restart_hours, timing.background_write_hours, counts)
    memo = prepared._effective
    if key not in memo:
        columns = prepared.columns
        bands = np.arange(len(BAND_MONTHLY_INTERRUPTION))
        by_band = spot_overhead_by_band(bands[:, None], *key[:3], instances=np.array(counts)[None, :])
        overhead = by_band[columns["band"]]
        price = columns["price_usd"][:, None]
        # the same memory as EFFECTIVE_PRICES_KEPT one-column tables: a table per instance count in use
        if sum(table.shape[1] for table in memo.values()) + len(counts) > EFFECTIVE_PRICES_KEPT:
            memo.clear()
        memo[key] = np.where(columns["is_spot"][:, None], price * (1.0 + overhead), price)
    return memo[key]


def _spot_refused_shapes(shapes: Shapes, spec: WorkloadSpec, options: RankingOptions) -> np.ndarray:
    """Per shape: would a spot offer be refused (serving, no checkpoints, or a checkpoint too slow)? Several
    instances are not refused: their N-fold interruption rate is priced (``spot_overhead_by_band``) and the
    deadline filter reads their wall clock at it (ranking/deadline.py)."""
    refused = not spec.is_training or not options.can_checkpoint or checkpoint_too_slow(spec, options)
    return np.full(shapes.instances.shape, refused, dtype=bool)


def checkpoint_too_slow(spec: WorkloadSpec, options: RankingOptions) -> bool:
    """A checkpoint write of 15 minutes or more leaves no work between the guides' 15-minute checkpoints
    (synchronous), or cannot finish before the next one is due (asynchronous: the next save waits for it)."""
    timing = job_spot_timing(spec, options)
    slowest = max(timing.checkpoint_write_hours, timing.background_write_hours)
    return slowest >= float(GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS)


def host_shortfall(
    columns: dict[str, np.ndarray], offer: np.ndarray, shapes: Shapes, shape: np.ndarray, spec: WorkloadSpec
) -> np.ndarray:
    """Per configuration: the instance has less RAM than its training stack holds (shapes.host_ram_stack_gib:
    loaded weights as the loader holds them + loader buffers + runtime + offloaded state, sizing.host.
    stack_host_ram) or fewer vCPUs than the guides' rule of thumb (>= 4 vCPUs per GPU): a row warning
    (warnings.host_texts, the same comparisons), not infeasibility, and a doubt ``ranked_order`` ranks like a
    tight fit. The card rule (RAM >= its GPUs' memory) is no doubt (outside audit aud44r, stop 44: it asks an L4's
    22.4 GiB of YOLO11m and of SDXL alike): where no stack is known it only warns. vCPUs that feed an image loader
    are not a doubt: their rate bounds the row's hours (``loader_bound_hours``), so the row is costed at them. An
    unknown figure is NaN, and a comparison with NaN is False: unknown hosts and stacks are never flagged."""
    stack = shapes.host_ram_stack_gib
    short = (
        columns["memory_gib"][offer] < stack[shape]
        if stack is not None
        else np.zeros(np.shape(offer), dtype=bool)
    )
    if not feeds_loader(spec):
        short |= columns["vcpus"][offer] < shapes.host_vcpus[shape]
    return short


# A known host whose RAM is short of what its stack holds by more than this share of it is a second host doubt (a
# model assumption, audhd's suggested figure: the serving rule's 3.5 GiB runtime term and a loader's buffers are
# estimates good to about this; 1.9% short, hostdoubt's 16 of 16.3 GiB, is within them, 51% short is a load failure)
HOST_SHORT_TOLERANCE = 0.10


def host_severe(
    columns: dict[str, np.ndarray], offer: np.ndarray, shapes: Shapes, shape: np.ndarray, spec: WorkloadSpec
) -> np.ndarray:
    """Per configuration: a known host short of the RAM its stack holds by more than HOST_SHORT_TOLERANCE, or
    short of both that RAM and the vCPU rule (the comparisons of ``host_shortfall``). A host whose figures are
    the smallest the provider lists across regions (``lower_bound``) is never severe: its region may be larger.
    A vCPU shortfall alone stays one doubt: too few vCPUs slow a row, too little RAM fails it at load."""
    stack = shapes.host_ram_stack_gib
    if stack is None:
        return np.zeros(np.shape(offer), dtype=bool)
    ram, needed = columns["memory_gib"][offer], stack[shape]
    ram_short = ram < needed
    with np.errstate(invalid="ignore", divide="ignore"):
        far = ram_short & ((needed - ram) / needed > HOST_SHORT_TOLERANCE)
    vcpus_short = (
        columns["vcpus"][offer] < shapes.host_vcpus[shape]
        if not feeds_loader(spec)
        else np.zeros(np.shape(offer), dtype=bool)
    )
    return (far | (ram_short & vcpus_short)) & ~_lower_bound(columns, offer)


def _lower_bound(columns: dict[str, np.ndarray], offer: np.ndarray) -> np.ndarray:
    flags = columns.get("host_lower_bound")
    return np.zeros(np.shape(offer), dtype=bool) if flags is None else flags[offer]


def host_ram_blocking(
    columns: dict[str, np.ndarray], offer: np.ndarray, shapes: Shapes, shape: np.ndarray
) -> np.ndarray:
    """Per configuration: the plan itself needs host RAM the instance does not have. With CPU offload of
    the optimizer or parameters the host holds that state (and stages it with the GPUs' memory), so the
    full rule, RAM >= GPU memory + offloaded state, is a limit rather than a rule of thumb. Only this
    host figure excludes an offer, and only when it is known (NaN < x is False) and not a lower bound (the
    smallest of the provider's listed hosts: another region's host may hold it; ``offload_host_unknown``)."""
    offloads = shapes.offloaded_per_gpu_gib[shape] > 0
    below = columns["memory_gib"][offer] < shapes.host_ram_gib[shape]
    return offloads & below & ~_lower_bound(columns, offer)


def offload_host_unknown(
    columns: dict[str, np.ndarray], offer: np.ndarray, shapes: Shapes, shape: np.ndarray
) -> np.ndarray:
    """Per configuration: the plan offloads to CPU (optimizer or parameters), so its host RAM is a limit
    (``host_ram_blocking``), and the host's RAM is unknown, or a lower bound below the limit: one host doubt in
    either deployment (audhd, stop 52: 70B ZeRO-3 optimizer offload ranked an unknown Vast host first; a limit,
    where an unknown host matters most). Training without offload keeps ranking an unknown host by cost."""
    offloads = shapes.offloaded_per_gpu_gib[shape] > 0
    ram = columns["memory_gib"][offer]
    below_bound = _lower_bound(columns, offer) & (ram < shapes.host_ram_gib[shape])
    return offloads & (np.isnan(ram) | below_bound)


def configure(
    prepared: PreparedOffers, shapes: Shapes, options: RankingOptions, spec: WorkloadSpec
) -> Configurations:
    """Price every configuration worth ranking. Each expression keeps the per-offer loop's order of
    operations (tests/reference/ranking_loop.py), so totals are bit-for-bit the loop's; per-offer and
    per-shape factors are computed once and gathered, which keeps the passes over all configurations few.

    Feasible = the shape fits (memory, compatibility, speed) and the offer can carry it: a whole
    instance (not a GPU-only price), host RAM for what the plan offloads, and spot only where spot is
    allowed and saves something (a quote at or above on-demand does not). The host rules of thumb
    (RAM >= GPU memory, vCPUs per GPU) only warn, on the returned rows."""
    columns = prepared.columns
    refused_shape = _spot_refused_shapes(shapes, spec, options)
    cells = _priced_cells(prepared, shapes, options, refused_shape)
    offer, shape, host_short, spot_refused, fits, considered = cells
    price = columns["price_usd"]
    counts, count_of_shape = np.unique(shapes.instances, return_inverse=True)
    effective = _effective_prices(prepared, job_spot_timing(spec, options), counts)
    hours, instances = shapes.hours[shape], shapes.instances[shape]
    # the host's image loader bounds image-decoding training (host.loader_worker_vcpus: the offer's vCPUs, at
    # most image.loader_workers a GPU); an offer whose vCPUs are unknown is taken at the pipeline's need (as
    # `size` recommends), so only the loader's workers bound it
    vcpus = columns["vcpus"][offer]
    vcpus = np.where(np.isnan(vcpus), shapes.assumed_vcpus[shape], vcpus)
    hours = np.maximum(hours, loader_bound_hours(spec, vcpus * instances, shapes.total_gpus[shape]))
    # an offloaded optimizer's CPU step on the offer's own vCPUs / 2 physical cores a rank (unknown: assumed)
    hours = offer_hours(spec, shapes, shape, columns["vcpus"][offer] * instances, hours)
    storage_months = (shapes.hours + options.setup_hours) / HOURS_PER_MONTH + options.storage_tail_months
    effective_per_config = effective[offer, count_of_shape.reshape(-1)[shape]]
    compute = effective_per_config * hours * instances
    total = (
        compute * (1.0 + options.rerun_fraction) + (effective_per_config * options.setup_hours) * instances
    )
    if options.storage_gb:
        total += (options.storage_gb * columns["storage_rate"])[offer] * storage_months[shape]
    selected = (fits | options.include_infeasible) & _filters(total, hours, options)
    unknown = (
        (
            host_unknown(columns, offer, shapes, shape, spec) & (options.deployment == "production")
            | offload_host_unknown(columns, offer, shapes, shape)
        )
        & ~columns["gpu_only"][offer]
        & fits
    )
    shown = fits & selected
    return Configurations(
        offer,
        shape,
        price,
        effective_per_config,
        hours,
        total,
        fits,
        spot_refused,
        selected,
        considered,
        columns["price_usd_listed"],
        host_short,
        shapes.tight[shape] & fits,
        instances,
        columns["is_spot"][offer] & (instances > 1),
        unstated_link_talks(spec, shapes, shape, columns["gpu_per_instance"][offer]),
        host_shortfall(columns, offer, shapes, shape, spec) & ~columns["gpu_only"][offer] & fits,
        consumer_serving_split(spec, shapes, shape, columns["consumer"][offer])
        & fits
        & (options.deployment == "production"),  # development: ranked by cost (options.DEPLOYMENTS)
        unknown,
        host_severe(columns, offer, shapes, shape, spec) & ~columns["gpu_only"][offer] & fits,
        bool(shown.any() and unknown[shown].all()),
    )


def host_unknown(
    columns: dict[str, np.ndarray], offer: np.ndarray, shapes: Shapes, shape: np.ndarray, spec: WorkloadSpec
) -> np.ndarray:
    """Per configuration: a language-model serving row whose host figure the rule reads is unknown (NaN): RAM where the serving
    stack is known (shapes.host_ram_stack_gib, sizing.host.serving_host_ram), vCPUs always (>= 4 per GPU). Training
    is not doubted for an unknown host (its rows keep their order: the brief of aud51x's fix asks production
    serving, where the host rule decides; a training row's host shortfall is a doubt only when known)."""
    # image models: no host RAM rule for an image pipeline (host.serving_host_ram returns None for them; aud44r), so
    # an unknown host leaves nothing unchecked that a known one would be checked on: it only warns
    if spec.is_training or spec.model.is_image:
        return np.zeros(np.shape(offer), dtype=bool)
    unknown = np.isnan(columns["vcpus"][offer])
    if shapes.host_ram_stack_gib is not None:
        unknown |= np.isnan(columns["memory_gib"][offer]) & ~np.isnan(shapes.host_ram_stack_gib[shape])
    return unknown


def consumer_serving_split(spec: WorkloadSpec, shapes: Shapes, shape: np.ndarray, consumer) -> np.ndarray:
    """Per configuration: a serving replica's tensor-parallel group or pipeline spans several consumer cards
    (no ECC; GeForce's driver licence excludes data-center use: ranking/warnings.link_warnings flags it)."""
    if spec.is_training:
        return np.zeros(np.shape(shape), dtype=bool)
    return np.asarray(consumer, dtype=bool) & (model_parallel(shapes, shape) > 1)


def model_parallel(shapes: Shapes, shape: np.ndarray) -> np.ndarray:
    """Per configuration: GPUs of one model replica's split (tensor x a serving pipeline's degree)."""
    pipeline = 1.0 if shapes.pipeline is None else shapes.pipeline[shape]
    return shapes.tensor_parallel[shape] * pipeline


def gpus_talk(spec: WorkloadSpec, shapes: Shapes, shape: np.ndarray) -> np.ndarray:
    """Per configuration: its GPUs exchange data while they run (a tensor-parallel group, a pipeline or
    expert split, or a training step's gradient or ZeRO collectives over several GPUs). Serving replicas
    of one GPU each never talk."""
    par = spec.parallelism
    split = par.pipeline_parallel > 1 or par.expert_parallel > 1
    multi = shapes.total_gpus[shape] > 1
    return multi & (spec.is_training | split | (model_parallel(shapes, shape) > 1))


def unstated_link_talks(
    spec: WorkloadSpec, shapes: Shapes, shape: np.ndarray, gpus_per_instance: np.ndarray
) -> np.ndarray:
    """Per configuration: GPUs that talk (``gpus_talk``) within an instance whose link the catalog does
    not state (interconnects.Interconnect.stated False: PCIe assumed by a rule or the default)."""
    stated = np.array([link.stated for link in shapes.links], dtype=bool)[shapes.link[shape]]
    return ~stated & (gpus_per_instance > 1) & gpus_talk(spec, shapes, shape)


def _priced_cells(prepared: PreparedOffers, shapes: Shapes, options: RankingOptions, refused_shape) -> tuple:
    """(offer, shape, host RAM blocking, spot refused, fits) per configuration worth pricing, and how many
    were considered. They depend on the shapes' fit and plan validity, the spot refusals, the host RAM a
    plan offloads to, never on hours or prices: memoized on the prepared table by exactly those arrays
    (workloads of one size differ only in their token count, so they share one entry; bounded as the
    sizing memo). Read-only."""
    offloads = shapes.offloaded_per_gpu_gib > 0
    key = (
        len(options.instance_counts),
        len(shapes.fits),
        options.include_infeasible,
        arrays_key(
            np.packbits(shapes.fits),
            np.packbits(shapes.valid),
            np.packbits(refused_shape),
            np.where(offloads, shapes.host_ram_gib, np.nan),
        ),
    )
    return memoized(prepared._cells, key, lambda: _cells(prepared, shapes, options, refused_shape, offloads))


def _cells(
    prepared: PreparedOffers, shapes: Shapes, options: RankingOptions, refused_shape, offloads
) -> tuple:
    per_kind = len(options.instance_counts) * len(PLAN_NAMES)
    columns, count = prepared.columns, len(prepared.offer_kind)
    is_spot, gpu_only = columns["is_spot"], columns["gpu_only"]
    no_saving = is_spot & columns["spot_no_saving"]
    # A row that cannot fit is never returned without include_infeasible: skip pricing it.
    offers = np.arange(count) if options.include_infeasible else np.flatnonzero(~gpu_only)
    # offers x (instance count, plan) as a boolean table, its kept cells read in row order: the
    # configurations in the order of the per-offer loop (offer, then shape), without expanding every one
    kinds = prepared.offer_kind[offers]
    if options.include_infeasible:
        keep = shapes.valid.reshape(-1, per_kind)[kinds]
    else:
        keep = shapes.fits.reshape(-1, per_kind)[kinds]
        keep &= ~(is_spot[offers][:, None] & refused_shape.reshape(-1, per_kind)[kinds])
        keep &= ~no_saving[offers][:, None]
    rows, cells = np.nonzero(keep)
    offer, shape = offers[rows], kinds[rows] * per_kind + cells
    host_short = host_ram_blocking(columns, offer, shapes, shape)
    if not options.include_infeasible and host_short.any():
        offer, shape = offer[~host_short], shape[~host_short]
        host_short = np.zeros(offer.shape, dtype=bool)
    spot_refused = is_spot[offer] & (refused_shape[shape] | no_saving[offer])
    fits = shapes.fits[shape] & ~spot_refused & ~host_short & ~gpu_only[offer]
    considered = int(shapes.valid.reshape(-1, per_kind).sum(axis=1)[prepared.offer_kind].sum())
    for array in (offer, shape, host_short, spot_refused, fits):
        array.flags.writeable = False
    return offer, shape, host_short, spot_refused, fits, considered


def _filters(total: np.ndarray, hours: np.ndarray, options: RankingOptions) -> np.ndarray:
    keep = np.ones(total.shape, dtype=bool)
    if options.deadline_hours is not None:
        keep &= hours <= options.deadline_hours
    if options.budget is not None:
        keep &= total <= options.budget_usd
    return keep


def pareto_shapes(configs: Configurations, shape_hours: np.ndarray) -> set[tuple[int, float]]:
    """(shape, cheapest cost) pairs on the cost-versus-time front. Hours depend only on the shape, so the
    front is found over each shape's cheapest feasible configuration rather than over every offer."""
    mask = configs.selected & configs.fits
    cheapest = np.full(shape_hours.shape, np.inf)
    np.minimum.at(cheapest, configs.shape[mask], configs.total_cost[mask])
    candidates = np.flatnonzero(np.isfinite(cheapest))
    front, fastest = set(), math.inf
    for shape in candidates[np.lexsort((shape_hours[candidates], cheapest[candidates]))]:
        if shape_hours[shape] < fastest:
            front.add((int(shape), float(cheapest[shape])))
            fastest = shape_hours[shape]
    return front


def raw_doubts(configs: Configurations, candidates: np.ndarray) -> np.ndarray:
    """Per candidate: the doubts ranked_order counts (a tight fit, an assumed link, host doubts, a consumer
    serving split), before the share every fitting row has is taken off."""
    return (
        configs.tight[candidates].astype(np.int8)
        + configs.unstated_link[candidates]
        + configs.host_doubts[candidates]
        + configs.consumer_split[candidates]
    )


def doubt_levels(configs: Configurations) -> np.ndarray:
    """Per configuration, where ranked_order puts it: its doubts beyond those every fitting row shares, and the
    spot rows on several instances after every other (MULTI_SPOT_LEVEL). The tie note compares the first row
    only with a row on its level or above (ranking/ties.py)."""
    doubts = raw_doubts(configs, np.arange(configs.offer.size)).astype(np.int16)
    usable = configs.selected & configs.fits & ~configs.multi_instance_spot
    if usable.any():
        doubts = doubts - doubts[usable].min()
    return np.where(configs.multi_instance_spot, MULTI_SPOT_LEVEL, doubts)


MULTI_SPOT_LEVEL = 1000  # more doubts than any row counts: ranked last whatever its other doubts


def ranked_order(configs: Configurations, top: int | None, include_infeasible: bool = False) -> np.ndarray:
    """Selected feasible rows by (total cost, hours, catalog order), those that fit with headroom on a
    documented link and a host that meets the rules of thumb before the doubtful ones (tight: peak fits,
    headroom does not; GPUs that talk over a link the catalog does not state; a host below the RAM or
    vCPU rule it is warned about, ``host_shortfall``, or, for production serving, a host the catalog does not
    know, ``host_unknown``: one host doubt either way; a serving replica split over consumer cards), and the spot rows on several instances last (a job needs all N
    granted at once, a capacity nothing here models: priced and shown with their reclaim exposure, never the
    answer ahead of a row whose capacity is not in doubt); only the top N are fully sorted.
    With include_infeasible, the best N infeasible rows follow (by what they would cost, then hours),
    so "why not" is shown for the configurations a person would otherwise have picked."""
    candidates = np.flatnonzero(configs.selected)
    doubtful = configs.multi_instance_spot[candidates]
    multi_spot = candidates[doubtful & configs.fits[candidates]]
    candidates = candidates[~doubtful]
    fits = configs.fits[candidates]
    # one rule for every doubt (a tight fit, an assumed link, a host below its rule of thumb, a consumer
    # serving split): shown below the first row without one, never dropped; among the doubted rows, fewer
    # doubts first, then cost: a row with two reasons not to sign it never outranks one with a single reason
    # (outside audit aud50a, stop 50: an L4 on a 16 GiB host, tight and host-short, above the same L4 on a
    # 32 GiB host, tight only, for a few cents)
    doubts = raw_doubts(configs, candidates)
    if fits.any():
        # a doubt every fitting row shares tells them apart in nothing (hostdoubt: --provider vast, every host
        # unknown): counted from the fewest any row has, so "no doubt" is "no doubt beyond what all share"
        doubts = doubts - doubts[fits].min()
    roomy = _cheapest(configs, candidates[fits & (doubts == 0)], top)  # no doubt: first
    doubted = fits & (doubts > 0)
    tight_rows, tight_doubts = candidates[doubted], doubts[doubted]
    cheap_tight = np.zeros(0, dtype=np.int64)
    if roomy.size and tight_rows.size:
        # tight rows cheaper than the first roomy row are shown right below it, with their margin (a user
        # may lower the headroom knowingly), never cut off by a top N of dearer roomy rows (issue 26)
        cost = np.where(np.isnan(configs.total_cost[tight_rows]), np.inf, configs.total_cost[tight_rows])
        cheaper = cost < configs.total_cost[roomy[0]]
        cheap_tight = _fewest_doubts(
            configs, tight_rows[cheaper], tight_doubts[cheaper], None if top is None else max(top - 1, 0)
        )
    order = np.concatenate([roomy[:1], cheap_tight, roomy[1:]])[:top]
    if top is None or order.size < top:  # the other tight rows (peak fits, headroom does not): after them
        rest = None if top is None else top - order.size
        others = ~np.isin(tight_rows, cheap_tight)
        order = np.concatenate(
            [order, _fewest_doubts(configs, tight_rows[others], tight_doubts[others], rest)]
        )
    if multi_spot.size and (top is None or order.size < top):  # several spot instances at once: last
        order = np.concatenate(
            [order, _cheapest(configs, multi_spot, None if top is None else top - order.size)]
        )
    if include_infeasible:
        order = np.concatenate([order, infeasible_order(configs, top)])
    return order


def infeasible_order(configs: Configurations, top: int | None) -> np.ndarray:
    """The best ``top`` selected infeasible rows, by what they would cost, then hours."""
    candidates = np.flatnonzero(configs.selected)
    return _cheapest(configs, candidates[~configs.fits[candidates]], top)


def _fewest_doubts(
    configs: Configurations, candidates: np.ndarray, doubts: np.ndarray, top: int | None
) -> np.ndarray:
    """Doubted rows by (number of doubts, total cost, hours, catalog order), the first ``top``."""
    cost = configs.total_cost[candidates]
    cost = np.where(np.isnan(cost), np.inf, cost)
    order = np.lexsort((candidates, configs.hours[candidates], cost, doubts))
    return candidates[order][:top]


def _cheapest(configs: Configurations, candidates: np.ndarray, top: int | None) -> np.ndarray:
    cost = configs.total_cost[candidates]
    cost = np.where(np.isnan(cost), np.inf, cost)
    if top is not None and 0 < top < candidates.size:
        # Keep every row that costs no more than the N-th cheapest: a cut inside a tie would otherwise
        # pick an arbitrary tied row, and ``top=N`` must be the first N rows of the full ranking.
        threshold = np.partition(cost, top - 1)[top - 1]
        keep = cost <= threshold
        candidates, cost = candidates[keep], cost[keep]
    order = np.lexsort((candidates, configs.hours[candidates], cost))  # ties: catalog order, like the loop
    return candidates[order][:top]
