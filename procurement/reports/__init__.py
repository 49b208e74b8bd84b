"""Reports as data, rendered four ways (HTML page, PDF, XLSX, CSV).

A report is ONE plain data object (``Report`` in ``procurement.reports.model``): title, summary
figures, sections of paragraphs, typed tables and figures, assumptions with their sources, the price
dates it rests on with their quality, a stale flag and its currency. It is built by a plain-Python
function from stored inputs (no ORM inside), stored as JSON in a ``ReportSnapshot`` row, and every
renderer reads only that JSON, so a stored report re-rendered next month shows the same numbers.

Renderers (``procurement.reports.render``): ``html`` (the page and the PDF's source), ``pdf``
(WeasyPrint), ``xlsx`` (openpyxl: numbers as numbers with formats, totals as formulas, a native
Excel chart per figure, an Assumptions and a Prices sheet) and ``csv`` (one table per file, or a zip
of all of them). Text that a spreadsheet would run as a formula (starting with = + - @, tab or CR) is
written as text in XLSX and CSV (``procurement.reports.safety``).

Adding a report kind is a one-module job: create ``procurement/reports/kinds/<name>.py`` defining

    KIND = ReportKind(
        name="spend_review",                     # the URL and ``manage.py report`` KIND
        title="Spend review",
        roles=("finance", "admin"),              # who may open and download it (role_required)
        subject="billing period",                # what ``--id`` names, for help texts and errors
        load=load_inputs,                        # Django side: (subject_id) -> plain dict of stored inputs
        build=build_report,                      # plain Python: (inputs dict, generated_at) -> Report
    )

``load`` may import models inside the function (it is the thin Django shell); ``build`` must not.
The registry (``procurement.reports.registry``) finds every module in ``kinds`` by itself; the page
``/reports/<kind>/<id>/``, the downloads and ``manage.py report <kind> --id N`` then work unchanged.
A kind defined in another app can call ``registry.register(KIND)`` from its ``AppConfig.ready``.

A kind whose subject is a span of time sets ``by_period=True``: ``load`` then takes a
``registry.ReportPeriod`` (start, exclusive end, optional team/project/provider), the page is
``/reports/<kind>/?start=...&end=...``, ``/reports/<kind>/download/<fmt>/?...`` downloads a period at
once, and ``manage.py report <kind> --from YYYY-MM-DD --to YYYY-MM-DD [--team T]`` writes it
(``spend_review`` is one).
"""
