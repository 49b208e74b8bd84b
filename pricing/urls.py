"""Page routes of the pricing app."""

from django.urls import path

from pricing import views

urlpatterns = [
    path("", views.catalog_page, name="catalog"),
    path("offers/<int:pk>/", views.offer_page, name="offer"),
]
