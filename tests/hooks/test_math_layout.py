"""How KaTeX's HTML is cut for the column (site_build.katex.math_html): a display equation into
runs at its \\allowbreaks, an inline formula held together where a break would split it."""

from __future__ import annotations

import re

import pytest
from site_build import katex


@pytest.fixture(scope="module", autouse=True)
def _close_katex():
    yield
    katex.KATEX.close()


def test_a_display_equation_is_cut_into_runs_at_its_allowbreaks():
    html = katex.math_html(r"a = b, \qquad\allowbreak c = d + e, \qquad\allowbreak f < g", True, "test")
    assert html.startswith('<div class="posenc-math posenc-math--runs" style="--posenc-run-gap:2.167em">')
    runs = re.findall(r'<span class="posenc-run">', html)
    assert len(runs) == 3
    # The \qquad before each break moved into the gap: no run ends with a space.
    assert '<span class="mspace allowbreak">' not in html and "margin-right:2em" not in html
    # The runs hold every part KaTeX drew, in order.
    plain = katex.KATEX.render(r"a = b, \qquad\allowbreak c = d + e, \qquad\allowbreak f < g", True, "test")
    _, parts, _ = katex.formula_parts(plain, "test")
    assert html.count('<span class="katex-base">') == len(parts)


def test_a_display_equation_without_breaks_is_kept_whole():
    html = katex.math_html(r"\begin{aligned} a &= b \\ &= c \end{aligned}", True, "test")
    assert html.startswith('<div class="posenc-math">') and "posenc-run" not in html


def test_a_short_inline_formula_is_never_broken_and_a_long_one_only_before_its_last_part():
    short = katex.math_html(r"j \le i", False, "test", ",")
    assert re.search(r'<span class="katex-html" aria-hidden="true"><span class="posenc-nowrap">', short)
    assert short.endswith("</span>,")
    long_tex = r"q_t^\top k_s = E_t^\top A E_s + E_t^\top A P_s + P_t^\top A E_s + P_t^\top A P_s"
    long = katex.math_html(long_tex, False, "test", ".")
    inside = long.split('<span class="posenc-nowrap">', 1)
    assert len(inside) == 2 and inside[1].count('<span class="katex-base">') == 1
    assert katex.math_html(long_tex, False, "test") == katex.KATEX.render(long_tex, False, "test")
