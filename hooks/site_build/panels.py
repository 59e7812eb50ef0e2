"""Interactive panels on a page: ``{{ panel: NAME }}`` writes the panel's HTML from its description.

A panel's description is ``docs/panels/NAME.yml`` (excluded from the built site in mkdocs.yml):
what the panel shows before any script runs, as data, from which ``panel_template`` writes the
panel's element, ``data-panel="NAME"``, with its controls, readouts and drawing area. Its numbers
are ``{{ calc ... }}`` markers, computed by posenc at build time like those of the page, so the
page without JavaScript shows correct values. ``docs/javascripts/panels.js`` wires the element
once a script registers ``NAME``.

A description is a mapping with these keys (``?`` marks the optional ones):

``title``
    The panel's title, which names its group for assistive technology.
``nojs`` or ``note``
    ``nojs``: what the page without JavaScript shows instead of working controls. ``note``: a
    remark under the title, for a ``scripted`` panel, which the page without JavaScript hides.
``scripted?``
    ``true`` for a panel hidden without JavaScript (the class ``posenc-widget--scripted``).
``anchor?``
    An ``id`` for the panel's element, so that links can point at it.
``layout?``
    ``stacked`` (the default): controls, readouts, drawing, one under the other. ``beside``: on a
    wide panel the controls in a column beside the drawing; on a narrow one the drawing above the
    controls, kept in view while they scroll (the class ``posenc-widget--beside``).
``controls``
    A list; each entry is a slider (``param``, ``label``, ``min``, ``max``, ``step``, ``value``,
    ``shown``: the value as the label shows it; ``id?``, the input's, ``NAME-PARAM`` unless
    given) or a group of buttons (``param``, ``legend``, ``choices``: each a value or a mapping
    of ``value`` and ``label``, ``value``: the one pressed at first; ``id?``, the legend's,
    ``NAME-PARAM`` unless given; ``wide?``: the group takes a row of its own).
``readouts``
    A list of ``key``, ``label`` and ``value``, the starting number (usually a ``calc`` marker).
``formula?``
    A line under the readouts that the script rewrites: a mapping of ``text`` (its key) and
    ``value`` for a line rewritten whole, or a list of parts, each words or such a mapping.
``reserve_drawing?``
    ``true`` to keep the drawing's height before the script draws (no shift of the page).
``table?``
    A table the script fills under the drawing: ``caption`` and ``columns`` (the headings).
``palette?``
    A list of the figure helper's colour concepts the panel draws (``method``, ``family``,
    ``side``...): each of its colours becomes a CSS property on the panel's element,
    ``--posenc-<concept>-<key>`` (``posenc.site.plotting.palette_css``), so the script draws a
    method in the colour the figures give it without typing the colour again.

Texts may hold inline HTML (``<code>``, ``<sub>``) and markers but no line break: a blank line
would end Markdown's HTML block. A malformed description stops the build, naming its file and key.
"""

from __future__ import annotations

import html
import re
from importlib import metadata
from typing import Any

import yaml
from mkdocs.exceptions import PluginError

from . import paths
from .kept import Kept

NAME = re.compile(r"[a-z][a-z0-9-]*")
KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# A panel marker as a page writes it, for finding the panels of a page without expanding it.
PANEL_MARKER = re.compile(r"(?<!\\)\{\{\s*panel\s*:\s*(?P<name>[^}\s]*)\s*\}\}")

PANEL_KEYS = {
    "title": True,
    "nojs": False,
    "note": False,
    "scripted": False,
    "anchor": False,
    "layout": False,
    "controls": True,
    "readouts": True,
    "formula": False,
    "reserve_drawing": False,
    "table": False,
    "palette": False,
}
SLIDER_KEYS = {
    "param": True,
    "label": True,
    "min": True,
    "max": True,
    "step": True,
    "value": True,
    "shown": True,
    "id": False,
}
CHOICE_KEYS = {"param": True, "legend": True, "choices": True, "value": True, "id": False, "wide": False}
LAYOUTS = ("stacked", "beside")
READOUT_KEYS = {"key": True, "label": True, "value": True}
PART_KEYS = {"text": True, "value": True}
TABLE_KEYS = {"caption": True, "columns": True}


