"""The one bad-input error every layer raises: plain Python (the engines import it; no Django here).

An `InputError` says where the input is wrong (a field's dotted path, or a file with its line and column)
and what is wrong, in words a person can act on. Every input-error class of the project derives from it,
so a view, a command or a form catches one class, and the API maps it to its one error shape in one
place (`gpuledger.api_errors.api_exception_handler`, and `input_error_body` for views that answer
without raising).

An error that lists several problems at once (a workload spec with three bad fields) keeps them all in
`problems`; `field` and `message` are the first.
"""

from __future__ import annotations

ROOT = "(root)"  # the path of a problem with the request or document as a whole


class InputError(ValueError):
    """Bad input, named by `field` (e.g. ``buy.server_price``) or by `file`, `line` and `column`."""

    def __init__(
        self,
        field: str = "",
        message: str = "",
        *,
        file: str = "",
        line: int | None = None,
        column: int | str | None = None,
        problems: list[tuple[str, str]] | None = None,
        text: str | None = None,
    ):
        self.field, self.message = field, message
        self.file, self.line, self.column = file, line, column
        self._problems = problems
        # `text`: a subclass's own one-line form (a billing file's ``bill.csv:2:BilledCost: ...``)
        super().__init__(text if text is not None else f"{self.where}: {message}" if self.where else message)

    @property
    def where(self) -> str:
        """The field's path, else ``file, line L, column C`` (the parts that are known)."""
        if self.field:
            return self.field
        parts = [self.file] if self.file else []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.column not in (None, ""):
            parts.append(f"column {self.column}")
        return ", ".join(parts)

    @property
    def problems(self) -> list[tuple[str, str]]:
        """Every (path, message) pair this error carries; one unless the input had several problems."""
        if self._problems:
            return list(self._problems)
        return [(self.where or ROOT, self.message or str(self))]


class LocatedInputError(InputError):
    """An error whose message already names its place (``data/x.csv:3: column 'price': ...``): the
    bundled-file readers, whose messages the load commands print as they are."""

    def __init__(self, message: str):
        super().__init__(message=message)
