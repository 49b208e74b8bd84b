"""Sign-in pages and the user's own page."""

from django.urls import path

from gpuledger.accounts import views

urlpatterns = [
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", views.SignOutView.as_view(), name="logout"),
    path("accounts/me/", views.account_page, name="account"),
    path("accounts/me/tokens/", views.token_create_view, name="account-token-create"),
    path("accounts/me/tokens/<int:token_id>/revoke/", views.token_revoke_view, name="account-token-revoke"),
]
