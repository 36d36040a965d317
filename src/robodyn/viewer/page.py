"""One self-contained HTML page: the 3-D library, robodyn's viewer script and the scene, all written into the file.

Nothing is fetched when the page opens: three.js comes from an installed Python package (:data:`LIBRARIES`; the
choice is measured in benchmarks/RESULTS.md, "Issue 49: the viewer's 3-D library") and is written into the page,
as is robodyn's own script (``viewer.js`` beside this module). The scene is JSON in a
``<script type="application/json">`` block, read with ``JSON.parse``: every ``<``, ``>`` and ``&`` in it is
written as a ``\\u`` escape, so no text of the model (a link's name, a colour) can close the block or become
markup; the title is HTML-escaped. A Content-Security-Policy forbids every request but inline data (no
``connect-src``, ``img-src`` or ``script-src`` beyond the page itself).
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any, Final

from robodyn.base.errors import InputError

__all__ = ["DEFAULT_LIBRARY", "LIBRARIES", "library_script", "page_html", "script_safe"]

#: The three.js builds robodyn can write into a page: name -> (package, file in it, what the page reads).
LIBRARIES: Final = {
    "meshcat": ("meshcat", "meshcat/viewer/dist/main.min.js", "three.js inside MeshCat's viewer bundle"),
    "pythreejs": ("pythreejs", "pythreejs/static/three.js", "three.js r97 as pythreejs ships it"),
}
DEFAULT_LIBRARY: Final = "meshcat"
_POLICY: Final = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
                  "connect-src 'none'; worker-src 'none'; base-uri 'none'; form-action 'none'")
_CLOSING: Final = re.compile(r"</(script)", re.IGNORECASE)


def script_safe(text: str) -> str:
    """JavaScript text safe inside ``<script>``: a ``</script`` in it (in a string or a regular expression) is
    written ``<\\/script``, which JavaScript reads the same."""
    return _CLOSING.sub(r"<\\/\1", text).replace("<!--", "<\\!--")


@cache
def library_script(name: str = DEFAULT_LIBRARY) -> str:
    """The JavaScript of the 3-D library ``name`` (:data:`LIBRARIES`) from its installed package."""
    if name not in LIBRARIES:
        raise InputError(f"unknown 3-D library {name!r}: use one of {', '.join(LIBRARIES)}", key="library")
    package, file, _ = LIBRARIES[name]
    try:
        path = Path(str(distribution(package).locate_file(file)))
    except PackageNotFoundError:
        path = None
    if path is None or not path.is_file():
        raise InputError(f"the 3-D view needs the {package} package (which ships three.js): pip install "
                         f"'robodyn[viewer]'", key="library")
    return script_safe(path.read_text(encoding="utf-8"))


@cache
def _viewer_script() -> str:
    return script_safe(resources.files("robodyn.viewer").joinpath("viewer.js").read_text(encoding="utf-8"))


def json_block(data: Any) -> str:
    """``data`` as JSON text that cannot end a ``<script>`` block (``<``, ``>``, ``&`` and the line separators
    escaped as ``\\u`` sequences, which JSON.parse reads back as the same characters)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_STYLE: Final = """
html, body { margin: 0; height: 100%; font: 14px system-ui, sans-serif; }
#robodyn-canvas { position: absolute; inset: 0 0 44px 0; }
#robodyn-bar { position: absolute; left: 0; right: 0; bottom: 0; height: 44px; display: flex; gap: 12px;
  align-items: center; padding: 0 12px; background: #f6f7f9; border-top: 1px solid #ccd; box-sizing: border-box; }
#robodyn-time { flex: 1; }
body.robodyn-run #robodyn-canvas { bottom: 204px; }
#robodyn-plot { position: absolute; left: 0; width: 100%; bottom: 44px; height: 160px; display: none; }
body.robodyn-run #robodyn-plot { display: block; }
#robodyn-title { position: absolute; left: 12px; top: 8px; color: #333; pointer-events: none; }
body.robodyn-bare #robodyn-bar, body.robodyn-bare #robodyn-plot { display: none; }
body.robodyn-bare #robodyn-canvas { inset: 0; }
"""


def page_html(scene: dict[str, Any], *, title: str, library: str = DEFAULT_LIBRARY, trajectory: bool = False,
              target: bool = False, com: bool = False, stills: bool = False, contacts: bool = False) -> str:
    """The page of ``scene`` (robodyn.viewer.scene.SceneData.as_json); ``trajectory`` shows the time slider, the
    play button and the plots, ``stills`` only the slider (stepping through configurations: operating points),
    ``target`` the target's toggle, ``com`` the centre of mass's, ``contacts`` the contacts' (points and forces)."""
    hidden = "" if trajectory else " hidden"
    slider = "" if trajectory or stills else " hidden"
    toggles = ['<label><input type="checkbox" id="robodyn-frames"> frames</label>']
    if com:
        toggles.append('<label><input type="checkbox" id="robodyn-com"> centre of mass</label>')
    if contacts:
        toggles.append('<label><input type="checkbox" id="robodyn-contacts" checked> contacts</label>')
    if target:
        toggles.append('<label><input type="checkbox" id="robodyn-target" checked> target</label>')
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>", f"<style>{_STYLE}</style>", "</head>",
        '<body class="robodyn-run">' if trajectory else "<body>", '<div id="robodyn-canvas"></div>',
        '<canvas id="robodyn-plot"></canvas>', f'<div id="robodyn-title">{html.escape(title)}</div>',
        '<div id="robodyn-bar">', f'<button id="robodyn-play"{hidden}>play</button>',
        f'<input type="range" id="robodyn-time" min="0" max="0" value="0" step="1"{slider}>',
        '<span id="robodyn-clock"></span>', *toggles, "</div>",
        f'<script id="robodyn-scene" type="application/json">{json_block(scene)}</script>',
        f"<script>{library_script(library)}</script>", f"<script>{_viewer_script()}</script>", "</body>", "</html>",
        ""])
