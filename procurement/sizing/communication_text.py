"""How a training row states its communication: the share of the step it costs, then all of it.

``communication_share`` (sizing/throughput.py) counts every collective, hidden under compute or not, against
compute plus traffic (comm26 kept that definition); two plans of identical hours can differ there only in
how much hides. What costs time is the exposed part (``exposed_communication_share``: the seconds the traffic
adds to the step, over the step), so the sentences and the 30% warning state that one first.
"""

from __future__ import annotations

import math

# the share of the step past which adding GPUs stops scaling linearly (the warnings' threshold)
COMMUNICATION_WARNING_SHARE = 0.30


def communication_phrase(exposed: float, share: float) -> str:
    """'12% of step time exposed (29% counting the traffic hidden under compute)'; the all-traffic figure
    alone where the exposed one is unknown."""
    if not math.isfinite(exposed):
        return f"{share:.0%} of compute plus traffic" if math.isfinite(share) else ""
    text = f"{exposed:.0%} of step time exposed"
    if math.isfinite(share) and round(share, 2) > round(exposed, 2):
        text += f" ({share:.0%} counting the traffic hidden under compute)"
    return text


def communication_warns(exposed: float) -> bool:
    """The exposed traffic passes the threshold (NaN: unknown, no warning)."""
    return math.isfinite(exposed) and exposed > COMMUNICATION_WARNING_SHARE
