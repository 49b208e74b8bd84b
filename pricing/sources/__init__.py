"""Price sources and their refresh: the live sources a refresh can run (registry), one run of a source in a
region (refresh), and the reads behind the /status/ page (status, views, urls). The scheduler app keeps
the beat schedule, the locks and the PriceRefresh bookkeeping; it imports nothing from pricing."""
