"""The grid-scores panel's reference (what posenc says each score and readout should be) and its
controls, from the panel's description. test_grid_scores_math holds the module to it,
test_grid_scores_panel the page."""

from __future__ import annotations

import functools

import numpy as np

import posenc
from support import ROOT
from support.explainer import Controls, panels_markup

MODULE = ROOT / "docs" / "javascripts" / "grid-scores-math.js"
PAGE = ROOT / "docs" / "grids.md"
TOLERANCE = 1e-12
DIM, BASE, ROWS, COLS = 64, 10000.0, 12, 12
SCHEMES = ("axial", "mixed", "sincos")
# Scores within TIE of the largest tie with it; an interaction under SEPARABLE is none.
TIE = SEPARABLE = 1e-9


@functools.cache
def panel() -> dict:
    """The panel's controls: sliders {param: (min, max, step, start)}, scheme values, starting values."""
    parser = Controls()
    parser.feed(panels_markup(PAGE))
    return parser.steps["grid-scores"]


def settings() -> list[dict]:
    """Every setting the controls offer."""
    (lo_r, hi_r, st_r, _), (lo_c, hi_c, st_c, _) = (panel()["sliders"][name] for name in ("row", "col"))
    return [
        {"row": row, "col": col, "scheme": scheme}
        for row in range(lo_r, hi_r + 1, st_r)
        for col in range(lo_c, hi_c + 1, st_c)
        for scheme in panel()["choices"]["scheme"]
    ]


# ---------------------------------------------------------------------------------------
# The reference: posenc's vectors for each scheme, and what the panel should read


def mixed_frequencies(dim: int = DIM) -> np.ndarray:
    """RoPE-Mixed's fixed frequencies, shape (2, dim / 2): the axial schedule turned by 45 degrees."""
    omega = posenc.rope_frequencies(dim // 2, base=BASE)  # BASE ** (-k / (dim / 4)), k < dim / 4
    half = np.sqrt(0.5)
    fx = np.concatenate([omega * half, -omega * half])
    fy = np.concatenate([omega * half, omega * half])
    return np.stack([fx, fy])


def encoded(scheme: str, rows: int = ROWS, cols: int = COLS, dim: int = DIM) -> np.ndarray:
    """Every patch's vector, row by row, for the content vector of ones: shape (rows * cols, dim)."""
    content = np.ones((rows * cols, dim))
    if scheme == "axial":
        return posenc.axial_rope_2d(content, rows, cols, base=BASE)
    if scheme == "mixed":
        return posenc.mixed_rope_2d(content, rows, cols, mixed_frequencies(dim))
    if scheme == "sincos":
        return content + posenc.sincos_2d_table(rows, cols, dim, layout="mae", base=BASE)
    raise ValueError(scheme)


def scores(scheme: str, row: int, col: int, rows: int = ROWS, cols: int = COLS, dim: int = DIM) -> np.ndarray:
    """The query patch (row, col)'s score against every patch, row by row."""
    vectors = encoded(scheme, rows, cols, dim)
    return vectors @ vectors[row * cols + col]


def interaction(values: np.ndarray, row: int, col: int, rows: int = ROWS, cols: int = COLS) -> float:
    """The largest |S(r, c) - S(r, col) - S(row, c) + S(row, col)|: 0 when S is a row part plus a column part."""
    grid = values.reshape(rows, cols)
    return float(np.abs(grid - grid[:, col : col + 1] - grid[row : row + 1, :] + grid[row, col]).max())


def largest_elsewhere(values: np.ndarray, row: int, col: int, cols: int = COLS) -> tuple[float, list[int]]:
    """The largest score at another patch than the query, and the patches within TIE of it, row by row."""
    query = row * cols + col
    others = np.delete(values, query)
    best = float(others.max())
    tied = [int(k) for k in np.flatnonzero(values >= best - TIE) if k != query]
    return best, tied


def expected_readouts(p: dict) -> dict[str, str]:
    row, col = p["row"], p["col"]
    values = scores(p["scheme"], row, col)
    best, tied = largest_elsewhere(values, row, col)
    apart = interaction(values, row, col)
    where = f"({tied[0] // COLS}, {tied[0] % COLS})" + (f" and {len(tied) - 1} more" if len(tied) > 1 else "")
    return {
        "self": f"{values[row * COLS + col]:.3f}",
        "best": f"{best:.3f}",
        "bestAt": where,
        "lowest": f"{values.min():.3f}",
        "separable": "yes" if apart < SEPARABLE else f"no: off by up to {apart:.3f}",
    }
