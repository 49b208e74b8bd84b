from django.apps import AppConfig


class PricingConfig(AppConfig):
    name = "pricing"
    verbose_name = "Catalog and prices"

    def ready(self) -> None:
        from gpuledger.data_versions import register_version_reader
        from pricing.price_version import connect_price_version_signals, price_version_key

        connect_price_version_signals()
        register_version_reader("price", price_version_key)  # caches of other apps name it (data_versions.py)
