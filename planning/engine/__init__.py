"""Capacity planning (issue 20): from the GPU demand the bills show to the cheapest mix of owned
servers, commitments, on-demand and spot.

- errors.py: PlanInputError, the one bad-input error of the planning modules (names the field).
- demand.py: the hourly demand series, its load-duration curve, percentiles, gaps and growth (plain
  numpy, no ORM).
- usage_frame.py: the spend review's engine frame as demand.py's UsageRows (no ORM).
- history.py: the Django selector reading a scope's stored spend and utilization rows into demand.py's
  inputs, and who may plan which scope.
- plan.py: screening curves over the load-duration curve (the layers, their cost, NPV, sensitivity).
"""
