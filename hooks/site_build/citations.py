"""What readers cite: the release in CITATION.cff, the address to cite, and the BibTeX records.

CITATION.cff is the one source of title, authors and release date, and ``posenc.__version__``
(which pyproject.toml reads too) the one source of the version: the records of the site, of each
article and of each derivation, the Cite page and the pages' citation tags (``page_meta``) are
all derived from them here.
"""

from __future__ import annotations

import datetime
import functools
import posixpath
import re
import textwrap
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils.meta import get_data

import posenc

from . import paths


@functools.lru_cache(maxsize=4)
def _citation_file(text: str) -> dict:
    """CITATION.cff's ``text`` parsed, once for each text (every page's head reads it)."""
    return yaml.safe_load(text)


def release() -> dict:
    """Title, version, date and authors of the release the citations describe."""
    data = _citation_file(paths.CITATION.read_text(encoding="utf-8"))
    released = data["date-released"]
    if isinstance(released, str):
        released = datetime.date.fromisoformat(released)
    authors = [cff_author(author) for author in data["authors"]]
    return {"title": data["title"], "version": posenc.__version__, "date": released, "authors": authors}


def cff_author(author: dict) -> tuple[str, bool]:
    """(name, whether it names an entity) of one CITATION.cff author; a person reads "Family, Given"."""
    if "name" in author:
        return author["name"], True
    return f"{author['family-names']}, {author['given-names']}", False


def release_text() -> str:
    """``{{ release }}``: "version X, released D Month YYYY"."""
    described = release()
    date = described["date"]
    return f"version {described['version']}, released {date.day} {date:%B} {date.year}"


RELEASE_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# Folders that mike fills with something other than one fixed release (.github/workflows/deploy.yml).
MIKE_ALIASES = {"dev", "latest"}


def cited_root(site_url: str) -> str:
    """Root of the address to cite, following the Cite page's rule: a numbered release's folder.

    mike builds release X with site_url ``.../X``, which is already that folder. Any other build
    (a local one, or the ``dev`` alias, which the Cite page says not to cite) names the folder
    of the release CITATION.cff describes.
    """
    root = site_url.rstrip("/")
    last = urlsplit(root).path.rsplit("/", 1)[-1]
    if RELEASE_NUMBER.fullmatch(last):
        return root + "/"
    if last in MIKE_ALIASES:
        root = root[: -len(last)].rstrip("/")
    return f"{root}/{release()['version']}/"


def record(key: str, title: str, url: str, note: str) -> str:
    """One BibTeX record of posenc; ``title`` is the field's content, braces included."""
    described = release()
    # An entity's name is braced so that BibTeX does not split it into given and family names.
    authors = " and ".join(f"{{{name}}}" if entity else name for name, entity in described["authors"])
    return textwrap.dedent(
        f"""\
        @misc{{{key},
          title        = {{{title}}},
          author       = {{{authors}}},
          year         = {{{described["date"].year}}},
          month        = {described["date"].strftime("%b").lower()},
          version      = {{{described["version"]}}},
          howpublished = {{\\url{{{url}}}}},
          url          = {{{url}}},
          note         = {{{note}}}
        }}"""
    )


def bibtex(entry, site_url: str) -> str:
    """The record of derivation ``entry`` (a registry entry), citing its own page."""
    return record(
        f"posenc-{entry.id}",
        f"{{{entry.title}}} (posenc derivation {entry.id})",
        f"{cited_root(site_url)}derivations/{entry.id}/",
        f"Statement proved with SymPy; stable ID {entry.id}",
    )


# The nav sections whose pages are articles a reader may cite; a page opts out with
# ``cite: false`` in its front matter (the API reference, generated from docstrings).
ARTICLE_SECTIONS = ("Learn", "Implement")


@functools.lru_cache(maxsize=256)
def _front_matter(markdown: str) -> dict:
    """A page's front matter, parsed once per text: every page's citation metadata lists the
    articles, so each article's YAML was otherwise parsed once per page of the site."""
    return get_data(markdown)[1]


