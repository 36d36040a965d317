"""The C entry's arguments, in order: what :mod:`robodyn.integrate.kernels.entry` packs and what a warm run's image
(:mod:`robodyn.integrate.kernels.run_image`, read by :mod:`robodyn.cli.quick`) is checked against. No numpy here: the
quick path of ``robodyn simulate`` imports this module and no array library.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CORE_ARGUMENTS", "OPTIONAL", "VARIANTS", "WRITTEN", "entry_name", "leaves"]

# (name, kind): kind "i" int scalar, "f" float scalar, "f<k>" / "i<k>" / "c<k>" a float64 / int64 / complex128 array
# of k dimensions,
# "(...)" a tuple of those; a tuple or array named in OPTIONAL is None in variants without it.
CORE_ARGUMENTS: Final[tuple[tuple[str, Any], ...]] = (
    ("first", "i"), ("stop", "i"), ("work", (("w", "f1"), ("W", "f2"), ("Wc", "c2"), ("Wi", "i2"))), ("fns", "i1"),
    ("method", (("A", "f2"), ("b", "f1"), ("c", "f1"), ("e", "f1"), ("dense", "f2"), ("error_order", "i"))),
    ("dop853", "f1"),
    ("implicit", (("cfg", "f1"), ("T", "f2"), ("TI", "f2"), ("dense", "f2"), ("E", "f1"), ("a", "f2"), ("c", "f2"),
                  ("rv", "f2"))),
    ("t0", "f"), ("t1", "f"), ("x0s", "f2"), ("ps", "f2"),
    ("inp", (("codes", "i2"), ("coef", "f2"), ("tdata", "f1"), ("K", "f2"), ("xref", "f1"), ("flags", "i1"))),
    ("stops", "f1"), ("t_eval", "f1"), ("rtol", "f"), ("atol", "f1"), ("h0", "f"), ("h_max", "f"),
    ("max_steps", "i"), ("ev_direction", "i1"), ("ev_terminal", "i1"), ("out_ts", "f2"), ("out_xs", "f3"),
    ("out_us", "f3"), ("ev_ts", "f2"), ("ev_xs", "f3"), ("ev_idxs", "i2"), ("counts", "i2"), ("statuses", "i1"),
    ("t_fails", "f1"), ("i_fails", "i1"),
)
OPTIONAL: Final = ("dop853", "implicit")
#: variant -> the optional arguments it has (the others are None)
VARIANTS: Final = {"rk": (), "dop853": ("dop853",), "implicit": ("implicit",)}
WRITTEN: Final = ("work", "out_ts", "out_xs", "out_us", "ev_ts", "ev_xs", "ev_idxs", "counts", "statuses",
                  "t_fails", "i_fails")  # arrays the kernel writes: given as they are, never copied


def entry_name(variant: str) -> str:
    """The Python name (and cfunc) of the entry of ``variant``."""
    return f"adaptive_{variant}_c"


def leaves(variant: str) -> list[tuple[str, str]]:
    """(path, kind) of every scalar and array of ``variant``'s arguments, in packing order."""
    leaves: list[tuple[str, str]] = []
    for name, kind in CORE_ARGUMENTS:
        if name in OPTIONAL and name not in VARIANTS[variant]:
            continue
        if isinstance(kind, tuple):
            leaves += [(f"{name}.{part}", part_kind) for part, part_kind in kind]
        else:
            leaves.append((name, kind))
    return leaves
