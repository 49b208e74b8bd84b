"""Billing API routes (finance and admin only)."""

from django.urls import path

from procurement.billing import api

urlpatterns: list = [
    path("billing/imports/", api.BillingImportCreate.as_view(), name="api-billing-imports"),
    path("billing/spend-review/", api.SpendReview.as_view(), name="api-billing-spend-review"),
]
