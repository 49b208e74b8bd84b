"""Read a workload spec document (YAML or JSON text) into a dict, naming file, line and column on error."""

from __future__ import annotations

import yaml

from procurement.sizing.spec import FieldError, WorkloadSpecError


def load_spec_text(text: str, source: str = "spec") -> dict:
    """Parse YAML (JSON is valid YAML); a syntax error becomes a WorkloadSpecError at `source:line:column`."""
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise WorkloadSpecError([FieldError(where, str(error.problem or error))]) from None
    except yaml.YAMLError as error:
        raise WorkloadSpecError([FieldError(source, str(error))]) from None
    if not isinstance(data, dict):
        raise WorkloadSpecError([FieldError(source, "the document must be a mapping of spec fields")])
    return data
