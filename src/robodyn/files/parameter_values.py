"""A model file with new parameter values written into its own text: everything else kept as it was written.

Identification ends with numbers a user wants in their model file (``robodyn identify --write-model``). Dumping
the parsed document again would lose the file's comments, order and layout, so :func:`with_parameter_values`
changes only the text of each value under ``parameters:``: it composes the YAML into nodes (no Python objects
are built, as everywhere robodyn reads YAML), takes the character span of each named parameter's value node, and
replaces it by the number's shortest exact form (``repr``: read back, it is the same double). A value given as a
constant expression (``2*pi``) becomes the number. The result is read back as a model and its parameters
compared with the values given, so a text that would not mean them is never returned.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import yaml

from robodyn.base.errors import InputError, ModelFileError

__all__ = ["with_parameter_values"]


def _value_spans(text: str, source: str) -> dict[str, tuple[int, int]]:
    """The character span ``(start, end)`` of each parameter's value node in ``text``."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ModelFileError(f"{source}: invalid YAML: {exc}") from None
    if not isinstance(node, yaml.MappingNode):
        raise ModelFileError(f"{source}: not a model file (a mapping of keys at the top)")
    parameters = next((value for key, value in node.value if isinstance(key, yaml.ScalarNode)
                       and key.value == "parameters"), None)
    if not isinstance(parameters, yaml.MappingNode):
        raise ModelFileError(f"{source}: no 'parameters:' mapping whose values could be written")
    return {str(key.value): (value.start_mark.index, value.end_mark.index) for key, value in parameters.value
            if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode)}


def with_parameter_values(text: str, values: Mapping[str, float], source: str = "<text>") -> str:
    """``text`` (a model file) with each of ``values`` written as its parameter's value (see the module docstring).

    Raises InputError for a name that is not a parameter written with a value of its own in the file (a derived
    parameter's expression is kept: it follows the others), or a value that is not finite.
    """
    from robodyn.files.loading import read_model_text

    spans = _value_spans(text, source)
    derived = read_model_text(text, source).derived_parameters
    for name, value in values.items():
        if name in derived:
            raise InputError(f"{source}: parameter {name!r} has no value of its own ({name}: {derived[name]} follows "
                             "the others): write the parameters it is made of")
        if name not in spans:
            raise InputError(f"{source}: the file has no value of its own for parameter {name!r} under 'parameters:'"
                             f" to write {value!r} into")
        if not math.isfinite(float(value)):
            raise InputError(f"{source}: parameter {name!r} = {value!r} is not finite: nothing is written")
    written = text
    for name, (start, end) in sorted(((n, spans[n]) for n in values), key=lambda item: -item[1][0]):
        written = written[:start] + repr(float(values[name])) + written[end:]
    model = read_model_text(written, source)
    changed = {name: float(model.parameters[name]) for name in values if name in model.parameters}
    if changed != {name: float(value) for name, value in values.items()}:
        raise InputError(f"{source}: the parameters read back from the rewritten file are {changed}, not the "
                         "values given: write them by hand")
    return written
