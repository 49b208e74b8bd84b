"""The report data object: plain dataclasses that round-trip through JSON.

Cell values are JSON-safe: money, prices, numbers and percentages are decimal strings (so a stored
report keeps its exact figures), text is text, and a missing value is None. A column's ``type``
tells every renderer how to show and format it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

COLUMN_TYPES = ("text", "money", "price", "number", "integer", "percent", "date")
FIGURE_KINDS = ("line", "bar", "tornado", "stacked_bar", "waterfall")


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    type: str = "text"  # one of COLUMN_TYPES; percent values are fractions (0.8 = 80%)
    total: bool = False  # a totals row sums this column (a SUM formula in XLSX)

    def __post_init__(self) -> None:
        if self.type not in COLUMN_TYPES:
            raise ValueError(f"column {self.key}: unknown type {self.type!r}")


@dataclass(frozen=True)
class Table:
    key: str  # a file or sheet name: letters, digits and underscores
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    data_only: bool = False  # long data (an hourly curve): in the XLSX and CSV, not the page or PDF

    @property
    def has_totals(self) -> bool:
        return any(column.total for column in self.columns)

    def totals(self) -> dict[str, str]:
        """The totals row as decimal strings (what the HTML, PDF and CSV print; XLSX writes formulas)."""
        return {
            column.key: str(
                sum(
                    (Decimal(row[column.key]) for row in self.rows if row.get(column.key) is not None),
                    Decimal(0),
                )
            )
            for column in self.columns
            if column.total
        }


@dataclass(frozen=True)
class Series:
    name: str
    points: list[tuple[Any, float]]  # (x, y): x a number or a category label


@dataclass(frozen=True)
class Figure:
    key: str
    # line (cumulative curves), bar (categories), tornado (low/high swings around a base), stacked_bar
    # (one bar per category, series stacked), waterfall (one series: start total, steps taken off, end total)
    kind: str
    title: str
    x_label: str
    y_label: str
    series: list[Series]
    base: float | None = None  # tornado: the base outcome the bars swing around

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise ValueError(f"figure {self.key}: unknown kind {self.kind!r}")


def waterfall_bars(figure: Figure) -> list[tuple[str, float, float]]:
    """(label, base, height) per bar of a waterfall: the first and last points stand on zero, each step
    between hangs from the level the steps before it left (what both the SVG and the XLSX chart draw)."""
    points = figure.series[0].points if figure.series else []
    if len(points) < 2:
        return [(str(label), 0.0, float(value)) for label, value in points]
    level, bars = float(points[0][1]), [(str(points[0][0]), 0.0, float(points[0][1]))]
    for label, amount in points[1:-1]:
        level -= float(amount)
        bars.append((str(label), level, float(amount)))
    return [*bars, (str(points[-1][0]), 0.0, float(points[-1][1]))]


@dataclass(frozen=True)
class Headline:
    label: str
    value: Any
    type: str = "text"
    note: str = ""  # the basis a figure is stated on ("cash", "present value at 8%")


@dataclass(frozen=True)
class Section:
    heading: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


@dataclass(frozen=True)
class Assumption:
    name: str
    value: str
    source: str


@dataclass(frozen=True)
class PriceDate:
    label: str  # what the price is for: "aws p5.48xlarge us-east-1 spot"
    observed_at: str | None
    source: str
    quality: str  # "fresh", "stale", "typed in the study", "snapshot", or the price's own quality flag
    stale: bool
    age_days: int | None = None


@dataclass(frozen=True)
class Report:
    kind: str
    title: str
    subject: str  # "workload 12: llama fine-tune"
    currency: str
    generated_at: str  # ISO 8601, when the data object was built
    summary: list[Headline]
    sections: list[Section]
    assumptions: list[Assumption]
    price_dates: list[PriceDate]
    verdict: str = ""  # the one-line answer, first on the page
    notes: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return any(price.stale for price in self.price_dates)

    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables]

    def figures(self) -> list[Figure]:
        return [figure for section in self.sections for figure in section.figures]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"stale": self.stale}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        return cls(
            kind=data["kind"],
            title=data["title"],
            subject=data["subject"],
            currency=data["currency"],
            generated_at=data["generated_at"],
            summary=[Headline(**item) for item in data["summary"]],
            sections=[_section(item) for item in data["sections"]],
            assumptions=[Assumption(**item) for item in data["assumptions"]],
            price_dates=[PriceDate(**item) for item in data["price_dates"]],
            verdict=data.get("verdict", ""),
            notes=list(data.get("notes", [])),
        )


def _section(data: dict[str, Any]) -> Section:
    return Section(
        heading=data["heading"],
        paragraphs=list(data.get("paragraphs", [])),
        tables=[
            Table(
                key=table["key"],
                title=table["title"],
                columns=[Column(**column) for column in table["columns"]],
                rows=[dict(row) for row in table["rows"]],
                note=table.get("note", ""),
                data_only=table.get("data_only", False),
            )
            for table in data.get("tables", [])
        ],
        figures=[
            Figure(
                key=figure["key"],
                kind=figure["kind"],
                title=figure["title"],
                x_label=figure["x_label"],
                y_label=figure["y_label"],
                series=[Series(s["name"], [tuple(point) for point in s["points"]]) for s in figure["series"]],
                base=figure.get("base"),
            )
            for figure in data.get("figures", [])
        ],
    )
