"""Rigid contacts of a chain: touchdown events, the impact map, and contacts that come to rest.

An ``impact`` contact (robodyn.mechanisms.contact.contacts) holds a frame's origin p on or above a plane (gap g = n .
(p -
p0) >= 0) with no force while it is off the plane. ``simulate`` (robodyn.integrate.paths.impacts) integrates the chain
between impacts and asks :class:`ImpactSet` what happens at each:

- **touchdown** — the terminal event ``<name>_touchdown``, g falling through 0;
- **the impact map** — the velocities jump so that the contact's normal velocity g' = J_n q' becomes -e times its
  value before (Newton's restitution law, e from 0 to 1), while every bilateral row (loops, held points, resting
  contacts) keeps its velocity: with J the stacked rows and w their velocities wanted after the impact,

      q'+ = q'- + M^-1 J^T mu,   (J M^-1 J^T) mu = w - J q'-

  the impulse mu that changes nothing but those velocities, by the least kinetic energy change (for one contact
  alone: q'+ = q'- - (1 + e) M^-1 J_n^T (J_n M^-1 J_n^T)^-1 J_n q'-). The positions do not jump;
- **rest** — a bounce shorter than the contact's ``rest_time``, the one just ended (impact to impact) or the one
  that would follow (:meth:`ImpactSet.flight`): the impact is made plastic (e = 0) and the contact is held on its
  plane, a bilateral row along n (robodyn.rigid.constraints, ``direction``), while the plane pushes; the
  integration goes on in that mode (:meth:`ImpactSet.mode`);
- **lift-off** — a held contact's normal force lambda (the row's multiplier, N, positive while the plane pushes)
  falling through 0: the event ``<name>_liftoff``, after which the contact is free again.

The same integration thus never steps across an impact; between events the state is smooth. Impacts are
frictionless (no tangential impulse). Reference: B. Brogliato, *Nonsmooth Mechanics*, 3rd ed., Springer 2016,
chapter 6 (the impact map with restitution); R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008,
section 11.7 (impulsive dynamics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np

from robodyn.base.errors import InputError, SingularMatrixError
from robodyn.model.events import Event
from robodyn.model.protocol import ModelContract

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.system import ChainSystem
    from robodyn.mechanisms.contact.contacts import ContactSet
    from robodyn.model.system import Vector
    from robodyn.rigid.constraints import ConstraintRow

__all__ = ["TOUCH_TOLERANCE", "ImpactModel", "ImpactSet"]

#: m and m/s (scaled by max(1, |x|)): a point this close to its plane and not leaving it faster than this at the
#: start rests on it; deeper than this is a penetration (refused).
TOUCH_TOLERANCE: Final = 1e-9


class ImpactModel(ModelContract, Protocol):
    """What an :class:`ImpactSet` asks of its chain with contacts (robodyn.mechanisms.loops.constrained's
    ConstrainedChain): the contacts, the tree, the tape's functions and the chain with some contacts held."""

    contact_set: ContactSet
    chain: ChainSystem
    _rows: list[ConstraintRow]  # the bilateral rows (loops, constraints, held contacts)

    def check_contacts(self, p: Vector, where: str = "") -> None:
        """InputError when a contact's law at the parameters ``p`` is not physical."""
        ...

    def call(self, name: str, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """The tape's function ``name`` (``rhs``, ``events``, ``impacts``, ...) at one point."""
        ...

    def _evaluate(self, t: float, x: np.ndarray, p: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rows' values, velocities, Jacobian and bias at (t, x)."""
        ...

    def held_mode(self, held: Sequence[int]) -> ImpactModel:
        """The same chain with the impact contacts ``held`` (indices) held on their planes."""
        ...


class ImpactSet:
    """A chain's rigid contacts (see the module docstring): their names, the events of each mode, the impact map.

    ``model`` is the chain with every contact free (no resting contact held).
    """

    def __init__(self, model: ImpactModel):
        self.model = model
        self.names = tuple(i.name for i in model.contact_set.impacts)
        self.rest_times = np.array([i.rest_time for i in model.contact_set.impacts])
        self._modes: dict[frozenset[int], ImpactModel] = {frozenset(): model}

    def __len__(self) -> int:
        return len(self.names)

    def check(self, p: np.ndarray, where: str = "") -> None:
        """InputError when the contacts' laws at the parameters ``p`` are not physical (a restitution outside
        [0, 1]: robodyn.mechanisms.loops.constrained.ConstrainedChain.check_contacts)."""
        self.model.check_contacts(p, where)

    def mode(self, held: frozenset[int]) -> ImpactModel:
        """The chain with the impact contacts ``held`` (indices) held on their planes (built once per set)."""
        if held not in self._modes:
            self._modes[held] = self.model.held_mode(sorted(held))
        return self._modes[held]

    def events(self, held: frozenset[int]) -> list[Event]:
        """The terminal events of the mode ``held``: touchdown of each free contact, lift-off of each held one."""
        touchdown = [Event(f"{name}_gap", -1, True, f"{name}_touchdown")
                     for k, name in enumerate(self.names) if k not in held]
        return [*touchdown, *(Event(f"{self.names[k]}_hold", -1, True, f"{self.names[k]}_liftoff")
                              for k in sorted(held))]

    def event_contact(self, name: str) -> tuple[int, str] | None:
        """(contact index, ``"touchdown"`` or ``"liftoff"``) of an event name of :meth:`events`, or None."""
        for k, contact in enumerate(self.names):
            for what in ("touchdown", "liftoff"):
                if name == f"{contact}_{what}":
                    return k, what
        return None

    def _values(self, t: float, x: np.ndarray, p: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Gaps ``(k,)``, restitutions ``(k,)``, the gaps' accelerations at q'' = 0 ``(k,)`` and dg/dq ``(k, n)``."""
        k, n = len(self.names), self.model.chain.n_coordinates
        values = self.model.call("impacts", t, x, np.zeros(self.model.n_inputs), p)
        return values[:k], values[k: 2 * k], values[2 * k: 3 * k], values[3 * k:].reshape(k, n)

    def flight(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, k: int, held: frozenset[int]) -> float:
        """The time contact ``k`` would stay off its plane leaving it from (t, x) in the mode ``held`` under the
        normal acceleration there (2 g' / -g'', the bounce of a constant acceleration; inf when it does not fall
        back, 0 when it does not leave)."""
        n = self.model.chain.n_coordinates
        _, _, bias, rows = self._values(t, x, p)
        rate = float(rows[k] @ x[n:])
        if rate <= 0.0:
            return 0.0
        acceleration = float(rows[k] @ self.mode(held).call("rhs", t, x, u, p)[n:] + bias[k])
        return 2.0 * rate / -acceleration if acceleration < 0.0 else np.inf

    def pushing(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, held: frozenset[int]) -> frozenset[int]:
        """The contacts of ``held`` whose plane pushes (normal force > 0) at (t, x) when they are held."""
        if not held:
            return held
        mode = self.mode(held)
        forces = mode.call("events", t, x, u, p)[len(self.model.contact_set.names):]
        return frozenset(k for k, force in zip(sorted(held), forces) if force > 0.0)

    def resting(self, t: float, x: np.ndarray, p: np.ndarray) -> frozenset[int]:
        """The contacts resting at a starting state: on their plane (to :data:`TOUCH_TOLERANCE`) and not leaving
        it; InputError for a point below its plane."""
        gaps, _, _, rows = self._values(t, x, p)
        n = self.model.chain.n_coordinates
        rates = rows @ x[n:]
        scale = max(1.0, float(np.max(np.abs(x[:n]), initial=0.0)))
        deep = [k for k, g in enumerate(gaps) if g < -TOUCH_TOLERANCE * scale]
        if deep:
            k = deep[0]
            raise InputError(f"simulate: contact {self.names[k]!r} starts {-gaps[k]:.3g} m below its plane (x0 "
                             "penetrates it): start the point on or above the plane", key="x0")
        return frozenset(k for k, (g, r) in enumerate(zip(gaps, rates))
                         if g <= TOUCH_TOLERANCE * scale and r <= TOUCH_TOLERANCE * scale)

    def jump(self, t: float, x: np.ndarray, p: np.ndarray, hit: int, held: frozenset[int], plastic: bool
             ) -> np.ndarray:
        """The state just after contact ``hit`` touches down at (t, x) in the mode ``held``: q' by the impact map
        (restitution 0 when ``plastic``), q unchanged. SingularMatrixError when the rows lose rank there."""
        model, n = self.model, self.model.chain.n_coordinates
        mode = self.mode(held)
        _, restitution, _, rows = self._values(t, x, p)
        qd = x[n:]
        stacked, wanted = [rows[hit]], [-(0.0 if plastic else restitution[hit]) * float(rows[hit] @ qd)]
        if mode._rows:  # bilateral rows (and held contacts) keep their velocity: J q'+ = c'(t)
            _, velocity, jacobian, _ = mode._evaluate(t, x, p)
            stacked += list(jacobian)
            wanted += list(jacobian @ qd - velocity)
        J, w = np.array(stacked), np.array(wanted)
        mass = model.chain.mass_raw(t, x, np.zeros(model.n_inputs), p)
        try:
            y = np.linalg.solve(mass, J.T)  # M^-1 J^T (n, r)
            mu = np.linalg.solve(J @ y, w - J @ qd)
        except np.linalg.LinAlgError:
            raise SingularMatrixError(f"simulate: the impact of contact {self.names[hit]!r} at t = {t:g} s has "
                                      "dependent constraint rows (the contact normal lies in the loops' or other "
                                      "contacts' span): its impulse is not determined") from None
        after = x.copy()
        after[n:] = qd + y @ mu
        return after
