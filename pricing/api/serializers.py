"""Serializers of the pricing API."""

from rest_framework import serializers

from pricing.models import GpuModel


class GpuModelSerializer(serializers.ModelSerializer):
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
