"""One load of every page in one colour scheme, and what the page-wide checks need from it.

Loading a page (and waiting for the network to fall idle) is most of what a page-wide check
costs, so each page is loaded once per scheme and everything is read from that load: the
responses and their bodies, failed requests and errors, layout shifts, the images, the math, an
axe-core report and a run of axe's colour rules in a phone's width. The tests then assert on
these observations, each on its own kind of defect. A few pages are kept loading at once, so one
page's idle wait overlaps another's checks.

A test module that needs something more from every page registers a script with
``read_on_every_page(name, script)`` when it is imported (collection imports every module before
any test runs); each visit then holds the script's result in ``visit.reads[name]``, read after
the layout shifts and before anything on the page is changed. With ``phone=True`` the script
also runs once the page is narrowed to a phone's width, after every other check of the visit,
and its result is ``visit.phone_reads[name]``.
"""

from __future__ import annotations

import collections
import pathlib
import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

# The theme's shared assets: loaded once and cached across pages, so not charged to a page's
# weight (their bodies are not kept). Everything else a page loads counts, site-wide files of
# this site included (posenc.css, explainer.js and .css, mkdocstrings' CSS).
SHARED_ASSETS = re.compile(
    r"^/assets/(?:javascripts/bundle\.[^/]*\.js"  # Material's script
    r"|stylesheets/(?:main|palette)\.[^/]*\.css"  # Material's stylesheets
    r"|katex/"  # KaTeX's stylesheet and fonts
    r"|javascripts/workers/search\.[^/]*\.js|javascripts/lunr/"  # the search worker
    r"|images/favicon\.png)"  # Material's default icon
    r"|^/search/search_index\.json$"  # the search index
    r"|^/sitemap\.xml$"  # fetched once by Material's instant navigation
)

# Text that would mean TeX reached the reader unrendered (outside code, which may show TeX).
RAW_TEX_PROBE = """() => {
  const walker = document.createTreeWalker(document.querySelector('article') || document.body,
    NodeFilter.SHOW_TEXT, { acceptNode: (node) =>
      node.parentElement.closest('pre, code, script, style, .katex, textarea')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    if (/\\\\\\(|\\\\\\[|\\$\\$|\\\\frac|\\\\omega|\\\\sum/.test(text)) found.push(text.trim().slice(0, 80));
  }
  return found;
}"""

IMAGE_PROBE = """() => Array.from(document.images).map((img) => ({
  src: img.getAttribute('src'), alt: img.getAttribute('alt'),
  width: img.getAttribute('width'), height: img.getAttribute('height'),
  loaded: img.complete && img.naturalWidth > 0,
}))"""

# Every layout shift since the page began (buffered), each with the elements that moved.
LAYOUT_SHIFTS = """() => new Promise((resolve) => {
  const shifts = [];
  const describe = (node) => !node ? '(removed node)' : node.nodeType !== 1 ? node.nodeName
    : node.tagName.toLowerCase() + (node.id ? '#' + node.id : '')
      + (node.className && typeof node.className === 'string'
        ? '.' + node.className.trim().split(/\\s+/).join('.') : '');
  const rect = (r) => `(${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.width)}x${Math.round(r.height)})`;
  const take = (entries) => entries.forEach((e) => {
    if (!e.hadRecentInput) shifts.push({ value: e.value, at: Math.round(e.startTime),
      sources: (e.sources || []).map(
        (s) => describe(s.node) + ' ' + rect(s.previousRect) + '->' + rect(s.currentRect)) });
  });
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ type: 'layout-shift', buffered: true });
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
    take(observer.takeRecords());
    observer.disconnect();
    resolve(shifts);
  }, 250)));
})"""

# The window the visits are made in, and the phone-sized one some tests load pages in as well.
# The desktop one is Lighthouse's desktop preset's: its first screen, taller than most laptops',
# holds more of a short page, and a block drawn late there moves what follows it.
DESKTOP = {"width": 1350, "height": 940}
PHONE = {"width": 390, "height": 844}

# An address the site does not have: answered with the site's 404 page, which is visited too.
MISSING_PAGE = "/no/such/page/"

# A page that shifts is loaded again, up to this many loads in all (see the layout-shift test).
LAYOUT_ATTEMPTS = 3

