"""Every code block of the documentation runs: Python blocks in order, one process per page; ``pycon`` blocks
as doctests (outputs compared); YAML blocks load as models (fragments without ``kind:`` are added to the
Puma 560 chain file, whose links and inputs they name); the API reference is the one its generator writes.

JSON blocks are outputs shown to the reader (with placeholders), not code, and are not run.
"""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import robodyn

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def python_pages(second_half: bool) -> list[Path]:
    """The pages with Python blocks, in two halves by name (a-k here, l-z in test_docs_second_half.py): the suite
    gives each test file whole to one worker, and the pages' scripts take two minutes in all."""
    return [p for p in PAGES if _blocks(p, "python") and (p.name >= "l") == second_half]


@pytest.mark.parametrize("page", python_pages(second_half=False), ids=lambda p: p.name)
def test_python_blocks_run(page: Path, tmp_path: Path) -> None:
    run_page_blocks(page, tmp_path)


def run_page_blocks(page: Path, tmp_path: Path) -> None:
    """A page's blocks run as one script outside the project, any warning an error (a reader running the page sees
    what the page says, nothing more). The working folder has the project's ``examples`` and ``tests`` folders, as
    pages name files (``examples/pendulum.yaml``) from the project root; the script lives elsewhere, so that a
    page cannot import them as packages (``from examples...`` runs only inside the project)."""
    work, scripts = tmp_path / "work", tmp_path / "scripts"
    work.mkdir()
    scripts.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    (work / "tests").symlink_to(ROOT / "tests")
    script = scripts / f"{page.stem}_blocks.py"
    script.write_text("\n".join(_blocks(page, "python")), encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True, text=True, cwd=work,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Exception ignored" not in done.stderr, done.stderr[-3000:]  # a warning raised where it cannot propagate


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p, "pycon")], ids=lambda p: p.name)
def test_pycon_blocks_are_doctests(page: Path) -> None:
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for k, block in enumerate(_blocks(page, "pycon")):
        test = parser.get_doctest(block, {}, f"{page.name}[{k}]", str(page), 0)
        result = runner.run(test)
        assert result.failed == 0, f"{page.name} block {k}: {result.failed} of {result.attempted} examples failed"


@pytest.mark.parametrize("page", [p for p in [*PAGES, ROOT / "README.md"] if _blocks(p, "yaml")],
                         ids=lambda p: p.name)
def test_yaml_blocks_load_as_models(page: Path, tmp_path: Path) -> None:
    """... and problem files (``kind: optimal_control``, docs/control.md) load as problems."""
    base = (ROOT / "tests" / "data" / "puma560.yaml").read_text(encoding="utf-8")
    for k, block in enumerate(_blocks(page, "yaml")):
        if re.search(r"^kind: optimal_control\b", block, flags=re.M):
            problem_file = tmp_path / f"{page.stem}_{k}.yaml"
            problem_file.write_text(block, encoding="utf-8")
            assert robodyn.load_problem(problem_file).knots >= 2
            continue
        text = block if re.search(r"^kind:", block, flags=re.M) else base.replace("\njoints:", f"\n{block}joints:", 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", robodyn.RobodynWarning)  # the Puma's published link-3 inertia
            model = robodyn.read_model_text(text, f"{page.name}[{k}]")
        assert model.n_states > 0


def test_the_reference_is_up_to_date() -> None:
    from robodyn.reference import reference_text

    written = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert written == reference_text(), "stale: run python -m robodyn.reference > docs/reference.md"


def test_every_command_and_option_is_documented_in_cli_md() -> None:
    """docs/cli.md has a section per command of the parser (and no section for a command that does not exist),
    and each section names every option of its command (issue 23: the page had fallen behind the parser)."""
    import argparse

    from robodyn.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    sections: dict[str, str] = {}
    for section in re.split(r"^## ", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), flags=re.M)[1:]:
        named = re.match(r"`robodyn (\w+)", section)
        if named:
            sections[named.group(1)] = sections.get(named.group(1), "") + section
    assert set(sections) == set(commands), (set(commands) - set(sections), set(sections) - set(commands))
    preamble = re.split(r"^## ", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), flags=re.M)[0]
    every = {"--param", "--base"}  # options of every command that takes a model: documented once, before the sections
    assert all(o in preamble for o in every), sorted(o for o in every if o not in preamble)
    for name, parser in commands.items():
        options = {o for a in parser._actions for o in a.option_strings if o.startswith("--")} - {"--help", *every}
        assert all(o in sections[name] for o in options), (name, sorted(o for o in options if o not in sections[name]))


