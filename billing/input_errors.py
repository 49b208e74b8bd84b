"""The spend review's input error, in a module of its own so that forms and the admin can name a bad
field without importing the review (and pandas) at start-up (tests/procurement/test_offer_cache.py)."""


class ReviewInputError(ValueError):
    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")
