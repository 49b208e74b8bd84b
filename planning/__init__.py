"""Capacity planning: what to own, commit to and rent for the spend in the bills (docs/capacity-plan.md).

`planning.engine` is plain Python (no ORM); the app around it reads billing's spend (`history`,
`usage_frame`) and pricing's prices, stores `CapacityPlan` rows and serves the command, page, API and
report."""
