"""Text from models never becomes code in the C export (docs/dev/security.md, "Text from models in generated code").

Every name-bearing field a model file or a Python call can fill with free text — the model's name, a chain's links
and extra frames, a URDF robot's, links' and joints' names, a diagram's name, inputs and outputs, a Lagrangian
model's points — is filled with comment terminators, newlines, carriage returns, trigraphs, quotes, ``#``,
backslashes, NUL and non-ASCII text around a payload that, were it code, would define a symbol and a constructor that
creates a marker folder when the library is loaded. The export must compile under gcc's strictest flags, its
preprocessed text (comments gone) must hold no token of the payload, the built library (loaded by
``export_c(..., build=True)``, which runs constructors) must define exactly the export's functions and create
nothing, and its numbers must be the model's. Names that must be identifiers (states, inputs, outputs, parameters,
diagram blocks) are refused with one clean InputError.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.cli_run import one_line, run

import robodyn
from robodyn.base.errors import InputError
from robodyn.codegen.text import c_comment, c_comment_text, uncomment
from robodyn.export.c import export_c
from robodyn.mechanisms import ChainSystem

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None, reason="no gcc or nm")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
#: Tokens of the payloads: none may survive preprocessing (outside comments they would be code; a C name made from
#: a payload is one longer token).
PAYLOAD_TOKENS = frozenset({"pwn", "mkdir", "__attribute__", "constructor", "robodyn_pwned", *(
    f"robodyn_pwned_{k}" for k in range(2, 5))})


def payloads(marker: Path) -> list[str]:
    """Hostile texts: a comment break-out defining a constructor and a symbol, then newlines, CR, ``//``, a trigraph
    that ends a line (``??/`` is a backslash: a line splice), quotes, ``#``, backslashes, NUL and non-ASCII."""
    breakout = ("a */ __attribute__((constructor)) static void pwn(void) { extern int mkdir(const char *, unsigned "
                f'int); mkdir("{marker}", 448); }} int robodyn_pwned = 1; /*')
    return [breakout,
            "b */\n#error robodyn_pwned\n/*",
            "c ??/\nint robodyn_pwned_2; // ??/\r\n*/ int robodyn_pwned_3; /*",
            "d \\\n*/ int robodyn_pwned_4; /* ' \" # \\ \t\x00 \u00e9\u2028 \U0001f916 ??= ??' ??!",
            "camera/depth", "l-arm"]


# --- the escaper ----------------------------------------------------------------------------------------------
def _well_formed(comment: str) -> None:
    """One C comment on one line of printable ASCII that nothing inside ends, reopens or splices."""
    assert comment.startswith("/* ") and comment.endswith(" */")
    inner = comment[3:-3]
    assert all(0x20 <= ord(c) <= 0x7E for c in inner), inner
    for sequence in ("*/", "/*", "//", "??"):
        assert sequence not in comment[2:-2], (sequence, comment)


@given(st.text())
def test_a_comment_holds_any_text_and_reads_back(text: str) -> None:
    """Any text (hypothesis: every code point) becomes one well-formed comment, and unescaping gives it back: the
    escaping loses nothing a reader of the header needs."""
    _well_formed(c_comment(text))
    assert uncomment(c_comment_text(text)) == text


@pytest.mark.parametrize("text", ["*/", "/*", "//", "*//*", "/**/", "??/", "???/", "a\\", "\\\n", "?\\?", "x\r\n",
                                  "\x00\x1f\x7f", "\u00e9\u2028\U0001f916", "\\x41\\u{42}", "*", "/", "?"])
def test_the_escapes_of_each_dangerous_sequence(text: str) -> None:
    _well_formed(c_comment(text))
    assert uncomment(c_comment_text(text)) == text


