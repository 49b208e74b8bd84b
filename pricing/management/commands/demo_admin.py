"""python manage.py demo_admin: create (once) a demo superuser for local runs and print its login.

The password is generated on first run and kept in var/demo-admin-password (ignored by git), so
each `make run` prints the same credentials without any secret living in the repository.
"""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create the demo admin user (local development only) and print its credentials."

    def add_arguments(self, parser):
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="Where the site is served (make run's HOST)."
        )

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("demo_admin is for local development: it refuses to run with DEBUG off.")
        password_file = settings.VAR_DIR / "demo-admin-password"
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        if not password_file.exists():
            password_file.write_text(secrets.token_urlsafe(12))
            password_file.chmod(0o600)
        password = password_file.read_text().strip()
        user, _ = get_user_model().objects.get_or_create(
            username=USERNAME, defaults={"email": "admin@example.com"}
        )
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo admin: {options['url'].rstrip('/')}/admin/  user {USERNAME!r}  password {password!r}"
            )
        )