def articles(config) -> list[tuple[str, str, str]]:
    """(docs path, URL path, title) of every citable page in the nav's article sections."""
    items = [
        (label, path)
        for section in config["nav"]
        if isinstance(section, dict)
        for name, entries in section.items()
        if name in ARTICLE_SECTIONS
        for item in entries
        for label, path in item.items()
    ]
    if not items:
        raise PluginError(f"the nav has none of the article sections {ARTICLE_SECTIONS} to cite")
    found = []
    for label, path in items:
        meta = _front_matter((paths.DOCS / path).read_text(encoding="utf-8")) if path.endswith(".md") else {}
        if meta.get("cite", True) is False:
            continue
        stem = posixpath.splitext(path)[0]
        url_path = stem[: -len("index")] if stem.endswith("index") else stem + "/"
        found.append((path, url_path, meta.get("title", label)))
    return found


def cite_markdown(what: str, page_src: str, config) -> str:
    """``{{ cite: site }}`` (the site's entry and record) or ``{{ cite: articles }}`` (an entry per
    article, its title linking to the article, its record folded under it)."""
    described = release()
    root = cited_root(config["site_url"])
    if what == "site":
        site = record(
            f"posenc{described['date'].year}", f"{{{described['title']}}}", root, f"Version {described['version']}"
        )
        return f"{reference_block(parse_record(site), own=True)}\n\n```bibtex\n{site}\n```"
    if what == "articles":
        blocks = []
        for path, url_path, title in articles(config):
            url = f"{root}{url_path}"
            key = "posenc-" + url_path.rstrip("/").rsplit("/", 1)[-1]
            text = record(key, f"{{{title}}}", url, f"Article of the posenc site, version {described['version']}")
            entry = reference_block(parse_record(text), paths.relative(page_src, path), own=True)
            blocks.append(f"{entry}\n\n{folded_bibtex(text)}")
        return "\n\n".join(blocks)
    raise PluginError(f"unknown cite marker {what!r} (known: site, articles)")


# ---------------------------------------------------------------------------------------
# BibTeX records read back, and the formatted entry each one gives

# The LaTeX that the records use: accents over a letter, letters of their own, escaped characters.
ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "c": "\u0327",
    "v": "\u030c",
    "u": "\u0306",
    "H": "\u030b",
    "r": "\u030a",
    "k": "\u0328",
}
LETTERS = {
    "L": "Ł",
    "l": "ł",
    "o": "ø",
    "O": "Ø",
    "ss": "ß",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "aa": "å",
    "AA": "Å",
    "i": "ı",
}
ESCAPED = set("#&%$_{}")
MONTHS = dict(zip("jan feb mar apr may jun jul aug sep oct nov dec".split(), range(1, 13), strict=True))
ENTRY_TYPES = ("article", "inproceedings", "techreport", "misc")
# Up to this many authors are all named; a longer list names the first three, then "et al.".
MAX_NAMED_AUTHORS = 10
RECORD_OPENING = re.compile(r"@(?P<type>[A-Za-z]+)\{(?P<key>[^,\s{}]*),")
FIELD_NAME = re.compile(r"(?P<name>[A-Za-z]+)\s*=\s*")
ANCHOR_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


@dataclass(frozen=True)
class BibRecord:
    """One BibTeX record: its entry type, key and fields (values without their outer braces), and its text."""

    type: str
    key: str
    fields: dict[str, str]
    text: str


def _closing_brace(text: str, start: int, what: str) -> int:
    """The index of the brace that closes the one at ``start``; an unclosed brace names ``what``."""
    depth = 0
    position = start
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return position
        position += 1
    raise PluginError(f"{what}: a brace is never closed")


