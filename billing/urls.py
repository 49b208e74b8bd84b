"""Finance pages (finance and admin only)."""

from django.urls import path

from billing.finance import views as finance_views
from billing.invoice import views as invoice_views
from billing.review import views

urlpatterns: list = [
    path("billing/", views.spend_review_page, name="billing-review"),
    path("billing/review.<str:fmt>", views.spend_review_export, name="billing-review-export"),
    path("billing/upload/", views.upload_page, name="billing-upload"),
    path("billing/budgets/", finance_views.budgets_page, name="billing-budgets"),
    path("billing/spend-rows/", finance_views.spend_rows_page, name="billing-spend-rows"),
    path("billing/invoice/", invoice_views.invoice_page, name="billing-invoice"),
]