# axe-core on the whole page: the rules it ran, and every violation flattened to one line per
# element. With a true argument only the rules that judge colours run: those of axe's default set
# that it tags cat.color (text contrast; links told apart from the text around them by colour
# alone); otherwise its default set. Rules off by default (the AAA contrast rule) stay off.
AXE_RUN = """async (coloursOnly) => {
  const colour = new Set(axe.getRules(['cat.color']).map((rule) => rule.ruleId));
  const rules = coloursOnly ? Object.fromEntries(axe.getRules().filter((rule) => !colour.has(rule.ruleId))
    .map((rule) => [rule.ruleId, { enabled: false }])) : {};
  const result = await axe.run(document, { resultTypes: ['violations'], rules });
  return {
    rules: [result.violations, result.passes, result.incomplete, result.inapplicable].flat().map((r) => r.id),
    violations: result.violations.flatMap((v) => v.nodes.map((n) => ({
      rule: v.id, impact: v.impact, target: n.target.join(' '),
      summary: (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 240),
    }))),
  };
}"""

OPEN_DETAILS = "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"

# Scripts the test modules asked to run on every visit, by name (see read_on_every_page), and
# those of them that run on a phone's width as well.
EXTRA_READS: dict[str, str] = {}
PHONE_READS: set[str] = set()


def read_on_every_page(name: str, script: str, phone: bool = False) -> str:
    """Have every visit run ``script`` (a page.evaluate function) and keep its result as
    ``visit.reads[name]``; with ``phone`` run it again at the end of the visit in a phone's width
    and keep that result as ``visit.phone_reads[name]``. Returns the name. Call it at import time,
    before the first visit."""
    if EXTRA_READS.get(name, script) != script:
        raise ValueError(f"two different scripts registered as {name!r}")
    EXTRA_READS[name] = script
    if phone:
        PHONE_READS.add(name)
    return name


# Blocks that posenc.css lets the browser skip while far from the viewport (content-visibility:
# auto) are drawn as they are when the reader scrolls to them, so that axe judges colours and
# scrolling on the page as it is read, not on boxes that have not been painted yet.
DRAW_SKIPPED = """() => document.querySelectorAll('body *').forEach((el) => {
  if (getComputedStyle(el).contentVisibility === 'auto') el.style.contentVisibility = 'visible';
})"""

# Two frames: the page's resize handlers have run and the new layout has been drawn.
NEXT_FRAME = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"

# Then the page's own scripts measure the drawn blocks again (overrides/main.html gives an
# overflowing equation its tab stop on resize), as they do when a reader scrolls a block into view.
# A block drawn for the first time may start a colour transition (a link easing into the dark
# scheme's colour); the checks read the colours it ends at, waiting at most a second.
AFTER_DRAWING = f"""async () => {{
  window.dispatchEvent(new Event('resize'));
  await ({NEXT_FRAME})();
  const easing = document.getAnimations().filter((a) => a instanceof CSSTransition).map((a) => a.finished);
  await Promise.race([Promise.allSettled(easing), new Promise((done) => setTimeout(done, 1000))]);
}}"""


def draw_skipped_blocks(page) -> None:
    """Draw every block the browser skipped, and let the page react, before a check reads it."""
    page.evaluate(DRAW_SKIPPED)
    page.evaluate(AFTER_DRAWING)


@dataclass
class Transfer:
    """One response: its URL and status, and its body when it counts towards the page's weight."""

    url: str
    status: int
    body: bytes | None  # None for the shared assets and data: URLs (not weighed)


@dataclass
class PageVisit:
    """What one load of a page showed, read before anything on the page was changed."""

    path: str
    status: int | None = None
    transfers: list[Transfer] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # requests that failed, with the reason
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    title: str = ""
    color_scheme: str | None = None  # the body's data-md-color-scheme
    images: list[dict] = field(default_factory=list)
    katex_errors: int = 0
    raw_tex: list[str] = field(default_factory=list)
    # The shifts of each load, until one load did not shift (at most LAYOUT_ATTEMPTS loads).
    layout_shifts: list[list[dict]] = field(default_factory=list)
    # axe-core's violations with every <details> opened, and the rules it ran (all of its
    # default set, or only those judging colours); None when axe-core is not installed.
    axe: list[dict] | None = None
    axe_rules: list[str] | None = None
    # axe-core's colour rules in a phone's width on the page as loaded (_phone_axe); None without axe.
    phone_axe: list[dict] | None = None
    # The results of the scripts registered with read_on_every_page, by name, in the desktop
    # window and (those registered with phone=True) in the phone's.
    reads: dict[str, object] = field(default_factory=dict)
    phone_reads: dict[str, object] = field(default_factory=dict)


