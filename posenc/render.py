"""Render figure scripts in one process: ``python -m posenc.render figures_src/a.py ...``.

Matplotlib's import (about half a second) is paid once for the whole stale set instead of
once per figure. Every script runs even if an earlier one fails; a failing script's
outputs are removed, its name is printed, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import pathlib
import runpy
import sys
import time
import traceback

from . import plotting


def outputs_of(script: pathlib.Path, directory: pathlib.Path) -> list[pathlib.Path]:
    """The files that ``script`` writes through :func:`posenc.plotting.save`."""
    return [directory / f"{script.stem}.svg", directory / f"{script.stem}.json"]


def render(scripts: list[pathlib.Path], directory: pathlib.Path) -> list[pathlib.Path]:
    """Run each script as ``__main__`` writing into ``directory``; return the scripts that failed."""
    failed = []
    with plotting.writing_to(directory):
        for number, script in enumerate(scripts, 1):
            start = time.perf_counter()
            try:
                runpy.run_path(str(script), run_name="__main__")
                if not outputs_of(script, directory)[0].exists():
                    raise RuntimeError("the script ran but saved no figure (call posenc.plotting.save)")
            except BaseException as error:  # noqa: BLE001 - report every failure, then go on
                if isinstance(error, KeyboardInterrupt):
                    raise
                failed.append(script)
                for path in outputs_of(script, directory):
                    path.unlink(missing_ok=True)
                print(f"[{number}/{len(scripts)}] FAILED {script}", file=sys.stderr)
                traceback.print_exc()
            else:
                print(f"[{number}/{len(scripts)}] {script.stem}  {time.perf_counter() - start:.2f} s")
            finally:
                plotting.plt.close("all")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="+", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("docs/figures"))
    args = parser.parse_args(argv)
    missing = [s for s in args.scripts if not s.is_file()]
    if missing:
        parser.error(f"no such figure script: {', '.join(map(str, missing))}")
    failed = render(args.scripts, args.out)
    if failed:
        print(f"figure scripts failed: {', '.join(str(s) for s in failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
