"""Finance pages (finance and admin only)."""

from django.urls import path

from procurement.billing import views

urlpatterns: list = [
    path("billing/", views.spend_review_page, name="billing-review"),
    path("billing/review.<str:fmt>", views.spend_review_export, name="billing-review-export"),
    path("billing/upload/", views.upload_page, name="billing-upload"),
]
