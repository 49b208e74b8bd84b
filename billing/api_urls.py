"""Billing API routes (finance and admin only)."""

from django.urls import path

from billing.finance import api as finance_api
from billing.review import api

urlpatterns: list = [
    path("billing/imports/", api.BillingImportCreate.as_view(), name="api-billing-imports"),
    path("billing/spend-review/", api.SpendReview.as_view(), name="api-billing-spend-review"),
    path("billing/budgets/", finance_api.Budgets.as_view(), name="api-billing-budgets"),
    path("billing/anomalies/", finance_api.Anomalies.as_view(), name="api-billing-anomalies"),
    path("billing/spend-rows/", finance_api.SpendRows.as_view(), name="api-billing-spend-rows"),
]
