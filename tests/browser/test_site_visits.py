"""The shared visit of every page (site_visits), on a scratch site whose pages misbehave on
purpose: each page's visit holds what that page did and nothing another page did, whether the
page was loaded in a new tab or in a tab that had read another page before it."""

from __future__ import annotations

import socket

import pytest
from support.browser import new_context
from support.site_server import serve
from support.site_visits import visit_pages

pytestmark = pytest.mark.browser

PAGE = (
    """<!doctype html><html lang="en"><title>{name}</title><link rel="icon" href="data:,">"""
    """<link rel="stylesheet" href="/{name}.css"><link rel="stylesheet" href="/shared.css">"""
    """<p>The page {name}.</p><p>A second paragraph.</p>{extra}</html>"""
)

# 0.3 s after it starts, a block appears above the text and pushes it down.
SHIFTS = (
    "<script>setTimeout(() => document.body.prepend(Object.assign("
    "document.createElement('div'), {style: 'height: 300px'})), 300)</script>"
)

# Each page's own behaviour, added to PAGE. The order is the order of the visit: with three pages
# loading at once, every page from the fourth on is loaded in a tab that read another page.
EXTRA = {
    "shifts-first": SHIFTS,
    "plain-1": "",
    "errors": "<script>console.error('logged by errors'); setTimeout(() => { throw new Error('thrown by errors'); })"
    "</script>",
    "fails": "<img alt='' src='http://unreachable.invalid/picture.png'>",
    # Once the page has been read (the visit's resize comes after its load), it asks a server that
    # never answers; the tab moves on and the navigation cuts that request off.
    "cut-off": "<script>addEventListener('resize', () => fetch('http://127.0.0.1:PORT/never'), {once: true})</script>",
    "plain-2": "",
    "shifts-later": SHIFTS,
    "plain-3": "",
    "plain-4": "",
}


@pytest.fixture(scope="module")
def visits(browser, tmp_path_factory):
    silent = socket.create_server(("127.0.0.1", 0))  # listens and never accepts: a request to it hangs
    port = str(silent.getsockname()[1])
    site = tmp_path_factory.mktemp("misbehaving-site")
    for name, extra in EXTRA.items():
        (site / name).mkdir()
        (site / name / "index.html").write_text(PAGE.format(name=name, extra=extra.replace("PORT", port)))
        (site / f"{name}.css").write_text(f"/* {name} */ p {{ margin: 1em; }}\n")
    # Written just now, so a browser would soon ask whether it changed (and be answered 304).
    (site / "shared.css").write_text("body { font-family: serif; }\n")
    server, url = serve(site)
    context = new_context(browser, "light")
    try:
        yield visit_pages(context, url, [f"/{name}/" for name in EXTRA], axe=None)
    finally:
        context.close()
        server.shutdown()
        server.server_close()
        silent.close()


def test_each_visit_holds_its_own_files_whole_and_no_other_pages(visits):
    for name in EXTRA:
        transfers = visits[f"/{name}/"].transfers
        own = {transfer.url.split("/", 3)[3] for transfer in transfers}
        assert {f"{name}/", f"{name}.css", "shared.css"} <= own, name
        assert all(transfer.status == 200 and transfer.body for transfer in transfers), (
            name,
            [(transfer.url, transfer.status) for transfer in transfers],
        )
        assert not {f"{other}.css" for other in EXTRA if other != name} & own, name


def test_a_layout_shift_is_seen_in_a_new_tab_and_in_a_reused_one(visits):
    for name in EXTRA:
        shifts = visits[f"/{name}/"].layout_shifts[0]
        if name.startswith("shifts"):
            assert shifts and shifts[0]["value"] > 0, name
        else:
            assert shifts == [], name


def test_errors_and_failures_go_to_the_page_that_made_them(visits):
    errors = visits["/errors/"].errors
    assert any("logged by errors" in error for error in errors), errors
    assert any("thrown by errors" in error for error in errors), errors
    assert [failure.split(" ")[0] for failure in visits["/fails/"].failures] == [
        "http://unreachable.invalid/picture.png"
    ]
    for name in EXTRA:
        if name not in ("errors", "fails"):
            visit = visits[f"/{name}/"]
            # The request cut-off's page made after it was read is nobody's failure.
            assert visit.errors == [] and visit.failures == [], (name, visit.errors, visit.failures)
