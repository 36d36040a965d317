"""robodyn.codegen.fragments: a generated fragment's top-level names prefixed apart, its tape data set aside while
the rest is parsed (prefixed_source) and the result the same program as the whole fragment parsed and prefixed."""

from __future__ import annotations

import ast

from robodyn.codegen.fragments import prefixed, prefixed_source, top_level_names
from robodyn.codegen.llvm.tape import tape_source
from robodyn.rigid.tape import Tape


def _fragment() -> str:
    tape = Tape()
    x = tape.leaves(1, 2)
    y = (x[0] * x[1]).sin() + x[0]
    return "\n".join([tape_source("_rhs_tape", tape, [y, x[1] * 2.0], "hjit"), "", "@jit",
                      "def rhs(t, x, u, p, out):", "    _rhs_tape(t, x, u, p, x, out)", ""])


def test_the_tape_data_set_aside_gives_the_same_program() -> None:
    source = _fragment()
    tree = ast.parse(source)
    expected = prefixed(tree, top_level_names(tree) or set(), "_b0_")
    found = prefixed_source(source, "_b0_")
    assert found is not None
    text, names = found
    assert names == {"__rhs_tape_code", "_rhs_tape", "rhs"}
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(expected))
    assert "_b0___rhs_tape_code = straight_line(((" in text  # the data kept as written, its target renamed
    assert "def _b0_rhs(" in text and "_b0__rhs_tape(t, x, u, p, x, out)" in text


def test_a_text_that_is_no_fragment_is_none() -> None:
    assert prefixed_source("class A:\n    pass\n", "_p_") is None
