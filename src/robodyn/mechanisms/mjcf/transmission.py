"""What moves an MJCF robot's joints besides gravity: fixed tendons' springs and dampers, and actuators.

:func:`tendons` reads ``<tendon><fixed>`` (a length L = sum c_i q_i; its ``stiffness`` about ``springlength``, else
the length at the joints' ``ref``, and ``damping`` act on its joints through the coefficients); :func:`actuators`
reads the ``<actuator>`` section: one input per actuator, its force gain * w + b0 + b1 length + b2 velocity on a
joint or a fixed tendon (:func:`actuator_law`), w the control or the actuator's activation (a state of its own:
robodyn.model.kinds.actuated). Both write their generalized forces as expression text in the chain's names
(:class:`Forces`), which the chain parses.

Reference: MuJoCo documentation, "Computation" (actuation model, passive forces); XML reference, tendon/fixed and
actuator.
"""

from __future__ import annotations

from typing import Any, Final

from robodyn.base.errors import ModelFileError
from robodyn.mechanisms.mjcf.bodies import BodyTree
from robodyn.mechanisms.mjcf.document import Node, check_attributes
from robodyn.mechanisms.mjcf.geometry import numbers
from robodyn.mechanisms.mjcf.schema import ACTUATORS, ATTRIBUTES
from robodyn.mechanisms.urdf.file import coordinate_names
from robodyn.model.kinds.actuated import Activation
from robodyn.model.kinds.mechanical import velocity_name

__all__ = ["ACTIVATIONS", "ACTIVATION_SUFFIX", "CONTROL_SUFFIX", "Forces", "actuator_law", "actuators",
           "control_range", "tendons", "term"]

CONTROL_SUFFIX: Final = "_ctrl"  # Appended to an actuator's name when a joint (or its velocity) has that name.
ACTIVATIONS: Final = ("none", "filter", "filterexact", "integrator")  # MuJoCo's dyntypes robodyn builds
ACTIVATION_SUFFIX: Final = "_act"  # An actuator's activation state: its name and this.


def term(coefficient: float, name: str) -> str:
    return f"({coefficient!r})*{name}"


class Forces:
    """The generalized force on each coordinate, as expression text in the inputs and states."""

    def __init__(self) -> None:
        self.terms: dict[str, list[str]] = {}

    def add(self, coordinate: str, text: str) -> None:
        self.terms.setdefault(coordinate, []).append(text)


def tendons(root: Node, resolve: Any, tree: BodyTree, disabled: set[str], forces: Forces,
             notes: list[str]) -> dict[str, list[tuple[str, float]]]:
    """The fixed tendons (name -> [(coordinate, coefficient)]) and their passive forces."""
    found: dict[str, list[tuple[str, float]]] = {}
    for section in (n for n in root.children if n.tag == "tendon"):
        for tendon in section.children:
            if tendon.tag == "spatial":
                raise ModelFileError(f"{tendon.where}: <spatial> tendons are not read by robodyn (their length is not "
                                     "linear in q): remove it")
            if tendon.tag != "fixed":
                raise ModelFileError(f"{tendon.where}: <{tendon.tag}> is not a tendon: use <fixed> or <spatial>")
            check_attributes(tendon)
            attrib = resolve(tendon)
            view = Node("fixed", attrib, tendon.file, tendon.line)
            path: list[tuple[str, float]] = []
            ref = 0.0
            for part in tendon.children:
                if part.tag != "joint" or not part.get("joint") or part.get("coef") is None:
                    raise ModelFileError(f"{part.where}: a fixed tendon holds <joint joint=\"<name>\" coef=\"c\"/>")
                check_attributes(part, "fixed/joint")
                info = tree.info.get(part.get("joint") or "")
                if info is None:
                    raise ModelFileError(f"{part.where}: <joint joint={part.get('joint')!r}> names no hinge or slide "
                                         "joint of the model")
                if info.type == "ball":
                    raise ModelFileError(f"{part.where}: a fixed tendon on the ball joint {info.name!r} is not built "
                                         "in robodyn (a ball has no one coordinate): remove it")
                coefficient = float(numbers(part, "coef", 1)[0])  # type: ignore[index]
                path.append((info.coordinate, coefficient))
                ref += coefficient * info.ref
            name = tendon.get("name") or f"tendon{len(found)}"
            found[name] = path
            for key in ("armature", "frictionloss"):
                if float(attrib.get(key, "0")) != 0:
                    raise ModelFileError(f"{tendon.where}: <fixed {key}=...>: robodyn does not model a tendon's "
                                         f"{key}: remove it")
            if attrib.get("limited") == "true" or (attrib.get("limited", "auto") == "auto" and "range" in attrib):
                notes.append(f"the limits of tendon {name!r} ({tendon.where})")
            stiffness = 0.0 if "spring" in disabled else float(attrib.get("stiffness", "0"))
            damping = 0.0 if "damper" in disabled else float(attrib.get("damping", "0"))
            rest = numbers(view, "springlength", (1, 2))
            if rest is not None and len(rest) == 2 and rest[0] != rest[1]:
                raise ModelFileError(f"{tendon.where}: <fixed springlength=...> with a dead band: robodyn's tendon "
                                     "spring has one rest length")
            length0 = ref if rest is None or rest[0] < 0 else float(rest[0])
            length = " + ".join(term(c, q) for q, c in path)
            rate = " + ".join(term(c, velocity_name(q)) for q, c in path)
            if stiffness or damping:
                for coordinate, coefficient in path:
                    forces.add(coordinate, f"-({coefficient!r})*(({stiffness!r})*(({length}) - ({length0!r})) + "
                                           f"({damping!r})*({rate}))")
    return found


