from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "gpuledger.accounts"
    label = "accounts"
    verbose_name = "Accounts and teams"

    def ready(self):
        from django.contrib import admin
        from django.db.models.signals import post_migrate

        # The OpenAPI extension (accounts/schema.py) is imported with the URLconf (gpuledger/schema_view.py),
        # not here: drf-spectacular and DRF's fields cost a CLI command ~0.4 s it never uses (issue 30).
        # The Celery app exists in every Django process before a task is sent (shared_task binds to it).
        from gpuledger import celery  # noqa: F401
        from gpuledger.accounts import admin_site, roles_sync, signals

        signals.connect()  # cached user facts (user_facts.py) dropped when what they come from changes

        # Permissions exist only after migrate has run, so the admin group's grants are synced then.
        post_migrate.connect(roles_sync.sync_after_migrate, dispatch_uid="gpuledger-sync-roles")
        admin_site.open_to_admin_role(admin.site)
