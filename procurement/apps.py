from django.apps import AppConfig


class ProcurementConfig(AppConfig):
    name = "procurement"
    verbose_name = "Workloads and decisions"
