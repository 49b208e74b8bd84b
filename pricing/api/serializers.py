"""Serializers of the pricing API."""

from rest_framework import serializers

from pricing.models import GpuModel

# The bundled catalog's source fields hold one URL or several ("url ; url", "url (note)"): text, not a
# URI each (the schema said `format: uri`, which the bundled GPUs broke: found by schemathesis).
SOURCE_TEXT = {"help_text": "Where the figures come from: one URL or several, separated by ' ; '."}


class GpuModelSerializer(serializers.ModelSerializer):
    price_source_url = serializers.CharField(max_length=500, allow_blank=True, **SOURCE_TEXT)
    source_url = serializers.CharField(max_length=500, allow_blank=True, **SOURCE_TEXT)
    crosscheck_url = serializers.CharField(max_length=500, allow_blank=True, **SOURCE_TEXT)

    class Meta:
        model = GpuModel
        exclude = ["id"]


class OfferPriceSerializer(serializers.Serializer):
    observation_id = serializers.IntegerField()
    offer_id = serializers.IntegerField()
    provider = serializers.CharField()
    region = serializers.CharField()
    zone = serializers.CharField(allow_blank=True)
    instance_type = serializers.CharField()
    gpu = serializers.CharField()
    gpu_count = serializers.DecimalField(max_digits=8, decimal_places=3)
    pricing_model = serializers.CharField()
    payment_option = serializers.CharField(allow_blank=True)
    commitment_kind = serializers.CharField(
        allow_blank=True,
        required=False,
        help_text="Commitments: standard, convertible, compute_sp or ec2_instance_sp; empty otherwise.",
    )
    price_per_hour = serializers.DecimalField(max_digits=18, decimal_places=6)
    currency = serializers.CharField()
    observed_at = serializers.DateTimeField()
    source = serializers.CharField()
    stale = serializers.BooleanField(
        help_text="Older than twice its refresh schedule (a snapshot: older than the snapshot limit)."
    )
    stale_after_hours = serializers.FloatField(help_text="The age in hours past which this price is stale.")
    host_priced_separately = serializers.BooleanField(
        help_text="The price covers the GPUs only; the host VM is billed separately (GCP)."
    )
    price_quality = serializers.ChoiceField(
        choices=["observed", "snapshot", "quoted", "illustrative"],
        help_text="observed (a provider API), snapshot (a catalog file of unknown data date), quoted (an "
        "imported rate card) or illustrative (made-up demo prices, never ranked unless asked).",
    )
    spot_outlier = serializers.BooleanField(
        help_text="A spot quote far below its sibling zones or at a catalog placeholder (10% of on-demand); "
        "rankings price it at the sibling median."
    )
    local_zone = serializers.BooleanField(help_text="An AWS Local Zone: opt in before launching there.")
