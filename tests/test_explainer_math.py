"""The explainer's arithmetic (``docs/javascripts/explainer-math.js``) against ``posenc``, in Node.

One Node process loads the module the page loads and evaluates it over every setting the
controls of /explainer/ offer; each number must agree with ``posenc`` to 1e-12 and each readout
must read as Python formats it. No browser is needed (Node is a build prerequisite);
``tests/test_explainer.py`` checks the page itself in Chromium and imports the reference below.

The controls' ranges and starting values are read from the page's panels (``docs/explainer.md``
names them, ``docs/panels/NAME.html`` holds each one's markup) and the demo data (embeddings,
RoPE content, widths) from posenc/site/explainer_demo.json, which the module, the page and the
figures all read: each has one source.
"""

from __future__ import annotations

import functools
import html.parser
import json
import pathlib
import re
import runpy
import shutil
import subprocess

import numpy as np
import pytest

import posenc
from posenc.site import explainer_demo

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODULE = ROOT / "docs" / "javascripts" / "explainer-math.js"
PAGE = ROOT / "docs" / "explainer.md"
TOLERANCE = 1e-12

# The numbers the page states for the starting positions: a check on the reference itself, on
# the module's data and on the page's starting controls.
STARTING_READOUTS = {
    "order": {"scores": "0.68 0.26 0.52 0.26 0.82 0.59 0.52 0.59 0.61"},
    "heatmap": {"angle": "1.58", "value": "1.000"},
    "bands": {"frequency": "0.0316", "wavelength": "198.7"},
    "distance": {"dot": "6.14", "distance": "5"},
    "rope": {"score": "1.18", "offset": "-4"},
    "compare": {"sinusoidal": "3.78", "rope": "1.97"},
}


# ---------------------------------------------------------------------------------------
# The two sources: the page's controls (markup) and the module (through Node)


def panels_markup(page: pathlib.Path) -> str:
    """The markup of the panels ``page`` shows ({{ panel: NAME }}), from their templates, in page order."""
    names = re.findall(r"\{\{ panel: ([a-z-]+) \}\}", page.read_text(encoding="utf-8"))
    return "\n".join((ROOT / "docs" / "panels" / f"{name}.html").read_text(encoding="utf-8") for name in names)


class _Controls(html.parser.HTMLParser):
    """Collects the controls of every element carrying ``root`` (an attribute), in page order."""

    def __init__(self, root: str = "data-panel") -> None:
        super().__init__()
        self.steps: dict[str, dict] = {}
        self._step: str | None = None
        self._root = root

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self._root in a:
            self._step = a[self._root]
            self.steps[self._step] = {"sliders": {}, "choices": {}, "initial": {}}
        elif "data-param" in a and self._step is not None:
            step, name = self.steps[self._step], a["data-param"]
            if tag == "input":
                low, high, size, value = (int(a[k]) for k in ("min", "max", "step", "value"))
                step["sliders"][name] = (low, high, size, value)
                step["initial"][name] = value
            elif tag == "button":
                step["choices"].setdefault(name, []).append(a["data-value"])
                if a.get("aria-pressed") == "true":
                    step["initial"][name] = a["data-value"]


@functools.cache
def controls() -> dict[str, dict]:
    """step -> {"sliders": {param: (min, max, step, start)}, "choices": {param: [values]}, "initial": {...}}."""
    parser = _Controls()
    parser.feed(panels_markup(PAGE))
    return parser.steps


def steps() -> tuple[str, ...]:
    return tuple(controls())


def sliders() -> dict[str, dict[str, tuple[int, int, int, int]]]:
    return {step: spec["sliders"] for step, spec in controls().items() if spec["sliders"]}


def orders() -> tuple[str, ...]:
    return tuple(controls()["order"]["choices"]["order"])


def initial(step: str) -> dict:
    return controls()[step]["initial"]


# Node reads the JSON argument on stdin, calls `evaluate(math, argument)` and prints the result.
NODE_DRIVER = """
const math = require(process.argv[1]);
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const evaluate = %s;
  process.stdout.write(JSON.stringify(evaluate(math, JSON.parse(input))));
});
"""