def actuator_law(element: Node, attrib: dict[str, str]) -> tuple[float, float, float, float, float | bool | None]:
    """(gain, b0, b1, b2, dynamics) of an actuator whose force is gain w + b0 + b1 length + b2 velocity (MuJoCo's fixed
    gain and affine bias), w its control u (dynamics False) or its activation a, a state with a' = (u - a) / tau
    (dynamics tau: ``dyntype="filter"`` or ``"filterexact"``) or a' = u (dynamics None: ``"integrator"``);
    ModelFileError for any other."""
    def number(key: str, default: float) -> float:
        value = numbers(Node(element.tag, attrib, element.file, element.line), key, 1)
        return default if value is None else float(value[0])

    def prm(key: str, default: tuple[float, ...]) -> list[float]:
        values = [float(v) for v in attrib.get(key, "").split()]
        return values + list(default[len(values):])

    tag = element.tag
    if tag == "motor":
        return 1.0, 0.0, 0.0, 0.0, False
    if tag == "position" and number("timeconst", 0.0) <= 0 and number("dampratio", 0.0) == 0:
        kp, kv = number("kp", 1.0), number("kv", 0.0)
        return kp, 0.0, -kp, -kv, False
    if tag == "velocity":
        kv = number("kv", 1.0)
        return kv, 0.0, 0.0, -kv, False
    dyntype = attrib.get("dyntype", "none")
    if tag == "general" and attrib.get("gaintype", "fixed") == "fixed" and attrib.get("biastype", "none") in (
            "none", "affine") and dyntype in ACTIVATIONS and attrib.get("actearly", "false") == "false" \
            and attrib.get("actdim", "-1") in ("-1", "1" if dyntype != "none" else "0"):
        gain = prm("gainprm", (1.0,))[0]
        bias = prm("biasprm", (0.0, 0.0, 0.0)) if attrib.get("biastype", "none") == "affine" else [0.0, 0.0, 0.0]
        dynamics: float | bool | None = False
        if dyntype in ("filter", "filterexact"):
            dynamics = prm("dynprm", (1.0,))[0]
            if not dynamics > 0:
                raise ModelFileError(f"{element.where}: actuator {element.get('name')!r} has the filter time "
                                     f"constant dynprm[0] = {dynamics!r}: give a positive number of seconds")
        elif dyntype == "integrator":
            dynamics = None
        return gain, bias[0], bias[1], bias[2], dynamics
    raise ModelFileError(f"{element.where}: <{tag}> actuator {element.get('name')!r}: robodyn models actuators whose "
                         "force is gain * u plus a bias affine in their length and velocity (<motor>, <position> and "
                         "<velocity> without time constant or damping ratio, <general> with a fixed gain, no or an "
                         "affine bias, and no dynamics or a filter or integrator activation without actearly); this "
                         "one's dynamics would be wrong: remove it or make it a <motor>")


def control_range(element: Node, attrib: dict[str, str], autolimits: bool) -> tuple[float, float] | None:
    """The actuator's ``ctrlrange`` when MuJoCo clamps its control to it (``ctrllimited="true"``, or ``auto`` with a
    range and ``<compiler autolimits="true">``), else None. MuJoCo XML reference, actuator/ctrllimited."""
    limited = attrib.get("ctrllimited", "auto")
    if limited not in ("true", "false", "auto"):
        raise ModelFileError(f"{element.where}: <{element.tag} ctrllimited={limited!r}>: use true, false or auto")
    bounds = numbers(Node(element.tag, attrib, element.file, element.line), "ctrlrange", 2)
    if limited == "true" and bounds is None:
        raise ModelFileError(f"{element.where}: <{element.tag} ctrllimited=\"true\"> needs ctrlrange=\"lower upper\"")
    if bounds is None or limited == "false" or (limited == "auto" and not autolimits):
        return None
    if bounds[0] > bounds[1]:
        raise ModelFileError(f"{element.where}: <{element.tag} ctrlrange=...> is {bounds[0]!r} {bounds[1]!r}: give "
                             "the lower bound first")
    return float(bounds[0]), float(bounds[1])


