"""Seeded Monte Carlo of a checkpointing job on spot: P50 and P90 of completion time and cost.

The closed-form overhead in ``spot.py`` is an expectation; a finance reviewer also wants the bad
case. Interruptions arrive as a Poisson process (rate lambda per hour). The job runs segments of
``interval`` hours of work, each followed by a checkpoint write of ``C`` hours (none after the last);
an interruption loses the work since the last completed checkpoint and costs ``R`` hours of
restart.

Prices: with at least ``MIN_HISTORY_HOURS`` hourly spot prices of history, each trial draws its own
price path by a block bootstrap of that history (blocks of ``BLOCK_HOURS`` consecutive hours, so a
day's pattern survives inside a block; every block keeps the hour of day it lands on) and pays every
wall-clock hour of its run, lost work and restarts included, at that path's prices. With a shorter
history (or none) every hour is paid at the current spot price.

Simplifications, stated in docs/cost-model.md ("Spot Monte Carlo"): no interruption during a restart,
the job is billed for every wall-clock hour including checkpoint writes and restarts, and
interruptions are drawn independently of the price path (a real price spike also makes reclaims
likelier; the bootstrap does not model that).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from procurement.costing.values import CostInputError, non_negative, positive, positive_int

MAX_INTERRUPTION_ROUNDS = 10_000
MIN_HISTORY_HOURS = 24  # below a day of hourly prices there is no pattern to resample: current price
BLOCK_HOURS = 24  # bootstrap block: one day, so daily price patterns stay whole


@dataclass(frozen=True)
class SpotSimulationInput:
    work_hours: Decimal  # hours of useful work the job needs without interruptions
    rate_per_hour: Decimal
    interval_hours: Decimal
    checkpoint_write_hours: Decimal
    restart_hours: Decimal
    spot_price_per_hour: Decimal  # per instance-hour; used when the history is shorter than a day
    instances: int = 1
    # hourly spot prices per instance-hour, oldest first (Decimals or a float array, same currency as
    # spot_price_per_hour); used when it has at least MIN_HISTORY_HOURS points
    price_history_per_hour: Sequence[Decimal] | np.ndarray = ()
    trials: int = 10_000
    seed: int = 0


@dataclass(frozen=True)
class SpotSimulationResult:
    p50_hours: Decimal
    p90_hours: Decimal
    p50_cost: Decimal
    p90_cost: Decimal
    mean_interruptions: Decimal
    trials: int
    seed: int
    history_hours: int = 0  # hours of price history resampled; 0: priced at the current spot price


def simulate_spot_job(spec: SpotSimulationInput) -> SpotSimulationResult:
    history = _validated_history(spec)
    _validate(spec)
    # Interruptions are drawn first, prices after: the same seed gives the same run lengths whether or
    # not a history is given, so history and current-price results are comparable trial by trial.
    if history.size < MIN_HISTORY_HOURS:
        return _at_current_price(spec)
    rng = np.random.default_rng(spec.seed)  # the price draws continue this generator's stream
    wall_hours, interruptions = _simulate_wall_hours(spec, rng)
    cost = bootstrap_path_cost(history, wall_hours, rng) * spec.instances
    (p50_hours, p90_hours), (p50_cost, p90_cost) = np.percentile([wall_hours, cost], [50, 90], axis=1).T
    return SpotSimulationResult(
        p50_hours=_decimal(p50_hours),
        p90_hours=_decimal(p90_hours),
        p50_cost=_decimal(p50_cost),
        p90_cost=_decimal(p90_cost),
        mean_interruptions=_decimal(interruptions.mean()),
        trials=spec.trials,
        seed=spec.seed,
        history_hours=int(history.size),
    )


def _at_current_price(spec: SpotSimulationInput) -> SpotSimulationResult:
    """Every hour at the current spot price: a trial's cost is its hours x price x instances, which
    never decreases as its hours grow, so the cost quantiles are read at the hours' order statistics
    (the figures ``np.percentile`` gives on the per-trial costs, bit for bit)."""
    walls = sorted_wall_hours_many([spec])[0]
    price, instances = float(spec.spot_price_per_hour), spec.instances
    hours, costs = [], []
    for q in (50, 90):
        low, high, gamma = percentile_position(walls.size, q)
        hours.append(lerp(walls.at(low), walls.at(high), gamma))
        costs.append(lerp(walls.at(low) * price * instances, walls.at(high) * price * instances, gamma))
    return SpotSimulationResult(
        p50_hours=_decimal(hours[0]),
        p90_hours=_decimal(hours[1]),
        p50_cost=_decimal(costs[0]),
        p90_cost=_decimal(costs[1]),
        mean_interruptions=_decimal(walls.mean_interruptions),
        trials=spec.trials,
        seed=spec.seed,
        history_hours=0,
    )


def percentile_position(count: int, q: float) -> tuple[int, int, float]:
    """Where ``np.percentile(values, q)`` (method "linear") reads a sorted array of ``count`` values: the
    two neighbouring indices and the interpolation weight, computed as numpy computes them."""
    virtual = (count - 1) * (q / 100)
    if virtual >= count - 1:  # numpy reads the last value twice, at index -1
        return count - 1, count - 1, virtual + 1
    if virtual < 0:
        return 0, 0, virtual
    low = math.floor(virtual)
    return low, low + 1, virtual - low


def lerp(low: float, high: float, gamma: float) -> float:
    """numpy's ``_lerp``: from the low end below one half, from the high end from one half on."""
    difference = high - low
    if gamma >= 0.5:
        return high - difference * (1 - gamma)
    return low + difference * gamma