class _Tab:
    """A browser tab that loads one page after another.

    A page opened in a new tab starts a new renderer process, which compiles axe-core and the
    site's scripts from nothing; a tab that goes on to the next page keeps its process, and V8
    reuses what it compiled. What the tab records goes to the load that caused it: a request, its
    response and its failure to the load whose document issued the request (a request of the
    previous page that the navigation cut off is not the new page's failure); a console error or
    an uncaught exception to the load in progress.
    """

    def __init__(self, context) -> None:
        self.page = page = context.new_page()
        # The tab's renderer keeps the files it has loaded; asked for one again once its time
        # to be reused is up (a few seconds for a freshly built file), it asks the server
        # whether it changed, and the answer is a 304 without a body. Every request goes to the
        # server instead, as in a reader's first visit, and is answered with the whole file.
        devtools = context.new_cdp_session(page)
        devtools.send("Network.enable")
        devtools.send("Network.setCacheDisabled", {"cacheDisabled": True})
        self.load: _Load | None = None  # the page being loaded or read in the tab
        self.issued_by: dict[object, _Load | None] = {}  # each request in flight, and whose it is
        page.on("request", self._issued)
        page.on("requestfinished", lambda request: self.issued_by.pop(request, None))
        page.on("requestfailed", self._failed)
        page.on("response", self._answered)
        page.on("console", lambda message: message.type == "error" and self._error(message.text))
        page.on("pageerror", lambda error: self._error(str(error)))

    def _issued(self, request) -> None:
        self.issued_by[request] = self.load

    def _answered(self, response) -> None:
        load = self.issued_by.get(response.request, self.load)
        if load is not None:
            load.responses.append(response)

    def _failed(self, request) -> None:
        load = self.issued_by.pop(request, self.load)
        if load is not None:
            load.failures.append(f"{request.url} ({request.failure})")

    def _error(self, text: str) -> None:
        if self.load is not None:
            self.load.errors.append(text)


class _Load:
    """A page whose navigation has started in a tab, and what the tab recorded of it."""

    def __init__(self, tab: _Tab, url: str, path: str) -> None:
        self.visit = PageVisit(path)
        self.tab = tab
        self.page = page = tab.page
        self.responses: list = []
        self.failures: list[str] = []
        self.errors: list[str] = []
        self.watching_shifts = False
        if page.viewport_size != DESKTOP:
            # The previous page was read last in a phone's width: it goes before the tab is
            # widened again (laying it out anew would be wasted), and this one loads on a desktop.
            page.goto("about:blank")
            page.set_viewport_size(DESKTOP)
        tab.load = self
        # Returns once the document starts arriving; the load goes on while other pages are read.
        self.response = page.goto(url, wait_until="commit")

    def watch_shifts(self) -> None:
        """Once the page has loaded and the network is idle, start LAYOUT_SHIFTS without waiting
        for it, so that its quiet time runs while the page before this one is read."""
        if not self.watching_shifts:
            self.page.wait_for_load_state("load")
            self.page.wait_for_load_state("networkidle")
            self.page.evaluate(f"() => {{ window.__posencLayoutShifts = ({LAYOUT_SHIFTS})(); }}")
            self.watching_shifts = True

    def layout_shifts(self) -> list[dict]:
        self.watch_shifts()
        return self.page.evaluate("() => window.__posencLayoutShifts")


def _transfer(response) -> Transfer:
    url = urlparse(response.url)
    body = None
    if url.scheme != "data" and not SHARED_ASSETS.search(url.path):
        try:
            body = response.body()
        except Exception:  # a redirect or aborted response has no body
            body = b""
    return Transfer(response.url, response.status, body)


def layout_shifts_of_a_load(page, url: str) -> list[dict]:
    """Load ``url`` in ``page`` and return its layout shifts (LAYOUT_SHIFTS) once the network is idle."""
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page.evaluate(LAYOUT_SHIFTS)


def _layout_shifts_of_a_fresh_load(context, url: str) -> list[dict]:
    page = context.new_page()
    shifts = layout_shifts_of_a_load(page, url)
    page.close()
    return shifts


