"""``kind: diagram`` model files: blocks (catalog names, model files, URDF and MJCF robots), wires, inputs and outputs.

::

    name: joint_pi
    kind: diagram
    blocks:
      plant: joint                                  # a catalog name, a file path, or {model: ..., parameters: {...}}
      pi: {model: pi_controller.yaml, parameters: {kp: 20}}
    connect:
      - pi.u -> plant.u
      - plant.q -> pi.y
    inputs: {r: pi.r}                               # each drives one or more block inputs (a list)
    outputs: {q: plant.q}

A block may run sampled (``sample: T``; ``discretization: backward_euler | tustin`` for a pid), and
``default: 0`` holds its unconnected inputs at a value (``defaults: {block.input: value}`` names them one by
one). A block named like a library block (``pid``, ``dc_motor``, ...: :mod:`robodyn.diagrams.blocks.library`) is made
with its
``parameters`` as arguments (numbers, ``signs: "+-"``, ``lti``'s matrices as lists of rows). A file path is
relative to the diagram file's folder. The state estimators (``kalman``, ``ekf``, ``ukf``: blocks provided by
robodyn.control, :mod:`robodyn.files.provided_blocks`) take the plant among their parameters, as a block names its
model::

    estimator:
      model: ekf
      sample: 0.01
      parameters: {plant: pendulum, outputs: [theta], Qn: {theta_dot: 0.01}, Rn: {theta: 0.0025},
                   x0: {theta: 0.0}, P0: [[1, 0], [0, 1]]}
 Every error names the file and the key; the diagram's own
checks (ports, inputs driven twice or not at all, algebraic loops) name the block and the port
(:mod:`robodyn.diagrams.diagram`). A diagram that includes itself, directly or through other diagrams, is refused.
"""

from __future__ import annotations

import contextvars
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from robodyn.base.errors import InputError, ModelFileError, RobodynError, UnknownNameError
from robodyn.diagrams.blocks.library import BLOCKS, make_block
from robodyn.diagrams.build import MAX_DIAGRAM_DEPTH, check_size
from robodyn.diagrams.diagram import Diagram
from robodyn.files.loading import MODEL_SUFFIXES, names_file, names_robot_file
from robodyn.files.provided_blocks import provided_block, provided_names, provided_text

if TYPE_CHECKING:
    from robodyn.files.reader import DocumentReader
    from robodyn.model.system import Model

__all__ = ["bundled_text", "diagram_from_reader", "expanded_size"]

_BLOCK_KEYS: Final = ("model", "parameters", "sample", "discretization", "default")
#: the diagram files being read in this context, outermost first (a file that includes itself is refused)
_OPEN: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("robodyn_open_diagrams", default=())


def diagram_from_reader(r: DocumentReader, name: str) -> Model:
    """The :class:`~robodyn.diagrams.diagram.Diagram` of a validated ``kind: diagram`` document."""
    source = r.doc.source.partition("#")[0]  # a diagram written inside another: the outer file's folder
    here = os.path.realpath(source) if os.path.isfile(source) and "#" not in r.doc.source else None
    folder = os.path.dirname(os.path.realpath(source)) if os.path.isfile(source) else os.getcwd()
    opened = _OPEN.get()
    if here is not None and here in opened:
        chain = " -> ".join([*opened[opened.index(here):], here])
        raise r.fail((), f"the diagram includes itself ({chain}): a diagram cannot be its own block")
    if not opened:  # the outermost file: its size counted from the files' text before any block is built
        try:
            check_size(*expanded_size(r.doc.data, source), f"diagram {name!r}")
        except InputError as exc:
            raise r.fail((), str(exc)) from None
    blocks_data = r.get("blocks", dict)
    if not blocks_data:
        raise r.fail(("blocks",), "needs at least one block: blocks: {plant: joint}")
    token = _OPEN.set((*opened, here) if here else opened)
    defaults: dict[str, Any] = {}
    try:
        blocks = {}
        for label, spec in blocks_data.items():
            blocks[str(label)] = _block(r, str(label), spec, folder)
            if isinstance(spec, dict) and "default" in spec:
                defaults[str(label)] = _value(r, ("blocks", label, "default"), spec["default"])
    finally:
        _OPEN.reset(token)
    table = r.get("defaults", dict) or {}
    for port, value in table.items():
        if not isinstance(port, str) or "." not in port:
            raise r.fail(("defaults", port), f"{port!r} must name a block input (block.input)")
        defaults[port] = _value(r, ("defaults", port), value)
    connect = r.get("connect", list) or []
    for i, wire in enumerate(connect):
        if not isinstance(wire, str):
            raise r.fail(("connect", i), "a connection is text: \"block.output -> block.input\"")
    inputs = r.get("inputs", dict)
    outputs = r.get("outputs", dict)
    for key, table in (("inputs", inputs), ("outputs", outputs)):
        for label, target in (table or {}).items():
            ports = target if key == "inputs" and isinstance(target, list) else [target]
            if not all(isinstance(port, str) for port in ports):
                raise r.fail((key, label), f"{label!r} must name a block port (block.port)"
                                           + (" or a list of them" if key == "inputs" else ""))
    return Diagram(blocks, connect, inputs, outputs, defaults=defaults, name=name)