def parse_record(text: str) -> BibRecord:
    """The record in ``text`` (one ``@type{key, field = {value}, ...}``); anything else is refused, named."""
    source = text.strip()
    opening = RECORD_OPENING.match(source)
    if opening is None:
        raise PluginError(f"not a BibTeX record (expected @type{{key, ...}}): {source[:60]!r}")
    key, kind = opening["key"], opening["type"].lower()
    what = f"BibTeX record {key!r}"
    if not ANCHOR_KEY.fullmatch(key):
        raise PluginError(f"{what}: a key is letters, digits, '-' and '_' (it is also the entry's anchor)")
    if _closing_brace(source, opening.end() - len(key) - 2, what) != len(source) - 1:
        raise PluginError(f"{what}: text after the record's closing brace")
    fields: dict[str, str] = {}
    position = opening.end()
    while True:
        while position < len(source) and source[position] in " \t\n,":
            position += 1
        if position >= len(source) - 1:
            break
        name = FIELD_NAME.match(source, position)
        if name is None:
            raise PluginError(f"{what}: expected a field (name = {{value}}) at {source[position : position + 30]!r}")
        field = name["name"].lower()
        if field in fields:
            raise PluginError(f"{what}: field {field!r} given twice")
        position = name.end()
        if source[position] == "{":
            end = _closing_brace(source, position, what)
            fields[field] = source[position + 1 : end]
            position = end + 1
        else:
            bare = re.compile(r"[A-Za-z0-9]+").match(source, position)
            if bare is None:
                raise PluginError(f"{what}: the value of {field!r} must be in braces, or a number or month")
            fields[field] = bare[0]
            position = bare.end()
    return BibRecord(kind, key, fields, source)


def _latex_segments(value: str, what: str) -> list[tuple[str, str]]:
    """``value`` as ("text", Unicode) and ("url", address) pieces; LaTeX this module does not know is refused."""
    pieces: list[tuple[str, str]] = []
    text: list[str] = []
    position = 0

    def argument(at: int) -> tuple[str, int]:
        """The argument of a command: a braced group, or the one character at ``at``."""
        if at < len(value) and value[at] == "{":
            end = _closing_brace(value, at, what)
            return value[at + 1 : end], end + 1
        if at < len(value):
            return value[at], at + 1
        raise PluginError(f"{what}: a LaTeX command at the end of {value!r} lacks its argument")

    while position < len(value):
        char = value[position]
        if char in "{}":
            position += 1
        elif value.startswith("---", position):
            text.append("\u2014")
            position += 3
        elif value.startswith("--", position):
            text.append("\u2013")
            position += 2
        elif char == "~":
            text.append("\u00a0")
            position += 1
        elif char == "\\":
            command = re.compile(r"[A-Za-z]+|.", re.S).match(value, position + 1)
            name = command[0] if command else ""
            after = position + 1 + len(name)
            if name in ESCAPED or name == " ":  # "\ " is a space that ends no sentence
                text.append(name)
                position = after
            elif name == "url":
                address, position = argument(after)
                if text:
                    pieces.append(("text", "".join(text)))
                    text = []
                pieces.append(("url", address.strip()))
            elif name in ACCENTS:
                while name.isalpha() and after < len(value) and value[after] == " ":
                    after += 1  # "\c c" as well as "\c{c}"
                base, position = argument(after)
                letter = "".join(part for kind, part in _latex_segments(base, what) if kind == "text")
                text.append(unicodedata.normalize("NFC", letter[:1] + ACCENTS[name] + letter[1:]))
            elif name in LETTERS:
                text.append(LETTERS[name])
                position = after
                if position < len(value) and value[position] == " ":
                    position += 1  # the space that ends a command's name is not text
            else:
                raise PluginError(f"{what}: unknown LaTeX command \\{name} in {value!r}")
        else:
            text.append(char)
            position += 1
    if text:
        pieces.append(("text", "".join(text)))
    # Line breaks inside a field are white space, as BibTeX reads them.
    return [(kind, re.sub(r"\s+", " ", part) if kind == "text" else part) for kind, part in pieces]


def latex_text(value: str, what: str = "BibTeX") -> str:
    """``value`` (a field's LaTeX) as plain Unicode text; a ``\\url`` reads as its address."""
    return "".join(part for _, part in _latex_segments(value, what)).strip()


def markdown_escape(text: str) -> str:
    return MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _link(address: str) -> str:
    shown = re.sub(r"^https?://", "", address).rstrip("/")
    return f"[{markdown_escape(shown)}]({address})"


