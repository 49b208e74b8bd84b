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
        _remove_deleted_files()


def _remove_deleted_files():
    """A deleted import's dataset files (folder or S3 objects) go once the deletion commits, unless another
    import still records them (storage/location.py): PostgreSQL's records say what exists."""
    from django.db import transaction
    from django.db.models.signals import post_delete

    from billing.models import BillingImportFile

    def removed(sender, instance, **kwargs):
        # imported here, not at start-up: billing.storage brings pandas and pyarrow, which commands that
        # never touch a bill (size, job_cost) must not pay for (tests/procurement/test_offer_cache.py)
        from billing.storage.location import remove_unrecorded

        path = instance.path
        transaction.on_commit(lambda: remove_unrecorded([path]))

    post_delete.connect(removed, sender=BillingImportFile, dispatch_uid="billing:dataset-files", weak=False)
