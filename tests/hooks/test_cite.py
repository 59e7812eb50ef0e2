"""The BibTeX records of the site: one record builder, one source of version and year.

CITATION.cff holds the title and release date and posenc.__version__ the version; the hook derives
every record (the site, each article, each derivation) and the Cite page's release text from them, and the URLs in
the records follow the Cite page's rule (a numbered release's own folder).
"""

from __future__ import annotations

import pathlib
import re
import tomllib

import pytest
from mkdocs.exceptions import PluginError

import posenc
from site_build import paths
from support.cite import NAV, articles, citation, field, record_key, records
from support.hooks import expand, fake_page, markers_hook

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cite_markdown(markdown: str, site_url: str = "https://posenc.github.io/") -> str:
    """``markdown`` expanded as the Cite page, under the real nav, for a build at ``site_url``."""
    return markers_hook.on_page_markdown(markdown, fake_page("cite.md"), {"site_url": site_url, "nav": NAV}, None)


def test_the_version_is_written_once_in_the_package():
    """pyproject.toml reads posenc.__version__ and CITATION.cff leaves the version to it."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "posenc.__version__"}
    assert "version" not in citation()
    assert re.fullmatch(r"\d+\.\d+\.\d+", posenc.__version__)


def test_every_article_in_the_nav_has_an_entry_linking_it_and_its_record_folded_under_it():
    out = cite_markdown("{{ cite: articles }}")
    found = records(out)
    blocks = out.split("\n\n</details>")
    for path in articles():
        assert record_key(path) in found, path
        (block,) = [block for block in blocks if f"@misc{{{record_key(path)}," in block]
        # the entry's title links the article, and the record is folded under it, closed
        entry = re.search(r"^(.*)\n\{ \.posenc-reference \}\n\n<details class=\"posenc-bibtex\" markdown>", block, re.M)
        assert entry and f"*]({path})" in entry[1], path
        title = field(found[record_key(path)], "title").strip("{},")
        assert (
            f"[*{title}*]({path})" in entry[1] and f"`{field(found[record_key(path)], 'url').strip('{},')}`" in entry[1]
        )
    assert len(found) == len(articles())
    # the two articles the hand-written list had left out
    assert {"posenc-conventions", "posenc-precision", "posenc-explicit-position-ids"} <= set(found)
    assert "posenc-api" not in found  # the API reference opts out with `cite: false`


def test_records_take_year_and_month_from_citation_cff_and_the_version_from_the_package():
    meta = citation()
    date = str(meta["date-released"])
    year, month = date[:4], ("jan feb mar apr may jun jul aug sep oct nov dec".split())[int(date[5:7]) - 1]
    out = cite_markdown("{{ cite: site }}\n\n{{ cite: articles }}\n\n{{ bibtex: kernel }}")
    found = records(out)
    assert {"posenc" + year, "posenc-guide", "posenc-kernel"} <= set(found)
    for key, body in found.items():
        assert field(body, "year") == "{" + year + "}", key
        assert field(body, "version") == "{" + posenc.__version__ + "}", key
        assert field(body, "month") == month, key
    assert meta["title"] in found["posenc" + year]


def test_a_new_release_changes_every_record(tmp_path, monkeypatch):
    """Nothing about the release is written anywhere else: change the version in the package and
    the date in CITATION.cff, and all follows."""
    monkeypatch.setattr(posenc, "__version__", "3.4.5")
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    text = re.sub(r"^date-released: .*$", 'date-released: "2031-02-03"', text, flags=re.M)
    moved = tmp_path / "CITATION.cff"
    moved.write_text(text, encoding="utf-8")
    monkeypatch.setattr(paths, "CITATION", moved)
    out = cite_markdown("{{ release }}\n\n{{ cite: site }}\n\n{{ cite: articles }}\n\n{{ bibtex: kernel }}")
    assert out.startswith("version 3.4.5, released 3 February 2031\n")
    found = records(out)
    assert "posenc2031" in found
    for key, body in found.items():
        assert field(body, "year") == "{2031}" and field(body, "month") == "feb", key
        assert field(body, "version") == "{3.4.5}", key
        assert "https://posenc.github.io/3.4.5/" in field(body, "url"), key


def test_authors_come_from_citation_cff(tmp_path, monkeypatch):
    """A person is "Family, Given", an entity's name is braced so BibTeX keeps it whole; the order is the file's."""
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    people = "authors:\n  - family-names: Noether\n    given-names: Emmy\n  - name: The Example Lab\n"
    text = re.sub(r"^authors:\n(?:  .*\n)+", people, text, flags=re.M)
    moved = tmp_path / "CITATION.cff"
    moved.write_text(text, encoding="utf-8")
    monkeypatch.setattr(paths, "CITATION", moved)
    found = records(cite_markdown("{{ cite: site }}\n\n{{ cite: articles }}\n\n{{ bibtex: kernel }}"))
    assert found
    for key, body in found.items():
        assert field(body, "author") == "{Noether, Emmy and {The Example Lab}}", key


def test_record_urls_name_a_numbered_release_never_dev_or_latest():
    version = posenc.__version__
    cases = {
        "https://posenc.github.io/": f"https://posenc.github.io/{version}/",  # make
        "https://posenc.github.io/9.9": "https://posenc.github.io/9.9/",  # mike, release 9.9
        "https://posenc.github.io/dev": f"https://posenc.github.io/{version}/",  # mike, main
    }
    for site_url, root in cases.items():
        out = cite_markdown(
            "{{ cite: site }}\n{{ cite: articles }}\n{{ bibtex: kernel }}\n{{ url: derivations/kernel/ }}", site_url
        )
        urls = re.findall(r"^  url\s*=\s*\{([^}]*)\}", out, re.M) + re.findall(r"\\url\{([^}]*)\}", out)
        assert urls and all(url.startswith(root) for url in urls), (site_url, urls)
        assert f"`{root}derivations/kernel/`" in out
        assert f"{root}rope/" in urls and f"{root}derivations/kernel/" in urls


def test_the_cite_page_writes_no_record_or_release_by_hand():
    """Its records and release come from markers, so they cannot drift from CITATION.cff."""
    source = (ROOT / "docs" / "cite.md").read_text(encoding="utf-8")
    assert "@misc" not in source
    assert posenc.__version__ not in source
    assert "{{ cite: site }}" in source and "{{ cite: articles }}" in source and "{{ release }}" in source
    builder = (ROOT / "hooks" / "site_build" / "citations.py").read_text(encoding="utf-8")
    assert not re.search(r"year\s*=\s*\{+\d{4}", builder), "a year written into the record builder"


def test_an_unknown_cite_marker_stops_the_build():
    with pytest.raises(PluginError, match="unknown cite marker 'everything'"):
        cite_markdown("{{ cite: everything }}")
    assert expand("{{ bibtex: kernel }}").count("@misc{posenc-kernel,") == 1
