"""The explainer's reference (what posenc says each readout and text of /explainer/ should read)
and the two sources it is checked against: the panels' controls, from their templates, and the
page's module, run in Node. test_explainer_math holds the module to it, test_explainer the page."""

from __future__ import annotations

import functools
import html.parser
import json
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import posenc
from site_build import panels
from support import ROOT

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
    """The markup of the panels ``page`` shows ({{ panel: NAME }}), written from their descriptions, in page order."""
    return "\n".join(panels.panel_template(name) for name in panels.panels_of(page.read_text(encoding="utf-8")))


class Controls(html.parser.HTMLParser):
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
    parser = Controls()
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
    result = subprocess.run(
        [node, "-e", NODE_DRIVER % evaluate, str(module)],
        input=json.dumps(argument),
        capture_output=True,
        text=True,
        timeout=120,
    )
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
        return {
            "sinusoidal": f"{position_dot(p['m'], p['n'], width):.2f}",
            "rope": f"{rope_score(p['m'], p['n'], width):.2f}",
        }
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
