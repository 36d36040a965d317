"""A chain's joints and links as a tree of bodies (a mixin of :class:`robodyn.mechanisms.chain.system.ChainSystem`).

:meth:`ChainBodies._topology` checks the names and the tree (unique names, known links, one parent joint per link,
no cycle) and orders the joints parents first; :meth:`ChainBodies._build_bodies` places each joint (``xyz``/``rpy``
and ``axis``, or a standard or modified DH row) in its parent's frame and moves its link's mass properties into the
joint frame (robodyn.mechanisms.chain.parts.BodySpec, expressions in the parameters); :meth:`ChainBodies._coupling`
reads a mimic joint's multiplier and offset.

Reference: J. Denavit, R. S. Hartenberg (1955) and J. J. Craig, *Introduction to Robotics*, 3rd ed., section 3.4
(modified DH).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sympy

from robodyn.base.errors import InputError
from robodyn.mechanisms.chain.parts import (
    JOINT_TYPES,
    BodySpec,
    Joint,
    Link,
    mimic_problem,
    rot_x,
    rot_y,
    rot_z,
    turned,
)

__all__ = ["ChainBodies"]


class ChainBodies:
    """The tree of a chain's joints and links (the chain provides its names, joints, links and expression parser)."""

    name: str
    joints: tuple[Joint, ...]
    links: tuple[Link, ...]
    coordinates: tuple[str, ...]
    _by_child: dict[str, int]
    _link_offsets: dict[str, tuple[sympy.Matrix, sympy.Matrix]]
    if TYPE_CHECKING:
        def _param_expr(self, value: Any, where: str, key: str) -> Any: ...
        def _default(self, expr: Any) -> float: ...
        def _vector(self, values: Any, where: str, key: str) -> list[Any]: ...
        def _link_terms(self, link: Link) -> tuple[Any, list[Any], list[list[Any]]]: ...

    def _topology(self) -> list[int]:
        """Joint indices ordered parents first; errors name the joint or link at fault."""
        link_names = [k.name for k in self.links]
        for group, names in (("link", link_names), ("joint", [j.name for j in self.joints])):
            seen: set[str] = set()
            for item in names:
                if item in seen:
                    raise InputError(f"model {self.name!r}: duplicate {group} name {item!r}",
                                     key="links" if group == "link" else "joints")
                seen.add(item)
        by_child: dict[str, int] = {}
        for i, j in enumerate(self.joints):
            if j.type not in JOINT_TYPES:
                raise InputError(f"model {self.name!r}: joint {j.name!r} has type {j.type!r}: use "
                                 f"{', '.join(JOINT_TYPES)}", key="joints")
            for role, link in (("parent", j.parent), ("child", j.child)):
                if link not in link_names:
                    raise InputError(f"model {self.name!r}: joint {j.name!r}: unknown {role} link {link!r} "
                                     f"(links: {', '.join(link_names)})", key="joints")
            if j.child in by_child:
                raise InputError(f"model {self.name!r}: link {j.child!r} is the child of joints "
                                 f"{self.joints[by_child[j.child]].name!r} and {j.name!r}", key="joints")
            by_child[j.child] = i
        depth: dict[int, int] = {}
        for i, j in enumerate(self.joints):
            visited, link = [j.child], j.parent
            while link in by_child:
                if link in visited:
                    raise InputError(f"model {self.name!r}: link {link!r} is its own ancestor (joints form a "
                                     f"cycle through {' <- '.join(visited)}): a chain must be a tree",
                                     key="joints")
                visited.append(link)
                link = self.joints[by_child[link]].parent
            depth[i] = len(visited)
        self._by_child = by_child
        return sorted(range(len(self.joints)), key=lambda i: (depth[i], i))

    def _coupling(self, joint: Joint) -> tuple[int, Any, Any]:
        """(coordinate, multiplier, offset) of a joint: q_joint = multiplier q[coordinate] + offset."""
        if joint.mimic is None:
            return self.coordinates.index(joint.name), sympy.Integer(1), sympy.Integer(0)
        where = f"joint {joint.name!r}: mimic"
        mimic = dict(joint.mimic)
        unknown = [k for k in mimic if k not in ("joint", "multiplier", "offset")]
        if unknown or not isinstance(mimic.get("joint"), str):
            raise InputError(f"model {self.name!r}: {where} must be {{joint: <name>, multiplier: m, offset: o}}",
                             key="joints")
        target = next((j for j in self.joints if j.name == mimic["joint"]), None)
        if target is None or target.mimic is not None or target.type != joint.type:
            raise InputError(f"model {self.name!r}: {where} names {mimic['joint']!r}, which must be another "
                             f"{joint.type} joint that mimics none", key="joints")
        multiplier, offset = (self._param_expr(mimic.get(k, d), where, "joints") for k, d in (("multiplier", 1),
                                                                                             ("offset", 0)))
        problem = mimic_problem(self._default(multiplier), self._default(offset))
        if problem is not None:
            raise InputError(f"model {self.name!r}: {where} {problem}", key="joints")
        return self.coordinates.index(target.name), multiplier, offset

    def _build_bodies(self) -> tuple[list[int], list[BodySpec]]:
        order = self._topology()
        links = {k.name: k for k in self.links}
        post: dict[str, tuple[sympy.Matrix, sympy.Matrix]] = {}  # link -> (R_B, p_B): joint frame <- link frame
        self._link_offsets = post
        bodies: list[BodySpec] = []
        position_of = {joint: k for k, joint in enumerate(order)}
        for i in order:
            joint = self.joints[i]
            where = f"joint {joint.name!r}"
            r_b_parent, p_b_parent = post.get(joint.parent, (sympy.eye(3), sympy.zeros(3, 1)))
            if joint.dh is not None and joint.mdh is not None:
                raise InputError(f"model {self.name!r}: {where}: give dh (standard) or mdh (modified), not both",
                                 key="joints")
            table = joint.dh if joint.dh is not None else joint.mdh
            if table is not None:
                label = "dh" if joint.dh is not None else "mdh"
                dh = {k: self._param_expr(table.get(k, 0), f"{where}.{label}.{k}", "joints") for k in table}
                unknown = [k for k in dh if k not in ("a", "alpha", "d", "theta")]
                if unknown:
                    raise InputError(f"model {self.name!r}: {where}: unknown {label} entries {unknown}: use a, "
                                     "alpha, d, theta", key="joints")
                a, alpha, d, theta = (dh.get(k, sympy.Integer(0)) for k in ("a", "alpha", "d", "theta"))
                axis = [sympy.Integer(0)] * 2 + [sympy.Integer(1)]
                if joint.dh is not None:  # standard: motion about the parent's z, then to the link frame
                    rot_o, pos_o = sympy.eye(3), sympy.zeros(3, 1)
                    r_b = rot_z(theta) * rot_x(alpha)
                    p_b = sympy.Matrix([a * sympy.cos(theta), a * sympy.sin(theta), d])
                else:  # modified (Craig): Rx(alpha) Tx(a) Rz(theta) Tz(d), the link frame on the joint axis
                    rot_o = rot_x(alpha) * rot_z(theta)
                    pos_o = sympy.Matrix([a, 0, 0]) + rot_x(alpha) * sympy.Matrix([0, 0, d])
                    r_b, p_b = sympy.eye(3), sympy.zeros(3, 1)
            else:
                xyz = self._vector(joint.xyz, f"{where}.xyz", "joints")
                roll, pitch, yaw = self._vector(joint.rpy, f"{where}.rpy", "joints")
                rot_o, pos_o = rot_z(yaw) * rot_y(pitch) * rot_x(roll), sympy.Matrix(xyz)
                axis = self._vector(joint.axis, f"{where}.axis", "joints")
                r_b, p_b = sympy.eye(3), sympy.zeros(3, 1)
            length = sympy.sqrt(sum((e**2 for e in axis), sympy.Integer(0)))
            if not self._default(length) > 0:
                raise InputError(f"model {self.name!r}: {where}: axis {list(axis)} has zero length: give a "
                                 "non-zero direction", key="joints")
            axis = [e / length for e in axis]
            post[joint.child] = (r_b, p_b)
            rotation, position = turned(r_b_parent, rot_o), p_b_parent + turned(r_b_parent, pos_o)
            link = links[joint.child]
            mass, com, inertia = self._link_terms(link)
            com_j = p_b + turned(r_b, sympy.Matrix(com))
            inertia_j = sympy.Matrix(inertia) if r_b.is_Identity else r_b * sympy.Matrix(inertia) * r_b.T
            parent = position_of[self._by_child[joint.parent]] if joint.parent in self._by_child else -1
            bodies.append(BodySpec(parent, joint.type == "prismatic", tuple(axis),
                               tuple(tuple(rotation.row(r)) for r in range(3)), tuple(position),
                               mass, tuple(com_j), tuple(tuple(inertia_j.row(r)) for r in range(3)),
                               joint.type == "ball"))
        return order, bodies