def test_every_public_name_is_in_the_reference() -> None:
    """Issue 23: signal classes, robodyn.results.plots, ChainSystem and its inverse_dynamics were found only by
    dir()."""
    from robodyn.reference import public_names

    written = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### `(\w+)", written, flags=re.M))
    missing = {module: [n for n in names if n not in headings] for module, names in public_names().items()}
    assert not any(missing.values()), missing
    for method in ("inverse_dynamics", "coriolis_matrix"):  # a chain's, from its mixins
        assert f"- `{method}(" in written.split("### `ChainSystem`")[1].split("\n### ")[0], method


def test_every_method_is_in_the_method_row_of_cli_md() -> None:
    """docs/dev/architecture.md's recipe for a method names docs/cli.md's ``--method`` row: it lists every method
    of the registry (and its aliases), each fixed-step method also in the ``--dt`` row."""
    from robodyn.integrate.methods.registry import ALIASES, METHOD_NAMES, names

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    method_row = next(line for line in text.splitlines() if line.startswith("| `--method M` |"))
    dt_row = next(line for line in text.splitlines() if line.startswith("| `--dt H` |"))
    assert not [m for m in (*METHOD_NAMES, *ALIASES) if f"`{m}`" not in method_row], method_row
    assert not [m for m in names("fixed") if f"`{m}`" not in dt_row], dt_row


def _named_paths(text: str) -> set[str]:
    """The file and folder paths a page names in code spans (``integrate/methods/registry.py``, ``mechanisms/chain/``,
    ``codegen/llvm/native.native_kernel``: the module of a name), placeholders (``<kind>``) and cache layouts aside."""
    paths = set()
    for span in re.findall(r"`([^`\s]+)`", text):
        span = span.split("::")[0].rstrip(".,:;")
        if "/" not in span or "<" in span or "*" in span or not re.fullmatch(r"[\w./]+", span):
            continue
        if not span.endswith((".py", ".md", "/")) and not re.fullmatch(r"[\w/]+/\w+\.\w+", span):
            continue  # a cache layout (``objects/``, ``runs/``) is a folder and ends with "/": checked below
        paths.add(span)
    return paths


@pytest.mark.parametrize("page", ["architecture.md", "simulation.md", "security.md", "ball-joints.md"])
def test_the_developer_pages_name_files_that_exist(page: str) -> None:
    """docs/dev names sources relative to src/robodyn (or the project: ``tests/...``, ``docs/cli.md``); after the
    re-layout of issue 46 every one of them must still be where the page says."""
    source = ROOT / "src" / "robodyn"
    folders = {p.name for p in source.rglob("*") if p.is_dir()}  # a subfolder named in its folder's row: ``light/``
    missing = []
    for path in sorted(_named_paths((ROOT / "docs" / "dev" / page).read_text(encoding="utf-8"))):
        module = re.sub(r"\.\w+$", "", path) if not path.endswith((".py", ".md", "/")) else path
        candidates = [module, f"{module}.py", module.removeprefix("robodyn/"), module.removeprefix("src/robodyn/")]
        if path.count("/") == 1 and path.endswith("/") and path[:-1] in folders:
            continue
        if not any((base / c).exists() or (base / f"{c}.py").exists() for base in (source, ROOT, ROOT / "docs")
                   for c in candidates):
            missing.append(path)
    cache = {"objects/", "runs/", "models/", "package/", "link/"}  # the private cache's folders, not the project's
    assert not [m for m in missing if m not in cache], missing
