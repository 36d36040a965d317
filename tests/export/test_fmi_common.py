"""What the FMI wrappers share (robodyn.export.fmi_common): the value references' groups, and only checked text
reaching the C."""

from __future__ import annotations

import pytest

from robodyn.base.errors import InputError
from robodyn.export.fmi_common import instance_source, value_references

TOKEN = "{" + "0" * 8 + "-0000-0000-0000-" + "0" * 12 + "}"
FIXED = {"vr_type": "unsigned int", "logger_type": "void *", "say": "", "has_time": False, "max_step": 1e-3}


def test_value_references_are_contiguous_groups() -> None:
    refs = value_references(4, 2, 3, 5)
    assert (refs.states, refs.derivatives, refs.inputs, refs.outputs, refs.parameters, refs.end) == (0, 4, 8, 10, 13,
                                                                                                    18)


def test_the_instance_takes_only_checked_text() -> None:
    """A prefix or field that is not a C identifier, or a token not of the form {8-4-4-4-12}, never reaches the C;
    checked ones do, as given."""
    with pytest.raises(ValueError, match="not a C identifier"):
        instance_source("a b", (1, 0, 1), [], guid=TOKEN, **FIXED)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a C identifier"):
        instance_source("p", (1, 0, 1), ["x; evil()"], guid=TOKEN, **FIXED)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="GUID"):
        instance_source("p", (1, 0, 1), [], guid='"; evil(); "', **FIXED)  # type: ignore[arg-type]
    text = instance_source("p", (2, 1, 3), ["m", "NAN_"], guid=TOKEN, **FIXED)  # type: ignore[arg-type]
    assert f'static const char TOKEN[] = "{TOKEN}";' in text and "    s.NAN_ = m->p[1];" in text
    assert "#define VR_P 8" in text and "#define VR_END 10" in text