def panel_dir():
    return paths.DOCS / "panels"


def panel_names() -> list[str]:
    """Every panel that has a description, sorted."""
    return sorted(path.stem for path in panel_dir().glob("*.yml"))


def template_source(name: str) -> str:
    """The repository path of panel ``name``'s description, the source of its HTML."""
    return f"docs/panels/{name}.yml"


def panel_template(name: str) -> str:
    """Panel ``name``'s HTML, written from its description, with its markers not yet expanded."""
    path = panel_dir() / f"{name}.yml"
    if not NAME.fullmatch(name) or not path.is_file():
        known = ", ".join(panel_names())
        raise PluginError(f"unknown panel {name!r} (panels: {known}; a panel is a description docs/panels/NAME.yml)")
    source = template_source(name)
    try:
        description = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise PluginError(f"{source}: not YAML: {error}") from error
    return render_panel(name, description, source)


def panels_of(markdown: str) -> list[str]:
    """The names of the panels ``markdown`` shows, in page order."""
    return [match["name"] for match in PANEL_MARKER.finditer(markdown)]


class _Description:
    """Reads one description, raising an error that names its file and the key at fault."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str):
        raise PluginError(f"{self.source}: {where}: {problem}")

    def mapping(self, value: Any, keys: dict[str, bool], where: str) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"must be a mapping of {', '.join(keys)}")
        for key in value:
            if key not in keys:
                self.fail(f"{where}.{key}" if where else str(key), f"unknown key (allowed: {', '.join(keys)})")
        for key, required in keys.items():
            if required and key not in value:
                self.fail(f"{where}.{key}" if where else key, "missing")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(where, "must be a text")
        if "\n" in value:
            self.fail(where, "must be one line (a blank line would end the panel's HTML block)")
        return value

    def key(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not KEY.fullmatch(value):
            self.fail(where, f"must be a name of letters, digits, - and _, not {value!r}")
        return value

    def flag(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(where, "must be true or false")
        return value

    def number(self, value: Any, where: str) -> int | float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(where, f"must be a number, not {value!r}")
        return value

    def items(self, value: Any, where: str) -> list:
        if not isinstance(value, list) or not value:
            self.fail(where, "must be a list of at least one entry")
        return value


def _number(value: int | float) -> str:
    return str(value) if isinstance(value, int) else format(value, "g")


def _on_grid(value: float, low: float, step: float) -> bool:
    steps = (value - low) / step
    return abs(steps - round(steps)) < 1e-9


def render_panel(name: str, description: Any, source: str) -> str:
    """The HTML of panel ``name`` from its ``description``; errors name ``source`` and the key."""
    d = _Description(source)
    spec = d.mapping(description, PANEL_KEYS, "")
    scripted = d.flag(spec.get("scripted", False), "scripted")
    # A scripted panel is hidden without JavaScript, so it has no words for that page.
    note_key, other = ("note", "nojs") if scripted else ("nojs", "note")
    if other in spec:
        d.fail(other, f"not for a panel with scripted: {str(scripted).lower()} (use {note_key})")
    if note_key not in spec:
        d.fail(note_key, "missing")
    classes = "posenc-widget posenc-widget--scripted" if scripted else "posenc-widget"
    layout = d.text(spec.get("layout", "stacked"), "layout")
    if layout not in LAYOUTS:
        d.fail("layout", f"must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if layout != "stacked":
        classes += f" posenc-widget--{layout}"
    anchor = f' id="{html.escape(d.key(spec["anchor"], "anchor"))}"' if "anchor" in spec else ""
    style = _palette(d, spec["palette"]) if "palette" in spec else ""
    title_id = f"try-{name}"
    lines = [
        f'<div class="{classes}"{anchor} data-panel="{name}"{style} role="group" aria-labelledby="{title_id}">',
        f'<p class="posenc-widget__title" id="{title_id}">{d.text(spec["title"], "title")}</p>',
        f'<p class="posenc-widget__{note_key}">{d.text(spec[note_key], note_key)}</p>',
        '<div class="posenc-widget__controls">',
    ]
    params: set[str] = set()
    for index, control in enumerate(d.items(spec["controls"], "controls")):
        where = f"controls[{index}]"
        if not isinstance(control, dict):
            d.fail(where, "must be a mapping")
        if "param" not in control:
            d.fail(f"{where}.param", "missing")
        param = d.key(control["param"], f"{where}.param")
        where = f"controls[{param}]"
        if param in params:
            d.fail(where, "a second control of the same param")
        params.add(param)
        if "choices" in control or "legend" in control:
            lines += _choices(d, name, param, d.mapping(control, CHOICE_KEYS, where), where)
        else:
            lines += _slider(d, name, param, d.mapping(control, SLIDER_KEYS, where), where)
    lines += ["</div>", '<dl class="posenc-readouts" aria-live="polite">']
    keys: set[str] = set()
    for index, readout in enumerate(d.items(spec["readouts"], "readouts")):
        readout = d.mapping(readout, READOUT_KEYS, f"readouts[{index}]")
        key = d.key(readout["key"], f"readouts[{index}].key")
        where = f"readouts[{key}]"
        if key in keys:
            d.fail(where, "a second readout of the same key")
        keys.add(key)
        label, value = d.text(readout["label"], f"{where}.label"), d.text(readout["value"], f"{where}.value")
        lines.append(f'<div><dt>{label}</dt><dd data-readout="{key}">{value}</dd></div>')
    lines.append("</dl>")
    if "formula" in spec:
        lines.append(_formula(d, spec["formula"]))
    reserved = d.flag(spec.get("reserve_drawing", False), "reserve_drawing")
    drawing = "posenc-widget__drawing posenc-widget__drawing--reserved" if reserved else "posenc-widget__drawing"
    lines.append(f'<div class="{drawing}" data-drawing></div>')
    if "table" in spec:
        lines += _table(d, spec["table"])
    lines.append("</div>")
    return "\n".join(lines)


def _palette_maker() -> list[str]:
    """What a concept's colours depend on: the site's machinery (``plotting`` and its style file)
    and the versions of Matplotlib and NumPy, which turn the diverging colormap into stops."""
    site_package = paths.ROOT / "posenc" / "site"
    files = sorted(path for path in site_package.iterdir() if path.suffix in (".py", ".mplstyle"))
    return [
        metadata.version("matplotlib"),
        metadata.version("numpy"),
        *(f"{path.name}\0{path.read_text(encoding='utf-8')}" for path in files),
    ]


# Importing the plotting helper imports Matplotlib, a second of every build for the few colours a
# panel names; they are kept by concept instead, as (property, colour) pairs in their order.
PALETTES = Kept("palettes", _palette_maker)


def _palette_css(d: _Description, index: int, concept: Any) -> list[tuple[str, str]]:
    kept = PALETTES.get(str(concept)) if isinstance(concept, str) else None
    if isinstance(kept, list):
        return [(key, value) for key, value in kept]
    from posenc.site import plotting  # Matplotlib's import, only for a concept not kept

    if concept not in plotting.PALETTE_CONCEPTS:
        d.fail(f"palette[{index}]", f"must be one of {', '.join(plotting.PALETTE_CONCEPTS)}, not {concept!r}")
    pairs = list(plotting.palette_css(concept).items())
    PALETTES.put(concept, [list(pair) for pair in pairs])
    return pairs


def _palette(d: _Description, concepts: Any) -> str:
    """The panel element's style attribute: the colours of ``concepts`` as CSS properties."""
    properties: dict[str, str] = {}
    for index, concept in enumerate(d.items(concepts, "palette")):
        properties |= dict(_palette_css(d, index, concept))
    return ' style="' + html.escape("; ".join(f"{key}: {value}" for key, value in properties.items())) + '"'


