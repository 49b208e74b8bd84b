"""python manage.py demo_admin: the old name of `demo_users` (kept so existing scripts still work)."""

from gpuledger.accounts.management.commands.demo_users import Command as DemoUsers


class Command(DemoUsers):
    help = "Alias of demo_users: create the demo users, one per role, and print their credentials."
