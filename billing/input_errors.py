"""The spend review's input error, in a module of its own so that forms and the admin can name a bad
field without importing the review (and pandas) at start-up (tests/procurement/test_offer_cache.py)."""

from gpuledger.errors import InputError


class ReviewInputError(InputError):
    """A bad spend-review request, naming its field (from, to, team, ...)."""
