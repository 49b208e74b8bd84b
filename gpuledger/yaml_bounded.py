"""The one YAML loader for documents people paste or upload (studies, workload specs, plans): safe YAML
without aliases (a 595-byte "billion laughs" expands to megabytes), nesting bounded like JSON's
(PyYAML's composer recurses: deep nesting was a RecursionError, a 500), and float literals checked as
JSON's are (``1.0e-400`` would read as 0.0: gpuledger.input_bounds)."""

from __future__ import annotations

import yaml

from gpuledger.input_bounds import literal_problem
from gpuledger.json_depth import MAX_JSON_DEPTH, first_too_deep, line_column


class DocumentTooDeep(yaml.YAMLError):
    pass


class BoundedYamlLoader(yaml.SafeLoader):
    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not accepted; write the value out", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_yaml_float(self, node):
        problem = literal_problem(str(node.value).replace("_", ""))
        if problem and "not a number" not in problem:  # .inf and .nan: refused by the checks after
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
        return super().construct_yaml_float(node)


BoundedYamlLoader.add_constructor("tag:yaml.org,2002:float", BoundedYamlLoader.construct_yaml_float)


def yaml_load_bounded(text: str) -> object:
    """Raises yaml.YAMLError (with a mark where there is one) or DocumentTooDeep."""
    too_deep = first_too_deep(text)
    if too_deep is not None:
        line, column = line_column(text, too_deep)
        raise DocumentTooDeep(f"nested deeper than {MAX_JSON_DEPTH} levels (line {line}, column {column})")
    try:
        document = yaml.load(text, Loader=BoundedYamlLoader)  # noqa: S506 (a SafeLoader)
    except RecursionError:
        raise DocumentTooDeep(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    _check_depth(document)
    return document


def _check_depth(document: object) -> None:
    """Block-style YAML nests by indentation, which the bracket scan does not see: bound it here."""
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise DocumentTooDeep(f"nested deeper than {MAX_JSON_DEPTH} levels")
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