def latex_markdown(value: str, what: str = "BibTeX") -> str:
    """``value`` (a field's LaTeX) as Markdown text, each ``\\url`` a link."""
    pieces = _latex_segments(value, what)
    return "".join(markdown_escape(part) if kind == "text" else _link(part) for kind, part in pieces).strip()


def _depth_zero_split(value: str, separator: re.Pattern) -> list[str]:
    """``value`` cut at each match of ``separator`` outside braces."""
    parts, depth, last = [], 0, 0
    position = 0
    while position < len(value):
        char = value[position]
        depth += {"{": 1, "}": -1}.get(char, 0)
        match = separator.match(value, position) if depth == 0 else None
        if match and match.end() > position:
            parts.append(value[last:position])
            last = position = match.end()
            continue
        position += 1
    parts.append(value[last:])
    return [part.strip() for part in parts]


def author_names(record: BibRecord) -> tuple[list[str], bool]:
    """The record's authors as read ("Given Family", an entity's name whole), and whether it ends with "others"."""
    what = f"BibTeX record {record.key!r}"
    raw = _depth_zero_split(" ".join(record.fields["author"].split()), re.compile(r"\s+and\s+"))
    others = raw[-1] == "others"
    names = []
    for name in raw[:-1] if others else raw:
        if not name:
            raise PluginError(f"{what}: an empty name in its author list")
        if name.startswith("{") and _closing_brace(name, 0, what) == len(name) - 1:
            names.append(latex_text(name[1:-1], what))  # an entity, kept whole
            continue
        parts = _depth_zero_split(name, re.compile(r","))
        if len(parts) == 1:
            names.append(latex_text(parts[0], what))
        elif len(parts) == 2:
            names.append(latex_text(f"{parts[1]} {parts[0]}", what))
        elif len(parts) == 3:
            names.append(latex_text(f"{parts[2]} {parts[0]}, {parts[1]}", what))
        else:
            raise PluginError(f"{what}: cannot read the name {name!r} (Family, Given is expected)")
    return names, others


def authors_text(record: BibRecord) -> str:
    """The authors as the formatted entry names them: "A, B and C", or "A, B, C et al."."""
    names, others = author_names(record)
    if len(names) > MAX_NAMED_AUTHORS:
        names, others = names[:3], True
    if others:
        return ", ".join(names) + " et al."
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def record_date(record: BibRecord) -> str:
    """The year, after its month when the record names one ("May 2021")."""
    year = record.fields["year"]
    month = record.fields.get("month")
    if month is None:
        return year
    number = MONTHS.get(month.lower()[:3]) if not month.isdigit() else int(month)
    if number is None or not 1 <= number <= 12:
        raise PluginError(f"BibTeX record {record.key!r}: unknown month {month!r}")
    return f"{datetime.date(2000, number, 1):%B} {year}"


def _pages(value: str) -> str:
    return latex_text(value).replace("-", "\u2013").replace("\u2013\u2013", "\u2013")


def _sentence(text: str) -> str:
    """``text`` ended by a full stop, unless it already ends a sentence."""
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def venue(record: BibRecord) -> str:
    """Where the work appeared, as Markdown: the journal, the proceedings, the institution or how it was published."""
    fields, what = record.fields, f"BibTeX record {record.key!r}"
    if record.type == "article":
        text = latex_markdown(fields["journal"], what) if "journal" in fields else ""
        if "volume" in fields:
            text += f", {latex_markdown(fields['volume'], what)}"
            if "number" in fields:
                text += f"({latex_markdown(fields['number'], what)})"
        if "pages" in fields:
            text += f": {_pages(fields['pages'])}" if "volume" in fields else f", {_pages(fields['pages'])}"
        return text
    if record.type == "inproceedings":
        text = f"In {latex_markdown(fields['booktitle'], what)}" if "booktitle" in fields else ""
        if "pages" in fields:
            pages = _pages(fields["pages"])
            word = "pages" if "\u2013" in pages else "page"
            text += f", {word} {pages}"
        return text
    if record.type == "techreport":
        return "Technical report, " + latex_markdown(fields.get("institution", ""), what)
    howpublished = fields.get("howpublished", "")
    # A record whose howpublished is only its address has nothing to add to the link.
    if latex_text(howpublished, what) == fields.get("url", "").strip():
        return ""
    return latex_markdown(howpublished, what)


