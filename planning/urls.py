"""Page routes of the planning app (the same addresses and names as when planning lived in procurement)."""

from django.urls import path

from planning.views import capacity_plans

urlpatterns: list = [
    path("plans/", capacity_plans.plan_list_page, name="plans"),
    path("plans/<int:pk>/", capacity_plans.plan_detail_page, name="plan-detail"),
]
