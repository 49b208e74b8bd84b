"""One module per report kind, each defining ``KIND`` (see ``procurement.reports``)."""