def actuators(root: Node, resolve: Any, tree: BodyTree, tendons: dict[str, list[tuple[str, float]]],
               disabled: set[str], forces: Forces, autolimits: bool, notes: list[str]
               ) -> tuple[list[str], dict[str, tuple[float, float]], list[Activation]]:
    """The inputs (one per actuator, in file order) and their forces on the coordinates: with moment arms r_i (gear
    times the tendon's coefficients, or the gear on a joint) the actuator's length is sum r_i q_i and each coordinate
    gets r_i (gain w + b0 + b1 length + b2 length'), w the input or, for an actuator with activation dynamics, its
    activation state ``<actuator>_act`` (then the chain's input of that name, fed by the activation: robodyn.model.
    kinds.actuated); the limited actuators' control ranges by input; the activations."""
    elements = [a for section in root.children if section.tag == "actuator" for a in section.children]
    taken = {i.coordinate for i in tree.info.values()} | {velocity_name(i.coordinate) for i in tree.info.values()}
    names = coordinate_names([a.get("name") or f"{a.get('joint') or a.get('tendon')}_motor" for a in elements])
    inputs: list[str] = []
    ranges: dict[str, tuple[float, float]] = {}
    activations: list[Activation] = []
    clamped: list[str] = []
    for element, label in zip(elements, names.values()):
        if element.tag not in ACTUATORS:
            raise ModelFileError(f"{element.where}: <{element.tag}> is not an actuator")
        if element.tag in ATTRIBUTES:
            check_attributes(element)
        attrib = resolve(element)
        gain, *bias, dynamics = actuator_law(element, attrib)
        for key in ("armature", "damping"):
            if float(attrib.get(key, "0")) != 0:
                raise ModelFileError(f"{element.where}: <{element.tag} {key}=...>: put the {key} on the joint")
        gear = float(attrib.get("gear", "1").split()[0])
        label = label + CONTROL_SUFFIX if label in taken else label
        if label in taken or label in inputs:
            raise ModelFileError(f"{element.where}: actuator {label!r} is named like a joint, its velocity or another "
                                 "actuator: rename the actuator")
        inputs.append(label)
        limits = control_range(element, attrib, autolimits)
        if limits is not None:
            ranges[label] = limits
        if "actuation" in disabled:
            continue
        if dynamics is not False:  # the force follows the activation, a state driven by the input
            state = names[element.get("name") or f"{element.get('joint') or element.get('tendon')}_motor"]
            state += ACTIVATION_SUFFIX
            if state in taken or state in inputs or state in names.values():
                raise ModelFileError(f"{element.where}: the activation state {state!r} of actuator {label!r} is "
                                     "named like a joint, its velocity or an actuator: rename the actuator")
            activations.append(Activation(state, label, dynamics if isinstance(dynamics, float) else None))
            if attrib.get("actlimited", "auto") == "true" or (attrib.get("actlimited", "auto") == "auto"
                                                              and autolimits and "actrange" in attrib):
                clamped.append(label)
            label = inputs[-1] = state
        if "joint" in attrib:
            info = tree.info.get(attrib["joint"])
            if info is None:
                raise ModelFileError(f"{element.where}: joint={attrib['joint']!r} names no hinge or slide joint of "
                                     "the model")
            if info.type == "ball":
                raise ModelFileError(f"{element.where}: actuator {label!r} drives the ball joint {info.name!r}: an "
                                     "actuator on a ball joint (a torque about its gear's axis) is not built in "
                                     "robodyn: remove it, or drive three hinges")
            arms = [(info.coordinate, gear)]
        elif "tendon" in attrib:
            if attrib["tendon"] not in tendons:
                raise ModelFileError(f"{element.where}: tendon={attrib['tendon']!r} names no fixed tendon")
            arms = [(coordinate, gear * coefficient) for coordinate, coefficient in tendons[attrib["tendon"]]]
        else:
            raise ModelFileError(f"{element.where}: actuator {label!r}: robodyn reads joint and fixed-tendon "
                                 "transmissions: give joint=\"...\" or tendon=\"...\"")
        if not any(bias):
            for coordinate, arm in arms:
                forces.add(coordinate, term(arm * gain, label))
            continue
        length = " + ".join(term(arm, q) for q, arm in arms)
        rate = " + ".join(term(arm, velocity_name(q)) for q, arm in arms)
        force = f"({gain!r})*{label} + ({bias[0]!r}) + ({bias[1]!r})*({length}) + ({bias[2]!r})*({rate})"
        for coordinate, arm in arms:
            forces.add(coordinate, f"({arm!r})*({force})")
    if clamped:
        notes.append(f"the activation ranges (actrange) of actuators {', '.join(clamped)}, to which MuJoCo clamps "
                     "their activations")
    return inputs, ranges, activations
