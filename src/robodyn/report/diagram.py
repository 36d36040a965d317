"""The report's view of a block diagram: the drawing (SVG: blocks, their ports and the named wires) and, at an
operating point, each loop opened where the model says (``block_diagram()["loops"]``): its Bode diagram and
margins, from ``linearize(model, x, u, open=port)``."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from robodyn.base.errors import RobodynError
from robodyn.display.page import figure, number

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["diagram_section", "diagram_svg", "loops_section"]

_WIDTH: Final = 170  # a block's box
_GAP: Final = 110  # between columns
_ROW: Final = 18  # per port
_MARGIN: Final = 90


def _columns(structure: Mapping[str, Any]) -> dict[str, int]:
    """Each block's column: its distance over wires from the blocks the diagram's inputs drive."""
    blocks = list(structure["blocks"])
    start = {port.split(".")[0] for ports in structure["inputs"].values() for port in ports} or {blocks[0]}
    column = dict.fromkeys(start, 0)
    frontier = list(start)
    while frontier:
        following = []
        for block in frontier:
            for source, _, target, _ in structure["wires"]:
                if source == block and target not in column:
                    column[target] = column[block] + 1
                    following.append(target)
        frontier = following
    for block in blocks:
        column.setdefault(block, 0)
    return column


def diagram_svg(structure: Mapping[str, Any]) -> str:
    """The diagram drawn as SVG: boxes (name, model, inputs on the left, outputs on the right), forward wires as
    curves, wires that go back (feedback) routed below, the diagram's inputs and outputs at the sides."""
    blocks = structure["blocks"]
    column = _columns(structure)
    place: dict[str, tuple[float, float, float]] = {}  # block -> x, y, height
    heights: dict[int, float] = {}
    for block, info in blocks.items():
        c = column[block]
        height = 34.0 + _ROW * max(len(info["inputs"]), len(info["outputs"]), 1)
        y = heights.get(c, 20.0)
        place[block] = (_MARGIN + c * (_WIDTH + _GAP), y, height)
        heights[c] = y + height + 30
    bottom = max(heights.values())

    def port(block: str, name: str, side: str) -> tuple[float, float]:
        x, y, _ = place[block]
        names = blocks[block]["inputs" if side == "in" else "outputs"]
        return (x if side == "in" else x + _WIDTH), y + 34 + _ROW * names.index(name) + _ROW / 2 - 4

    parts: list[str] = []
    lanes = 0
    for source, out, target, inlet in structure["wires"]:
        x0, y0 = port(source, out, "out")
        x1, y1 = port(target, inlet, "in")
        if x1 > x0 + 10:
            middle = (x0 + x1) / 2
            path = f"M{x0:.0f},{y0:.0f} C{middle:.0f},{y0:.0f} {middle:.0f},{y1:.0f} {x1:.0f},{y1:.0f}"
        else:  # feedback: out to the right, down to a lane below the blocks, back left, up into the input
            lanes += 1
            lane = bottom + 14 * lanes
            path = (f"M{x0:.0f},{y0:.0f} H{x0 + 12 + 4 * lanes:.0f} V{lane:.0f} H{x1 - 12 - 4 * lanes:.0f} "
                    f"V{y1:.0f} H{x1:.0f}")
        title = html.escape(f"{source}.{out} -> {target}.{inlet}")
        parts.append(f'<path d="{path}" fill="none" stroke="#555" stroke-width="1.3" marker-end="url(#arrow)">'
                     f"<title>{title}</title></path>")
    for block, info in blocks.items():
        x, y, height = place[block]
        sampled = f" (T = {number(info['sample'])} s)" if info.get("sample") else ""
        dashes = ' stroke-dasharray="5,3"' if sampled else ""
        parts.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{_WIDTH}" height="{height:.0f}" rx="6" fill="#eef3fb" '
                     f'stroke="#345" stroke-width="1.2"{dashes}/>')
        parts.append(f'<text x="{x + _WIDTH / 2:.0f}" y="{y + 15:.0f}" text-anchor="middle" font-weight="bold">'
                     f"{html.escape(block)}</text>")
        parts.append(f'<text x="{x + _WIDTH / 2:.0f}" y="{y + 28:.0f}" text-anchor="middle" font-size="10" '
                     f'fill="#555">{html.escape(str(info["model"]) + sampled)}</text>')
        for name in info["inputs"]:
            px, py = port(block, name, "in")
            parts.append(f'<text x="{px + 4:.0f}" y="{py + 4:.0f}" font-size="10">{html.escape(name)}</text>')
        for name in info["outputs"]:
            px, py = port(block, name, "out")
            parts.append(f'<text x="{px - 4:.0f}" y="{py + 4:.0f}" font-size="10" text-anchor="end">'
                         f"{html.escape(name)}</text>")
    for label, ports in structure["inputs"].items():
        for target in ports:
            block, name = target.split(".", 1)
            x1, y1 = port(block, name, "in")
            parts.append(f'<path d="M{x1 - 60:.0f},{y1:.0f} H{x1:.0f}" stroke="#a33" stroke-width="1.3" '
                         f'marker-end="url(#arrow)"/><text x="{x1 - 62:.0f}" y="{y1 + 4:.0f}" text-anchor="end" '
                         f'fill="#a33">{html.escape(label)}</text>')
    for label, source in structure["outputs"].items():
        block, name = source.split(".", 1)
        x0, y0 = port(block, name, "out")
        parts.append(f'<path d="M{x0:.0f},{y0:.0f} h50" stroke="#3a3" stroke-width="1.3" marker-end="url(#arrow)"/>'
                     f'<text x="{x0 + 54:.0f}" y="{y0 + 4:.0f}" fill="#3a3">{html.escape(label)}</text>')
    width = max(x for x, _, _ in place.values()) + _WIDTH + 2 * _MARGIN
    height = bottom + 14 * lanes + 20
    marker = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
              'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="block-diagram" width="{width:.0f}" height="{height:.0f}"'
            f' viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12">{marker}'
            + "".join(parts) + "</svg>")


