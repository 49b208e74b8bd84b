from django.apps import AppConfig


class ProcurementConfig(AppConfig):
    name = "procurement"
    verbose_name = "Workloads and decisions"

    def ready(self):
        # Connects the receiver that queues notifications (procurement.signals) in every process, web
        # included, not only in workers where Celery's autodiscovery imports the tasks.
        from procurement import tasks  # noqa: F401
        from procurement.workload_heads import connect

        connect()  # writes to workloads and answers bump the workloads version (cached workload heads)
