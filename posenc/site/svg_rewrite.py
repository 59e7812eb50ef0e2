"""Matplotlib's SVG of a figure rewritten to sit inside a page: the work of
``posenc.site.plotting.page_svg``, which says what the result is and passes this module the
site's colours, typeface and smallest text size.

Beside the changes that make the SVG the page's (colours, typeface, ids), the SVG is made small:
coordinates to hundredths of a point, path data relative and short, runs of alike shapes one
path, markers written out where that is shorter, one ``<defs>``. A figure with a narrow layout
is two SVGs on its page, so bytes and elements saved here are saved twice.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping

_SVG = "http://www.w3.org/2000/svg"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_REFERENCE = re.compile(r"url\(#([^)]+)\)")
#: Matplotlib's no-op rotation of unrotated text.
_NO_ROTATION = re.compile(r"rotate\(-?0 [-0-9.e]+ [-0-9.e]+\)")
# Positions and shapes are kept to a hundredth of a point (about a hundredth of a CSS pixel),
# transforms to Matplotlib's six decimals. Design history: docs/design-notes.md#figures
_GEOMETRY = frozenset({"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height", "points"})
_LONG_DECIMAL = re.compile(r"\d+\.\d{3,}")
# A path's commands as Matplotlib writes them (absolute moves, lines, curves, closes), each with
# the number of coordinates it takes.
_PATH_ARGUMENTS = {"M": 2, "L": 2, "Q": 4, "C": 6, "Z": 0, "z": 0}
_PATH_TOKEN = re.compile(r"\s*([MLQCZz]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
# Paint properties a marker's clone takes from its own style when it sets them, whatever the
# <use> that places it says (they are inherited, so the <use>'s value only reaches what the
# marker leaves unset).
_INHERITED_PAINT = frozenset(
    {
        "fill",
        "fill-opacity",
        "stroke",
        "stroke-width",
        "stroke-opacity",
        "stroke-linejoin",
        "stroke-linecap",
        "stroke-miterlimit",
        "stroke-dasharray",
        "stroke-dashoffset",
    }
)


def _hundredths(match: re.Match[str]) -> str:
    return f"{float(match[0]):.2f}".rstrip("0").rstrip(".")


def _number(hundredths: int) -> str:
    """A coordinate given in hundredths, as short as SVG reads it (-0.5 is -.5, 2.00 is 2)."""
    sign = "-" if hundredths < 0 else ""
    whole, fraction = divmod(abs(hundredths), 100)
    digits = f"{fraction:02d}".rstrip("0")
    return sign + (str(whole) if whole or not digits else "") + ("." + digits if digits else "")


def _compact_path(data: str) -> str:
    """A path's data with its coordinates rounded to hundredths and written relative to the point
    before them, in SVG's shortest spelling (a repeated command is left out, a horizontal or
    vertical line is ``h`` or ``v``, no space before a minus sign or a second decimal point).

    The relative steps are differences of the rounded positions, so every point lands exactly
    where rounding its absolute position puts it. Data that is not Matplotlib's plain moves,
    lines, curves and closes is only rounded.
    """
    tokens, consumed = [], 0
    for match in _PATH_TOKEN.finditer(data):
        if match.start() != consumed:
            break
        tokens.append(match[1])
        consumed = match.end()
    if data[consumed:].strip() or not tokens or tokens[0] != "M":
        return _LONG_DECIMAL.sub(_hundredths, data)
    pieces: list[str] = []
    last_number: str | None = None  # the number written last, if nothing came after it

    def write(piece: str) -> None:
        nonlocal last_number
        if piece[0].isalpha():
            last_number = None
        else:
            # A number needs a space after the previous one unless its sign or a second
            # decimal point ends that one (1.5.5 reads as 1.5 then .5).
            if last_number is not None and not (
                piece.startswith("-") or (piece.startswith(".") and "." in last_number)
            ):
                pieces.append(" ")
            last_number = piece
        pieces.append(piece)

    x = y = 0  # the current point, in hundredths
    start = (0, 0)  # where the current subpath began
    implied = ""  # the command a bare number would continue
    index = 0
    while index < len(tokens):
        command = tokens[index]
        if command not in _PATH_ARGUMENTS:
            return _LONG_DECIMAL.sub(_hundredths, data)
        count = _PATH_ARGUMENTS[command]
        arguments = tokens[index + 1 : index + 1 + count]
        index += 1 + count
        if len(arguments) != count or any(argument in _PATH_ARGUMENTS for argument in arguments):
            return _LONG_DECIMAL.sub(_hundredths, data)
        if count == 0:
            write("z")
            x, y = start
            implied = ""
            continue
        points = [round(float(value) * 100) for value in arguments]
        steps = [point - (x if number % 2 == 0 else y) for number, point in enumerate(points)]
        letter = command.lower()
        if letter == "l" and steps[1] == 0:
            letter, steps = "h", steps[:1]
        elif letter == "l" and steps[0] == 0:
            letter, steps = "v", steps[1:]
        if letter == "m":
            start = (points[0], points[1])
        x, y = points[-2], points[-1]
        if letter != implied:
            write(letter)
        for step in steps:
            write(_number(step))
        implied = "l" if letter == "m" else letter  # after a move, more pairs are lines
    return "".join(pieces)


def _tag(element: ElementTree.Element) -> str:
    return element.tag.rpartition("}")[2]


def _parse_style(style: str) -> dict[str, str]:
    pairs = (item.partition(":") for item in style.split(";") if item.strip())
    return {key.strip(): value.strip() for key, _, value in pairs}


def _restyle(
    style: dict[str, str], literal_colours: bool, colours: Mapping[str, str], smallest: float
) -> dict[str, str]:
    """``style`` with the typeface left to the page and the page's ``colours`` mapped."""
    style = {key: value for key, value in style.items() if key != "font-family"}
    if "font-size" in style and float(style["font-size"].removesuffix("px")) < smallest - 1e-3:
        # plotting.save has raised every text; a size under the smallest would be read shrunk.
        raise ValueError(f"text of {style['font-size']} in the SVG, under the smallest size {smallest:g}px")
    if not literal_colours:
        for key in ("fill", "stroke"):
            if key in style:
                style[key] = colours.get(style[key].lower(), style[key])
    return style


