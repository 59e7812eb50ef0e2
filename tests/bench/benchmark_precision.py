"""Precision benchmark: posenc's accurate sinusoidal table against the usual recipes, one run.

Prints, for an 8192 x 1024 interleaved table (ids 0..8191, then ids 2**31 - 8192..2**31 - 1):
  * the best-of-N wall time of each recipe and its ratio to naive NumPy float64;
  * each recipe's largest absolute error against mpmath at 50 digits on a sample of entries.

Recipes: posenc.sinusoidal (float64, accurate phases); naive NumPy float64,
``np.sin(np.outer(t, omega))`` interleaved (the deep-dive document's recipe); and, when torch
is importable, the classic PyTorch ``div_term`` recipe of the introductory document in float32
(as written) and in float64. Torch runs on one thread, like NumPy.

Run it with any environment that has posenc and mpmath: ``.venv/bin/python
tests/bench/benchmark_precision.py`` (no torch) or ``.venv-peers/bin/python tests/bench/benchmark_precision.py``.
"""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np

import posenc

ROWS, WIDTH, BASE = 8192, 1024, 10000.0
REPEATS = 5
SAMPLE = 400

MP = mpmath.MPContext()  # a private 50-digit context: the global mpmath.mp is left alone
MP.dps = 50


def naive_numpy(ids: np.ndarray) -> np.ndarray:
    omega = BASE ** (-np.arange(0, WIDTH, 2) / WIDTH)
    phases = np.outer(ids.astype(np.float64), omega)
    table = np.empty((ids.size, WIDTH))
    table[:, 0::2] = np.sin(phases)
    table[:, 1::2] = np.cos(phases)
    return table


def accurate(ids: np.ndarray) -> np.ndarray:
    return posenc.sinusoidal(ids, WIDTH, base=BASE)


def torch_recipe(dtype_name: str):
    import torch

    dtype = getattr(torch, dtype_name)

    def build(ids: np.ndarray) -> np.ndarray:
        position = torch.as_tensor(ids, dtype=dtype).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, WIDTH, 2, dtype=dtype) * (-math.log(BASE) / WIDTH))
        table = torch.zeros(ids.size, WIDTH, dtype=dtype)
        table[:, 0::2] = torch.sin(position * div_term)
        table[:, 1::2] = torch.cos(position * div_term)
        return table.numpy()

    return build


def best_times(recipes, ids: np.ndarray) -> list[tuple[str, float, np.ndarray]]:
    """Best-of-REPEATS seconds per recipe, the recipes taking turns so load hits all alike."""
    best = {name: math.inf for name, _ in recipes}
    tables = {}
    for _ in range(REPEATS):
        for name, build in recipes:
            start = time.perf_counter()
            tables[name] = build(ids)
            best[name] = min(best[name], time.perf_counter() - start)
    return [(name, best[name], tables[name]) for name, _ in recipes]


def reference(ids: np.ndarray, rows: np.ndarray, channels: np.ndarray) -> np.ndarray:
    values = []
    for i, j in zip(rows.tolist(), channels.tolist()):
        phase = MP.mpf(int(ids[i])) * MP.power(MP.mpf(BASE), -MP.mpf(2 * (j // 2)) / WIDTH)
        values.append(MP.sin(phase) if j % 2 == 0 else MP.cos(phase))
    return values


def max_error(table: np.ndarray, exact: list, rows: np.ndarray, channels: np.ndarray) -> float:
    got = table[rows, channels].astype(np.float64)
    return max(abs(float(MP.mpf(float(g)) - e)) for g, e in zip(got, exact))


def main() -> None:
    recipes = [("posenc.sinusoidal float64", accurate), ("naive NumPy float64", naive_numpy)]
    try:
        import torch
    except ImportError:
        torch = None
        note = "torch not importable: PyTorch recipes skipped in this run"
    else:
        torch.set_num_threads(1)
        recipes += [
            ("PyTorch div_term float32", torch_recipe("float32")),
            ("PyTorch div_term float64", torch_recipe("float64")),
        ]
        note = f"torch {torch.__version__}, 1 thread"
    print(f"precision benchmark: {ROWS} x {WIDTH} interleaved table, base {BASE:g}, best of {REPEATS} taken in turns")
    print(f"numpy {np.__version__}; {note}\n")

    rng = np.random.default_rng(0)
    rows = rng.integers(0, ROWS, SAMPLE)
    rows[:50] = ROWS - 1 - np.arange(50)  # always include the largest ids
    channels = rng.integers(0, WIDTH, SAMPLE)

    for label, first in (("ids 0 .. 8191", 0), ("ids 2**31 - 8192 .. 2**31 - 1", 2**31 - ROWS)):
        ids = np.arange(first, first + ROWS, dtype=np.int64)
        exact = reference(ids, rows, channels)
        print(label)
        print(f"  {'recipe':<28}{'seconds':>9}{'vs naive':>10}{'max |error|':>14}")
        results = best_times(recipes, ids)
        naive_seconds = dict((name, seconds) for name, seconds, _ in results)["naive NumPy float64"]
        for name, seconds, table in results:
            error = max_error(table, exact, rows, channels)
            print(f"  {name:<28}{seconds:9.3f}{seconds / naive_seconds:9.2f}x{error:14.2e}")
        print()


if __name__ == "__main__":
    main()