def _slider(d: _Description, name: str, param: str, control: dict, where: str) -> list[str]:
    low, high, step, value = (d.number(control[k], f"{where}.{k}") for k in ("min", "max", "step", "value"))
    if low > high:
        d.fail(f"{where}.min", f"min {_number(low)} is above max {_number(high)}")
    if step <= 0:
        d.fail(f"{where}.step", f"must be above 0, not {_number(step)}")
    for key, number in (("value", value), ("max", high)):
        if not low <= number <= high:
            d.fail(f"{where}.{key}", f"{_number(number)} is outside [{_number(low)}, {_number(high)}]")
        # The browser snaps a range input to its grid, so a number off it could never be shown.
        if not _on_grid(number, low, step):
            d.fail(f"{where}.{key}", f"{_number(number)} is off the grid {_number(low)} + k * {_number(step)}")
    input_id = html.escape(d.key(control.get("id", f"{name}-{param}"), f"{where}.id"))
    label, shown = d.text(control["label"], f"{where}.label"), d.text(control["shown"], f"{where}.shown")
    return [
        '<div class="posenc-control">',
        f'<label for="{input_id}">{label} <span class="posenc-control__value" data-value-of="{param}"'
        f' aria-hidden="true">{shown}</span></label>',
        f'<input type="range" id="{input_id}" data-param="{param}" min="{_number(low)}" max="{_number(high)}"'
        f' step="{_number(step)}" value="{_number(value)}" autocomplete="off" disabled>',
        "</div>",
    ]