def sorted_percentiles(values: np.ndarray | SortedWallHours, percents: Sequence[float]) -> tuple[float, ...]:
    """``np.percentile(values, percents)`` of an ascending array (or of a simulation's sorted hours),
    without sorting again."""
    at = values.at if isinstance(values, SortedWallHours) else (lambda index: float(values[index]))
    found = []
    for q in percents:
        low, high, gamma = percentile_position(values.size, q)
        found.append(lerp(at(low), at(high), gamma))
    return tuple(found)


@dataclass(frozen=True)
class SortedWallHours:
    """One simulation's per-trial wall-clock hours in ascending order, and its mean interruptions, kept
    compact: the trials never interrupted all take ``base`` hours (the uninterrupted run); only the
    others are stored, split at ``base`` (``below`` it, which rounding could allow, and ``above``)."""

    base: float
    base_count: int
    below: np.ndarray
    above: np.ndarray
    mean_interruptions: float

    @property
    def size(self) -> int:
        return self.below.size + self.base_count + self.above.size

    def at(self, index: int) -> float:
        """The ``index``-th smallest trial's hours."""
        if index < self.below.size:
            return float(self.below[index])
        index -= self.below.size
        if index < self.base_count:
            return self.base
        return float(self.above[index - self.base_count])

    @property
    def hours(self) -> np.ndarray:
        """Every trial's hours, ascending."""
        return np.concatenate([self.below, np.full(self.base_count, self.base), self.above])


WallKey = tuple[float, float, float, float, float, int, int]
SORTED_WALLS_KEPT = 65_536  # simulations memoized (the interrupted trials of each); full: start over
_sorted_walls: dict[WallKey, SortedWallHours] = {}


def _wall_key(spec: SpotSimulationInput) -> WallKey:
    """What the wall-clock draws depend on (each read as a float, as the simulation reads it)."""
    return (
        float(spec.work_hours),
        float(spec.rate_per_hour),
        float(spec.interval_hours),
        float(spec.checkpoint_write_hours),
        float(spec.restart_hours),
        spec.trials,
        spec.seed,
    )


def sorted_wall_hours_many(specs: Sequence[SpotSimulationInput]) -> list[SortedWallHours]:
    """Each input's wall-clock hours, sorted, with its mean interruptions: the draws of
    ``simulate_wall_hours_many``, memoized per process, so the rows of one ranking that need the same
    simulation (a row's wall clock for the deadline, its P50/P90 in the spot object, the worst band of
    an assumed one) draw it once."""
    keys = [_wall_key(spec) for spec in specs]
    for key, spec in zip(keys, specs, strict=True):
        if key not in _sorted_walls:  # a memoized key's inputs passed this when it was drawn
            _validate(spec)
    return sorted_wall_hours_of_keys(keys)


