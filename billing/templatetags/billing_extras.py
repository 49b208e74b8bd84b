from django import template

from gpuledger.templatetags import formatting

register = template.Library()


@register.filter
def get_item(mapping, key):
    """`{{ row|get_item:column.key }}`: a dict value by a key held in a variable."""
    return mapping.get(key) if hasattr(mapping, "get") else None


# A Measure/Value table (Totals, commitment totals) mixes money, hours and a price in one column: each
# row names its value's kind, formatted as the other tables' columns are (issue 30: thousands separators
# everywhere, a price per GPU-hour with up to 4 decimals). Words ("n/a") stay as they are.
VALUE_FORMATS = {
    "money": formatting.money,
    "hours": lambda value: formatting.number(value, 2),
    "rate": formatting.hourly,
    "percent": lambda value: formatting.number(value, 1),
}


@register.filter
def text_cell(row, key):
    """`{{ row|text_cell:column.key }}`: a text column's value; a Measure/Value row's value by its
    `value_kind`."""
    value = get_item(row, key)
    if value is None:
        return ""
    kind = row.get("value_kind") if key == "value" else None
    if kind in VALUE_FORMATS and formatting._number(value) is not None:
        return VALUE_FORMATS[kind](value)
    return value
