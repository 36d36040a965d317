"""A newcomer adds a command by docs/dev/architecture.md's recipe, literally, and it works.

The recipe ("How to add ... A CLI command") names three files: the handler and parser in the family's module
(``cli/models.py`` for a command about a model), the command's name in ``COMMANDS`` of ``cli/commands.py`` and its
section in ``docs/cli.md``. This test follows it in a copy of ``src/robodyn`` (and of ``docs/cli.md``) for
``robodyn states MODEL [--json]`` (the state names, one per line), checks that exactly those files changed, then runs
the copy in a subprocess: the command prints the names, ``--json`` its object, a bad model is one line on stderr with
exit code 2, the command table still names what each module adds, and docs/cli.md documents every command and option
(the checks of tests/cli/test_cli.py and tests/test_docs.py, on the copy). If this test fails, the recipe or the code
it describes has drifted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE_FILES = {"src/robodyn/cli/models.py", "src/robodyn/cli/commands.py", "docs/cli.md"}

_HANDLER = '''

# --- states ------------------------------------------------------------------------------------------
def _cmd_states(args: argparse.Namespace) -> int:
    model = _model(args, numeric=True)
    print(json.dumps({"model": model.name, "states": list(model.states)}) if args.json else "\\n".join(model.states))
    return 0
'''

_PARSER = '''    states = commands.add_parser("states", help="the names of a model's states, one per line")
    _add_model(states)
    _add_json(states)
    states.set_defaults(run=_cmd_states)

'''

_SECTION = '''## `robodyn states MODEL [--json] [--param ...]`

Prints the names of the model's states, one per line, in the order of its state vector. `--json` prints
`{"model": "pendulum", "states": ["theta", "theta_dot"]}`.

'''

#: Run in the copy: the command's outputs, then the checks of the command table and of docs/cli.md.
_RUN = r'''
import argparse, json, re, subprocess, sys
from pathlib import Path
from robodyn.cli.main import COMMANDS, build_parser

def robodyn(*argv):
    done = subprocess.run([sys.executable, "-c", "import sys; from robodyn.cli import main; sys.exit(main())", *argv],
                          capture_output=True, text=True)
    return [done.returncode, done.stdout, done.stderr]

def choices(parser):
    return list(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)

commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
sections = {}
for section in re.split(r"^## ", Path(sys.argv[1]).read_text(encoding="utf-8"), flags=re.M)[1:]:
    named = re.match(r"`robodyn (\w+)", section)
    if named:
        sections[named.group(1)] = sections.get(named.group(1), "") + section
undocumented = {name: sorted(o for a in parser._actions for o in a.option_strings if o.startswith("--")
                             and o not in ("--help", "--param", "--base") and o not in sections.get(name, ""))
                for name, parser in commands.items()}
print(json.dumps({
    "text": robodyn("states", "pendulum"), "json": robodyn("states", "double_pendulum", "--json"),
    "bad": robodyn("states", "no_such_model"),
    "table": choices(build_parser()) == [name for _, names in COMMANDS for name in names],
    "alone": choices(build_parser("states")),
    "documented": sorted(set(sections) ^ set(commands)), "undocumented": {k: v for k, v in undocumented.items() if v},
}))
'''


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path`` (the recipe's anchor must be there, once)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def follow_the_recipe(copy: Path) -> None:
    """docs/dev/architecture.md, "A CLI command", for ``robodyn states MODEL [--json]``."""
    cli = copy / "src" / "robodyn" / "cli"
    models = cli / "models.py"
    # 1. the family's module: its docstring names the command, a handler, and the parser in add_commands
    _edit(models, "The model commands: show, classify,", "The model commands: show, states, classify,")
    _edit(models, "\n\n# --- classify ---", _HANDLER + "\n\n# --- classify ---")
    anchor = '    classify = commands.add_parser("classify"'
    _edit(models, anchor, _PARSER + anchor)
    # 2. the command table of cli/commands.py, in the order add_commands adds them
    _edit(cli / "commands.py", '("models", ("show", "classify",', '("models", ("show", "states", "classify",')
    # 3. docs/cli.md: a section naming every option
    _edit(copy / "docs" / "cli.md", "## `robodyn classify MODEL", _SECTION + "## `robodyn classify MODEL")


def test_the_command_recipe_touches_only_its_files_and_works(tmp_path: Path) -> None:
    recipe = (ROOT / "docs" / "dev" / "architecture.md").read_text(encoding="utf-8")
    paragraph = recipe.split("**A CLI command.**")[1].split("\n\n**")[0]
    for named in ("cli/models.py", "add_commands", "set_defaults(run=", "COMMANDS", "cli/commands.py", "docs/cli.md",
                  "cli/args.py", "tests/cli/", "test_newcomer_command.py"):
        assert named in paragraph, f"the recipe no longer says {named!r}: update it and this test together"

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "src" / "robodyn", copy / "src" / "robodyn",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "cli.md", copy / "docs" / "cli.md")
    before = _files(copy)
    follow_the_recipe(copy)
    after = _files(copy)
    assert set(after) == set(before), "the recipe adds no file"
    assert {name for name in after if after[name] != before[name]} == RECIPE_FILES

    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "ROBODYN_CACHE_DIR": str(tmp_path / "cache"),
           "OPENBLAS_NUM_THREADS": "1"}
    env.pop("ROBODYN_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", _RUN, str(copy / "docs" / "cli.md")], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert found["text"] == [0, "theta\ntheta_dot\n", ""]
    code, out, err = found["json"]
    assert (code, err) == (0, "")
    assert json.loads(out) == {"model": "double_pendulum", "states": ["theta1", "theta2", "theta1_dot", "theta2_dot"]}
    code, out, err = found["bad"]
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("robodyn: error: "), found["bad"]
    assert "no_such_model" in err and "Traceback" not in err
    assert found["table"] is True, "COMMANDS of cli/commands.py no longer names what cli/models.py adds"
    assert found["alone"] == ["states"], "main builds only the named command's parser"
    assert found["documented"] == [], "docs/cli.md: a section per command, none for a command that does not exist"
    assert found["undocumented"] == {}, "docs/cli.md: each section names every option of its command"
