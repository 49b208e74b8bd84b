from __future__ import annotations

import datetime as dt

from django import forms

FORMATS = [
    ("", "detect"),
    ("focus", "FOCUS 1.0-1.2"),
    ("cur", "AWS CUR 2.0"),
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

    def period(self) -> tuple[dt.date, dt.date]:
        default_start, default_end = _default_period()
        return self.cleaned_data.get("start") or default_start, self.cleaned_data.get("end") or default_end
