"""The site's BibTeX records as the Cite page prints them, and which pages are articles."""

from __future__ import annotations

import re

import yaml

from support import ROOT

NAV = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
RECORD = re.compile(r"^@misc\{(?P<key>[^,]+),\n(?P<body>.*?)^\}$", re.S | re.M)


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def records(text: str) -> dict[str, str]:
    return {m["key"]: m["body"] for m in RECORD.finditer(text)}


def field(body: str, name: str) -> str:
    return re.search(rf"^  {name}\s*=\s*(.*?),?$", body, re.M)[1]


def articles() -> list[str]:
    """Every page of the Learn and Implement sections except the generated API reference."""
    pages = [
        path
        for section in NAV
        if isinstance(section, dict)
        for name in ("Learn", "Implement")
        for item in section.get(name, [])
        for path in item.values()
    ]
    return [path for path in pages if path != "api.md"]


def record_key(path: str) -> str:
    """derivations/index.md -> posenc-derivations; notebooks/x.ipynb -> posenc-x."""
    stem = path.rsplit(".", 1)[0].removesuffix("/index")
    return "posenc-" + stem.rsplit("/", 1)[-1]
