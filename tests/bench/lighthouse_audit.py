"""`make audit`: Lighthouse on every page of the built site, mobile and desktop, printed as a table.

The figures are reported, not asserted: Lighthouse's timings vary from run to run and machine
to machine. The deterministic checks (axe, layout shift, page weight, links, offline,
reproducible builds) are tests in ``tests/browser/test_page_audits.py``,
``tests/built_site/test_built_html.py`` and ``tests/build/test_site_builds.py``, and run with ``make test``.

The site is served from 127.0.0.1, gzipped as GitHub Pages serves it. Lighthouse is the npm
package pinned in package.json (``npm ci`` installs it into node_modules; ``npx --no`` refuses
to fetch anything else). It drives Debian's Chromium (``CHROME_PATH``, or ``POSENC_CHROMIUM``
as for the tests) with the same host-resolver rule as the browser tests, so nothing but the
site on 127.0.0.1 can be reached.

The pages are the ones the built site's sitemap.xml lists (or the paths given). Each is audited
with Lighthouse's mobile preset (its default: a mid-range phone on a slow 4G connection, simulated)
and with its desktop preset. Targets: accessibility, best practices and SEO 100 on both presets;
performance at least 95 on mobile and 100 on desktop; layout shift 0. A score under its target is
flagged in the table and its failing audits are listed below it. ``--strict`` turns a missed
accessibility, best-practices or SEO target into exit status 1.

One run can be far from the next: on this kind of machine the same page's mobile score moves
by ten points and more between runs (headless Chromium sometimes presents its first frame a
second late, and Lighthouse's simulation then charges everything loaded before it). As
Lighthouse's own guidance on variability advises, ``--runs N`` audits each page N times and
reports the run with the median performance score, with every run's score beside it.

    .venv/bin/python tests/bench/lighthouse_audit.py [--site DIR] [--preset mobile|desktop] [--runs N] [--strict]
        [PATH ...]
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
import xml.etree.ElementTree as ElementTree
from urllib.parse import urlparse

# Run as a script from tests/bench/, it finds the tests' shared helpers (tests/support/) by path.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support.site_server import SiteHandler, serve

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRESETS = ["mobile", "desktop"]
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
TARGETS = {
    preset: {"performance": performance, "accessibility": 100, "best-practices": 100, "seo": 100}
    for preset, performance in (("mobile", 95), ("desktop", 100))
}
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
        if (
            path.suffix not in COMPRESSIBLE
            or not path.is_file()
            or "gzip" not in self.headers.get("Accept-Encoding", "")
        ):
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


def sitemap_paths(site: pathlib.Path) -> list[str]:
    """The path of every page the built site's sitemap lists, sorted (the tests read it the same way)."""
    tree = ElementTree.parse(site / "sitemap.xml")
    return sorted(urlparse(element.text).path for element in tree.iter() if element.tag.endswith("loc"))


