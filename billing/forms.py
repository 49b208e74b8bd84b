from __future__ import annotations

import datetime as dt

from django import forms

from billing.choices import AllocationRule

FORMATS = [
    ("", "detect"),
    ("focus", "FOCUS 1.0-1.2"),
    ("cur", "AWS CUR 2.0"),
    ("azure", "Azure cost details (actual or amortized)"),
    ("utilization", "GPU utilization"),
]


class UploadForm(forms.Form):
    file = forms.FileField()
    format = forms.ChoiceField(choices=FORMATS, required=False)
    provider = forms.CharField(max_length=100, required=False, help_text="where the file names no provider")


def _default_period(today: dt.date | None = None) -> tuple[dt.date, dt.date]:
    today = today or dt.date.today()
    end = (today.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    start = end
    for _ in range(6):
        start = (start - dt.timedelta(days=1)).replace(day=1)
    return start, end


class ReviewFilterForm(forms.Form):
    start = forms.DateField(label="From", required=False)
    end = forms.DateField(label="To (exclusive)", required=False)
    team = forms.CharField(max_length=100, required=False)
    project = forms.CharField(max_length=100, required=False)
    provider = forms.CharField(max_length=100, required=False)
    allocation = forms.ChoiceField(
        choices=[("", "proportional (default)"), *AllocationRule.choices],
        required=False,
        label="Shared and idle cost",
    )

    def period(self) -> tuple[dt.date, dt.date]:
        default_start, default_end = _default_period()
        return self.cleaned_data.get("start") or default_start, self.cleaned_data.get("end") or default_end


class BudgetForm(forms.Form):
    """A team's budget for a month (budget_service.budget_save checks the amount and currency)."""

    team = forms.CharField(max_length=100, help_text="the team as the bills' team tag spells it")
    month = forms.CharField(max_length=7, help_text="YYYY-MM")
    amount = forms.CharField(max_length=30)
    currency = forms.CharField(max_length=3, initial="USD")
    notify_email = forms.EmailField(required=False, label="E-mail (blank: finance users)")


class SpendRowsForm(forms.Form):
    day = forms.DateField(required=False)
    team = forms.CharField(max_length=100, required=False)
    provider = forms.CharField(max_length=100, required=False)
    service = forms.CharField(max_length=100, required=False)
    limit = forms.IntegerField(min_value=1, max_value=500, required=False)
