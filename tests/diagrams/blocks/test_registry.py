"""The block registry (robodyn.diagrams.blocks.registry): one module per block found from the folder, in a fixed
order, names unique; the table BLOCKS and make_block built from it; each block's discrete form the one its factory
makes for ``sample=T``."""

from __future__ import annotations

import pkgutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.diagrams.blocks import library, registry
from robodyn.diagrams.blocks.registry import SHARED, BlockKind, block_kinds, collect

FOLDER = Path(library.__file__).parent
#: The order of the table (messages and docs/reference.md list the blocks in it).
ORDER = ["gain", "sum", "integrator", "first_order", "pid", "saturation", "lti", "dc_motor", "quantizer"]


def test_every_module_but_the_shared_ones_is_one_block_sorted_by_name() -> None:
    modules = sorted(p.stem for p in FOLDER.glob("*.py") if p.stem not in SHARED and not p.stem.startswith("_"))
    kinds = block_kinds()
    assert [kind.name for kind in kinds] == modules == sorted(ORDER)
    for kind in kinds:  # the record of each module is its own, its factory named like it
        module = sys.modules[f"robodyn.diagrams.blocks.{kind.name}"]
        assert module.BLOCK is kind and kind.make.__name__ == kind.name and kind.make.__module__ == module.__name__
    assert block_kinds() is kinds  # found once


def test_the_table_keeps_its_order_and_is_read_only() -> None:
    assert list(library.BLOCKS) == ORDER and list(library.KINDS) == ORDER
    assert all(library.BLOCKS[k.name] is k.make for k in block_kinds())
    with pytest.raises(TypeError):
        library.BLOCKS["mine"] = library.gain  # type: ignore[index]
    assert robodyn.blocks.BLOCKS is library.BLOCKS and sorted(robodyn.blocks.__all__) == robodyn.blocks.__all__
    # the library's blocks and the estimators (robodyn.control.estimation.blocks, above the library in the layers)
    assert set(robodyn.blocks.__all__) == {"BLOCKS", "make_block", *ORDER, "kalman", "ekf", "ukf"}


def test_collect_sorts_and_refuses_two_blocks_of_one_name() -> None:
    a, b, c = (BlockKind(n, library.gain) for n in ("b_block", "a_block", "c_block"))
    assert [k.name for k in collect([a, b, c])] == ["a_block", "b_block", "c_block"] == \
        [k.name for k in collect([c, a, b])]
    with pytest.raises(InputError, match="two library blocks are named 'b_block'"):
        collect([a, b, BlockKind("b_block", library.sum)])
    with pytest.raises(InputError, match="must be a BlockKind"):
        collect([a, "gain"])  # type: ignore[list-item]


@pytest.mark.parametrize(("record", "message"), [
    (None, r"robodyn\.diagrams\.blocks\.zz_extra defines no BLOCK"),
    (BlockKind("gain", library.sum), "two library blocks are named 'gain'"),
])
def test_a_module_of_the_folder_without_a_block_or_with_a_taken_name_is_refused(monkeypatch, record, message) -> None:
    module = types.ModuleType("robodyn.diagrams.blocks.zz_extra")
    if record is not None:
        module.BLOCK = record  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    listed = list(pkgutil.iter_modules([str(FOLDER)]))
    monkeypatch.setattr(registry.pkgutil, "iter_modules",
                        lambda path: [*listed, pkgutil.ModuleInfo(listed[0].module_finder, "zz_extra", False)])
    with pytest.raises(InputError, match=message):
        block_kinds.__wrapped__()


def test_an_unknown_block_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as caught:
        library.make_block("gian")
    assert str(caught.value).startswith(f"unknown block 'gian' (blocks: {', '.join(ORDER)})")
    assert "gain" in str(caught.value).split(")", 1)[1]  # did you mean


def _sources(model) -> tuple[str | None, ...]:
    return model.kernel_rhs_source(), model.kernel_output_source(), model.kernel_jacobian_source()


@pytest.mark.parametrize(("kind", "parameters"), [
    ("integrator", {"y0": 1.5}), ("first_order", {"K": 2.0, "tau": 0.03}), ("dc_motor", {"R": 2.0, "N": 3.0}),
    ("dc_motor", {"L": 0.0}), ("lti", {"num": [1.0, 2.0], "den": [1.0, 3.0, 5.0]}),
    ("pid", {"kp": 3.0, "ki": 2.0, "kd": 0.4, "umin": -1.0, "umax": 2.0}),
])
def test_each_blocks_discrete_form_is_what_its_factory_makes_sampled(kind: str, parameters: dict) -> None:
    from robodyn.diagrams.blocks.sampled import discrete_form

    record = library.KINDS[kind]
    assert record.discrete is not None
    continuous = library.make_block(kind, parameters)
    made = library.make_block(kind, {**parameters, "sample": 0.01})
    assert _sources(record.discrete(continuous, 0.01)) == _sources(made) == \
        _sources(discrete_form(continuous, kind, 0.01))
    assert made.sample_period == 0.01 and made.states == continuous.states


def test_static_blocks_have_no_discrete_form_and_are_held() -> None:
    for kind in ("gain", "sum", "saturation", "quantizer"):
        assert library.KINDS[kind].discrete is None
        held = library.make_block(kind, {"sample": 0.02})
        assert held.states == () and held.sample_period == 0.02
        x, u = np.zeros(0), np.full(held.n_inputs, 0.3)
        plain = library.make_block(kind)
        np.testing.assert_array_equal(held.h_raw(0.0, x, u, held.parameter_vector()),
                                      plain.h_raw(0.0, x, u, plain.parameter_vector()))
