"""python manage.py api_token {create,list,revoke} USER ...: per-user API tokens for scripts."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from gpuledger.accounts.tokens import TokenError, token_create, token_revoke, user_tokens


class Command(BaseCommand):
    help = "Create, list or revoke a user's API tokens (the secret is printed once, at creation)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a token and print its secret once")
        create.add_argument("username")
        create.add_argument("--name", required=True, help="what the token is for")
        listing = sub.add_parser("list", help="list a user's tokens (never their secrets)")
        listing.add_argument("username")
        revoke = sub.add_parser("revoke", help="revoke one token by its id")
        revoke.add_argument("username")
        revoke.add_argument("token_id", type=int)

    def handle(self, *args, action, username, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"username: no user {username!r}")
        try:
            if action == "create":
                token, secret = token_create(user, options["name"])
                self.stdout.write(f"token {token.pk} {token.name!r} for {username}: {secret}")
                self.stdout.write("The secret is shown only now; it is stored as a hash.")
            elif action == "list":
                for token in user_tokens(user):
                    state = "active" if token.active else f"revoked {token.revoked_at:%Y-%m-%d %H:%M}"
                    used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
                    self.stdout.write(f"{token.pk}\t{token.prefix}…\t{token.name}\tlast used {used}\t{state}")
            else:
                token = token_revoke(user, options["token_id"])
                self.stdout.write(f"token {token.pk} {token.name!r} revoked")
        except TokenError as error:
            raise CommandError(f"{error.field}: {error.message}") from None