def expanded_size(data: Any, source: str) -> tuple[int, int]:
    """(blocks, levels) of the diagram document ``data`` read from ``source``, its block files read (each once,
    as YAML only) and counted as often as they are used: what the diagram expands to, known before any block is
    built. Past :data:`MAX_DIAGRAM_DEPTH` levels counting stops with an InputError; a file that cannot be read
    counts as one block (building it says what is wrong)."""
    from robodyn.base.textfile import read_text_limited
    from robodyn.files.loading import MAX_FILE_BYTES
    from robodyn.files.yamlio import read_yaml

    sizes: dict[str, tuple[int, int]] = {}

    def size(document: Any, where: str, path: tuple[str, ...]) -> tuple[int, int]:
        if not (isinstance(document, dict) and document.get("kind") == "diagram"
                and isinstance(document.get("blocks"), dict)):
            return 1, 0
        if len(path) > MAX_DIAGRAM_DEPTH:  # counting stops here: refused whatever the rest
            raise InputError(f"the levels of diagrams inside diagrams would be more than the limit of "
                             f"{MAX_DIAGRAM_DEPTH} ({where} is at level {len(path)}): write the inner diagrams' "
                             "blocks into fewer levels")
        folder = os.path.dirname(os.path.realpath(where)) if os.path.isfile(where) else os.getcwd()
        blocks, depth = 0, 0
        for spec in document["blocks"].values():
            target = spec.get("model") if isinstance(spec, dict) else spec
            inner = (1, 0)
            if isinstance(target, dict):
                inner = size(target, where, (*path, where))
            elif isinstance(target, str) and target.strip().lower().endswith(MODEL_SUFFIXES):
                file = os.path.realpath(os.path.join(folder, target.strip()))
                if file not in sizes and file not in path:  # a file including itself is refused when built
                    try:
                        child = read_yaml(read_text_limited(Path(file), "model file", limit=MAX_FILE_BYTES,
                                                            error=ModelFileError), file).data
                    except (RobodynError, OSError):
                        child = None
                    sizes[file] = size(child, file, (*path, file))
                inner = sizes.get(file, (1, 0))
            blocks, depth = blocks + inner[0], max(depth, inner[1])
        return blocks, depth + 1

    return size(data, source, (os.path.realpath(source),))


def _value(r: DocumentReader, path: tuple[Any, ...], value: Any) -> float:
    from robodyn.model.quantities import parse_number

    try:
        return parse_number(value, where="value")
    except RobodynError as exc:
        raise r.fail(path, f"{' '.join(str(exc).split())}: give a number") from None


def _block(r: DocumentReader, label: str, spec: Any, folder: str) -> Model:
    """One block: ``joint``, ``arm.urdf``, ``{model: motor.yaml, parameters: {R: 2}}``."""
    from robodyn.files.loading import load  # robodyn.load: catalog names, model files, URDF and MJCF robots

    parameters: dict[str, Any] = {}
    timing: dict[str, Any] = {}
    if isinstance(spec, dict):
        unknown = sorted(set(spec) - set(_BLOCK_KEYS))
        if unknown:
            raise r.fail(("blocks", label, unknown[0]), f"unknown key {unknown[0]!r} for a block "
                                                        f"({', '.join(_BLOCK_KEYS)})")
        timing = {k: spec[k] for k in ("sample", "discretization") if k in spec}
        if not isinstance(spec.get("model"), str | dict):
            raise r.fail(("blocks", label), "a block needs model: a catalog name, a file path or a model (a mapping "
                                            "of its keys: name, kind, ...)")
        parameters = spec.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise r.fail(("blocks", label, "parameters"), "must be a mapping of parameter values")
        spec = spec["model"]
    inline = isinstance(spec, dict)
    if not inline and (not isinstance(spec, str) or not spec.strip()):
        raise r.fail(("blocks", label), "a block is a catalog name, a file path or {model: ..., parameters: ...}")
    target = "" if inline else spec.strip()
    if target in BLOCKS:
        return _library_block(r, label, target, parameters, timing)
    factory = provided_block(target) if target else None
    if factory is not None:
        return _provided(r, label, target, factory, parameters, timing, folder)
    if names_file(target) and not os.path.isabs(target):
        target = os.path.join(folder, target)
    try:
        try:
            model = _inline_model(r, label, spec) if inline else load(target)
        except UnknownNameError:
            _known_name(target.partition(":")[0])  # the message lists the library's blocks too
            raise
        if parameters:
            from robodyn.model.quantities import parse_number

            values = {str(k): parse_number(v, where=f"block {label!r} parameter {k}") for k, v in parameters.items()}
            unknown_parameters = sorted(set(values) - set(model.parameters))
            if unknown_parameters:
                from robodyn.base.names import did_you_mean

                raise InputError(f"model {model.name!r} has no parameter {unknown_parameters[0]!r} "
                                 f"(its parameters: {', '.join(model.parameters) or 'none'})"
                                 f"{did_you_mean(unknown_parameters[0], list(model.parameters))}")
            model = model.with_parameters(values)
        if "discretization" in timing:
            raise InputError("discretization is for the library blocks (pid): a model file gives its own update")
        if "sample" in timing:
            period = _value(r, ("blocks", label, "sample"), timing["sample"])
            if model.sample_period is None:
                raise InputError(f"model {model.name!r} is continuous-time: only library blocks (sample: T) and "
                                 "kind: discrete models run sampled")
            model = model.with_sample_period(period)  # type: ignore[attr-defined]
    except RobodynError as exc:
        raise r.fail(("blocks", label), f"block {label!r}: {' '.join(str(exc).split())}") from None
    return model