def formatted_entry(record: BibRecord, title_link: str | None = None, own: bool = False) -> str:
    """The record as one Markdown paragraph: authors, date, title, venue, version and note, links.

    Every part is read from ``record`` itself, so an entry cannot say what its record does not;
    ``title_link`` makes the title a link (to the cited page on this site). An ``own`` record (one
    of posenc's) shows its address as text: it is the release's address to cite, which a local or
    unreleased build does not serve.
    """
    what = f"BibTeX record {record.key!r}"
    if record.type not in ENTRY_TYPES:
        raise PluginError(f"{what}: entry type @{record.type} is not one of {', '.join(ENTRY_TYPES)}")
    missing = [name for name in ("author", "title", "year") if name not in record.fields]
    if missing:
        raise PluginError(f"{what}: lacks {', '.join(missing)}")
    title = f"*{latex_markdown(record.fields['title'], what)}*"
    if title_link:
        title = f"[{title}]({title_link})"
    sentences = [authors_text(record), record_date(record), title, venue(record)]
    version = record.fields.get("version")
    note = record.fields.get("note")
    # The version is said once: by the note when the note names it (for styles that print no
    # version field), else in a sentence of its own.
    if version and f"version {latex_text(version, what)}" not in latex_text(note or "", what).lower():
        sentences.append(f"Version {latex_markdown(version, what)}")
    if note:
        sentences.append(latex_markdown(note, what))
    links = []
    doi = record.fields.get("doi")
    if doi:
        links.append(f"[doi:{markdown_escape(doi)}](https://doi.org/{doi})")
    url = record.fields.get("url", "").strip()
    text = " ".join(_sentence(part) for part in sentences if part)
    # The address is linked once: not again after a DOI that leads there or a note that names it.
    if own and url:
        links.append(f"`{url}`")
    elif url and not (doi and url == f"https://doi.org/{doi}") and f"]({url})" not in text:
        links.append(_link(url))
    if links:
        text += " " + " · ".join(links)
    return text


def heading_title(record: BibRecord) -> str:
    """What an entry's heading says: the record's ``shorttitle`` if it has one, else its title."""
    what = f"BibTeX record {record.key!r}"
    return latex_text(record.fields.get("shorttitle") or record.fields["title"], what)


REFERENCE_CLASS = "posenc-reference"
BIBTEX_CLASS = "posenc-bibtex"
CITED_ON_CLASS = "posenc-cited-on"
# A citation: a link to an entry of the References page, from a page in any folder.
CITATION_LINK = re.compile(r"references\.md#([\w-]+)")


def reference_block(record: BibRecord, title_link: str | None = None, own: bool = False) -> str:
    """A formatted entry as a paragraph of its own class."""
    return _reference_paragraph(formatted_entry(record, title_link, own))


def _reference_paragraph(entry: str) -> str:
    """The formatted ``entry`` (Markdown) as a paragraph of the references' class."""
    return f"{entry}\n{{ .{REFERENCE_CLASS} }}"


def citing_pages(bibliography_src: str) -> dict[str, list[tuple[str, str]]]:
    """Cited key -> (docs path, title) of every page whose Markdown cites it, ordered by title.

    The pages are the Markdown files under ``paths.DOCS`` other than the bibliography itself, read
    as they are on disk, each title from its front matter; a citation is a link to the References
    page's anchor of the entry (``CITATION_LINK``), as the References test finds them.
    """
    cited: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(paths.DOCS.rglob("*.md")):
        src = path.relative_to(paths.DOCS).as_posix()
        if src == bibliography_src:
            continue
        markdown = path.read_text(encoding="utf-8")
        keys = set(CITATION_LINK.findall(markdown))
        if not keys:
            continue
        title = _front_matter(markdown).get("title")
        if not title:
            raise PluginError(f"{src}: cites {sorted(keys)[0]!r} but has no title in its front matter to be listed by")
        for key in keys:
            cited.setdefault(key, []).append((src, str(title)))
    return {key: sorted(pages, key=lambda page: (page[1].casefold(), page[0])) for key, pages in cited.items()}


