"""A panel's HTML from its description (docs/panels/NAME.yml), and the errors of a malformed one.

The good cases hold the written HTML to the markup panels.js and the tests read; each malformed
case must stop the build with the description's file and the key at fault in the message.
"""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from mkdocs.exceptions import PluginError
from site_build import panels, paths
from support.hooks import expand

import posenc

SOURCE = "docs/panels/probe.yml"

GOOD = {
    "title": "Try it: one slider",
    "nojs": "This slider needs JavaScript.",
    "controls": [
        {
            "param": "width",
            "label": "Width d",
            "min": 2,
            "max": 8,
            "step": 2,
            "value": 4,
            "shown": "4 (two pairs)",
        },
        {"param": "kind", "legend": "Kind", "choices": ["sin", {"value": "rope", "label": "RoPE"}], "value": "rope"},
    ],
    "readouts": [{"key": "kernel", "label": "k(6)", "value": "{{ calc .2f: posenc.kernel(6, 4) }}"}],
}

GOOD_HTML = "\n".join(
    [
        '<div class="posenc-widget" data-panel="probe" role="group" aria-labelledby="try-probe">',
        '<p class="posenc-widget__title" id="try-probe">Try it: one slider</p>',
        '<p class="posenc-widget__nojs">This slider needs JavaScript.</p>',
        '<div class="posenc-widget__controls">',
        '<div class="posenc-control">',
        '<label for="probe-width">Width d <span class="posenc-control__value" data-value-of="width"'
        ' aria-hidden="true">4 (two pairs)</span></label>',
        '<input type="range" id="probe-width" data-param="width" min="2" max="8" step="2" value="4"'
        ' autocomplete="off" disabled>',
        "</div>",
        '<div class="posenc-control">',
        '<span class="posenc-control__legend" id="probe-kind">Kind</span>',
        '<div class="posenc-choices" role="group" aria-labelledby="probe-kind">',
        '<button type="button" data-param="kind" data-value="sin" aria-pressed="false" disabled>sin</button>',
        '<button type="button" data-param="kind" data-value="rope" aria-pressed="true" disabled>RoPE</button>',
        "</div>",
        "</div>",
        "</div>",
        '<dl class="posenc-readouts" aria-live="polite">',
        '<div><dt>k(6)</dt><dd data-readout="kernel">{{ calc .2f: posenc.kernel(6, 4) }}</dd></div>',
        "</dl>",
        '<div class="posenc-widget__drawing" data-drawing></div>',
        "</div>",
    ]
)


def render(description) -> str:
    return panels.render_panel("probe", description, SOURCE)


def changed(edit) -> dict:
    description = copy.deepcopy(GOOD)
    edit(description)
    return description


def test_a_description_writes_the_panel_markup():
    assert render(GOOD) == GOOD_HTML


def test_the_optional_parts_write_their_markup():
    def every_part(d):
        del d["nojs"]
        d.update(
            scripted=True,
            note="A note with <code>posenc</code>.",
            anchor="panel",
            layout="beside",
            reserve_drawing=True,
            formula=["Pair 0: ", {"text": "q", "value": "[1, 0]"}, "."],
            table={"caption": "Pairs", "columns": ["r", "Turns"]},
        )
        d["controls"][0]["id"] = "probe-d"
        d["controls"][1].update(id="probe-kinds", wide=True)

    description = changed(every_part)
    written = render(description)
    assert written.startswith(
        '<div class="posenc-widget posenc-widget--scripted posenc-widget--beside" id="panel" data-panel="probe"'
        ' role="group"'
        ' aria-labelledby="try-probe">\n<p class="posenc-widget__title" id="try-probe">Try it: one slider</p>\n'
        '<p class="posenc-widget__note">A note with <code>posenc</code>.</p>\n'
    )
    assert '<label for="probe-d">' in written and '<input type="range" id="probe-d" data-param="width"' in written
    assert (
        '<div class="posenc-control posenc-control--wide">\n<span class="posenc-control__legend" id="probe-kinds">'
        in written
    )
    assert written.endswith(
        '<p class="posenc-widget__formula">Pair 0: <span data-text="q">[1, 0]</span>.</p>\n'
        '<div class="posenc-widget__drawing posenc-widget__drawing--reserved" data-drawing></div>\n'
        '<table class="posenc-widget__table">\n<caption>Pairs</caption>\n'
        '<thead><tr><th scope="col">r</th><th scope="col">Turns</th></tr></thead>\n'
        "<tbody data-table></tbody>\n</table>\n</div>"
    )
    whole = render(changed(lambda d: d.update(formula={"text": "formula", "value": "P(1) = 0"})))
    assert '<p class="posenc-widget__formula" data-text="formula">P(1) = 0</p>' in whole


def test_a_palette_writes_the_figures_colours_of_its_concepts_on_the_panel():
    from posenc.site import plotting

    written = render(changed(lambda d: d.update(palette=["method", "side"])))
    first = written.partition("\n")[0]
    properties = dict(pair.split(": ") for pair in first.partition(' style="')[2].partition('"')[0].split("; "))
    assert properties == plotting.palette_css("method") | plotting.palette_css("side")
    assert properties["--posenc-method-yarn"] == plotting.colour_of(method="yarn").lower()
    with pytest.raises(PluginError, match=r"docs/panels/probe.yml: palette\[0\]: must be one of"):
        render(changed(lambda d: d.update(palette=["methods"])))


def test_attribute_values_are_escaped():
    written = render(changed(lambda d: d["controls"][1].update(choices=['say "a"', "rope"])))
    assert 'data-value="say &quot;a&quot;" aria-pressed="false" disabled>say "a"</button>' in written