def _inline_model(r: DocumentReader, label: str, data: dict[str, Any],
                  prefix: tuple[Any, ...] | None = None) -> Model:
    """A block given as a model document inside the diagram (``model: {name: ..., kind: ...}``: what
    :func:`bundled_text` writes for a block file; ``prefix`` its path in the document)."""
    from robodyn.files.reader import model_from_document
    from robodyn.files.yamlio import Document

    prefix = prefix or ("blocks", label, "model")
    lines = {path[len(prefix):]: line for path, line in r.doc.lines.items() if path[:len(prefix)] == prefix}
    return model_from_document(Document(f"{r.doc.source}#blocks.{label}", data, lines), default_name=label)


def bundled_text(text: str, source: str) -> str:
    """``text`` of a model file with every block file of a diagram written into it (recursively), so that the
    text alone determines the model (a sweep rebuilds it from its text in every process; its hash then names the
    whole system). Other models' text is returned as it is. A robot block (URDF, MJCF) cannot be written in:
    InputError."""
    import yaml

    from robodyn.base.textfile import read_text_limited
    from robodyn.files.loading import MAX_FILE_BYTES
    from robodyn.files.yamlio import read_yaml

    def bundled(data: Any, where: str, seen: tuple[str, ...]) -> Any:
        if not isinstance(data, dict) or data.get("kind") != "diagram" or not isinstance(data.get("blocks"), dict):
            return data
        folder = os.path.dirname(os.path.realpath(where)) if os.path.isfile(where) else os.getcwd()
        blocks = {}
        for label, spec in data["blocks"].items():
            entry = dict(spec) if isinstance(spec, dict) else {"model": spec}
            target = entry.get("model")
            if isinstance(target, str) and names_file(target):
                path = os.path.realpath(os.path.join(folder, target.strip()))
                if names_robot_file(path):
                    raise InputError(f"{where}: block {label!r} is a robot file ({target}): a diagram swept from its "
                                     "text needs its blocks as model files (convert the robot to a kind: chain file "
                                     "with robodyn convert)")
                if path in seen:
                    raise InputError(f"{where}: the diagram includes itself through block {label!r} ({target})")
                child = read_text_limited(Path(path), "model file", limit=MAX_FILE_BYTES, error=ModelFileError)
                entry["model"] = bundled(read_yaml(child, path).data, path, (*seen, path))
            parameters = entry.get("parameters")
            parameters = parameters if isinstance(parameters, dict) else {}
            plant = parameters.get("plant")
            if isinstance(plant, str) and names_file(plant):  # an estimator's plant
                path = os.path.realpath(os.path.join(folder, plant.strip()))
                if names_robot_file(path):
                    raise InputError(f"{where}: the plant of block {label!r} is a robot file ({plant}): a diagram "
                                     "swept from its text needs it as a model file (a kind: chain file)")
                child = read_text_limited(Path(path), "model file", limit=MAX_FILE_BYTES, error=ModelFileError)
                entry["parameters"] = {**parameters, "plant": bundled(read_yaml(child, path).data, path,
                                                                       (*seen, path))}
            blocks[label] = entry if isinstance(spec, dict) or isinstance(entry["model"], dict) else spec
        return {**data, "blocks": blocks}

    document = read_yaml(text, source)
    if not isinstance(document.data, dict) or document.data.get("kind") != "diagram":
        return text
    check_size(*expanded_size(document.data, source), f"{source}: diagram")  # the text written in is as large
    here = os.path.realpath(source) if os.path.isfile(source) else source
    return yaml.safe_dump(bundled(document.data, source, (here,)), sort_keys=False, allow_unicode=True)