def sorted_wall_hours_of_keys(keys: Sequence[WallKey]) -> list[SortedWallHours]:
    """``sorted_wall_hours_many`` of inputs given by their keys (work, rate, interval, checkpoint write
    and restart hours as floats, trials, seed), already valid (``valid_wall_key``)."""
    missing = list(dict.fromkeys(key for key in keys if key not in _sorted_walls))
    found: dict[WallKey, SortedWallHours] = {}
    for seed in {key[6] for key in missing}:
        members = [key for key in missing if key[6] == seed]
        found.update(zip(members, _interrupted_runs(members, seed).sorted_walls(), strict=True))
    if found:
        if len(_sorted_walls) + len(found) > SORTED_WALLS_KEPT:
            _sorted_walls.clear()
        _sorted_walls.update(found)
    return [found.get(key) or _sorted_walls[key] for key in keys]


def simulate_wall_hours(spec: SpotSimulationInput) -> np.ndarray:
    """Per trial: the wall-clock hours of the job on spot (checkpoint writes, lost work and restarts
    included), drawn exactly as ``simulate_spot_job`` draws them for the same seed, so a quantile read
    here is the quantile that function reports (prices are drawn after the interruptions)."""
    _validate(spec)
    wall_hours, _ = _simulate_wall_hours(spec, np.random.default_rng(spec.seed))
    return wall_hours


def simulate_wall_hours_many(specs: Sequence[SpotSimulationInput]) -> list[np.ndarray]:
    """``simulate_wall_hours`` of each input, all in one vectorized run per seed, each result identical to
    its own run. Why it can be shared: a run's draws are ``rng.exponential(1 / rate, n)``, which is
    ``1 / rate`` times the next ``n`` standard exponentials of its seed's stream, so every input reads
    the one stream of its seed at its own position, round after round; the arithmetic per trial is the
    same. A ranking simulates a dozen rows of one seed: one pass of numpy per round instead of twelve."""
    for spec in specs:
        _validate(spec)
    walls: list[np.ndarray] = [np.empty(0)] * len(specs)
    for seed in {spec.seed for spec in specs}:
        members = [i for i, spec in enumerate(specs) if spec.seed == seed]
        for i, wall in zip(members, _wall_hours_of_one_seed([specs[i] for i in members], seed), strict=True):
            walls[i] = wall
    return walls


def valid_wall_key(key: WallKey) -> bool:
    """The checks of ``_validate`` on a key's floats (a key that fails them goes through
    ``sorted_wall_hours_many``, which names the field)."""
    work, rate, interval, write, restart, trials, _ = key
    return (
        work > 0
        and rate >= 0
        and interval > 0
        and write >= 0
        and restart >= 0
        and all(math.isfinite(value) for value in (work, rate, interval, write, restart))
        and isinstance(trials, int)
        and trials > 0
    )


def _wall_hours_of_one_seed(specs: list[SpotSimulationInput], seed: int) -> list[np.ndarray]:
    return _wall_hours_and_interruptions([_wall_key(spec) for spec in specs], seed)[0]


