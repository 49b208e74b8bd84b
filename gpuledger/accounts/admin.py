"""Teams and their members in the admin (role management is the Groups page of the admin)."""

from django.contrib import admin

from gpuledger.accounts import models


@admin.register(models.Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    filter_horizontal = ["members"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are listed and revoked here; their secrets were never stored."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    readonly_fields = ["user", "name", "prefix", "key_hash", "created_at", "last_used_at"]

    def has_add_permission(self, request):
        return False
