"""The words sources put into records: pricing models and payment options.

They equal the values of ``pricing.choices`` (a test checks it) but live here so the parsers stay
free of Django and can run anywhere.
"""

ON_DEMAND = "on_demand"
SPOT = "spot"
RESERVED_1Y = "reserved_1y"
RESERVED_3Y = "reserved_3y"
SAVINGS_PLAN_1Y = "savings_plan_1y"
SAVINGS_PLAN_3Y = "savings_plan_3y"

NO_UPFRONT = "no_upfront"
PARTIAL_UPFRONT = "partial_upfront"
ALL_UPFRONT = "all_upfront"

# Commitment kinds (pricing.choices.CommitmentKind).
STANDARD_RESERVATION = "standard"
CONVERTIBLE_RESERVATION = "convertible"
COMPUTE_SAVINGS_PLAN = "compute_sp"
INSTANCE_SAVINGS_PLAN = "ec2_instance_sp"

# Hours in a reservation term, as AWS bills them: 365 days a year, leap days not counted.
TERM_HOURS = {
    RESERVED_1Y: 365 * 24,
    RESERVED_3Y: 3 * 365 * 24,
    SAVINGS_PLAN_1Y: 365 * 24,
    SAVINGS_PLAN_3Y: 3 * 365 * 24,
}