def _wall_hours_and_interruptions(
    keys: Sequence[WallKey], seed: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per input: each trial's wall-clock hours and interruptions (see ``_interrupted_runs``)."""
    runs = _interrupted_runs(keys, seed)
    wall = np.repeat(runs.needed, runs.trials)
    interruptions = np.zeros(wall.size)
    wall[runs.hit] = runs.hit_wall
    interruptions[runs.hit] = runs.hit_interruptions
    split = np.cumsum(runs.trials)[:-1]
    return np.split(wall, split), np.split(interruptions, split)


@dataclass(frozen=True)
class _Runs:
    """A batch of simulations: every trial of input i not in ``hit`` takes ``needed[i]`` hours with no
    interruption; ``hit`` (global trial indices, input after input) holds the others."""

    trials: np.ndarray
    needed: np.ndarray
    hit: np.ndarray
    hit_owner: np.ndarray
    hit_wall: np.ndarray
    hit_interruptions: np.ndarray

    def sorted_walls(self) -> list[SortedWallHours]:
        found = []
        # interruptions are whole counts: their sum is exact in any order, as np.mean's is
        totals = np.bincount(self.hit_owner, weights=self.hit_interruptions, minlength=self.trials.size)
        bounds = np.searchsorted(self.hit_owner, np.arange(self.trials.size + 1))
        for i in range(self.trials.size):
            walls = np.sort(self.hit_wall[bounds[i] : bounds[i + 1]])
            base = float(self.needed[i])
            split = int(np.searchsorted(walls, base))  # below: under base; above: base and more
            found.append(
                SortedWallHours(
                    base=base,
                    base_count=int(self.trials[i]) - walls.size,
                    below=walls[:split],
                    above=walls[split:],
                    mean_interruptions=float(totals[i]) / int(self.trials[i]),
                )
            )
        return found


def _interrupted_runs(keys: Sequence[WallKey], seed: int) -> _Runs:
    """Each trial's wall-clock hours and interruptions, from the seed's one stream.

    The first round, where every trial is active, is read off the stream's first ``trials`` values in
    sorted order instead of trial by trial: trial j of input i is interrupted in round one exactly when
    ``stream[j] * scale_i < needed_i`` (a product with a positive scale never decreases as the stream
    value grows), so the interrupted trials are a prefix of that order, found by a binary search that is
    then checked with the very products the round would compute. Every other trial finishes in round one
    at ``needed_i``. Only the interrupted few go through the rounds that follow, with the arithmetic of
    the trial-by-trial loop, so the figures are bit for bit the same."""
    count = len(keys)
    columns = np.array([key[:5] for key in keys], dtype=np.float64).reshape(count, 5)
    work, rates, interval, write, restart = columns.T
    trials = np.array([key[5] for key in keys], dtype=np.int64)
    starts = np.cumsum(trials) - trials
    draws = rates > 0
    scale = np.divide(1.0, rates, out=np.full(count, np.inf), where=draws)
    needed = _time_to_finish(work, interval, write)  # round one: every trial has the whole job left
    hit = _interrupted_in_round_one(seed, trials, starts, scale, needed, draws)
    owner = np.searchsorted(starts, hit, side="right") - 1  # the input each interrupted trial belongs to
    stream = standard_exponentials(seed, int(trials.max()) if count else 0)
    elapsed = stream[hit - starts[owner]] * scale[owner]
    saved = np.floor(elapsed / (interval[owner] + write[owner])) * interval[owner]
    remaining = work[owner] - saved
    wall = 0.0 + (elapsed + restart[owner])  # the loop adds to a wall clock that starts at 0
    interruptions = np.ones(hit.size)
    consumed = np.where(draws, trials, 0)  # standard exponentials each input has read
    active = np.arange(hit.size)  # positions in ``hit``, in trial order
    for _ in range(MAX_INTERRUPTION_ROUNDS - 1):
        if active.size == 0:
            return _Runs(trials, needed, hit, owner, wall, interruptions)
        own = owner[active]
        needed_now = _time_to_finish(remaining[active], interval[own], write[own])
        counts = np.bincount(own, minlength=count)
        position = consumed[own] + np.arange(active.size) - (np.cumsum(counts) - counts)[own]
        until = np.full(active.size, np.inf)
        drawing = draws[own]
        if drawing.any():
            stream = standard_exponentials(seed, int(position[drawing].max()) + 1)
            until[drawing] = stream[position[drawing]] * scale[own[drawing]]
        consumed += np.where(draws, counts, 0)
        done = until >= needed_now
        wall[active[done]] += needed_now[done]
        again = active[~done]
        elapsed = until[~done]
        saved = np.floor(elapsed / (interval[own[~done]] + write[own[~done]])) * interval[own[~done]]
        remaining[again] -= saved
        wall[again] += elapsed + restart[own[~done]]
        interruptions[again] += 1
        active = again
    raise CostInputError(
        "interruption_rate_per_hour",
        f"some trials needed over {MAX_INTERRUPTION_ROUNDS} restarts: checkpoint more often or avoid spot",
    )


_SORTED_KEPT = 8
_sorted_prefixes: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _sorted_prefix(seed: int, trials: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The seed's first ``trials`` standard exponentials in ascending order, their trial indices, and each
    trial's place in that order."""
    key = (seed, trials)
    found = _sorted_prefixes.get(key)
    if found is None:
        prefix = standard_exponentials(seed, trials)[:trials]
        order = np.argsort(prefix, kind="stable")
        place = np.empty(trials, dtype=np.int64)
        place[order] = np.arange(trials)
        if len(_sorted_prefixes) >= _SORTED_KEPT:
            _sorted_prefixes.clear()
        found = _sorted_prefixes[key] = (prefix[order], order, place)
    return found


def _interrupted_in_round_one(
    seed: int,
    trials: np.ndarray,
    starts: np.ndarray,
    scale: np.ndarray,
    needed: np.ndarray,
    draws: np.ndarray,
) -> np.ndarray:
    """The trials (global indices, ascending) whose first draw, ``stream[j] * scale_i``, comes before
    ``needed_i``: the first ``k_i`` of the sorted prefix. Inputs of one trial count (a ranking's) are read
    together, as a mask of places below each input's count."""
    if trials.size and np.all(trials == trials[0]):
        values, _, place = _sorted_prefix(seed, int(trials[0]))
        counts = _counts_below(values, scale, needed, draws)
        return np.flatnonzero(place[None, :] < counts[:, None])  # input i's trial j is i x trials + j
    hits = []
    for i in range(trials.size):
        values, order, _ = _sorted_prefix(seed, int(trials[i]))
        count = int(_counts_below(values, scale[i : i + 1], needed[i : i + 1], draws[i : i + 1])[0])
        hits.append(starts[i] + np.sort(order[:count]))
    return np.concatenate(hits) if hits else np.zeros(0, dtype=np.int64)


WINDOW = 4  # values checked on each side of the binary search's answer


def _counts_below(values: np.ndarray, scale: np.ndarray, needed: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Per input: how many sorted ``values`` have ``value * scale < needed`` (0 where nothing is drawn).
    The product never decreases as the value grows, so those values are a prefix; a binary search on the
    quotient finds its end to within rounding, and the products around it (those the round itself
    computes) settle it. Where they do not (never seen), every value is compared."""
    counts = np.zeros(scale.size, dtype=np.int64)
    rows = np.flatnonzero(draws)
    if not rows.size:
        return counts
    size, row_scale, row_needed = values.size, scale[rows][:, None], needed[rows][:, None]
    guess = np.searchsorted(values, needed[rows] / scale[rows])
    window = guess[:, None] + np.arange(-WINDOW, WINDOW + 1)
    below = values[np.clip(window, 0, size - 1)] * row_scale < row_needed
    inside = (window >= 0) & (window < size)
    settled = ((window[:, 0] <= 0) | below[:, 0]) & ((window[:, -1] >= size) | ~below[:, -1])
    found = np.maximum(window[:, 0], 0) + (below & inside)[:, :-1].sum(axis=1)
    for k in np.flatnonzero(~settled):
        found[k] = np.count_nonzero(values * row_scale[k] < row_needed[k])
    counts[rows] = found
    return counts


STREAM_KEPT = 1 << 21  # standard exponentials kept per seed (16 MiB); a longer need is drawn afresh
_streams: dict[int, tuple[np.random.Generator, np.ndarray]] = {}


def standard_exponentials(seed: int, count: int) -> np.ndarray:
    """The first ``count`` standard exponentials of ``default_rng(seed)``, drawn once per process (a
    stream drawn in several calls is the stream drawn at once: each value takes its own bits in turn)."""
    generator, drawn = _streams.get(seed) or (np.random.default_rng(seed), np.empty(0))
    if drawn.size >= count:
        return drawn
    more = generator.standard_exponential(max(count - drawn.size, 4096, drawn.size))
    drawn = np.concatenate([drawn, more])
    if drawn.size <= STREAM_KEPT:
        if len(_streams) >= 8:  # a few seeds in use at a time (the option's default is 0)
            _streams.clear()
        _streams[seed] = (generator, drawn)
    else:
        _streams.pop(seed, None)
    return drawn


def _time_to_finish(remaining: np.ndarray, interval, write) -> np.ndarray:
    """Wall time to finish ``remaining`` work from a fresh start: work plus a checkpoint between segments."""
    segments = np.ceil(remaining / interval - 1e-12)
    return remaining + write * np.maximum(segments - 1, 0)


def _simulate_wall_hours(
    spec: SpotSimulationInput, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    interval, write = float(spec.interval_hours), float(spec.checkpoint_write_hours)
    restart, rate = float(spec.restart_hours), float(spec.rate_per_hour)
    remaining = np.full(spec.trials, float(spec.work_hours))
    wall = np.zeros(spec.trials)
    interruptions = np.zeros(spec.trials)
    active = np.arange(spec.trials)
    for _ in range(MAX_INTERRUPTION_ROUNDS):
        needed = _time_to_finish(remaining[active], interval, write)
        until_interruption = (
            rng.exponential(1 / rate, active.size) if rate > 0 else np.full(active.size, np.inf)
        )
        done = until_interruption >= needed
        wall[active[done]] += needed[done]
        hit = active[~done]
        elapsed = until_interruption[~done]
        saved = np.floor(elapsed / (interval + write)) * interval  # work behind the last completed checkpoint
        remaining[hit] -= saved
        wall[hit] += elapsed + restart
        interruptions[hit] += 1
        active = hit
        if active.size == 0:
            return wall, interruptions
    raise CostInputError(
        "interruption_rate_per_hour",
        f"some trials needed over {MAX_INTERRUPTION_ROUNDS} restarts: checkpoint more often or avoid spot",
    )


def bootstrap_path_cost(history: np.ndarray, wall_hours: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per trial: the integral of a block-bootstrapped hourly price path over [0, wall_hours).

    Trial t's path is blocks of BLOCK_HOURS hours. Its first block starts at a random hour s of the
    (circular) history; block k starts at s + BLOCK_HOURS x d_k for a random whole day d_k, so every
    block begins at the hour of day where the path stands and a daily cycle is never cut out of phase
    (exactly so when the history is a whole number of days). A fraction of an hour pays that fraction
    of the hour's price. Costs come from cumulative sums, not a trials x hours matrix, so a long run
    costs one random start per day of run per trial.
    """
    size = history.size
    full_blocks = np.floor(wall_hours / BLOCK_HOURS).astype(np.int64)
    tail_hours = wall_hours - full_blocks * BLOCK_HOURS  # in [0, BLOCK_HOURS)
    blocks = int(full_blocks.max()) + 1  # the last (partial) block of the longest trial
    days = -(-size // BLOCK_HOURS)  # whole-day offsets that reach every part of the history
    first = rng.integers(0, size, wall_hours.size)
    day_offsets = rng.integers(0, days, (wall_hours.size, blocks))
    day_offsets[:, 0] = 0
    starts = (first[:, None] + BLOCK_HOURS * day_offsets) % size
    # cumulative price over a circular history read twice, so any window of up to a block is C[s+n] - C[s]
    cumulative = np.concatenate(([0.0], np.cumsum(np.concatenate([history] * (1 + -(-BLOCK_HOURS // size))))))
    block_cost = cumulative[starts + BLOCK_HOURS] - cumulative[starts]
    whole = np.arange(blocks)[None, :] < full_blocks[:, None]
    paid_blocks = np.where(whole, block_cost, 0.0).sum(axis=1)
    tail_start = starts[np.arange(wall_hours.size), full_blocks]
    tail_whole = np.floor(tail_hours).astype(np.int64)
    tail_cost = (
        cumulative[tail_start + tail_whole]
        - cumulative[tail_start]
        + (tail_hours - tail_whole) * history[(tail_start + tail_whole) % size]
    )
    return paid_blocks + tail_cost


def _decimal(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def _validated_history(spec: SpotSimulationInput) -> np.ndarray:
    """The history as float64, each point finite and not negative (else an error naming its index)."""
    values = spec.price_history_per_hour
    if isinstance(values, np.ndarray):
        history = values.astype(np.float64, copy=False).ravel()
    else:
        history = np.array(
            [float(non_negative(price, f"price_history_per_hour[{i}]")) for i, price in enumerate(values)]
        )
    bad = np.flatnonzero(~np.isfinite(history) | (history < 0))
    if bad.size:
        index = int(bad[0])
        raise CostInputError(
            f"price_history_per_hour[{index}]",
            f"must be a finite price, not negative, got {history[index]!r}",
        )
    return history


def _validate(spec: SpotSimulationInput) -> None:
    positive(spec.work_hours, "work_hours")
    non_negative(spec.rate_per_hour, "interruption_rate_per_hour")
    positive(spec.interval_hours, "checkpoint_interval_hours")
    non_negative(spec.checkpoint_write_hours, "checkpoint_write_hours")
    non_negative(spec.restart_hours, "restart_hours")
    non_negative(spec.spot_price_per_hour, "spot_price_per_hour")
    positive_int(spec.instances, "instances")
    positive_int(spec.trials, "trials")
