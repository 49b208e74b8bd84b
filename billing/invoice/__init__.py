"""The invoice view: what each provider billed per billing period, line by line (lines.py), its read and its page."""
