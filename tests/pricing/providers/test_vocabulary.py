"""The parsers' plain-string vocabulary must equal the Django Choices the models store."""

from pricing.choices import PaymentOption, PricingModel
from pricing.providers import generic_csv, vocabulary


def test_it_uses_the_pricing_model_values_of_the_models():
    assert {vocabulary.ON_DEMAND, vocabulary.SPOT, vocabulary.RESERVED_1Y, vocabulary.RESERVED_3Y} <= set(
        PricingModel.values
    )
    assert generic_csv.PRICING_MODELS == set(PricingModel.values)


def test_it_uses_the_payment_option_values_of_the_models():
    assert {vocabulary.NO_UPFRONT, vocabulary.PARTIAL_UPFRONT, vocabulary.ALL_UPFRONT} == set(
        PaymentOption.values
    ) - {""}