def diagram_section(structure: Mapping[str, Any]) -> str:
    """The section that draws the diagram, with its wires listed."""
    wires = "".join(f"<li><code>{html.escape(f'{a}.{p} -> {b}.{q}')}</code></li>"
                    for a, p, b, q in structure["wires"])
    loops = ", ".join(f"<code>{html.escape(port)}</code>" for port in structure["loops"]) or "none"
    return (f"<h2>Block diagram</h2><div class=\"figure\">{diagram_svg(structure)}<div>blocks (dashed: sampled), "
            f"wires, the diagram's inputs (red) and outputs (green)</div></div><p>Wires:</p><ul>{wires}</ul>"
            f"<p>Loops opened at each operating point: {loops}.</p>")


def loops_section(model: ModelContract, point: Any, record: dict[str, Any], pictures: list[str]) -> str:
    """Each loop of the diagram opened at the point: margins (text and record) and its Bode diagram."""
    from robodyn.linearization.linearize import linearize

    structure = model.block_diagram()
    if not structure or not structure["loops"]:
        return ""
    rows, record["loops"] = [], {}
    for port in structure["loops"]:
        try:
            loop = linearize(model, point.x, point.u, open=port)
            margins = loop.margins()
        except RobodynError as exc:
            rows.append(f"<li><code>{html.escape(port)}</code>: {html.escape(str(exc))}</li>")
            continue
        record["loops"][port] = margins.to_dict()
        notes = "".join(f"<br>{html.escape(note)}" for note in margins.notes)
        rows.append(f"<li><code>{html.escape(port)}</code>: {html.escape(margins.text())}{notes}</li>")
        pictures.append(figure(loop.bode(), f"Bode diagram of the loop opened at {port} (L, negative feedback)"))
    return ("<h3>Loops</h3><p>Each loop broken at a port, the others closed (L with returned = -L injected):</p>"
            f"<ul>{''.join(rows)}</ul>")
