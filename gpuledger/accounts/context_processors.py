"""Who is signed in and with which roles, for the navigation bar of every page."""

from gpuledger.roles import ROLES, user_roles


def signed_in(request):
    user = getattr(request, "user", None)
    held = user_roles(user) if user is not None else set()
    return {"signed_in_roles": [role for role in ROLES if role in held]}