def cited_on(pages: list[tuple[str, str]], page_src: str) -> str:
    """The paragraph under an entry that lists the ``pages`` citing it, each linked by its title.

    The titles are parted by " · ", as the formatted entries part their links: a title may hold a
    comma or an "and" of its own.
    """
    links = [f"[{markdown_escape(title)}]({paths.relative(page_src, src)})" for src, title in pages]
    return f"Cited on: {' · '.join(links)}\n{{ .{CITED_ON_CLASS} }}"


def folded_bibtex(record_text: str) -> str:
    """The record in a closed "BibTeX" disclosure, as a code block (the theme gives it a copy button)."""
    return (
        f'<details class="{BIBTEX_CLASS}" markdown>\n<summary>BibTeX</summary>\n\n'
        f"```bibtex\n{record_text}\n```\n\n</details>"
    )


def bibliography_markdown(markdown: str, page) -> str:
    """A bibliography page (``bibliography: true`` in its front matter) with its entries written out;
    any other page as it is.

    In the page's source each entry is its BibTeX record alone, as a fenced ``bibtex`` block at the
    start of a line, followed by what the site takes from the work, up to the next record or the
    next heading. Each entry becomes a heading ``### TITLE { #KEY }``, the formatted entry, that
    text, the pages that cite the entry (``citing_pages``: none typed, so the list cannot go stale)
    and the record folded under "BibTeX": heading, entry and list are read from the record and the
    pages, so none of them is written twice. The list puts every page's citations into this page's
    Markdown as the hooks leave it, which keys its kept conversion (``rendered_pages``): a citation
    added to or removed from another page converts this page again.
    """
    if not page.meta.get("bibliography"):
        return markdown
    page_src = page.file.src_uri
    cited = citing_pages(page_src)
    lines = markdown.split("\n")
    out: list[str] = []
    # (record, its formatted entry, the prose under it): formatting every entry of the
    # bibliography is most of this page's time, so each is formatted once.
    entry: tuple[BibRecord, str, list[str]] | None = None
    keys: set[str] = set()

    def close_entry() -> None:
        if entry is None:
            return
        record, formatted, prose = entry
        text = "\n".join(prose).strip()
        if not text:
            raise PluginError(f"{page_src}: entry {record.key!r} needs a paragraph saying what the site takes from it")
        listed = [cited_on(cited[record.key], page_src), ""] if record.key in cited else []
        out.extend(
            [
                f"### {markdown_escape(heading_title(record))} {{ #{record.key} }}",
                "",
                _reference_paragraph(formatted),
                "",
                text,
                "",
                *listed,
                folded_bibtex(record.text),
                "",
            ]
        )

    fence: str | None = None
    position = 0
    while position < len(lines):
        line = lines[position]
        if fence is None and line == "```bibtex":
            close = next((at for at in range(position + 1, len(lines)) if lines[at] == "```"), None)
            if close is None:
                raise PluginError(f"{page_src}: a bibtex block is never closed")
            close_entry()
            try:
                record = parse_record("\n".join(lines[position + 1 : close]))
                formatted = formatted_entry(record)  # a record that cannot be formatted is refused, naming the page
            except PluginError as error:
                raise PluginError(f"{page_src}: {error}") from error
            if record.key in keys:
                raise PluginError(f"{page_src}: two entries have the key {record.key!r}")
            keys.add(record.key)
            entry = (record, formatted, [])
            position = close + 1
            continue
        opening = re.match(r"(`{3,}|~{3,})", line)
        if opening and (fence is None or line.strip() == fence):
            fence = opening[1] if fence is None else None
        elif fence is None and line.startswith("### "):
            raise PluginError(
                f"{page_src}: {line!r}: an entry's heading is written from its record; remove the heading"
            )
        elif fence is None and line.startswith("#"):
            close_entry()
            entry = None
        (entry[2] if entry is not None else out).append(line)
        position += 1
    close_entry()
    return "\n".join(out)
