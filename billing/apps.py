from django.apps import AppConfig


class BillingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "billing"
    label = "billing"
    verbose_name = "Billing and spend"

    def ready(self):
        from billing import access
        from billing.models import BillingImport, Budget, BudgetAlert
        from gpuledger.data_versions import bump_on_write

        access.connect_user_facts()
        # Every write of spend or utilization rows creates, saves or deletes (cascading) an import in the
        # same transaction, so the rows themselves, millions of them, need no receiver.
        bump_on_write("billing", BillingImport, Budget, BudgetAlert)
