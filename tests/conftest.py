"""Shared fixtures: the built site served from 127.0.0.1, Debian's Chromium via Playwright (one
browser for the whole run), and one load of every page per colour scheme for the page-wide checks.

Which fixture a new browser test should use (a page load costs far more than a check on it):

* Something to check on every page: register a script with ``support.site_visits.read_on_every_page``
  at import time and read its result from ``visits[path].reads[name]`` (``visits`` is this
  scheme's load of every page; the test then runs in both schemes); with ``phone=True`` it is
  also read in a phone's width, as ``visits[path].phone_reads[name]``. Already recorded on each
  visit: status, transfers with bodies, failed requests, console errors, layout shifts, images,
  KaTeX errors, raw TeX, title, colour scheme and axe-core's violations (every default rule in
  the light scheme, the colour rules in the dark one: see ``site_visits`` below; and the colour
  rules in a phone's width, as ``phone_axe``).
* One page, interacted with: ``context`` (a fresh context in the ``scheme`` under test) or
  ``new_context(browser, scheme, **options)`` (viewport, no JavaScript, touch); open it with
  ``open_page_with_errors`` (both from ``support.browser``). Never launch a browser of your own:
  ``browser`` is one for the session (the one test that needs other switches, scrollbars drawn,
  starts its browser from ``browser.browser_type``).
* ``base_url`` serves ``site_dir``; ``site_paths`` lists the sitemap's pages.
"""

from __future__ import annotations

import os
import pathlib
import re
import sys
import xml.etree.ElementTree as ElementTree
from urllib.parse import urlparse

import pytest
from support import ROOT, SITE
from support.browser import CHROMIUM, CHROMIUM_ARGS, new_context
from support.site_server import serve
from support.site_visits import MISSING_PAGE, PageVisit, visit_pages

# tests/peers compares posenc with torch and transformers; `make test-peers` runs it in its own venv.
# tests/bench holds `make bench` and `make audit`, scripts that print figures rather than test.
collect_ignore = ["peers", "bench"]

# The site's build package, importable as ``site_build`` just as the hooks import it, so that the
# tests and a build in this process share its one copy (hooks/site_build/__init__.py says why).
if str(ROOT / "hooks") not in sys.path:
    sys.path.append(str(ROOT / "hooks"))
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="session")
def site_dir() -> pathlib.Path:
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make` (or `make test`, which builds it first)")
    return SITE


@pytest.fixture(scope="session")
def base_url(site_dir) -> str:
    server, url = serve(site_dir)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def site_paths(site_dir) -> list[str]:
    """The path of every page of the built site, from its sitemap."""
    tree = ElementTree.parse(site_dir / "sitemap.xml")
    locations = [element.text for element in tree.iter() if element.tag.endswith("loc")]
    paths = sorted(urlparse(location).path for location in locations)
    assert paths and "/" in paths, "the sitemap lists no pages"
    return paths


@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        message = f"Chromium not found at {CHROMIUM} (install Debian's chromium or set POSENC_CHROMIUM)"
        if os.environ.get("CI"):
            pytest.fail(message)  # browser tests never skip in CI
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


# Tables that tests leave for the end of the run (tests/built_site/test_page_budgets.py: each page's measured
# weight beside its budget), printed after the results so that `make test` shows them.
_SUMMARY_TABLES = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def report_table(pytestconfig):
    """report_table(title, text) adds a table to the summary printed at the end of the run."""
    tables = pytestconfig.stash.setdefault(_SUMMARY_TABLES, [])
    return lambda title, text: tables.append((title, text))


def pytest_sessionfinish(session):
    # Under pytest-xdist (`make test`) a worker's tables would end with the worker: they travel
    # to the controller, which prints the summary, with what the worker reports when it is done.
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["summary_tables"] = session.config.stash.get(_SUMMARY_TABLES, [])


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: only called when tests run in workers
def pytest_testnodedown(node, error):
    tables = getattr(node, "workeroutput", {}).get("summary_tables", [])
    node.config.stash.setdefault(_SUMMARY_TABLES, []).extend(tuple(table) for table in tables)


def pytest_terminal_summary(terminalreporter, config):
    for title, text in config.stash.get(_SUMMARY_TABLES, []):
        terminalreporter.write_sep("-", title)
        terminalreporter.write_line(text)


# The colour scheme a test runs in, from its id ("test_x[dark]", "test_y[light-phone]").
SCHEME_IN_ID = re.compile(r"\[(?:[^\]]*-)?(light|dark)(?:-[^\]]*)?\]$")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's: how `make test` (--dist loadgroup) hands tests to workers
def pytest_xdist_make_scheduler(config, log):
    """Every test run in one colour scheme goes to one worker, so that scheme's visit of every
    page is made once, and the two schemes run at the same time on two workers; the other tests
    go to a worker a file at a time, so a file's module fixtures (both renders of every figure,
    the PDF's text) are made once. (xdist's own groups, set with its xdist_group mark, are lost
    under pytest 9.2, whose node ids xdist can no longer rename.)"""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class BySchemeScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scheme = SCHEME_IN_ID.search(nodeid)
            return f"scheme {scheme[1]}" if scheme else nodeid.split("::", 1)[0]

    return BySchemeScheduling(config, log)


@pytest.fixture(params=["light", "dark"])
def scheme(request) -> str:
    return request.param


@pytest.fixture
def context(browser, scheme):
    context = new_context(browser, scheme)
    yield context
    context.close()


@pytest.fixture(scope="session")
def axe_script() -> pathlib.Path:
    if not AXE.is_file():
        pytest.fail("axe-core is not installed: run `npm ci` (or `make`)")
    return AXE


@pytest.fixture(scope="session")
def site_visits(browser, base_url, site_paths):
    """Every page of the sitemap and the 404 page, each loaded once per colour scheme, on first use.

    axe-core runs all its default rules on each page in the light scheme and, in the dark one, the
    rules that judge colours: the others read the page's structure, names and roles, which the
    scheme does not change (posenc's stylesheets change colours only). The header's scheme toggle,
    which does differ, is checked with every rule in both schemes by test_page_audits."""
    visits: dict[str, dict[str, PageVisit]] = {}

    def of(scheme: str) -> dict[str, PageVisit]:
        if scheme not in visits:
            context = new_context(browser, scheme)
            try:
                visits[scheme] = visit_pages(
                    context,
                    base_url,
                    site_paths + [MISSING_PAGE],
                    AXE if AXE.is_file() else None,
                    axe_colours_only=scheme == "dark",
                )
            finally:
                context.close()
        return visits[scheme]

    return of


@pytest.fixture
def visits(site_visits, scheme) -> dict[str, PageVisit]:
    """This scheme's visit of every page, by path (MISSING_PAGE holds the 404 page's)."""
    return site_visits(scheme)
