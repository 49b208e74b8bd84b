"""Page routes of the scheduler app."""

from django.urls import path

from pricing.sources import views

urlpatterns = [
    path("status/", views.status_page, name="status"),
]
