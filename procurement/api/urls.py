"""API routes of the procurement app (one module per resource under procurement/api/)."""

from django.urls import path  # noqa: F401  (routes are added by each resource)

urlpatterns: list = []
