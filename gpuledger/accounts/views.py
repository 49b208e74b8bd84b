"""Sign in, sign out, and the user's own page (teams, roles, API tokens)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from gpuledger.accounts import throttling
from gpuledger.accounts.models import Team
from gpuledger.accounts.tokens import TokenError, token_create, token_revoke, user_tokens
from gpuledger.roles import ROLES, user_roles


class SignInView(auth_views.LoginView):
    """Django's login view; a throttled user name gets 429 and says when to try again."""

    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        username = request.POST.get("username", "")
        if throttling.login_blocked(username, request):
            form = self.get_form()
            return self.render_to_response(
                self.get_context_data(form=form, blocked=throttling.blocked_message()), status=429
            )
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        blocked = throttling.login_blocked(self.request.POST.get("username", ""), self.request)
        context = self.get_context_data(form=form, blocked=throttling.blocked_message() if blocked else "")
        return self.render_to_response(context, status=429 if blocked else 200)


class SignOutView(auth_views.LogoutView):
    """POST only (Django's rule); then to the login page (LOGOUT_REDIRECT_URL)."""


@login_required
def account_page(request):
    """Who I am: roles, teams, and my API tokens (a new token's secret is shown once)."""
    new_secret = request.session.pop("new_api_token", None)
    return render(
        request,
        "accounts/account.html",
        {
            "roles": [role for role in ROLES if role in user_roles(request.user)],
            "teams": Team.objects.filter(members=request.user),
            "tokens": user_tokens(request.user),
            "new_secret": new_secret,
        },
    )


@login_required
@require_POST
def token_create_view(request):
    try:
        _, secret = token_create(request.user, request.POST.get("name", ""))
    except TokenError as error:
        messages.error(request, f"Token {error.field}: {error.message}")
    else:
        request.session["new_api_token"] = secret
    return redirect("account")


@login_required
@require_POST
def token_revoke_view(request, token_id: int):
    try:
        token = token_revoke(request.user, token_id)
    except TokenError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Token {token.name!r} revoked.")
    return redirect("account")
