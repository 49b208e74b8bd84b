from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """`{{ row|get_item:column.key }}`: a dict value by a key held in a variable."""
    return mapping.get(key) if hasattr(mapping, "get") else None
