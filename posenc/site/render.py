"""Render figure scripts: ``python -m posenc.site.render [--update] figures_src/a.py ...``.

Matplotlib is imported once, in this process; each script then runs in a child forked from
it, so the import is paid once per build while no script can change another's figure
through Matplotlib's global state (``rcParams``, open figures, imported modules). A child
draws one layout of the figure into a scratch folder: first the wide one, then, if its sidecar
says the figure needs one, the narrow one, in a second child (see ``posenc.site.plotting``).
The figure's files replace those in the output folder only when every layout succeeded: a
failing (in either layout), hanging (past ``--timeout``, both layouts together) or interrupted
script leaves the last good files in place, older than the script, so they stay stale.

``--update`` renders only the stale scripts (a file of the figure missing, or its SVG older than
its script or than a ``--depends`` file), deletes figures whose script is gone, and with
``--errors`` records why the failing scripts failed (``make serve`` shows it on the page). Every
script runs even if an earlier one fails; failures are named and the exit status is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import pathlib
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
import types

from . import plotting
from .figure_files import FIGURE_DIR, LAYOUTS, NARROW, WIDE, FigureMeta, figure_files, figure_name

#: A figure's name is part of file names, URLs and HTML ids, and passes through make.
FIGURE_NAME = re.compile(r"[A-Za-z0-9_-]+")
#: Seconds a script may run before it is stopped and reported.
DEFAULT_TIMEOUT = 120.0
#: The name of a child's failure report inside its scratch folder.
_ERROR_FILE = "error.txt"


def bad_names(scripts: list[pathlib.Path]) -> list[pathlib.Path]:
    """The scripts whose figure name (file name without ``.py``) is not letters, digits, - and _."""
    return [script for script in scripts if not FIGURE_NAME.fullmatch(script.stem)]


def _expected_files(name: str, directory: pathlib.Path) -> list[pathlib.Path] | None:
    """Every file of figure ``name`` in ``directory`` as its wide sidecar describes it, or None if
    that sidecar is missing or unreadable (an older helper's)."""
    meta_path, svg_path = figure_files(name, directory)
    try:
        meta = FigureMeta.read(meta_path)
    except (OSError, ValueError, TypeError):
        return None
    return [meta_path, svg_path] + (list(figure_files(name, directory, NARROW)) if meta.narrow else [])


def stale(scripts: list[pathlib.Path], directory: pathlib.Path, depends: list[pathlib.Path]) -> list[pathlib.Path]:
    """The scripts whose figure in ``directory`` is stale: a file of it is missing (its narrow
    layout's too, if it has one), or its SVG is older than the script or any of ``depends``."""
    newest_dependency = max((path.stat().st_mtime for path in depends), default=0.0)
    result = []
    for script in scripts:
        svg = figure_files(script.stem, directory)[1]
        expected = _expected_files(script.stem, directory)
        if (
            expected is None
            or not all(path.exists() for path in expected)
            or svg.stat().st_mtime < max(script.stat().st_mtime, newest_dependency)
        ):
            result.append(script)
    return result


def remove_orphans(scripts: list[pathlib.Path], directory: pathlib.Path) -> list[pathlib.Path]:
    """Delete the figures (every layout's SVG and JSON) in ``directory`` whose script is not in ``scripts``."""
    names = {script.stem for script in scripts}
    removed = []
    for path in sorted(directory.glob("*.svg")) + sorted(directory.glob("*.json")):
        if figure_name(path) not in names:
            path.unlink()
            removed.append(path)
    return removed


def _run_as_main(script: pathlib.Path, scratch: pathlib.Path, layout: str) -> None:
    """Run ``script`` as ``__main__`` (as ``python script`` would), telling the helper to save its
    ``layout`` into ``scratch``."""
    module = types.ModuleType("__main__")
    module.__file__ = str(script)
    code = compile(script.read_bytes(), str(script), "exec")
    # This child exits when the script is done, so the module it runs in can stand as __main__.
    sys.modules["__main__"] = module
    with plotting.rendering(script, vars(module), scratch, layout):
        exec(code, vars(module))  # running the figure script is the point


def _run_script(script: pathlib.Path, scratch: pathlib.Path, layout: str) -> None:
    """The child's work: run ``script`` saving its ``layout`` into ``scratch``; exit 0 on success."""
    status = 1
    try:
        _run_as_main(script, scratch, layout)
        if not figure_files(script.stem, scratch, layout)[1].exists():
            raise RuntimeError(f"the script ran but saved no {layout} figure (call posenc.site.plotting.save)")
        status = 0
    except BaseException:  # whatever stopped the script is its failure; the parent prints it
        (scratch / _ERROR_FILE).write_text(traceback.format_exc())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)  # no atexit handlers or buffers inherited from the parent run twice


def _run_layout(script: pathlib.Path, scratch: pathlib.Path, layout: str, timeout: float, limit: float) -> str | None:
    """Draw one layout of ``script`` in a forked child given ``timeout`` seconds (of the script's
    ``limit``); return why it failed, or None."""
    sys.stdout.flush()  # a buffer not yet written would be written again by the child
    sys.stderr.flush()
    child = multiprocessing.get_context("fork").Process(target=_run_script, args=(script, scratch, layout))
    drawing = "" if layout == WIDE else f" drawing its {layout} layout"
    try:
        child.start()
        child.join(max(timeout, 0.0))
        if child.exitcode is None:
            child.kill()
            child.join()
            return f"{script} did not finish within {limit:g} s{drawing} (the time limit; see --timeout)"
        if child.exitcode != 0:
            report = scratch / _ERROR_FILE
            if not report.exists():
                return f"{script} was stopped{drawing} (exit status {child.exitcode})"
            return (f"{script} failed{drawing}:\n" if drawing else "") + report.read_text()
        return None
    finally:
        if child.is_alive():  # interrupted while waiting: the child must not outlive us
            child.kill()
            child.join()


