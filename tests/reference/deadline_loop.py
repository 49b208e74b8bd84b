"""The deadline filter's per-row loops as they were before they became column operations (issue 26,
"Speed"; procurement/ranking/deadline.py at 58fdecb1): one wall-clock key per spot row, and the same-shape
on-demand fallback found row by row. ``spot_wall_clocks`` and ``cheapest_on_demand_same_shape`` must
equal these exactly."""

from __future__ import annotations

import numpy as np

from procurement.ranking.deadline import EPSILON_HOURS, WallClock, wall_clock_key, wall_clocks


def spot_wall_clocks_row_by_row(indices, configs, prepared, spec, options) -> dict[int, WallClock]:
    keys = [wall_clock_key(index, configs, prepared, spec, options) for index in indices]
    return dict(zip(indices, wall_clocks(keys), strict=True))


def cheapest_on_demand_row_by_row(configs, prepared, rows: np.ndarray, shapes_count: int) -> dict[int, int]:
    pricing = prepared.text["pricing_model"][prepared.positions[configs.offer]]
    on_demand = np.flatnonzero(configs.fits & (pricing == "on_demand"))
    per_kind = max(1, shapes_count // max(1, len(prepared.kinds)))
    kind = prepared.offer_kind[configs.offer]
    gpu = prepared.kinds["gpu"].to_numpy(dtype=object)
    per_instance = prepared.kinds["gpus_per_instance"].to_numpy()

    def group(index: int) -> tuple[str, int, int]:
        return str(gpu[kind[index]]), int(per_instance[kind[index]]), int(configs.shape[index]) % per_kind

    groups: dict[tuple[str, int, int], list[int]] = {}
    cost = configs.offer_price_per_hour[configs.offer[on_demand]] * configs.hours[on_demand]
    for index in on_demand[np.argsort(cost, kind="stable")]:
        groups.setdefault(group(int(index)), []).append(int(index))
    found = {}
    for index in rows:
        hours = float(configs.hours[index]) + EPSILON_HOURS
        match = next((od for od in groups.get(group(int(index)), ()) if configs.hours[od] <= hours), None)
        if match is not None:
            found[int(index)] = match
    return found