def run_node(evaluate: str, argument=None, module: pathlib.Path = MODULE):
    """``evaluate`` (a JavaScript function of ``module`` and ``argument``) run in one Node process."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH (Node.js is a build prerequisite: see README.md)")
    result = subprocess.run([node, "-e", NODE_DRIVER % evaluate, str(module)], input=json.dumps(argument),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@functools.cache
def demo() -> dict:
    """The module's demo data: EMBEDDINGS, CONTENT and the width of each step."""
    return run_node("(math) => ({ embeddings: math.EMBEDDINGS, content: math.CONTENT, widths: math.WIDTHS })")


# ---------------------------------------------------------------------------------------
# The reference: what posenc says every readout and text should read


def rope_rows(positions, width: int) -> np.ndarray:
    content = np.tile(demo()["content"], width // 2)
    return posenc.rope(np.tile(content, (len(positions), 1)), positions)


def rope_score(m: int, n: int, width: int) -> float:
    q, k = rope_rows([m, n], width)
    return float(q @ k)


def position_dot(i: int, j: int, width: int) -> float:
    table = posenc.sinusoidal([i, j], width)
    return float(table[0] @ table[1])


def score_matrix(order: str) -> np.ndarray:
    e = np.array([demo()["embeddings"][word] for word in order.split()])
    return e @ e.T


def expected_readouts(step: str, p: dict) -> dict[str, str]:
    width = demo()["widths"].get(step)
    if step == "order":
        return {"scores": " ".join(f"{v:.2f}" for v in score_matrix(p["order"]).ravel())}
    if step == "heatmap":
        t, c = p["position"], p["dimension"]
        return {
            "angle": f"{t * posenc.frequencies(width)[c // 2]:.2f}",
            "value": f"{posenc.sinusoidal([t], width)[0, c]:.3f}",
        }
    if step == "bands":
        r = p["dimension"] // 2
        return {"frequency": f"{posenc.frequencies(width)[r]:.4f}", "wavelength": f"{posenc.wavelengths(width)[r]:.1f}"}
    if step == "distance":
        return {"dot": f"{position_dot(p['i'], p['j'], width):.2f}", "distance": str(abs(p["i"] - p["j"]))}
    if step == "rope":
        return {"score": f"{rope_score(p['m'], p['n'], width):.2f}", "offset": str(p["m"] - p["n"])}
    if step == "compare":
        return {"sinusoidal": f"{position_dot(p['m'], p['n'], width):.2f}",
                "rope": f"{rope_score(p['m'], p['n'], width):.2f}"}
    raise ValueError(step)


def expected_texts(step: str, p: dict) -> dict[str, str]:
    width = demo()["widths"].get(step)
    if step == "heatmap":
        t, c = p["position"], p["dimension"]
        fn = "sin" if c % 2 == 0 else "cos"
        omega = posenc.frequencies(width)[c // 2]
        value = posenc.sinusoidal([t], width)[0, c]
        return {"formula": f"P({t})[{c}] = {fn}({t} / {1 / omega:.2f}) = {fn}({t * omega:.2f}) = {value:.3f}"}
    if step == "rope":
        q, k = rope_rows([p["m"], p["n"]], width)
        return {"q": f"[{q[0]:.2f}, {q[1]:.2f}]", "k": f"[{k[0]:.2f}, {k[1]:.2f}]"}
    return {}


def test_the_reference_gives_the_numbers_of_the_issue():
    assert steps() == tuple(STARTING_READOUTS)
    for step in steps():
        assert expected_readouts(step, initial(step)) == STARTING_READOUTS[step]


# ---------------------------------------------------------------------------------------
# The module over every setting of every control, in one Node process

GRID_JS = """(math, { sliders, orders, formats }) => {
  const r = (start, stop, step = 1) => {
    const out = [];
    for (let v = start; v <= stop; v += step) out.push(v);
    return out;
  };
  const grid = (ranges) => Object.entries(ranges).reduce(
    (rows, [name, [low, high, step]]) =>
      rows.flatMap((row) => r(low, high, step).map((v) => ({ ...row, [name]: v }))),
    [{}]);
  const rows = [];
  const settings = [['order', orders.map((order) => ({ order }))],
                    ...Object.entries(sliders).map(([step, ranges]) => [step, grid(ranges)])];
  for (const [step, all] of settings) {
    for (const params of all) rows.push([step, params, math.readouts(step, params), math.texts(step, params)]);
  }
  const content8 = math.tile(math.CONTENT, 8);
  return {
    frequencies: [2, 8, 16, 20, 64, 512].map((w) => math.frequencies(w)),
    wavelengths: [2, 8, 16, 20, 64, 512].map((w) => math.wavelengths(w)),
    base500: math.frequencies(16, 500),
    sinusoidal20: r(0, 49).map((t) => math.sinusoidal(t, 20)),
    sinusoidal16: r(0, 19).map((t) => math.sinusoidal(t, 16)),
    sinusoidal8: r(0, 40).map((t) => math.sinusoidal(t, 8)),
    angle20: r(0, 49).map((t) => r(0, 19).map((c) => math.angle(t, c, 20))),
    dot16: r(0, 19).map((i) => r(0, 19).map((j) => math.positionDot(i, j, 16))),
    dot8: r(0, 19).map((m) => r(0, 40).map((n) => math.positionDot(m, n, 8))),
    kernel16: r(-19, 19).map((d) => math.kernel(d, 16)),
    kernel8: r(-40, 40).map((d) => math.kernel(d, 8)),
    rotated8: r(0, 40).map((t) => math.rotate(content8, t)),
    rotatedOther: r(0, 19).map((t) => math.rotate([0.3, -1.2, 2.5, 0.7, -0.4, 0.9], t)),
    rope8: r(0, 19).map((m) => r(0, 40).map((n) => math.ropeScore(m, n, 8))),
    rope16: r(0, 19).map((m) => r(0, 19).map((n) => math.ropeScore(m, n, 16, [1.5, -0.5]))),
    matrices: orders.map((order) => math.dotMatrix(order)),
    formatted: formats.map(([text, digits]) => math.fixed(Number(text), digits)),
    unknown: ['toString', 'cat'].map((word) => {
      try { math.dotMatrix([word]); return null; } catch (error) { return error.name; }
    }),
    rows,
  };
}"""

# Numbers whose formatting differs between JavaScript's toFixed and Python's format: exact ties
# (Python rounds them to even), -0 and tiny negatives (Python keeps the sign), near-ties.
FORMAT_CASES = [
    [text, digits]
    for text in ("0.125", "0.375", "2.5", "3.5", "-0.125", "-2.5", "-0", "0", "1e-17", "-1e-17",
                 "0.005", "1.0049999999999999", "6.135", "-3.9999999", "198.69176531592202")
    for digits in (0, 1, 2, 3, 4)
]


@pytest.fixture(scope="module")
def golden():
    grids = {step: {name: list(spec[:3]) for name, spec in params.items()} for step, params in sliders().items()}
    return run_node(GRID_JS, {"sliders": grids, "orders": list(orders()), "formats": FORMAT_CASES})


def close(js, python):
    np.testing.assert_allclose(np.asarray(js, dtype=float), np.asarray(python, dtype=float),
                               rtol=TOLERANCE, atol=TOLERANCE)


def test_frequencies_and_tables_match_posenc(golden):
    widths = [2, 8, 16, 20, 64, 512]
    for width, js in zip(widths, golden["frequencies"]):
        close(js, posenc.frequencies(width))
    for width, js in zip(widths, golden["wavelengths"]):
        close(js, posenc.wavelengths(width))
    close(golden["base500"], posenc.frequencies(16, base=500.0))
    close(golden["sinusoidal20"], posenc.sinusoidal(np.arange(50), 20))
    close(golden["sinusoidal16"], posenc.sinusoidal(np.arange(20), 16))
    close(golden["sinusoidal8"], posenc.sinusoidal(np.arange(41), 8))
    close(golden["angle20"], np.multiply.outer(np.arange(50), np.repeat(posenc.frequencies(20), 2)))


def test_dot_products_and_kernel_match_posenc(golden):
    p16 = posenc.sinusoidal(np.arange(20), 16)
    close(golden["dot16"], p16 @ p16.T)
    p8 = posenc.sinusoidal(np.arange(41), 8)
    close(golden["dot8"], p8[:20] @ p8.T)
    close(golden["kernel16"], posenc.kernel(np.arange(-19, 20), 16))
    close(golden["kernel8"], posenc.kernel(np.arange(-40, 41), 8))


def test_rope_matches_posenc(golden):
    rotated = rope_rows(np.arange(41), 8)
    close(golden["rotated8"], rotated)
    other = np.array([0.3, -1.2, 2.5, 0.7, -0.4, 0.9])
    close(golden["rotatedOther"], posenc.rope(np.tile(other, (20, 1)), np.arange(20)))
    close(golden["rope8"], rotated[:20] @ rotated.T)
    wide = np.tile([1.5, -0.5], 8)
    rotated16 = posenc.rope(np.tile(wide, (20, 1)), np.arange(20))
    close(golden["rope16"], rotated16 @ rotated16.T)


def test_score_matrices_match_numpy(golden):
    for order, js in zip(orders(), golden["matrices"]):
        close(js, score_matrix(order))
    base = score_matrix(orders()[0])
    for js in golden["matrices"]:  # the same nine numbers in every order
        close(np.sort(np.ravel(js)), np.sort(base.ravel()))
    assert golden["unknown"] == ["RangeError", "RangeError"]  # not even a property every object has


def test_numbers_are_formatted_as_python_does(golden):
    assert golden["formatted"] == [format(float(text), f".{digits}f") for text, digits in FORMAT_CASES]


def test_readouts_and_texts_match_posenc_at_every_setting(golden):
    counts = dict.fromkeys(steps(), 0)
    mismatches = []
    for step, params, readouts, texts in golden["rows"]:
        counts[step] += 1
        expected = (expected_readouts(step, params), expected_texts(step, params))
        if (readouts, texts) != expected:
            mismatches.append((step, params, (readouts, texts), expected))
    grid_sizes = {step: int(np.prod([len(range(lo, hi + 1, st)) for lo, hi, st, _ in params.values()]))
                  for step, params in sliders().items()}
    assert counts == {"order": len(orders())} | grid_sizes
    assert sum(counts.values()) > 2000  # the whole grids: 50 x 20 cells of the table alone
    assert not mismatches, mismatches[:5]


# ---------------------------------------------------------------------------------------
# The module's data: what the figures beside the steps draw


def figure_namespace(name: str) -> dict:
    """The module-level names of ``figures_src/NAME.py`` (its top level runs; main() draws nothing)."""
    return runpy.run_path(str(ROOT / "figures_src" / f"{name}.py"))


def test_the_module_reads_the_one_data_file():
    data = demo()
    assert data == json.loads(explainer_demo.DATA_FILE.read_text())
    assert data["embeddings"] == {word: list(v) for word, v in explainer_demo.EMBEDDINGS.items()}
    assert data["content"] == list(explainer_demo.CONTENT)
    assert data["widths"] == explainer_demo.WIDTHS


def test_the_figures_beside_the_steps_draw_the_module_data():
    data = demo()
    words = figure_namespace("attention-permutation")
    assert [" ".join(order) for order in words["ORDERS"]] == list(orders())
    assert set(words["ORDERS"][0]) == set(data["embeddings"])
    for name in ("rope-rotation", "sinusoidal-vs-rope"):
        assert figure_namespace(name)["CONTENT"].tolist() == data["content"], name
    figure_of_step = {"heatmap": "heatmap-20x50", "bands": "frequency-bands", "distance": "dot-product-16",
                      "rope": "rope-rotation", "compare": "sinusoidal-vs-rope"}
    assert set(figure_of_step) == set(data["widths"])
    for step, name in figure_of_step.items():
        assert figure_namespace(name)["WIDTH"] == data["widths"][step], (step, name)
