"""Every built page within its budgets: elements, bytes and scripts, read from the files alone.

Lighthouse's timings (``make audit``) move from run to run and machine to machine; these three
proxies do not, and they are what the timings grew from. Elements are what the browser styles
and lays out, bytes what a phone downloads and parses, scripts what runs on the main thread
before the page responds. They are counted in the built HTML, without a browser:

- elements: every start tag in the page, inline SVG and KaTeX's markup included;
- bytes: the HTML (inline SVG included) plus every stylesheet, script and image of this site
  that it links, uncompressed;
- scripts: every ``<script>`` the browser runs (inline or from a file; JSON data is not run), and
  each file a page's front matter names, which an inline script loads;
- blocking script files: script files without ``defer`` or ``async``, which the parser stops
  for (downloading and running them) before it reads on and the page can be painted. No page
  may have one: on a phone over a slow link they were most of what held the first paint.

The budgets were set from the measured values with about a tenth of headroom (one script):
a page that outgrows one has gained weight that should be a decision, not an accident. The table of
measured values beside their budgets is printed at the end of the test run.
"""

from __future__ import annotations

import html.parser
import json
import pathlib
from dataclasses import dataclass

from support import PAGE_SCRIPTS

# The type attributes under which a browser runs a <script> (any other type holds data).
RUNNING_SCRIPT_TYPES = {"", "text/javascript", "application/javascript", "module"}


@dataclass(frozen=True)
class Budget:
    elements: int
    bytes: int
    scripts: int