@functools.cache
def _advance(character: str, size: float, oblique: bool) -> float:
    """Width of ``character`` at ``size`` points in the font Matplotlib laid math text out with."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font, LoadFlags

    font = FT2Font(
        font_manager.findfont(
            font_manager.FontProperties(family="DejaVu Sans", style="oblique" if oblique else "normal")
        )
    )
    font.set_size(size, 72)
    glyph = font.load_char(ord(character), flags=LoadFlags.NO_HINTING)
    return glyph.linearHoriAdvance / 65536


def _join_glyphs(text: ElementTree.Element) -> None:
    """Make math text (one ``<tspan>`` per glyph) read and search as words.

    The glyphs are put in reading order (left to right) and each run of glyphs that sit
    side by side in one style and on one baseline becomes one ``<tspan>``; a gap wider than the
    glyph (math spacing around ``=``) starts a new run, so the page's typeface keeps Matplotlib's
    spacing. A sub- or superscript is a run of its own, at its own (script) size and its own
    baseline, as Matplotlib laid it out. The first run is the ``<text>``'s own text when its
    style is its size alone, which every other run sets for itself.
    """
    spans = [child for child in text if _tag(child) == "tspan"]
    if len(spans) < 2 or len(spans) != len(text):
        return
    spans.sort(key=lambda span: float(span.get("x", "0")))
    runs: list[ElementTree.Element] = []
    end = None  # where the previous glyph ends
    for span in spans:
        glyphs, style, x = span.text or "", span.get("style", ""), float(span.get("x", "0"))
        parsed = _parse_style(style)
        size = float(parsed.get("font-size", "10").removesuffix("px"))
        last = runs[-1] if runs else None
        if (
            last is not None
            and end is not None
            and last.get("y") == span.get("y")
            and last.get("style") == style
            and abs(x - end) < 0.1 * size
        ):
            last.text = (last.text or "") + glyphs
        else:
            runs.append(span)
        oblique = parsed.get("font-style") in ("oblique", "italic")
        end = x + sum(_advance(character, size, oblique) for character in glyphs)
    text.text = None
    text[:] = runs
    for run in runs:
        run.tail = None
    # The first run is the text's own (one element fewer) when nothing of its style would reach
    # the others, which each set their own size.
    first = runs[0]
    sized = all("font-size" in _parse_style(run.get("style", "")) for run in runs[1:])
    if (
        sized
        and set(_parse_style(first.get("style", ""))) == {"font-size"}
        and not set(text.attrib) & {"x", "y", "style"}
    ):
        text.attrib.update({key: value for key in ("x", "y", "style") if (value := first.get(key)) is not None})
        text.text = first.text
        text.remove(first)


def _flatten(parent: ElementTree.Element) -> None:
    """Replace every ``<g>`` without attributes by its children (they mean nothing left bare), and
    a ``<g>`` that only moves one text (Matplotlib's wrapper of math text) by the text, moved."""
    children: list[ElementTree.Element] = []
    for child in parent:
        _flatten(child)
        if _tag(child) == "g" and not child.attrib:
            children.extend(child)
        elif (
            _tag(child) == "g"
            and set(child.attrib) == {"transform"}
            and len(child) == 1
            and _tag(child[0]) == "text"
            and "transform" not in child[0].attrib
            and "clip-path" not in child[0].get("style", "")
        ):
            child[0].set("transform", child.attrib["transform"])
            children.append(child[0])
        else:
            children.append(child)
    parent[:] = children


# A marker whose data is this long or shorter (a tick mark, a square) is cheaper written out at
# each place than placed there by a <use> (about 70 bytes); a circle's data is not.
_SHORT_MARKER = 48
_FIRST_MOVE = re.compile(r"m(-?(?:\d+\.?\d*|\.\d+))\s?(-?(?:\d+\.?\d*|\.\d+))")


def _placed(data: str, x: int, y: int) -> str:
    """Compacted path data (which starts with a relative move from the origin) moved by ``x``, ``y``
    hundredths and made to start with an absolute move, so that it can follow other data."""
    first = _FIRST_MOVE.match(data)
    if first is None:
        raise ValueError(f"path data that does not start with a move: {data[:40]!r}")
    rest = data[first.end() :]
    start = f"M{_number(round(float(first[1]) * 100) + x)} {_number(round(float(first[2]) * 100) + y)}"
    # Coordinate pairs after a relative move are relative lines; after an absolute one, absolute.
    return start + ("l" if rest and not rest[0].isalpha() else "") + rest


# Path data that is one straight segment (a tick mark): it has no area, so no fill shows.
_ONE_SEGMENT = re.compile(r"m[^a-z]+[hvl][^a-z]+")


def _one_paint(style: dict[str, str]) -> bool:
    """Whether shapes drawn in ``style`` look the same as one path: opaque, and filled or
    stroked but not both in different colours (one path fills every part before stroking any)."""
    if any(float(style.get(key, "1")) < 1 for key in ("opacity", "stroke-opacity")):
        return False
    unfilled = style.get("fill") == "none" or style.get("fill-opacity") == "0"
    if not unfilled and float(style.get("fill-opacity", "1")) < 1:
        return False
    return unfilled or style.get("stroke", "none") == "none" or style.get("stroke") == style.get("fill")


def _merge_shapes(root: ElementTree.Element) -> None:
    """Draw runs of alike shapes as one path: fewer elements for the page to hold and style.

    Neighbouring ``<path>`` elements that differ only in their data (the segments of a line
    collection) become one path; the ``<use>`` elements that place one marker (an axis's tick
    marks, which alternate with their labels, or a scatter's points) become one path holding
    the marker's data at each place, where the marker is a short plain path. Only shapes whose paint
    looks the same either way (:func:`_one_paint`) are joined, and a marker nothing places any
    more is dropped.
    """
    markers = {
        element.get("id"): element
        for element in root.iter()
        if _tag(element) == "path"
        and set(element.attrib) == {"d", "style", "id"}
        and element.get("d", "")[:1] == "m"
        and len(element.get("d", "")) <= _SHORT_MARKER
    }
    for parent in list(root.iter()):
        children, merged = list(parent), []
        runs: dict[tuple[object, ...], ElementTree.Element] = {}  # the path each run is gathered into, by its kind
        for child in children:
            tag = _tag(child)
            if (
                tag == "use"
                and child.get(_XLINK_HREF, "")[1:] in markers
                and set(child.attrib)
                <= {
                    _XLINK_HREF,
                    "x",
                    "y",
                    "style",
                }
            ):
                marker = markers[child.get(_XLINK_HREF, "")[1:]]
                style = _parse_style(child.get("style", "")) | _parse_style(marker.get("style", ""))
                if _ONE_SEGMENT.fullmatch(marker.get("d", "")) and "fill" not in style:
                    style["fill"] = "none"  # what it draws: the fill of a segment is empty
                if _one_paint(style):
                    kind: tuple[object, ...] = ("use", child.get(_XLINK_HREF), child.get("style", ""))
                    x, y = (round(float(child.get(key, "0")) * 100) for key in ("x", "y"))
                    piece = _placed(marker.get("d", ""), x, y)
                    if kind in runs:
                        runs[kind].set("d", runs[kind].get("d", "") + piece)
                    else:
                        runs[kind] = ElementTree.Element(
                            f"{{{_SVG}}}path", {"d": piece, "style": "; ".join(f"{k}: {v}" for k, v in style.items())}
                        )
                        merged.append(runs[kind])
                    continue
            elif tag == "path" and "id" not in child.attrib and child.get("d", "")[:1] == "m":
                style = _parse_style(child.get("style", ""))
                if (style.get("fill") == "none" or style.get("fill-opacity") == "0") and _one_paint(style):
                    kind = ("path",) + tuple(sorted((k, v) for k, v in child.attrib.items() if k != "d"))
                    # Only a path right after the run's last one joins it: another shape between may cover it.
                    if merged and merged[-1] is runs.get(kind):
                        runs[kind].set("d", runs[kind].get("d", "") + _placed(child.get("d", ""), 0, 0))
                    else:
                        runs[kind] = child
                        merged.append(child)
                    continue
            if tag != "text":  # a marker's run goes on past texts (tick labels), never past a shape
                runs = {key: value for key, value in runs.items() if key[0] != "use"}
            merged.append(child)
        parent[:] = merged
    placed = {element.get(_XLINK_HREF, "")[1:] for element in root.iter()}
    placed |= {
        target for element in root.iter() for value in element.attrib.values() for target in _REFERENCE.findall(value)
    }
    for parent in list(root.iter()):
        for child in list(parent):
            if child.get("id") in markers and child.get("id") not in placed:
                parent.remove(child)
            elif _tag(child) == "defs" and not len(child):
                parent.remove(child)


def _gather(root: ElementTree.Element, literal: str) -> None:
    """Put every definition (markers, clip paths, hatches) in one ``<defs>``, the root's first
    child, and mark each run of neighbouring literal groups as one group, or its one element
    itself (each cell label of a heatmap came in a group of its own): fewer elements."""
    definitions = ElementTree.Element(f"{{{_SVG}}}defs")
    for parent in list(root.iter()):
        children: list[ElementTree.Element] = []
        for child in parent:
            if _tag(child) == "defs":
                definitions.extend(child)
            elif (
                children
                and child.attrib == {"class": literal} == children[-1].attrib
                and _tag(child) == _tag(children[-1]) == "g"
            ):
                children[-1].extend(child)
            else:
                children.append(child)
        parent[:] = children
    for parent in list(root.iter()):
        for number, child in enumerate(parent):
            if (
                _tag(child) == "g"
                and child.attrib == {"class": literal}
                and len(child) == 1
                and "class" not in child[0].attrib
            ):
                child[0].set("class", literal)
                parent[number] = child[0]
    if len(definitions):
        root.insert(0, definitions)


def rewrite(
    drawn: bytes,
    prefix: str,
    attributes: Mapping[str, str],
    *,
    colours: Mapping[str, str],
    literal: str,
    foreground: str,
    smallest: float,
) -> ElementTree.Element:
    """The root of Matplotlib's SVG ``drawn`` rewritten for a page (``posenc.site.plotting.page_svg``
    says how): ids renamed to ``prefix`` and a number, ``colours`` mapped outside elements whose
    id is ``literal`` (which get it as a class; their unstated text colour is ``foreground``), no
    text under ``smallest``, and ``attributes`` as the root's attributes besides its viewBox."""
    ElementTree.register_namespace("", _SVG)
    ElementTree.register_namespace("xlink", _XLINK_HREF[1:].partition("}")[0])
    root = ElementTree.fromstring(drawn)
    referenced: dict[str, None] = {}  # in order of first reference
    for element in root.iter():
        href = element.get(_XLINK_HREF, "")
        if href.startswith("#"):
            referenced.setdefault(href[1:])
        for value in element.attrib.values():
            for target in _REFERENCE.findall(value):
                referenced.setdefault(target)
    # Matplotlib's ids are a letter and a hash; the page needs them unique, not long.
    new_ids = {old: f"{prefix}{old[:1]}{number}" for number, old in enumerate(referenced)}
    # The paint each referenced element (a marker) sets itself, by its id.
    own_paint = {
        element.get("id"): set(_parse_style(element.get("style", ""))) & _INHERITED_PAINT
        for element in root.iter()
        if element.get("id") in new_ids
    }

    def rename(value: str) -> str:
        return _REFERENCE.sub(lambda m: f"url(#{new_ids[m[1]]})", value)

    def visit(element: ElementTree.Element, literal_colours: bool) -> None:
        identifier = element.attrib.pop("id", None)
        if identifier == literal:
            element.set("class", literal)
            literal_colours = True
        elif identifier in new_ids:
            element.set("id", new_ids[identifier])
        # A colour given as an attribute (a hatch's background) joins the style: the page's
        # colours are CSS values, which only a style can hold.
        given = {key: element.attrib.pop(key) for key in ("fill", "stroke") if key in element.attrib}
        if given:
            element.set("style", "; ".join([element.get("style", "")] + [f"{k}: {v}" for k, v in given.items()]))
        placed = element.get(_XLINK_HREF, "")[1:] if _tag(element) == "use" else ""
        for key, value in list(element.attrib.items()):
            value = rename(value)
            # Still xlink:href, not SVG 2's plain href: Material's instant navigation rewrites every
            # [href] of a page it loads, and an SVG element's href cannot be assigned.
            if key == _XLINK_HREF and value.startswith("#"):
                element.set(key, "#" + new_ids[value[1:]])
            elif key == "style":
                parsed = _parse_style(value)
                for unused in own_paint.get(placed, set()):
                    parsed.pop(unused, None)
                style = _restyle(parsed, literal_colours, colours, smallest)
                if literal_colours and _tag(element) == "text":
                    style.setdefault("fill", foreground)  # Matplotlib leaves black text unstated
                if style:
                    element.set("style", "; ".join(f"{k}: {v}" for k, v in style.items()))
                else:
                    del element.attrib["style"]
            elif key == "transform" and _NO_ROTATION.fullmatch(value):
                del element.attrib[key]
            elif key == "d":
                element.set(key, _compact_path(value))
            elif key in _GEOMETRY:
                element.set(key, _LONG_DECIMAL.sub(_hundredths, value))
            else:
                element.set(key, value)
        if _tag(element) not in ("text", "tspan") and not (element.text or "").strip():
            element.text = None
        for child in element:
            child.tail = child.tail if child.tail and child.tail.strip() else None
            visit(child, literal_colours)
        if _tag(element) == "text":
            _join_glyphs(element)  # its glyphs restyled

    for child in list(root):
        if _tag(child) == "metadata" or (_tag(child) == "defs" and all(_tag(c) == "style" for c in child)):
            root.remove(child)
    for parent in list(root.iter()):
        for child in list(parent):
            if _tag(child) == "path" and child.get("style") == "fill: none":  # draws nothing (a transparent background)
                parent.remove(child)
    visit(root, False)
    _flatten(root)
    _merge_shapes(root)
    _gather(root, literal)
    view_box = root.get("viewBox")
    if view_box is None:
        raise ValueError("Matplotlib's SVG has no viewBox to keep")
    root.attrib.clear()
    root.attrib.update(attributes)
    root.set("viewBox", view_box)
    return root