def lighthouse(url: str, preset: str, out: pathlib.Path, chrome: str) -> dict:
    # Lighthouse's own default is the mobile preset; it names only the desktop one.
    command = [
        "npx",
        "--no",
        "lighthouse",
        url,
        *(["--preset=desktop"] if preset == "desktop" else []),
        f"--only-categories={','.join(CATEGORIES)}",
        "--output=json",
        f"--output-path={out}",
        f"--chrome-flags={' '.join(CHROME_FLAGS)}",
        "--quiet",
    ]
    env = dict(os.environ, CHROME_PATH=chrome)
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode or not out.is_file():
        raise RuntimeError(f"lighthouse failed on {url} (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="site paths to audit (default: every page in the sitemap)")
    parser.add_argument(
        "--site", type=pathlib.Path, default=pathlib.Path(os.environ.get("POSENC_SITE_DIR", ROOT / "site"))
    )
    parser.add_argument("--preset", choices=PRESETS, action="append", help="audit one preset only (default: both)")
    parser.add_argument("--json", type=pathlib.Path, help="also write the table's figures to this JSON file")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when accessibility, best practices or SEO is under 100"
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="audit each page this many times and report the median run (default 1)"
    )
    args = parser.parse_args()
    if not 1 <= args.runs <= 15:
        parser.error(f"--runs must be a whole number from 1 to 15, not {args.runs}")

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
    paths = args.paths or sitemap_paths(args.site)
    presets = args.preset or PRESETS

    server, base = serve(args.site, _Handler)
    results, notes, missed, errors = [], [], [], []
    try:
        with tempfile.TemporaryDirectory(prefix="posenc-lighthouse-") as tmp:
            for index, path in enumerate(paths):
                page = args.site / path.lstrip("/")
                if path.endswith("/"):
                    page = page / "index.html"
                if not page.is_file():
                    errors.append(f"{path}: not in the built site (no {page.relative_to(args.site)})")
                    continue
                for preset in presets:
                    reports = []
                    for run in range(args.runs):
                        print(
                            f"lighthouse {preset} {path} ({index + 1}/{len(paths)}, run {run + 1}/{args.runs}) ...",
                            file=sys.stderr,
                            flush=True,
                        )
                        out = pathlib.Path(tmp) / f"{index}-{preset}-{run}.json"
                        try:
                            reports.append(lighthouse(base + path, preset, out, chrome))
                        except (RuntimeError, subprocess.TimeoutExpired) as error:
                            errors.append(f"{path} {preset} run {run + 1}: {error}")
                    if not reports:
                        continue
                    report, runs = median_run(reports)
                    scores = {}
                    for category in CATEGORIES:
                        score = report["categories"][category]["score"]
                        scores[category] = None if score is None else round(score * 100)
                        if scores[category] is None or scores[category] < TARGETS[preset][category]:
                            if category != "performance":
                                missed.append(f"{path} {preset} {category} {scores[category]}")
                            for ref in report["categories"][category]["auditRefs"]:
                                audit = report["audits"][ref["id"]]
                                if ref.get("weight", 0) > 0 and audit.get("score") is not None and audit["score"] < 1:
                                    shown = audit.get("displayValue") or ""
                                    note = f"{path} {preset} [{category}] {ref['id']}: {audit['title']} {shown}"
                                    notes.append(note.rstrip())
                    metrics = {name: report["audits"][audit].get("numericValue") for name, audit, _ in METRICS}
                    results.append({"page": path, "preset": preset, **scores, **metrics, "runs": runs})
    finally:
        server.shutdown()
        server.server_close()

    if args.json:
        args.json.write_text(json.dumps({"lighthouse": version, "results": results}, indent=1) + "\n")
    print(f"\nLighthouse {version}, {chrome}")
    print("targets: performance >= 95 on mobile and 100 on desktop, accessibility / best practices / SEO = 100,")
    print("CLS 0 ('!' marks a miss)\n")
    print(table(results))
    if notes:
        print("\nAudits that cost points:")
        print("\n".join(f"  {note}" for note in notes))
    if errors:
        print("\nNot audited:")
        print("\n".join(f"  {error}" for error in errors))
    if errors and not results:
        return 1
    return 1 if (args.strict and missed) else 0


def median_run(reports: list[dict]) -> tuple[dict, list[int | None]]:
    """The report with the median performance score (the upper one of an even number of runs)
    and every run's performance score, in the order they ran; a run Lighthouse could not score
    counts as the lowest."""

    def performance(report: dict) -> float:
        score = report["categories"]["performance"]["score"]
        return -1.0 if score is None else score

    ranked = sorted(reports, key=performance)
    runs = [None if performance(r) < 0 else round(performance(r) * 100) for r in reports]
    return ranked[len(ranked) // 2], runs


def table(results: list[dict]) -> str:
    """The results as aligned text, one row per page and preset; a figure off its target ends in "!".
    With more than one run per page, a last column lists each run's performance score."""
    several = any(len(result["runs"]) > 1 for result in results)
    headers = ["page", "preset", "perf", "a11y", "best-pr", "SEO"] + [name for name, _, _ in METRICS]
    headers += ["perf of each run"] if several else []
    rows = []
    for result in results:
        row = [result["page"], result["preset"]]
        for category in CATEGORIES:
            score = result[category]
            target = TARGETS[result["preset"]][category]
            row.append("n/a!" if score is None else f"{score}{'!' if score < target else ''}")
        for name, _, unit in METRICS:
            value = result[name]
            if value is None:
                row.append("n/a")
            elif unit:
                row.append(f"{value:,.0f} {unit}")
            else:
                row.append(f"{value:.3f}{'!' if value > 0 else ''}")
        if several:
            row.append(" ".join("n/a" if score is None else str(score) for score in result["runs"]))
        rows.append(row)
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(row) for row in rows])


if __name__ == "__main__":
    sys.exit(main())