def _phone_axe(page) -> list[dict]:
    """axe-core's colour rules on the page narrowed to a phone's width, before anything on it is
    drawn or opened, then the desktop window again.

    Lighthouse's mobile audit runs axe on the page as it loads at 390 px: the blocks posenc.css
    lets the browser skip are still at their stand-in heights, and a script asking a skipped block
    for its text's boxes gets them laid out past that height, over whatever follows (the footer, at
    the end of a page). On a phone the stacked tables made those boxes thousands of pixels long,
    which the desktop window, its blocks drawn first, never showed. A block drawn in the desktop
    window keeps its desktop height as its stand-in, so this is the phone's load approximated
    without a second load of the page.
    """
    page.set_viewport_size(PHONE)
    page.evaluate(AFTER_DRAWING)  # the page's resize handlers, and colours easing into the phone's layout
    violations = page.evaluate(AXE_RUN, True)["violations"]
    page.set_viewport_size(DESKTOP)
    page.evaluate(NEXT_FRAME)
    return violations


def _read(
    load: _Load, next_load: _Load | None, context, url: str, axe: pathlib.Path | None, axe_colours_only: bool
) -> PageVisit:
    page, visit = load.page, load.visit
    # The tab in front: in another, Chromium may hold an animation frame back for a second or
    # more, and the reads below wait for frames.
    page.bring_to_front()
    # Shifts first: nothing the checks below do to the page may count as the page's own shift.
    visit.layout_shifts.append(load.layout_shifts())
    if next_load is not None:
        next_load.watch_shifts()
    visit.status = load.response.status if load.response else None
    visit.transfers = [_transfer(response) for response in load.responses]
    visit.images = page.evaluate(IMAGE_PROBE)
    visit.katex_errors = page.locator(".katex-error").count()
    visit.raw_tex = page.evaluate(RAW_TEX_PROBE)
    visit.title = page.title()
    visit.color_scheme = page.get_attribute("body", "data-md-color-scheme")
    visit.failures, visit.errors = list(load.failures), list(load.errors)  # what the load itself did
    if axe is not None:
        visit.phone_axe = _phone_axe(page)
    draw_skipped_blocks(page)  # the reads and axe see every block as the reader sees it when there
    visit.reads = {name: page.evaluate(script) for name, script in EXTRA_READS.items()}
    if axe is not None:
        page.evaluate(OPEN_DETAILS)  # collapsed blocks are checked too
        found = page.evaluate(AXE_RUN, axe_colours_only)
        visit.axe, visit.axe_rules = found["violations"], found["rules"]
    if PHONE_READS:
        # The page as a phone lays it out: the same CSS and the page's own resize handlers a
        # load at that width gets, on the blocks drawn and (when axe ran) folded blocks open.
        page.set_viewport_size(PHONE)
        page.evaluate(NEXT_FRAME)
        visit.phone_reads = {name: page.evaluate(EXTRA_READS[name]) for name in sorted(PHONE_READS)}
    while visit.layout_shifts[-1] and len(visit.layout_shifts) < LAYOUT_ATTEMPTS:
        visit.layout_shifts.append(_layout_shifts_of_a_fresh_load(context, url))
    return visit


def visit_pages(
    context,
    base_url: str,
    paths: list[str],
    axe: pathlib.Path | None,
    axe_colours_only: bool = False,
    in_flight: int = 3,
) -> dict[str, PageVisit]:
    """Load each path once in ``context``, ``in_flight`` pages at a time; return the visits by path.
    axe-core runs its default rules on each page, or with ``axe_colours_only`` only those that
    judge colours (see AXE_RUN)."""
    if axe is not None:
        # Every page of the context starts with axe-core defined (it changes nothing on the page
        # until it is run): compiled as the page opens, it costs far less than adding it to each
        # loaded page as a script tag.
        context.add_init_script(path=str(axe))
    visits: dict[str, PageVisit] = {}
    loading: collections.deque[_Load] = collections.deque()
    idle: list[_Tab] = []  # tabs whose page has been read, ready for the next one

    def read_the_oldest() -> None:
        load = loading.popleft()
        visits[load.visit.path] = _read(
            load, loading[0] if loading else None, context, base_url + load.visit.path, axe, axe_colours_only
        )
        idle.append(load.tab)

    tabs: list[_Tab] = []
    try:
        for path in paths:
            if not idle:
                tabs.append(_Tab(context))
                idle.append(tabs[-1])
            loading.append(_Load(idle.pop(), base_url + path, path))
            if len(loading) >= in_flight:
                read_the_oldest()
        while loading:
            read_the_oldest()
    finally:
        for tab in tabs:
            tab.page.close()
    return visits