# Any page not named below: the home page, the figure pages, the 404 page and the short articles.
# Every page runs Material's scripts, posenc's inline fixes and figures.js; the explainer's and
# the long-context panel's scripts run only on their pages (the pages' front matter names them).
DEFAULT_BUDGET = Budget(elements=1_700, bytes=490_000, scripts=9)
# The long articles (and the notebook, which carries its own scripts) and the generated source
# pages, each at about a tenth above what it measured.
BUDGETS = {
    "/alibi/": Budget(elements=3_100, bytes=520_000, scripts=9),
    # The docstrings' examples are highlighted code blocks (hooks/site_build/docstring_markdown.py): their
    # Pygments tokens took the page from 3,300 elements to 4,064; the grids, multimodal RoPE and
    # architectures modules then took it to 7,050 elements and 646,091 bytes, and the figure
    # helper's translucent diverging map and method colours added about 1,000 bytes more; the Lie
    # group and data-dependent modules took it to 8,152 elements; the model records, the two placements of
    # layer_schedule and rope_base_all_pass_bound to 9,194 elements and 738,383 bytes.
    "/api/": Budget(elements=10_100, bytes=810_000, scripts=9),
    # The source pages grew with the argument checks against hostile input: encodings 2,040
    # elements, long_context 3,238, relative 6,403 and 551,683 bytes (its blocked gathers and stable forms).
    # rope_base_all_pass_bound and its proved ceiling, and layer_schedule's global_position.
    "/api/source/architectures/": Budget(elements=6_500, bytes=575_000, scripts=9),  # 5,915
    # 2,435 elements; 2,873 once FoX's bias sums each row outward and stick-breaking works in blocks.
    "/api/source/data_dependent/": Budget(elements=3_150, bytes=490_000, scripts=9),
    "/api/source/encodings/": Budget(elements=2_250, bytes=450_000, scripts=9),
    "/api/source/grids/": Budget(elements=5_000, bytes=565_000, scripts=9),  # 4,530; 510,664
    # 2,729 elements and 452,444 bytes; 4,036 and 496,078 with ComRoPE's three functions; 4,570 with
    # rotations formed a few at a time and the work limits.
    "/api/source/lie_groups/": Budget(elements=5_000, bytes=545_000, scripts=9),
    "/api/source/long_context/": Budget(elements=3_600, bytes=490_000, scripts=9),
    "/api/source/mrope/": Budget(elements=3_750, bytes=490_000, scripts=9),  # 3,394
    # The released models' records: 2,802 elements and 461,719 bytes with nine records;
    # the room is for the records still to come.
    "/api/source/models/": Budget(elements=3_900, bytes=530_000, scripts=9),
    # 5,716 elements with the translucent diverging map, the cell labels' inks and the method colours.
    "/api/source/plotting/": Budget(elements=6_300, bytes=560_000, scripts=9),
    "/api/source/registry/": Budget(elements=1_500, bytes=430_000, scripts=9),
    "/api/source/relative/": Budget(elements=7_100, bytes=610_000, scripts=9),
    # 5,402 once its tables' cells were labelled for a phone and its formulas set to wrap; its two
    # figures then carried their narrow layouts for phones as well (both inline, one displayed).
    # One row and one BibTeX record per article: 1,701 elements with twenty articles.
    "/cite/": Budget(elements=1_900, bytes=490_000, scripts=9),
    "/conventions/": Budget(elements=6_000, bytes=640_000, scripts=9),
    "/deep-dive/": Budget(elements=13_200, bytes=1_150_000, scripts=9),
    # The index lists every entry: 3,050 elements and 490,196 bytes with the grids topic, 4,122
    # elements with the topic of today's models, 4,934 and 564,665 bytes with position from the data,
    # 5,524 with the general MLA absorption entry's longer summary.
    "/derivations/": Budget(elements=6_100, bytes=620_000, scripts=9),
    # The proof for any number of pairs: five steps of sums of exponentials and the Vandermonde step,
    # 5,474 elements and 561,825 bytes.
    "/derivations/mla-absorption-fails-with-rope/": Budget(elements=6_000, bytes=620_000, scripts=9),
    # 3,157 elements and 503,427 bytes as first written: one figure with its phone layout, three
    # displayed proofs and the computed numbers of each section.
    "/data-dependent/": Budget(elements=3_500, bytes=555_000, scripts=9),
    # 14 scripts since its steps became panels registered with the shared panel module (panels.js).
    "/explainer/": Budget(elements=5_000, bytes=750_000, scripts=14),
    # 6,653 elements and 698,091 bytes as first written: four figures, each with its narrow layout, and
    # seven displayed proofs; 15 scripts with the grid-scores panel's five (its arithmetic, the
    # explainer's it builds on and the demo data, the panel module, its drawing).
    "/grids/": Budget(elements=7_300, bytes=770_000, scripts=15),
    "/guide/": Budget(elements=7_900, bytes=830_000, scripts=9),
    # 6,230 after the exact account of which methods keep scores relative, LongRoPE's search and the caches.
    # 2,532 elements and 482,848 bytes as first written: one figure with its narrow layout and four
    # displayed proofs; 4,529 and 562,338 with ComRoPE's section (two more displayed proofs and the
    # inline math of its blocks, its cost and its measurements).
    "/lie-groups/": Budget(elements=5_000, bytes=620_000, scripts=9),
    "/long-context/": Budget(elements=7_800, bytes=800_000, scripts=15),
    # 1,567 elements and 495,359 bytes: three tables and a figure of 174 layer cells, both layouts inline.
    "/model-atlas/": Budget(elements=1_700, bytes=540_000, scripts=9),
    "/notebooks/explicit-position-ids/": Budget(elements=1_100, bytes=470_000, scripts=11),
    "/precision/": Budget(elements=2_700, bytes=530_000, scripts=9),
    # 4,063 with the entries for Liu et al., Xiong et al. and the dynamic NTK post; 544,387 bytes
    # once each entry was written out above its folded BibTeX record; 5,108 and 579,609 with the
    # thirteen vision and multimodal works of the grids page, and 5,087 and 577,429 with the
    # thirteen model reports of the model atlas alone (both together measured after the merge).
    # Measured together after the merge, with the works of the page on today's models: 6,343.
    # 7,077 elements with the Lie group and data-dependent papers.
    "/references/": Budget(elements=9_000, bytes=760_000, scripts=9),
    "/relative/": Budget(elements=11_400, bytes=880_000, scripts=9),
    "/rope/": Budget(elements=5_600, bytes=630_000, scripts=9),
    # 2,127 elements and 488,107 bytes: its table of schedules, four figures (each with its phone
    # layout) and the computed numbers of every section; 4,190 and 563,168 with its five displayed
    # proofs.
    "/today/": Budget(elements=4_650, bytes=620_000, scripts=9),
    "/widths/": Budget(elements=4_100, bytes=720_000, scripts=9),
}
# Each derivation's page (derivations/ID/): the largest, rope-layout-permutation, measured 3,387
# elements and 467,000 bytes.
DERIVATION_BUDGET = Budget(elements=3_700, bytes=520_000, scripts=9)


