"""Page routes of the procurement app."""

from django.urls import path  # noqa: F401  (routes are added by each page)

urlpatterns: list = []
