from django.apps import AppConfig


class PricingConfig(AppConfig):
    name = "pricing"
    verbose_name = "Catalog and prices"

    def ready(self) -> None:
        from pricing.price_version import connect_price_version_signals

        connect_price_version_signals()