def budget_of(path: str) -> Budget:
    if path in BUDGETS:
        return BUDGETS[path]
    return DERIVATION_BUDGET if path.startswith("/derivations/") else DEFAULT_BUDGET


class _PageReader(html.parser.HTMLParser):
    """Counts a page's start tags and running scripts, and collects the site files it links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements = 0
        self.scripts = 0
        self.blocking_scripts = 0
        self.linked: list[str] = []
        self.in_inline_script = False

    def handle_starttag(self, tag, attrs):
        self.elements += 1
        attributes = dict(attrs)
        self.in_inline_script = tag == "script" and not attributes.get("src")
        if tag == "script" and (attributes.get("type") or "").lower() in RUNNING_SCRIPT_TYPES:
            self.scripts += 1
        if tag == "script" and attributes.get("src"):
            self.linked.append(attributes["src"])
            if not ({"defer", "async"} & set(attributes) or attributes.get("type") == "module"):
                self.blocking_scripts += 1
        elif tag == "link" and "stylesheet" in (attributes.get("rel") or "").split() and attributes.get("href"):
            self.linked.append(attributes["href"])
        elif tag == "img" and attributes.get("src"):
            self.linked.append(attributes["src"])

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        # The scripts a page's front matter names, which an inline script of overrides/main.html
        # loads: each runs and is downloaded like a script tag's file (paths from the site's root).
        found = PAGE_SCRIPTS.search(data) if self.in_inline_script else None
        if found:
            names = json.loads(found[1])
            self.scripts += len(names)
            self.linked.extend("/" + name for name in names)

    def handle_endtag(self, tag):
        self.in_inline_script = False


@dataclass(frozen=True)
class PageWeight:
    elements: int
    html_bytes: int
    bytes: int
    scripts: int
    blocking_scripts: int


def page_file(site: pathlib.Path, path: str) -> pathlib.Path:
    return site / path.lstrip("/") / "index.html" if path.endswith("/") else site / path.lstrip("/")


def weigh(site: pathlib.Path, path: str) -> PageWeight:
    """The page at ``path`` of the built ``site``, counted; a linked file of the site that is missing fails."""
    page = page_file(site, path)
    reader = _PageReader()
    text = page.read_text(encoding="utf-8")
    reader.feed(text)
    reader.close()
    html_bytes = len(text.encode("utf-8"))
    linked_bytes = 0
    for link in dict.fromkeys(reader.linked):  # a file linked twice is downloaded once
        if link.startswith(("data:", "http:", "https:", "//")):
            continue  # nothing to download from this site (the built site links nothing outside itself)
        file = link.split("#")[0].split("?")[0]
        target = (site / file.lstrip("/") if file.startswith("/") else page.parent / file).resolve()
        assert target.is_file(), f"{path} links {link}, which is not in the built site"
        linked_bytes += target.stat().st_size
    return PageWeight(reader.elements, html_bytes, html_bytes + linked_bytes, reader.scripts, reader.blocking_scripts)


def test_every_page_within_its_budgets(site_dir, site_paths, report_table):
    paths = site_paths + ["/404.html"]
    assert set(BUDGETS) <= set(paths), f"budgets for pages the site does not have: {set(BUDGETS) - set(paths)}"
    rows, over = [], []
    for path in paths:
        weight = weigh(site_dir, path)
        budget = budget_of(path)
        for name in ("elements", "bytes", "scripts"):
            if getattr(weight, name) > getattr(budget, name):
                over.append(f"{path}: {getattr(weight, name):,} {name}, budget {getattr(budget, name):,}")
        if weight.blocking_scripts:
            over.append(f"{path}: {weight.blocking_scripts} script files without defer or async, budget 0")
        rows.append(
            [
                path,
                f"{weight.elements:,}",
                f"{budget.elements:,}",
                f"{weight.html_bytes:,}",
                f"{weight.bytes:,}",
                f"{budget.bytes:,}",
                str(weight.scripts),
                str(budget.scripts),
                str(weight.blocking_scripts),
                "0",
            ]
        )
    headers = ["page", "elements", "budget", "HTML bytes", "bytes", "budget", "scripts", "budget", "blocking", "budget"]
    widths = [max(len(row[i]) for row in [headers] + rows) for i in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in [headers] + rows
    ]
    report_table("page budgets: measured elements, bytes and scripts beside each budget", "\n".join(lines))
    assert not over, "pages over their budgets:\n" + "\n".join(over)
