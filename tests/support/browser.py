"""Chromium as the browser tests drive it: the binary, its switches (no host but the site's
is reachable) and a fresh context in one colour scheme (tests/conftest.py's fixtures use these)."""

from __future__ import annotations

import os

from support.site_visits import DESKTOP

CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
# Every host name resolves to nothing except the loopback address the site is served from,
# so neither a page nor Chromium itself can reach (or even look up) another machine.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def new_context(browser, scheme: str = "light", **options):
    """A fresh browser context in one colour scheme, service workers blocked, in the desktop
    window; ``options`` (Playwright's new_context options) add to or replace these."""
    return browser.new_context(**{"color_scheme": scheme, "service_workers": "block", "viewport": DESKTOP} | options)


def open_page_with_errors(context, url: str, until_ready=None):
    """A new page at ``url``, loaded, and the list its console errors and uncaught exceptions are
    added to as they come; ``until_ready(page)``, when given, then waits for what the test needs."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(url, wait_until="load")
    if until_ready is not None:
        until_ready(page)
    return page, errors


def read_panel_checking_readouts(page, panel: str, read: str, expected_readouts, params: dict | None = None) -> dict:
    """What the script ``read`` returns for the panel at selector ``panel``, after checking what every
    panel test checks first: the values its controls hold (``read``'s ``params``) are ``params`` when
    given, and its readouts (``read``'s ``readouts``) are ``expected_readouts`` of those values."""
    state = page.locator(panel).evaluate(read)
    held = state["params"]
    # pytest explains a failed assert only in test modules and conftest files, not in this helper:
    # each message shows both sides itself.
    if params is not None:
        assert held == params, f"the controls hold {held}, expected {params}"
    expected = expected_readouts(held)
    assert state["readouts"] == expected, f"at {held} the readouts are {state['readouts']}, expected {expected}"
    return state
