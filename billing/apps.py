from django.apps import AppConfig


class BillingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "billing"
    label = "billing"
    verbose_name = "Billing and spend"

    def ready(self):
        from billing import access

        access.connect_user_facts()
