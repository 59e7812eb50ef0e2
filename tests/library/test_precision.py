"""Long-context precision of posenc.sinusoidal and posenc.rope against mpmath at 50 digits.

"Exact" is ``sin(t * omega_r)`` with ``omega_r = base ** (-2 r / d)`` evaluated in mpmath from
the exact binary value of base. posenc must be within 1e-15 of it in float64 for every id below
2**31 and every width up to 4096, and its float32 table must be the exact value rounded to
float32 (within 1 ulp). Naive float64 ``sin(t * omega)`` is checked to miss by orders of
magnitude at the same points, so the tests can tell the two apart.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from posenc import _precision

TOLERANCE = 1e-15
SAMPLES = 300
ID_LIMIT = 2**31

MP = mpmath.MPContext()  # a private 50-digit context: the global mpmath.mp is left alone
MP.dps = 50


def exact_sin_cos(t: int, r: int, width: int, base: float) -> tuple[MP.mpf, MP.mpf]:
    phase = MP.mpf(t) * MP.power(MP.mpf(base), -MP.mpf(2 * r) / width)
    return MP.sin(phase), MP.cos(phase)


def samples(seed: int, count: int = SAMPLES) -> list[tuple[int, int, int, float]]:
    """(t, width, pair, base): ids near 2**31 (and some anywhere), widths 2..4096."""
    rng = np.random.default_rng(seed)
    bases = [10000.0, 500000.0, 1e6, 100.0]
    out = []
    for i in range(count):
        width = int(rng.choice([2, 4096])) if i % 10 == 0 else 2 * int(rng.integers(1, 2049))
        t = int(rng.integers(ID_LIMIT - 2**24, ID_LIMIT)) if i % 4 else int(rng.integers(0, ID_LIMIT))
        out.append((t, width, int(rng.integers(0, width // 2)), bases[i % len(bases)]))
    return out


def test_sinusoidal_float64_is_within_1e_15_of_the_exact_value_near_2_31():
    worst = 0.0
    for t, width, r, base in samples(seed=7):
        layout = "halves" if r % 2 else "interleaved"
        row = posenc.sinusoidal([t], width, base=base, layout=layout)[0]
        got_sin, got_cos = (row[r], row[r + width // 2]) if layout == "halves" else (row[2 * r], row[2 * r + 1])
        want_sin, want_cos = exact_sin_cos(t, r, width, base)
        worst = max(worst, abs(float(got_sin - want_sin)), abs(float(got_cos - want_cos)))
    assert worst <= TOLERANCE, f"worst absolute error {worst:.3g}"


def test_rope_applies_cosines_and_sines_within_1e_15_of_the_exact_values():
    # Rotating the unit pair (1, 0) gives (cos, sin) exactly: 1 * cos - 0 * sin = cos.
    worst = 0.0
    by_width: dict[tuple[int, float], list[tuple[int, int]]] = {}
    for t, width, r, base in samples(seed=11, count=200):
        by_width.setdefault((width, base), []).append((t, r))
    for (width, base), points in by_width.items():
        ids = [t for t, _ in points]
        for layout in ("interleaved", "halves"):
            x = np.zeros((len(ids), width))
            if layout == "interleaved":
                x[:, 0::2] = 1.0
            else:
                x[:, : width // 2] = 1.0
            out = posenc.rope(x, ids, base=base, layout=layout)
            for row, (t, r) in enumerate(points):
                if layout == "interleaved":
                    got_cos, got_sin = out[row, 2 * r], out[row, 2 * r + 1]
                else:
                    got_cos, got_sin = out[row, r], out[row, r + width // 2]
                want_sin, want_cos = exact_sin_cos(t, r, width, base)
                worst = max(worst, abs(float(got_sin - want_sin)), abs(float(got_cos - want_cos)))
    assert worst <= TOLERANCE, f"worst absolute error {worst:.3g}"


def test_naive_float64_misses_by_orders_of_magnitude_at_the_same_points():
    worst = 0.0
    for t, width, r, base in samples(seed=7, count=100):
        omega = base ** (-2.0 * r / width)
        want_sin, want_cos = exact_sin_cos(t, r, width, base)
        worst = max(worst, abs(float(np.sin(t * omega) - want_sin)), abs(float(np.cos(t * omega) - want_cos)))
    assert worst > 1e3 * TOLERANCE, f"naive error only {worst:.3g}: the samples do not exercise long context"


def test_float32_is_the_exact_value_rounded_once():
    for t, width, r, base in samples(seed=13, count=150):
        row = posenc.sinusoidal([t], width, base=base, dtype=np.float32)[0]
        assert row.dtype == np.float32
        for got, want in zip((row[2 * r], row[2 * r + 1]), exact_sin_cos(t, r, width, base)):
            ulp = float(np.spacing(np.float32(abs(float(want)))))
            assert abs(float(got) - float(want)) <= ulp, (t, width, r, base)
            # and it is the nearest float32 unless the exact value is within 1e-15 of a tie
            assert abs(float(got) - float(want)) <= ulp / 2 + TOLERANCE, (t, width, r, base)


def test_float16_is_the_float64_result_rounded_once():
    ids = [0, 1, 2**20 + 3, 2**31 - 1]
    np.testing.assert_array_equal(
        posenc.sinusoidal(ids, 64, dtype=np.float16), posenc.sinusoidal(ids, 64).astype(np.float16)
    )


def test_a_whole_table_matches_the_naive_one_where_naive_is_accurate():
    # Small ids: naive phases are accurate to ~1e-13, so the two tables agree to that level.
    ids = np.arange(512)
    naive = np.outer(ids, posenc.frequencies(256))
    table = posenc.sinusoidal(ids, 256)
    np.testing.assert_allclose(table[:, 0::2], np.sin(naive), atol=1e-13, rtol=0)
    np.testing.assert_allclose(table[:, 1::2], np.cos(naive), atol=1e-13, rtol=0)


@pytest.mark.parametrize("t", [2**31 - 1, 2**40 + 12345, 2**53 - 1])
def test_ids_beyond_2_31_stay_accurate_for_frequencies_up_to_one(t):
    # Beyond the documented range the reduction still holds whole turns exactly.
    width = 64
    row = posenc.sinusoidal([t], width)[0]
    for r in (0, 1, 7, 31):
        want_sin, want_cos = exact_sin_cos(t, r, width, 10000.0)
        assert abs(float(row[2 * r] - want_sin)) <= TOLERANCE
        assert abs(float(row[2 * r + 1] - want_cos)) <= TOLERANCE


def test_frequencies_of_more_than_one_radian_take_the_slow_reduction_and_stay_exact():
    # value_turns accepts any float64 frequency; t * f above 2**29 turns needs e and g reduced.
    omega = np.array([1.0, 3.0, 1234.5678])
    ids = np.array([0, 5, 2**31 - 1, 2**45 + 7])
    sines, cosines = _precision.sincos(ids, _precision.value_turns(omega))
    for i, t in enumerate(ids.tolist()):
        for j, w in enumerate(omega.tolist()):
            phase = MP.mpf(t) * MP.mpf(w)
            assert abs(float(sines[i, j] - MP.sin(phase))) <= TOLERANCE
            assert abs(float(cosines[i, j] - MP.cos(phase))) <= TOLERANCE


def test_turn_tables_are_cached_and_read_only():
    first = _precision.power_turns(10000.0, 2, 128, 64)
    assert _precision.power_turns(10000.0, 2, 128, 64) is first
    with pytest.raises(ValueError):
        first[0][0] = 1.0


def test_double_double_turns_match_mpmath():
    hi, lo = _precision.power_turns(10000.0, 2, 4096, 2048)
    for r in (0, 1, 1000, 2047):
        exact = MP.power(10000, -MP.mpf(2 * r) / 4096) / (2 * MP.pi)
        assert abs((MP.mpf(hi[r]) + MP.mpf(lo[r])) - exact) <= exact * MP.mpf(2) ** -104


def exact_omegas(width: int, base: float) -> list[MP.mpf]:
    return [MP.power(MP.mpf(base), -MP.mpf(2 * r) / width) for r in range(width // 2)]


def nearest_double(value: MP.mpf) -> float:
    """The float64 nearest to ``value`` (a 50-digit number far from any tie)."""
    guess = float(value)
    candidates = (np.nextafter(guess, -np.inf), guess, np.nextafter(guess, np.inf))
    return float(min(candidates, key=lambda candidate: abs(MP.mpf(float(candidate)) - value)))


@pytest.mark.parametrize("width", [64, 128, 1000])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 100.0])
def test_frequencies_are_correctly_rounded(width, base):
    want = [nearest_double(omega) for omega in exact_omegas(width, base)]
    assert posenc.frequencies(width, base=base).tolist() == want


@settings(max_examples=30, deadline=None)
@given(
    offset=st.floats(-(2.0**53), 2.0**53, exclude_min=True, exclude_max=True),
    width=st.integers(1, 16).map(lambda half: 2 * half),
)
def test_kernel_and_distance_match_mpmath_at_any_real_offset_below_2_53(offset, width):
    # real (not only whole) offsets: the reduction splits any float64 exactly
    omegas = exact_omegas(width, 10000.0)
    want_kernel = MP.fsum(MP.cos(MP.mpf(offset) * w) for w in omegas)
    want_distance = 4 * MP.fsum(MP.sin(MP.mpf(offset) * w / 2) ** 2 for w in omegas)
    assert abs(posenc.kernel(offset, width) - float(want_kernel)) <= TOLERANCE * width
    assert abs(posenc.squared_distance(offset, width) - float(want_distance)) <= 4 * TOLERANCE * width


def test_kernel_at_the_issue_s_offset_is_the_exact_sum():
    t = 2**52 + 1
    want = float(MP.fsum(MP.cos(t * w) for w in exact_omegas(64, 10000.0)))
    assert abs(posenc.kernel(t, 64) - want) <= 64 * TOLERANCE
    naive = float(np.cos(t * posenc.frequencies(64)).sum())
    assert abs(naive - want) > 1e-2  # what kernel returned before: the test can tell the two apart


@settings(max_examples=60, deadline=None)
@given(log_phase=st.floats(-20, 1000), position=st.integers(1, 2**53 - 1))
def test_apply_rope_is_accurate_below_2_53_radians_and_refuses_beyond(log_phase, position):
    # any inv_freq: phases below the limit are within 1e-15 of exact, larger ones raise, none are wrong
    frequency = 2.0**log_phase / position
    x = np.array([[1.0, 0.0]])
    if position * frequency >= 2.0**53:
        with pytest.raises(ValueError, match=r"position_ids times inv_freq must stay below 2\*\*53 radians"):
            posenc.apply_rope(x, [position], inv_freq=[frequency])
        return
    out = posenc.apply_rope(x, [position], inv_freq=[frequency])[0]
    phase = MP.mpf(position) * MP.mpf(frequency)  # exact: 106 bits
    assert abs(float(out[0] - MP.cos(phase))) <= TOLERANCE
    assert abs(float(out[1] - MP.sin(phase))) <= TOLERANCE
