"""API routes of the planning app (the same paths and names as when planning lived in procurement)."""

from django.urls import path

from planning.api import capacity_plans

urlpatterns: list = [
    path("capacity-plans/", capacity_plans.CapacityPlanListCreate.as_view(), name="api-capacity-plans"),
    path(
        "capacity-plans/<int:pk>/",
        capacity_plans.CapacityPlanDetail.as_view(),
        name="api-capacity-plan-detail",
    ),
]
