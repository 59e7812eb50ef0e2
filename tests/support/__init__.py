"""What the test folders share, in one place, so that no test file imports another: where the
project and the built site are (``support`` itself), the site's server and its visit of every
page (``site_server``, ``site_visits``), a browser context (``browser``), the hooks as MkDocs loads
them (``hooks``), the BibTeX records (``cite``), the panels' reference arithmetic in Python with
Node to run their modules (``explainer``, ``long_context``) and the derivation IDs (``derivations``).
tests/conftest.py puts tests/ on ``sys.path``, so every folder imports this as ``support``."""

from __future__ import annotations

import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The built site under test; another build folder can be named for a one-off run.
SITE = pathlib.Path(os.environ.get("POSENC_SITE_DIR", ROOT / "site"))
# How overrides/main.html lists the scripts it loads for one page.
PAGE_SCRIPTS = re.compile(r"var pageScripts = (\[[^\]]*\]);")
