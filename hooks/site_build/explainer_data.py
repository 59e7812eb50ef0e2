"""The explainer's data script: the page reads the one JSON file its figures and tests read."""

from __future__ import annotations

import json

from mkdocs.structure.files import File

from posenc.site import explainer_demo

# Where the script is in the site; the explainer's front matter names it under ``scripts:``.
SCRIPT_SRC = "javascripts/explainer-demo.js"


def explainer_data_script() -> str:
    """posenc/site/explainer_demo.json as a script that sets ``window.posencExplainerDemo``."""
    data = json.dumps(json.loads(explainer_demo.DATA_FILE.read_text()), separators=(",", ":"))
    header = "// Generated from posenc/site/explainer_demo.json when the site is built."
    return f"{header}\nwindow.posencExplainerDemo = {data};\n"


def explainer_data_file(config) -> File:
    return File.generated(config, SCRIPT_SRC, content=explainer_data_script())
