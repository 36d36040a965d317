"""robodyn's table of MJCF attributes against the schema the installed MuJoCo prints (``mj_printSchema``)."""

from __future__ import annotations

import re

import pytest

from robodyn.mechanisms.mjcf.schema import ACTUATORS, ATTRIBUTES, BODY_CHILDREN, SECTIONS

mujoco = pytest.importorskip("mujoco")

PATHS = {"mujoco": "mujoco", "compiler": "mujoco/compiler", "option": "mujoco/option", "flag": "mujoco/option/flag",
         "body": "mujoco/(world)body", "fixed": "mujoco/tendon/fixed", "fixed/joint": "mujoco/tendon/fixed/joint",
         "mesh": "mujoco/asset/mesh",
         **{tag: f"mujoco/(world)body/{tag}" for tag in ("inertial", "joint", "freejoint", "geom", "site", "camera",
                                                         "light")},
         **{tag: f"mujoco/actuator/{tag}" for tag in ACTUATORS if tag in ATTRIBUTES}}


def printed_schema() -> dict[str, set[str]]:
    """Element path -> attributes, from MuJoCo's printed schema (indented names, attributes wrapped over lines)."""
    entries: list[list] = []
    for line in mujoco.mj_printSchema(False, False).splitlines():
        match = re.match(r"^( *)(\S+) \((.)\)\s*(.*)$", line)
        if match and len(match.group(1)) < 28:
            entries.append([len(match.group(1)) // 3, match.group(2), match.group(4).split()])
        elif entries:
            entries[-1][2] += line.split()
    paths, stack = {}, []
    for depth, name, attributes in entries:
        stack = [*stack[:depth], name]
        paths["/".join(stack)] = set(attributes)
    return paths


def test_the_attribute_table_is_mujocos() -> None:
    """Every attribute robodyn accepts is MuJoCo's (it names none MuJoCo would refuse); one a later MuJoCo adds is
    refused by robodyn as unknown until the table has it (the table was written from MuJoCo 4.0.1's, all of it)."""
    schema = printed_schema()
    assert set(PATHS) == set(ATTRIBUTES)
    for key, path in PATHS.items():
        assert ATTRIBUTES[key] <= schema[path], key
        if mujoco.__version__ == "4.0.1":
            assert ATTRIBUTES[key] == schema[path], key


def test_the_sections_and_body_children_are_mujocos() -> None:
    schema = printed_schema()
    sections = {path.split("/")[1] for path in schema if path.count("/") == 1}
    assert sections | {"include", "worldbody"} == SECTIONS | {"(world)body"}
    children = {path.split("/")[2] for path in schema
                if path.startswith("mujoco/(world)body/") and path.count("/") == 2}
    assert children <= BODY_CHILDREN  # frame, replicate and composite: MuJoCo reads them without printing them
