"""Reading billing files into normalized spend rows: FOCUS, AWS CUR 2.0, Cost Explorer and GPU utilization
readers, their bounds and cell checks, enrichment from the catalog and tags, and the upload hand-off to the worker."""
