"""Pages of the procurement app: one module per area, each a thin shell over services and selectors."""
