"""RoPE inverse frequencies under each rope_scaling variant of Hugging Face transformers.

Head width 128, base 10000, pair index r on the horizontal axis. Top: the inverse frequency on a
log scale. Bottom: its ratio to the unscaled value, i.e. how much each pair is slowed. Linear
scaling (factor 4) divides every pair by 4; dynamic NTK (factor 4, at 4× its original length)
raises the base, leaving pair 0 alone and slowing the last pair 13-fold; YaRN (factor 4,
original length 4096) keeps the fast pairs, divides the slow ones by 4 and blends a band between;
llama3 (factor 8, low 1, high 4, original length 8192) keeps the pairs that turn more than 4
times within the original length, divides those that turn less than once and blends between.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two panels sharing the pair index 0 to 63. Top: inverse frequency from 1 down to about 1e-4 "
    "on a log scale for five variants. Bottom: ratio to the unscaled frequency. Linear is 1/4 "
    "everywhere; dynamic NTK falls smoothly from 1 at pair 0 to 1/13 at pair 63; YaRN stays 1 up to "
    "pair 20, ramps down and reaches 1/4 from pair 46; llama3 stays 1 up to pair 40, ramps down "
    "and reaches 1/8 from pair 50."
)
D, BASE, ORIGINAL = 128, 10000.0, 4096


def main():
    none = posenc.rope_frequencies(D, base=BASE)
    linear = posenc.linear_scaled_frequencies(D, base=BASE, factor=4.0)
    dynamic = posenc.dynamic_ntk_frequencies(
        D, base=BASE, factor=4.0, max_position_embeddings=ORIGINAL, seq_len=4 * ORIGINAL
    )
    yarn, attention = posenc.yarn_frequencies(D, base=BASE, factor=4.0, original_max_position_embeddings=ORIGINAL)
    llama3 = posenc.llama3_frequencies(
        D, base=BASE, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192
    )
    r = np.arange(D // 2)
    # The claims of the caption and the alt text.
    assert np.array_equal(linear * 4, none)
    stretch = 4.0 * (4 * ORIGINAL) / ORIGINAL - 3.0  # transformers' dynamic rule: 13 at 4x length
    assert stretch == 13 and dynamic[0] == none[0] and np.isclose(none[-1] / dynamic[-1], 13, rtol=1e-12)
    assert np.array_equal(dynamic, posenc.rope_frequencies(D, base=BASE * 13 ** (D / (D - 2))))
    assert np.array_equal(
        posenc.dynamic_ntk_frequencies(D, base=BASE, factor=4.0, max_position_embeddings=ORIGINAL, seq_len=ORIGINAL),
        none,
    )  # no change within the original
    assert np.array_equal(yarn[r <= 20], none[r <= 20]) and np.allclose(yarn[r >= 46], none[r >= 46] / 4, rtol=1e-14)
    assert not np.allclose(yarn[21:46], none[21:46]) and round(attention, 3) == 1.139
    wavelength = 2 * np.pi / none
    assert np.array_equal(llama3[wavelength < 2048], none[wavelength < 2048]) and r[wavelength < 2048].max() == 40
    assert np.allclose(llama3[wavelength > 8192], none[wavelength > 8192] / 8, rtol=1e-15)
    assert r[wavelength > 8192].min() == 50
    for scaled in (linear, dynamic, yarn, llama3):  # no variant speeds any pair up
        assert np.all(scaled <= none) and np.all(np.diff(scaled / none) <= 1e-15)

    curves = [
        ("none", none, plotting.colour_of(reference=True), ":"),
        ("linear, factor 4", linear, plotting.colour_of(method="linear"), "-"),
        ("dynamic NTK, factor 4, at 4× length", dynamic, plotting.colour_of(method="dynamic"), "-"),
        (f"YaRN, factor 4 (attention factor {attention:.3f})", yarn, plotting.colour_of(method="yarn"), "-"),
        ("llama3, factor 8, low 1, high 4", llama3, plotting.colour_of(method="llama3"), "--"),
    ]
    fig, (top, bottom) = plotting.new_figure(
        aspect=0.8, nrows=2, sharex=True, height_ratios=[1.1, 1], narrow={"aspect": 2.1}
    )
    for label, values, colour, style in curves:
        top.plot(r, values, color=colour, linestyle=style, label=label)
        bottom.plot(r, values / none, color=colour, linestyle=style)
    top.set_yscale("log")
    top.set_ylabel(r"inverse frequency $\omega_r$" + "\n(radians per position)")
    bottom.set_yscale("log", base=2)
    bottom.set_yticks([1, 1 / 2, 1 / 4, 1 / 8, 1 / 13], ["1", "1/2", "1/4", "1/8", "1/13"])
    bottom.minorticks_off()
    bottom.set_ylabel("ratio to unscaled")
    bottom.set_xlabel(plotting.wrap("pair index r", "(channels 2r, 2r+1 interleaved;", "r, r+64 halves)"))
    bottom.set_xlim(0, D // 2 - 1)
    keeps = "\n" if plotting.narrow() else " keeps "
    for edge, text in ((20, f"YaRN{keeps}r ≤ 20"), (40, f"llama3{keeps}r ≤ 40")):
        bottom.axvline(edge, color=plotting.colour_of(reference=True), linewidth=0.6, linestyle=":")
        bottom.annotate(text, (edge, 1 / 11.5), xytext=(-3, 0), textcoords="offset points", ha="right", fontsize=9)
    if plotting.narrow():  # below the plots: a phone's plot has no corner to spare
        fig.legend(loc="outside lower center")
    else:
        top.legend(loc="lower left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