@needs_gcc
def test_gcc_sees_only_comments_in_escaped_hostile_text(tmp_path: Path) -> None:
    """The compiler's own verdict (an independent reference for the escaper): a C file of every payload as a
    comment, then one declaration, compiles under -std=c99 -pedantic -Werror (trigraphs on, as ISO C has them) and
    preprocesses to that one declaration alone."""
    texts = [*payloads(tmp_path / "marker"), *("x" + chr(c) + "y" for c in range(128)), "??/", "a??/"]
    (tmp_path / "c.c").write_text("\n".join([*(c_comment(t) for t in texts), "int robodyn_marker;", ""]))
    done = subprocess.run(["gcc", *STRICT, "-trigraphs", "-c", str(tmp_path / "c.c"), "-o", str(tmp_path / "c.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _tokens(_preprocessed(tmp_path / "c.c", tmp_path)) == ["int", "robodyn_marker", ";"]
    assert not (tmp_path / "marker").exists()


def _tokens(code: str) -> list[str]:
    """C's tokens of preprocessed ``code``, roughly: identifiers and numbers whole, every other character alone."""
    return re.findall(r"[A-Za-z0-9_.]+|\S", code)


def _preprocessed(path: Path, include: Path) -> str:
    """``path`` preprocessed by gcc in ISO C99 (trigraphs on), line markers left out: what the compiler parses. The
    system's headers are left out (an empty ``<math.h>``): only the file's own text is seen."""
    stub = include.parent / f"{include.name}-stub"
    stub.mkdir(exist_ok=True)
    (stub / "math.h").write_text("")
    done = subprocess.run(["gcc", "-std=c99", "-E", "-P", "-nostdinc", f"-I{stub}", f"-I{include}", str(path)],
                          capture_output=True, text=True, check=True)
    return done.stdout


# --- hostile models, through files and through Python ---------------------------------------------------------
def _chain_file(folder: Path, marker: Path) -> Path:
    texts = payloads(marker)
    links = ["base", texts[1], texts[2], texts[3]]
    document = {
        "name": texts[0], "kind": "chain", "parameters": {"m1": 1.5, "g": 9.81}, "gravity": [0, 0, "-g"],
        "joints": [{"name": f"q{i + 1}", "type": "revolute", "parent": links[i], "child": links[i + 1],
                    "axis": [0, 1, 0] if i % 2 else [0, 0, 1], "xyz": [0.3 * (i > 0), 0, 0.1]} for i in range(3)],
        "links": [{"name": "base"}, *({"name": n, "mass": "m1", "com": [0.15, 0, 0],
                                       "inertia": {"ixx": 0.01, "iyy": 0.02, "izz": 0.02}} for n in links[1:])],
        "frames": {texts[0]: {"parent": links[3], "xyz": [0.2, 0, 0]},
                   texts[4]: {"parent": links[2], "xyz": [0, 0.1, 0]},
                   texts[5]: {"parent": links[1], "xyz": [0, 0, 0.1]}},
    }
    path = folder / "chain.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=False))
    return path


def _urdf_file(folder: Path, marker: Path) -> Path:
    """A URDF robot whose robot, link and joint names are the payloads (XML escapes them; NUL, which XML cannot hold,
    is left out)."""
    texts = [t.replace("\x00", "") for t in payloads(marker)]
    robot = ET.Element("robot", name=texts[0])
    links = ["base_link", *texts[1:]]
    for k, name in enumerate(links):
        link = ET.SubElement(robot, "link", name=name)
        if k:
            inertial = ET.SubElement(link, "inertial")
            ET.SubElement(inertial, "origin", xyz="0.1 0 0", rpy="0 0 0")
            ET.SubElement(inertial, "mass", value="1.2")
            ET.SubElement(inertial, "inertia", ixx="0.01", ixy="0", ixz="0", iyy="0.02", iyz="0", izz="0.02")
    for k in range(1, len(links)):
        joint = ET.SubElement(robot, "joint", name=f"{texts[k % len(texts)]} j{k}", type="revolute")
        ET.SubElement(joint, "parent", link=links[k - 1])
        ET.SubElement(joint, "child", link=links[k])
        ET.SubElement(joint, "origin", xyz="0.2 0 0.05", rpy="0 0 0")
        ET.SubElement(joint, "axis", xyz="0 1 0" if k % 2 else "0 0 1")
        ET.SubElement(joint, "limit", lower="-3", upper="3", effort="10", velocity="5")
    path = folder / "robot.urdf"
    ET.ElementTree(robot).write(path, encoding="unicode")
    return path


def _first_order_file(folder: Path, marker: Path) -> Path:
    document = {"name": payloads(marker)[0], "kind": "first_order", "states": ["x", "y"], "inputs": ["u"],
                "parameters": {"k": 2.0, "c": 0.5}, "dynamics": {"x": "-k*x + y", "y": "-c*y*x + u"},
                "outputs": {"z": "x + y"}}
    path = folder / "first.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _diagram_file(folder: Path, marker: Path) -> Path:
    document = {"name": payloads(marker)[0], "kind": "diagram", "blocks": {"plant": "joint", "ctrl": "first.yaml"},
                "connect": ["ctrl.z -> plant.u", "plant.q -> ctrl.u"], "outputs": {payloads(marker)[1]: "plant.q"}}
    path = folder / "diagram.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _python_models(marker: Path) -> list[Any]:
    """The same payloads through the Python API: a symbolic model's name, a chain's name, links and frames, a
    Lagrangian model's points, a diagram's name, inputs and outputs (NUL included: Python strings hold it)."""
    texts = payloads(marker)
    symbolic = robodyn.SymbolicSystem(["x"], ["u"], {"x": "-k*x + u"}, parameters={"k": 3.0}, name=texts[3])
    chain = ChainSystem(
        [{"name": "q1", "type": "revolute", "parent": texts[2], "child": texts[3], "axis": [0, 0, 1]}],
        [{"name": texts[2]}, {"name": texts[3], "mass": 2.0, "com": [0.2, 0, 0],
                               "inertia": {"ixx": 0.01, "iyy": 0.02, "izz": 0.02}}],
        name=texts[0], frames={texts[1]: {"parent": texts[3], "xyz": [0.4, 0, 0]}})
    pendulum = robodyn.LagrangianSystem(["th"], ["tau"], "m*l**2*th_dot**2/2", "-m*9.81*l*cos(th)",
                                        {"th": "tau"}, parameters={"m": 1.0, "l": 0.7}, name=texts[1],
                                        points={texts[0]: ["l*sin(th)", "0", "-l*cos(th)"]})
    gain = robodyn.SymbolicSystem([], ["err"], {}, outputs={"v": "-kp*err"}, parameters={"kp": 4.0})
    loop = robodyn.Diagram({"plant": robodyn.load("joint"), "gain": gain}, ["plant.q -> gain.err"],
                           inputs={texts[0]: "plant.u"}, outputs={texts[2]: "gain.v"}, name=texts[3])
    return [symbolic, chain, pendulum, loop]


def _load(path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return robodyn.load(str(path))


def _check_export(model: Any, folder: Path, marker: Path) -> None:
    """The export of ``model`` is inert and right (see the module docstring)."""
    export = export_c(model, folder, build=True)  # loads the library: a constructor in it would run now
    assert not marker.exists(), "a constructor from the model's text ran"
    assert export.library is not None
    header, source = folder / f"{export.prefix}.h", folder / f"{export.prefix}.c"
    for path in (header, source):
        assert not PAYLOAD_TOKENS & set(_tokens(_preprocessed(path, folder)))
    done = subprocess.run(["gcc", *STRICT, "-trigraphs", "-c", str(source), "-o", str(folder / "strict.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(export.library.path)], capture_output=True, text=True,
                             check=True).stdout.split()[2::3]
    assert sorted(symbols) == sorted(export.functions)  # nothing else: no symbol, no constructor from the text
    first = header.read_text().splitlines()[0]
    assert f"model '{model.name}'" in uncomment(first)  # the name kept, escaped, and readable back
    _check_numbers(model, export)


def _check_numbers(model: Any, export: Any) -> None:
    """f, and each frame's pose, from the library equal robodyn's: the same operations (1e-13 of the scale)."""
    rng = np.random.default_rng(4)
    x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
    expected = model.f(0.2, x, u)
    assert np.abs(export.library.f(0.2, x, u) - expected).max(initial=0.0) <= 1e-13 * max(1.0, np.abs(expected).max())
    if export.frames:
        kinematics = robodyn.Kinematics(model)
        q = x[:model.n_coordinates]
        for frame in export.frames:
            position = kinematics.pose(q, frame).position
            assert np.abs(export.library.fk(frame, q)[0] - position).max() <= 1e-13 * max(1.0, np.abs(position).max())


@needs_gcc
@pytest.mark.parametrize("kind", ["chain file", "URDF", "first-order file", "diagram file"])
def test_hostile_names_in_model_files_stay_text(kind: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    _first_order_file(tmp_path, marker)
    path = {"chain file": _chain_file, "URDF": _urdf_file, "first-order file": _first_order_file,
            "diagram file": _diagram_file}[kind](tmp_path, marker)
    _check_export(_load(path), tmp_path / "c", marker)


@needs_gcc
def test_hostile_names_through_python_stay_text(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for k, model in enumerate(_python_models(marker)):
        _check_export(model, tmp_path / f"c{k}", marker)


def test_urdf_link_names_as_robots_have_them_still_export(tmp_path: Path) -> None:
    """``base_link``, ``camera/depth``, ``l-arm``: frames with their documented C names, called by frame name."""
    model = _load(_urdf_file(tmp_path, tmp_path / "pwned"))
    export = export_c(model, tmp_path / "c", functions=["f"], frames=["base_link", "camera/depth", "l-arm"])
    assert export.frame_functions == {"base_link": f"{export.prefix}_fk_base_link",
                                      "camera/depth": f"{export.prefix}_fk_camera_depth",
                                      "l-arm": f"{export.prefix}_fk_l_arm"}
    assert export.functions[-3:] == tuple(export.frame_functions.values())


def test_robodyn_export_of_a_hostile_file_and_a_hostile_prefix(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The command writes the hostile file's export (exit 0, escaped); a prefix that is not a safe C name is one line,
    exit 2, nothing written."""
    path = _first_order_file(tmp_path, tmp_path / "pwned")
    code, _, _ = run(capsys, "export", str(path), "--out", str(tmp_path / "c"))
    assert code == 0
    header = next((tmp_path / "c").glob("*.h")).read_text()
    assert "robodyn_pwned" in header and "*/ __attribute__" not in header and "/* model file: first.yaml," in header
    named = tmp_path / "x *\n#error robodyn_pwned ??=\\.yaml"  # the file's name is text too (it cannot hold /)
    shutil.copy(path, named)
    code, _, _ = run(capsys, "export", str(named), "--out", str(tmp_path / "n"), "--prefix", "named")
    header = tmp_path / "n" / "named.h"
    assert code == 0 and not PAYLOAD_TOKENS & set(_tokens(_preprocessed(header, tmp_path / "n")))
    assert "/* model file: x *\\n#error robodyn_pwned ?\\?=\\\\.yaml, sha256 " in header.read_text()
    code, out, _ = run(capsys, "export", str(_chain_file(tmp_path, tmp_path / "pwned")), "--out", str(tmp_path / "k"),
                       "--functions", "f", "--frames", "camera/depth,l-arm,base", "--prefix", "arm")
    assert code == 0 and "C names: frame 'camera/depth' -> arm_fk_camera_depth, frame 'l-arm' -> arm_fk_l_arm\n" in out
    for prefix in ("a */ int x; /*", "new", "NAN", "__x", "arm_", "x\n#define"):
        code, out, err = run(capsys, "export", str(path), "--out", str(tmp_path / "d"), "--prefix", prefix)
        assert code == 2 and out == "" and "not a C identifier safe in C and C++" in one_line(err)
    assert not (tmp_path / "d").exists()


def _refused(capsys: pytest.CaptureFixture[str], folder: Path, document: dict[str, Any]) -> str:
    path = folder / "refused.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(InputError):
        robodyn.load(str(path))
    code, out, err = run(capsys, "export", str(path), "--out", str(folder / "out"))
    assert code == 2 and out == "" and not (folder / "out").exists()
    return one_line(err)


@pytest.mark.parametrize("field", ["states", "inputs", "parameters", "outputs"])
def test_names_that_must_be_identifiers_are_refused_cleanly(field: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A first-order file whose state, input, parameter or output is named by a payload: refused when read (one line
    naming it, exit 2), long before any code."""
    hostile = payloads(tmp_path / "pwned")[0]
    document: dict[str, Any] = {"name": "m", "kind": "first_order", "states": ["x"], "inputs": ["u"],
                                "parameters": {"k": 1.0}, "dynamics": {"x": "-k*x + u"}}
    if field == "states":
        document.update(states=[hostile], dynamics={hostile: "-k + u"})
    elif field == "inputs":
        document.update(inputs=[hostile])
    elif field == "parameters":
        document.update(parameters={hostile: 1.0})
    else:
        document.update(outputs={hostile: "x"})
    assert "not a valid name" in _refused(capsys, tmp_path, document) or field == "states"


def test_hostile_block_names_and_python_names_are_refused_cleanly(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    hostile = payloads(tmp_path / "pwned")[1]
    _refused(capsys, tmp_path, {"name": "d", "kind": "diagram", "blocks": {hostile: "joint"}})
    with pytest.raises(InputError, match="block name"):
        robodyn.Diagram({hostile: robodyn.load("joint")})
    with pytest.raises(InputError, match="not a valid name"):
        robodyn.SymbolicSystem([hostile], [], {hostile: "0"})
    with pytest.raises(InputError, match="not a valid name"):
        robodyn.SymbolicSystem(["x"], [], {"x": "-x"}, parameters={hostile: 1.0})