def _known_name(name: str) -> None:
    """An UnknownNameError listing the catalog's models and the library's blocks when ``name`` is neither."""
    from robodyn.base.names import did_you_mean
    from robodyn.files.catalog import CATALOG

    if name in CATALOG or name in BLOCKS or name in provided_names() or os.sep in name:
        return
    known = [*CATALOG, *BLOCKS, *provided_names()]
    raise UnknownNameError(f"unknown model {name!r}: give a path to a .yaml, .urdf or MJCF .xml file, a catalog "
                           f"model ({', '.join(CATALOG)}) or a library block "
                           f"({', '.join([*BLOCKS, *provided_names()])}){did_you_mean(name, known)}")


def _library_block(r: DocumentReader, label: str, kind: str, parameters: dict[str, Any], timing: dict[str, Any]
                   ) -> Model:
    """The library block ``kind`` made with the file's ``parameters`` (text numbers such as ``1e-3`` read as
    numbers: YAML reads an exponent without a decimal point as text)."""
    from robodyn.model.quantities import parse_number

    values: dict[str, Any] = {}
    for key, value in parameters.items():
        if isinstance(value, str) and key not in ("signs", "discretization"):  # text, not numbers
            try:
                value = parse_number(value, where=f"block {label!r} parameter {key}")
            except RobodynError as exc:
                raise r.fail(("blocks", label, "parameters", key), f"{' '.join(str(exc).split())}") from None
        values[str(key)] = value
    if "sample" in timing:
        values["sample"] = _value(r, ("blocks", label, "sample"), timing["sample"])
    if "discretization" in timing:
        if kind != "pid":
            raise r.fail(("blocks", label, "discretization"), "discretization is for pid blocks (the others have "
                                                               "one exact discrete form)")
        values["discretization"] = timing["discretization"]
    try:
        return make_block(kind, values, name=label)
    except RobodynError as exc:  # its messages name the block already
        raise r.fail(("blocks", label), " ".join(str(exc).split())) from None


def _provided(r: DocumentReader, label: str, kind: str, factory: Any, parameters: dict[str, Any],
              timing: dict[str, Any], folder: str) -> Model:
    """A block provided from above (an estimator): its ``plant`` resolved as a block is, its weights read as numbers,
    lists of rows or ``{name: value}`` diagonals, ``sample:`` its period."""
    import inspect

    from robodyn.base.names import did_you_mean

    where = ("blocks", label, "parameters")
    allowed = [p for p in inspect.signature(factory).parameters if p not in ("name", "sample")]
    for key in parameters:
        if key not in allowed:
            raise r.fail((*where, key), f"block {kind!r} has no parameter {key!r} (its parameters: "
                                        f"{', '.join(allowed)}){did_you_mean(str(key), allowed)}")
    if "plant" not in parameters:
        raise r.fail(("blocks", label), f"block {kind!r} needs the plant it estimates or controls: give parameters: "
                                        "{plant: pendulum} (a catalog name, a file path or a model)")
    if "discretization" in timing:
        raise r.fail(("blocks", label, "discretization"), "discretization is for pid blocks")
    words = ("plant", "outputs", *provided_text(kind))  # a plant, port names, a method's name: as written
    values = {str(k): v if k in words else _numbers(r, (*where, k), v) for k, v in parameters.items()}
    plant_spec = values.pop("plant")
    if isinstance(plant_spec, dict):
        plant = _inline_model(r, label, plant_spec, ("blocks", label, "parameters", "plant"))
    elif isinstance(plant_spec, str) and plant_spec.strip():
        plant = _block(r, label, plant_spec, folder)
    else:
        raise r.fail((*where, "plant"), "the plant is a catalog name, a file path or a model (a mapping)")
    sample = _value(r, ("blocks", label, "sample"), timing["sample"]) if "sample" in timing else None
    try:
        return factory(plant, sample, name=label, **values)
    except RobodynError as exc:
        raise r.fail(("blocks", label), f"block {label!r}: {' '.join(str(exc).split())}") from None
    except TypeError as exc:  # a required weight left out
        raise r.fail(("blocks", label), f"block {label!r} ({kind}): {exc}") from None


def _numbers(r: DocumentReader, path: tuple[Any, ...], value: Any) -> Any:
    """``value`` with its text numbers read (``1e-3``, ``pi/4``), lists and mappings entry by entry."""
    if isinstance(value, dict):
        return {k: _numbers(r, (*path, k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(r, (*path, i), v) for i, v in enumerate(value)]
    return _value(r, path, value) if isinstance(value, str) else value