def _render_one(
    script: pathlib.Path, directory: pathlib.Path, scratch_root: pathlib.Path, timeout: float
) -> str | None:
    """Render every layout of one script, each in a forked child; install the figure's files
    when all succeeded, else return why not."""
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix=f"{script.stem}.", dir=scratch_root))
    started, deadline = time.time(), time.monotonic() + timeout
    try:
        outputs: list[pathlib.Path] = []
        for layout in LAYOUTS:
            if layout != WIDE and not FigureMeta.read(figure_files(script.stem, scratch)[0]).narrow:
                continue  # legible on a phone as it is
            problem = _run_layout(script, scratch, layout, deadline - time.monotonic(), timeout)
            if problem is not None:
                return problem
            outputs = list(figure_files(script.stem, scratch, layout)) + outputs
        directory.mkdir(parents=True, exist_ok=True)
        # A narrow layout the figure no longer has goes; the wide SVG, by whose date the figure
        # is judged fresh, is installed last, so an interrupted install leaves the figure stale.
        for layout in LAYOUTS[1:]:
            for old in figure_files(script.stem, directory, layout):
                if scratch / old.name not in outputs:
                    old.unlink(missing_ok=True)
        for output in outputs:
            # The figure is dated when its render began, so a script edited during the render
            # is newer than its figure and will be rendered again.
            os.utime(output, (started, started))
            os.replace(output, directory / output.name)
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def render(
    scripts: list[pathlib.Path],
    directory: pathlib.Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    scratch: pathlib.Path | None = None,
    errors: dict[pathlib.Path, str] | None = None,
) -> list[pathlib.Path]:
    """Render each script into ``directory``; return the scripts that failed.

    ``scratch`` is where the children write before their figures move into ``directory`` (by
    default a hidden folder inside it; it must be on the same file system). If ``errors`` is
    given, each failed script's reason (its traceback, or the time limit) is stored in it.
    """
    directory = pathlib.Path(directory)
    scratch_root = pathlib.Path(scratch) if scratch is not None else directory / ".render"
    failed = []
    try:
        for number, script in enumerate(scripts, 1):
            start = time.perf_counter()
            problem = _render_one(script, directory, scratch_root, timeout)
            if problem is None:
                print(f"[{number}/{len(scripts)}] {script.stem}  {time.perf_counter() - start:.2f} s", flush=True)
                continue
            failed.append(script)
            if errors is not None:
                errors[script] = problem
            print(f"[{number}/{len(scripts)}] FAILED {script}\n{problem.rstrip()}", file=sys.stderr, flush=True)
    finally:
        with contextlib.suppress(OSError):  # gone, or still in use by another render
            scratch_root.rmdir()
    return failed


def _stop_on_sigterm() -> None:
    """Turn SIGTERM into an exception, so a killed build still removes its scratch files."""

    def stop(signum: int, frame: object) -> None:
        # make passes its own SIGTERM on to us: a second one must not cut the clean-up short.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def _write_if_changed(path: pathlib.Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path(FIGURE_DIR))
    parser.add_argument(
        "--update", action="store_true", help="render only stale scripts and delete figures whose script is not listed"
    )
    parser.add_argument(
        "--depends",
        type=pathlib.Path,
        nargs="*",
        default=[],
        help="with --update: files every figure depends on (the helper, its style)",
    )
    parser.add_argument(
        "--errors",
        type=pathlib.Path,
        help="with --update: JSON file recording {figure name: why its last render failed}",
    )
    parser.add_argument("--scratch", type=pathlib.Path, help="where scripts write before their figures move to --out")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds each script may run")
    args = parser.parse_args(argv)
    missing = [s for s in args.scripts if not s.is_file()]
    if missing:
        parser.error(f"no such figure script: {', '.join(map(str, missing))}")
    misnamed = bad_names(args.scripts)
    if misnamed:
        parser.error(
            "a figure script's name may hold only letters, digits, '-' and '_' (it names the "
            f"figure's file and URL); rename: {', '.join(repr(str(s)) for s in misnamed)}"
        )
    _stop_on_sigterm()
    scripts = args.scripts
    if args.update:
        for path in remove_orphans(scripts, args.out) if args.out.is_dir() else []:
            print(f"removing {path} (its script is gone)")
        scripts = stale(scripts, args.out, args.depends)
        if scripts:
            print(f"\n==> rendering {len(scripts)} stale figure(s)", flush=True)
    errors: dict[pathlib.Path, str] = {}
    failed = render(scripts, args.out, timeout=args.timeout, scratch=args.scratch, errors=errors)
    if args.update and args.errors is not None:
        _write_if_changed(args.errors, json.dumps({s.stem: why for s, why in errors.items()}, indent=1) + "\n")
    if failed:
        print(f"figure scripts failed: {', '.join(str(s) for s in failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
