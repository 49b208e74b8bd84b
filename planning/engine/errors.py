"""The planning modules' bad-input error: one field, one message a person can act on."""

from __future__ import annotations

from gpuledger.errors import InputError


class PlanInputError(InputError):
    """Bad input to a capacity plan. `field` is the command option / API field the message is about,
    spelled as the issue spells them: from, to, team, gpu, growth, horizon_months, trials, sigma, seed,
    currency, study (or the name of an engine argument where no request field applies)."""
