"""Teams a user belongs to, and per-user API tokens (only a hash is stored)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Team(models.Model):
    """A group of people sharing workloads and studies: engineers see their team's objects only."""

    slug = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiToken(models.Model):
    """A revocable token for scripts. The secret is shown once at creation; the row keeps its SHA-256."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'nightly export'.")
    prefix = models.CharField(max_length=12, help_text="The first characters, to tell tokens apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class DataVersion(models.Model):
    """One row per kind of data that cached reads depend on (gpuledger/data_versions.py): its number and
    token change with every write to that data, in the writer's transaction, and every cache key names
    the versions it depends on. The token is random on every bump, so a version rolled back with its
    transaction and bumped again by another never repeats a key whose entry held the rolled-back data.
    (The price version keeps its own row, pricing.PriceVersion, read the same way.)"""

    name = models.CharField(max_length=32, primary_key=True)
    number = models.BigIntegerField(default=0)
    token = models.CharField(max_length=32)
    changed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} version {self.number} ({self.token})"
