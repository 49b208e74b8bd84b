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


def test_it_uses_the_commitment_kinds_and_terms_of_the_models():
    from pricing.choices import COMMITMENT_TERM_YEARS, CommitmentKind

    kinds = {
        vocabulary.STANDARD_RESERVATION,
        vocabulary.CONVERTIBLE_RESERVATION,
        vocabulary.COMPUTE_SAVINGS_PLAN,
        vocabulary.INSTANCE_SAVINGS_PLAN,
    }
    assert kinds == set(CommitmentKind.values) - {""}
    # AWS bills a term as 365-day years: 8760 and 26280 hours
    assert {model: vocabulary.TERM_HOURS[model] for model in COMMITMENT_TERM_YEARS} == {
        model: years * 8760 for model, years in COMMITMENT_TERM_YEARS.items()
    }