def test_every_panel_of_the_site_is_written_from_its_description():
    for name in panels.panel_names():
        written = panels.panel_template(name)
        assert written.startswith('<div class="posenc-widget') and f'data-panel="{name}"' in written, name
        assert "\n\n" not in written, name


def test_a_page_gets_the_panel_with_its_numbers_computed(tmp_path, monkeypatch):
    (tmp_path / "panels").mkdir()
    (tmp_path / "panels" / "probe.yml").write_text(yaml.safe_dump(GOOD), encoding="utf-8")
    monkeypatch.setattr(paths, "DOCS", tmp_path)
    page = expand("{{ panel: probe }}\n")
    kernel = format(posenc.kernel(6, 4), ".2f")
    assert page == GOOD_HTML.replace("{{ calc .2f: posenc.kernel(6, 4) }}", kernel) + "\n"


def drop(key):
    return lambda d: d.pop(key)


# (edit of the good description, the key the message names, words of the message)
MALFORMED = [
    (drop("title"), "title", "missing"),
    (drop("controls"), "controls", "missing"),
    (drop("nojs"), "nojs", "missing"),
    (lambda d: d.update(colour="red"), "colour", "unknown key"),
    (lambda d: d.update(note="A note."), "note", "not for a panel with scripted: false"),
    (lambda d: d["controls"][0].pop("max"), "controls[width].max", "missing"),
    (lambda d: d["controls"][0].pop("param"), "controls[0].param", "missing"),
    (lambda d: d["controls"][0].update(colour="red"), "controls[width].colour", "unknown key"),
    (lambda d: d["controls"][1].update(min=0), "controls[kind].min", "unknown key"),
    (lambda d: d["readouts"][0].pop("value"), "readouts[0].value", "missing"),
    (lambda d: d["readouts"][0].update(unit="rad"), "readouts[0].unit", "unknown key"),
    (lambda d: d["controls"][0].update(min=10, max=8, value=8), "controls[width].min", "min 10 is above max 8"),
    (lambda d: d["controls"][0].update(value=10), "controls[width].value", "10 is outside [2, 8]"),
    (lambda d: d["controls"][0].update(value=0), "controls[width].value", "0 is outside [2, 8]"),
    (lambda d: d["controls"][0].update(value=5), "controls[width].value", "5 is off the grid 2 + k * 2"),
    (lambda d: d["controls"][0].update(max=9), "controls[width].max", "9 is off the grid 2 + k * 2"),
    (lambda d: d["controls"][0].update(step=0), "controls[width].step", "must be above 0"),
    (lambda d: d["controls"][0].update(value="4"), "controls[width].value", "must be a number"),
    (lambda d: d["controls"][1].update(param="width"), "controls[width]", "a second control of the same param"),
    (lambda d: d["readouts"].append(dict(d["readouts"][0])), "readouts[kernel]", "a second readout of the same key"),
    (lambda d: d["controls"][1].update(value="cos"), "controls[kind].value", "'cos' is none of the choices"),
    (lambda d: d["controls"][1]["choices"].append("sin"), "controls[kind].choices[2]", "a second choice"),
    (lambda d: d.update(title="Two\nlines"), "title", "must be one line"),
    (lambda d: d.update(controls=[]), "controls", "a list of at least one entry"),
    (lambda d: d.update(formula={"text": "f"}), "formula.value", "missing"),
    (lambda d: d.update(table={"caption": "Pairs"}), "table.columns", "missing"),
    (lambda d: d.update(layout="sideways"), "layout", "must be one of stacked, beside"),
]


@pytest.mark.parametrize(("edit", "key", "words"), MALFORMED)
def test_a_malformed_description_is_refused_naming_its_file_and_key(edit, key, words):
    with pytest.raises(PluginError, match=rf"^{re.escape(SOURCE)}: {re.escape(key)}: .*{re.escape(words)}"):
        render(changed(edit))


def test_a_broken_description_file_stops_the_build_naming_the_page(tmp_path, monkeypatch):
    (tmp_path / "panels").mkdir()
    monkeypatch.setattr(paths, "DOCS", tmp_path)
    probe = tmp_path / "panels" / "probe.yml"
    probe.write_text("title: [unclosed\n", encoding="utf-8")
    with pytest.raises(PluginError, match=r"^guide\.md: docs/panels/probe\.yml: not YAML"):
        expand("{{ panel: probe }}")
    probe.write_text(yaml.safe_dump(changed(lambda d: d["controls"][0].update(value=7))), encoding="utf-8")
    with pytest.raises(PluginError, match=r"^guide\.md: docs/panels/probe\.yml: controls\[width\]\.value: 7 is off"):
        expand("{{ panel: probe }}")
    # The markers inside a panel are the page's: a wrong one names the page and the panel.
    nested = changed(lambda d: d["readouts"][0].update(value="{{ panel: probe }}"))
    probe.write_text(yaml.safe_dump(nested), encoding="utf-8")
    with pytest.raises(PluginError, match="panel 'probe': its template holds another panel"):
        expand("{{ panel: probe }}")
    wrong = changed(lambda d: d["readouts"][0].update(value="{{ calc .2f: posenc.kernel(6, 7) }}"))
    probe.write_text(yaml.safe_dump(wrong), encoding="utf-8")
    with pytest.raises(PluginError, match=r"guide\.md: panel 'probe': calc marker"):
        expand("{{ panel: probe }}")
    # A template of the old kind is no panel.
    probe.unlink()
    (tmp_path / "panels" / "probe.html").write_text('<div data-panel="probe">\n</div>\n', encoding="utf-8")
    with pytest.raises(PluginError, match=r"unknown panel 'probe' \(panels: ; a panel is a description"):
        expand("{{ panel: probe }}")