def _choices(d: _Description, name: str, param: str, control: dict, where: str) -> list[str]:
    legend_id = html.escape(d.key(control.get("id", f"{name}-{param}"), f"{where}.id"))
    wide = d.flag(control.get("wide", False), f"{where}.wide")
    pressed = d.text(control["value"], f"{where}.value")
    buttons, values = [], []
    for index, choice in enumerate(d.items(control["choices"], f"{where}.choices")):
        at = f"{where}.choices[{index}]"
        if isinstance(choice, dict):
            choice = d.mapping(choice, {"value": True, "label": True}, at)
            value, label = d.text(choice["value"], f"{at}.value"), d.text(choice["label"], f"{at}.label")
        else:
            value = label = d.text(choice, at)
        if value in values:
            d.fail(at, f"a second choice of the value {value!r}")
        values.append(value)
        buttons.append(
            f'<button type="button" data-param="{param}" data-value="{html.escape(value)}"'
            f' aria-pressed="{str(value == pressed).lower()}" disabled>{label}</button>'
        )
    if pressed not in values:
        d.fail(f"{where}.value", f"{pressed!r} is none of the choices ({', '.join(values)})")
    return [
        '<div class="posenc-control posenc-control--wide">' if wide else '<div class="posenc-control">',
        f'<span class="posenc-control__legend" id="{legend_id}">{d.text(control["legend"], f"{where}.legend")}</span>',
        f'<div class="posenc-choices" role="group" aria-labelledby="{legend_id}">',
        *buttons,
        "</div>",
        "</div>",
    ]


def _formula(d: _Description, formula: Any) -> str:
    # A whole line the script rewrites carries its key itself; otherwise only its parts do.
    if isinstance(formula, dict):
        formula = d.mapping(formula, PART_KEYS, "formula")
        key = d.key(formula["text"], "formula.text")
        return f'<p class="posenc-widget__formula" data-text="{key}">{d.text(formula["value"], "formula.value")}</p>'
    parts = []
    for index, part in enumerate(d.items(formula, "formula")):
        where = f"formula[{index}]"
        if isinstance(part, dict):
            part = d.mapping(part, PART_KEYS, where)
            key = d.key(part["text"], f"{where}.text")
            parts.append(f'<span data-text="{key}">{d.text(part["value"], f"{where}.value")}</span>')
        elif isinstance(part, str) and "\n" not in part:
            parts.append(part)
        else:
            d.fail(where, "must be words on one line or a mapping of text and value")
    return f'<p class="posenc-widget__formula">{"".join(parts)}</p>'


def _table(d: _Description, table: Any) -> list[str]:
    table = d.mapping(table, TABLE_KEYS, "table")
    columns = d.items(table["columns"], "table.columns")
    headings = "".join(
        f'<th scope="col">{d.text(column, f"table.columns[{index}]")}</th>' for index, column in enumerate(columns)
    )
    return [
        '<table class="posenc-widget__table">',
        f"<caption>{d.text(table['caption'], 'table.caption')}</caption>",
        f"<thead><tr>{headings}</tr></thead>",
        "<tbody data-table></tbody>",
        "</table>",
    ]
