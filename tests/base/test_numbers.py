"""robodyn.base.numbers: the checks of the numbers robodyn takes from users, their refusals and their wording."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import (
    A_NUMBER,
    FINITE,
    FINITE_HINT,
    REAL_NUMBER,
    finite_number,
    float_array,
    frozen,
    is_real_number,
)

REAL = [0, -3, 2.5, np.float64(1.5), np.float32(0.25), np.int64(7), np.uint8(3), Fraction(1, 4)]
NOT_REAL = [True, False, np.bool_(True), 1 + 2j, np.complex128(1.0), "1.5", b"1", None, [1.0], (1.0,), {},
            np.array(1.0), object()]


def _id(value: object) -> str:
    """A test id that is the same in every process (pytest-xdist's workers compare them): no memory addresses."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize("value", REAL)
def test_real_numbers_are_accepted(value):
    assert is_real_number(value)
    number = finite_number(value, "x")
    assert type(number) is float and number == float(value)


@pytest.mark.parametrize("value", NOT_REAL, ids=_id)
def test_what_is_not_a_real_number_is_refused(value):
    assert not is_real_number(value)
    with pytest.raises(InputError) as raised:
        finite_number(value, "the gain")
    assert str(raised.value) == f"the gain must be a real number, got {value!r}"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf")])
def test_nan_and_infinities_are_refused(value):
    with pytest.raises(InputError) as raised:
        finite_number(value, "time t")
    assert str(raised.value) == f"time t must be finite, got {float(value)}: give a finite number"


def test_the_callers_wording():
    with pytest.raises(InputError, match=r"^x0\['q'\] must be a number, got 'a'$"):
        finite_number("a", "x0['q']", not_real=A_NUMBER)
    with pytest.raises(InputError, match=r"^t_final must be finite, got inf$"):
        finite_number(math.inf, "t_final", not_finite=FINITE)
    assert REAL_NUMBER.format(what="w", value="v") == "w must be a real number, got 'v'"
    assert FINITE_HINT.format(what="w", number=math.nan) == "w must be finite, got nan: give a finite number"
    # the fields: what, value as given (with a format spec), number as a float
    message = "ik: {what} {value!r:.5}: give a positive finite number ({number:g})"
    with pytest.raises(InputError) as raised:
        finite_number(-12345.678, "tolerance", positive=message)
    assert str(raised.value) == "ik: tolerance -1234: give a positive finite number (-12345.7)"
    with pytest.raises(InputError) as raised:
        finite_number([1], "tolerance", not_real="ik: {what} {value!r:.5}: not a number ({number})")
    assert str(raised.value) == "ik: tolerance [1]: not a number (None)"


def test_user_text_in_what_is_not_read_as_a_template():
    with pytest.raises(InputError) as raised:
        finite_number("x", "parameter '{p}'")
    assert str(raised.value) == "parameter '{p}' must be a real number, got 'x'"


@pytest.mark.parametrize(("value", "ok"), [(1e-300, True), (0.0, False), (-0.0, False), (-1.0, False)])
def test_positive(value, ok):
    if ok:
        assert finite_number(value, "h", positive="{what} must be > 0, got {number}") == value
    else:
        with pytest.raises(InputError, match=r"^h must be > 0, got -?0\.0$|^h must be > 0, got -1\.0$"):
            finite_number(value, "h", positive="{what} must be > 0, got {number}")


@pytest.mark.parametrize(("value", "ok"), [(0.0, True), (-0.0, True), (2.0, True), (-1e-300, False)])
def test_nonnegative(value, ok):
    if ok:
        assert finite_number(value, "band", nonnegative="{what} must be >= 0, got {value!r}") == value
    else:
        with pytest.raises(InputError, match=r"^band must be >= 0, got -1e-300$"):
            finite_number(value, "band", nonnegative="{what} must be >= 0, got {value!r}")


def test_arrays_of_one_number_only_when_asked():
    assert finite_number(np.array(2.5), "x", arrays=True) == 2.5
    assert finite_number(np.array([3]), "x", arrays=True) == 3.0
    assert finite_number(np.array([[4.0]], dtype=np.float32), "x", arrays=True) == 4.0
    with pytest.raises(InputError, match="must be a real number"):
        finite_number(np.array(2.5), "x")
    for refused in (np.array([1.0, 2.0]), np.array([]), np.array(True), np.array(1j), np.array("1"),
                    np.array([None], dtype=object)):
        with pytest.raises(InputError, match="must be a real number"):
            finite_number(refused, "x", arrays=True)
    with pytest.raises(InputError, match=r"^x must be finite, got nan: give a finite number$"):
        finite_number(np.array([math.nan]), "x", arrays=True)


def test_float_array_copies_and_freezes():
    source = [[1, 2], [3, 4]]
    array = float_array(source, "A", shape=(2, 2))
    assert array.dtype == np.float64 and array.flags.c_contiguous and not array.flags.writeable
    np.testing.assert_array_equal(array, source)
    mutable = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    copied = float_array(mutable, "B", ndim=2)
    mutable[0, 0] = 99.0
    assert copied[0, 0] == 0.0 and copied.flags.c_contiguous
    with pytest.raises(ValueError):
        copied[0, 0] = 1.0


def test_float_array_refusals_and_their_wording():
    with pytest.raises(ShapeError) as raised:
        float_array(np.zeros((2, 3)), "A", shape=(2, 2))
    assert str(raised.value) == "A has shape (2, 3), expected (2, 2)"
    with pytest.raises(InputError) as wrong_ndim:
        float_array(np.zeros(3), "b", ndim=2, shape_error=InputError,
                    wrong_shape="{what} must have {ndim} dimension(s), got shape {shape}")
    assert type(wrong_ndim.value) is InputError
    assert str(wrong_ndim.value) == "b must have 2 dimension(s), got shape (3,)"
    with pytest.raises(InputError) as ragged:
        float_array([[1.0], [1.0, 2.0]], "C")
    assert str(ragged.value) == "C must be an array of numbers"
    with pytest.raises(InputError, match=r"^D must be an array of numbers$"):
        float_array(["a", "b"], "D")
    samples = np.zeros((4, 2))
    samples[2, 1] = math.inf
    with pytest.raises(InputError) as raised:
        float_array(samples, "A(t)")
    assert str(raised.value) == "A(t) has non-finite entries at sample 2: give finite numbers"
    with pytest.raises(InputError, match=r"^c contains non-finite coefficients$"):
        float_array([0.5, math.nan], "c", not_finite="{what} contains non-finite coefficients")
    with pytest.raises(InputError, match="at sample 0"):
        float_array(math.nan, "scalar")


def test_float_array_keeps_nan_when_told():
    array = float_array([1.0, math.nan], "t", shape=(2,), finite=False)
    assert math.isnan(array[1]) and not array.flags.writeable


def test_frozen():
    source = np.arange(3.0)
    copy = frozen(source)
    source[0] = 5.0
    assert copy.tolist() == [0.0, 1.0, 2.0] and copy.dtype == np.float64 and not copy.flags.writeable
    assert frozen([1, 2]).dtype == np.float64
