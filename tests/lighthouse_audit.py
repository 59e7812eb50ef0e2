"""`make audit`: Lighthouse on the main pages of the built site, printed as a table.

The figures are reported, not asserted: Lighthouse's timings vary from run to run and machine
to machine. The deterministic checks (axe, layout shift, page weight, links, offline,
reproducible builds) are tests in ``tests/test_page_audits.py``, ``tests/test_built_html.py``
and ``tests/test_site_builds.py``, and run with ``make test``.

The site is served from 127.0.0.1, gzipped as GitHub Pages serves it. Lighthouse is the npm
package pinned in package.json (``npm ci`` installs it into node_modules; ``npx --no`` refuses
to fetch anything else). It drives Debian's Chromium (``CHROME_PATH``, or ``POSENC_CHROMIUM``
as for the tests) with the same host-resolver rule as the browser tests, so nothing but the
site on 127.0.0.1 can be reached.

Targets: accessibility, best practices and SEO 100; performance at least 95 (desktop preset).
A score under its target is flagged in the table and its failing audits are listed below it.
``--strict`` turns a missed accessibility, best-practices or SEO target into exit status 1.

    .venv/bin/python tests/lighthouse_audit.py [--site DIR] [--strict] [PATH ...]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from site_server import SiteHandler, serve

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["/", "/deep-dive/", "/explainer/", "/derivations/", "/notebooks/explicit-position-ids/"]
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
METRICS = [
    ("FCP", "first-contentful-paint", "ms"),
    ("LCP", "largest-contentful-paint", "ms"),
    ("TBT", "total-blocking-time", "ms"),
    ("CLS", "cumulative-layout-shift", ""),
]
CHROME_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # As in tests/conftest.py: every host name resolves to nothing but the loopback address.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


# Text files are sent gzip-compressed, as GitHub Pages sends them, so that the timings reflect
# the bytes a reader downloads rather than the uncompressed files.
COMPRESSIBLE = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}


class _Handler(SiteHandler):
    """The shared site server, with text files gzipped as a static host sends them."""

    cache: dict[str, bytes] = {}

    def send_head(self):
        path = pathlib.Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        if (path.suffix not in COMPRESSIBLE or not path.is_file()
                or "gzip" not in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        key = str(path)
        if key not in self.cache:
            self.cache[key] = gzip.compress(path.read_bytes(), compresslevel=6)
        body = self.cache[key]
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")  # GitHub Pages sends the same
        self.end_headers()
        return io.BytesIO(body)


def lighthouse(url: str, out: pathlib.Path, chrome: str) -> dict:
    command = [
        "npx", "--no", "lighthouse", url,
        "--preset=desktop",
        f"--only-categories={','.join(CATEGORIES)}",
        "--output=json", f"--output-path={out}",
        f"--chrome-flags={' '.join(CHROME_FLAGS)}",
        "--quiet",
    ]
    env = dict(os.environ, CHROME_PATH=chrome)
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode or not out.is_file():
        raise RuntimeError(f"lighthouse failed on {url} (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return json.loads(out.read_text())


def metric(report: dict, audit: str, unit: str) -> str:
    value = report["audits"][audit].get("numericValue")
    if value is None:
        return "n/a"
    return f"{value:.0f} {unit}" if unit else f"{value:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=PAGES, help="site paths to audit (default: the main pages)")
    parser.add_argument("--site", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("POSENC_SITE_DIR", ROOT / "site")))
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when accessibility, best practices or SEO is under 100")
    args = parser.parse_args()

    chrome = os.environ.get("CHROME_PATH") or os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
    if not os.access(chrome, os.X_OK):
        print(f"Chromium not found at {chrome}: set CHROME_PATH", file=sys.stderr)
        return 2
    if not (ROOT / "node_modules" / "lighthouse" / "package.json").is_file() or not shutil.which("npx"):
        print("Lighthouse is not installed: run `npm ci` (it is pinned in package.json)", file=sys.stderr)
        return 2
    if not (args.site / "index.html").is_file():
        print(f"{args.site} holds no built site: run `make`", file=sys.stderr)
        return 2
    version = json.loads((ROOT / "node_modules" / "lighthouse" / "package.json").read_text())["version"]

    server, base = serve(args.site, _Handler)
    rows, notes, missed, errors = [], [], [], []
    try:
        with tempfile.TemporaryDirectory(prefix="posenc-lighthouse-") as tmp:
            for index, path in enumerate(args.paths):
                page = args.site / path.lstrip("/")
                if path.endswith("/"):
                    page = page / "index.html"
                if not page.is_file():
                    errors.append(f"{path}: not in the built site (no {page.relative_to(args.site)})")
                    continue
                print(f"lighthouse {path} ...", file=sys.stderr, flush=True)
                try:
                    report = lighthouse(base + path, pathlib.Path(tmp) / f"{index}.json", chrome)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    errors.append(f"{path}: {error}")
                    continue
                scores = {}
                for category in CATEGORIES:
                    score = report["categories"][category]["score"]
                    scores[category] = None if score is None else round(score * 100)
                    if scores[category] is None or scores[category] < TARGETS[category]:
                        if category != "performance":
                            missed.append(f"{path} {category} {scores[category]}")
                        for ref in report["categories"][category]["auditRefs"]:
                            audit = report["audits"][ref["id"]]
                            if ref.get("weight", 0) > 0 and audit.get("score") is not None and audit["score"] < 1:
                                shown = audit.get("displayValue") or ""
                                notes.append(f"{path} [{category}] {ref['id']}: {audit['title']} {shown}".rstrip())
                rows.append([path] + [scores[c] for c in CATEGORIES] + [metric(report, a, u) for _, a, u in METRICS])
    finally:
        server.shutdown()
        server.server_close()

    headers = ["page", "perf", "a11y", "best-pr", "SEO"] + [name for name, _, _ in METRICS]
    cells = [[str(c) if c is not None else "n/a" for c in row] for row in rows]
    for row in cells:  # a score under its target is marked with "!"
        for column, category in enumerate(CATEGORIES, start=1):
            if row[column] == "n/a" or int(row[column]) < TARGETS[category]:
                row[column] += "!"
    widths = [max(len(r[i]) for r in [headers] + cells) for i in range(len(headers))]

    def line(fields: list[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(fields, widths, strict=True))]
        return "  ".join(padded)

    print(f"\nLighthouse {version}, desktop preset, {chrome}")
    print("targets: performance >= 95, accessibility / best practices / SEO = 100 ('!' marks a miss)\n")
    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in cells:
        print(line(row))
    if notes:
        print("\nAudits that cost points:")
        print("\n".join(f"  {note}" for note in notes))
    if errors:
        print("\nNot audited:")
        print("\n".join(f"  {error}" for error in errors))
    if errors and not rows:
        return 1
    return 1 if (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
