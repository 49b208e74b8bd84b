from django.apps import AppConfig


class PlanningConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "planning"
    verbose_name = "Capacity planning"

    def ready(self):
        # the capacity plan report kind lives here, not in procurement.reports.kinds: registered, it gets
        # its page and downloads from the shared report framework like the bundled kinds
        from planning.report import KIND
        from procurement.reports.registry import register

        register(KIND)
