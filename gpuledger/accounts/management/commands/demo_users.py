"""python manage.py demo_users: one demo user per role in two teams, for local runs; prints the logins.

Passwords are generated on first run and kept in var/demo-users.json (ignored by git, mode 0600), so
each `make run` prints the same credentials without any secret living in the repository.
"""

import json
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from gpuledger.accounts.models import Team
from gpuledger.accounts.roles_sync import sync_roles

TEAMS = {"research": "Research", "platform": "Platform"}
# user name -> (role, team slug): the second engineer is in the other team, to try team isolation.
DEMO_USERS = {
    "viewer": ("viewer", "research"),
    "engineer": ("engineer", "research"),
    "engineer2": ("engineer", "platform"),
    "finance": ("finance", "research"),
    "admin": ("admin", "platform"),
}
PASSWORD_FILE = "demo-users.json"  # noqa: S105 (a file name / a public prefix, not a secret)


class Command(BaseCommand):
    help = "Create the demo users (local development only) and print their credentials."

    def add_arguments(self, parser):
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="Where the site is served (make run's HOST)."
        )

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("demo_users is for local development: it refuses to run with DEBUG off.")
        sync_roles()
        passwords = self._passwords()
        teams = {
            slug: Team.objects.get_or_create(slug=slug, defaults={"name": name})[0]
            for slug, name in TEAMS.items()
        }
        url = options["url"].rstrip("/")
        self.stdout.write(self.style.SUCCESS(f"Demo users (sign in at {url}/accounts/login/):"))
        for username, (role, team) in DEMO_USERS.items():
            user, _ = get_user_model().objects.get_or_create(
                username=username, defaults={"email": f"{username}@example.com"}
            )
            user.set_password(passwords[username])
            user.is_staff = role == "admin"  # the admin site; its permissions come from the admin group
            user.save()
            user.groups.set([Group.objects.get(name=role)])
            teams[team].members.add(user)
            self.stdout.write(
                f"  {username:<10} role {role:<8} team {team:<9} password {passwords[username]}"
            )

    def _passwords(self) -> dict[str, str]:
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        path = settings.VAR_DIR / PASSWORD_FILE
        stored = json.loads(path.read_text()) if path.exists() else {}
        passwords = {name: stored.get(name) or secrets.token_urlsafe(12) for name in DEMO_USERS}
        if passwords != stored:
            path.write_text(json.dumps(passwords, indent=2))
        path.chmod(0o600)
        return passwords
