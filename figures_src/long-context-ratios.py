"""Each long-context method's frequency for every pair, as a ratio to the unscaled frequency.

Head width 128, base 10000, training length 4096, scale s = 8 (target 32768). Position
interpolation divides every pair by 8; NTK-aware scaling raises the base to 10000·8^(128/126),
keeping pair 0 and dividing pair 63 by exactly 8; transformers' dynamic NTK at the target length
uses the stretch 8·8 - 7 = 57 in place of s; YaRN (as its authors' code and transformers compute
it) keeps the pairs that turn more than 32 times within the training length, divides those that
turn less than once by 8 and blends linearly in the pair index between; Llama 3's rule does the
same with its upper edge at 4 turns, a blend linear in the number of turns and no attention
factor; raising the base to 500000 slows every pair but pair 0, the last one about 47-fold.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Ratio of scaled to unscaled frequency against pair index 0 to 63, on a log scale from 1 down "
    "to below 1/32. Position interpolation is flat at 1/8. NTK-aware scaling falls smoothly from 1 "
    "to 1/8. Dynamic NTK at the target length falls from 1 to 1/57. YaRN stays at 1 to pair 20, "
    "ramps down and stays at 1/8 from pair 46. Llama 3 stays at 1 to pair 35 and is 1/8 from pair 46. "
    "A base of 500000 falls from 1 to about 1/47."
)
D, BASE, TRAINED, S = 128, 10000.0, 4096, 8.0


def main():
    r = np.arange(D // 2)
    none = posenc.rope_frequencies(D, base=BASE)
    pi = posenc.linear_scaled_frequencies(D, base=BASE, factor=S)
    ntk = posenc.rope_frequencies(D, base=BASE * S ** (D / (D - 2)))
    dynamic = posenc.dynamic_ntk_frequencies(
        D, base=BASE, factor=S, max_position_embeddings=TRAINED, seq_len=int(S * TRAINED)
    )
    yarn, _ = posenc.yarn_frequencies(D, base=BASE, factor=S, original_max_position_embeddings=TRAINED)
    llama3 = posenc.llama3_frequencies(
        D, base=BASE, factor=S, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=TRAINED
    )
    raised = posenc.rope_frequencies(D, base=500000.0)
    # The numbers of the caption and the alt text.
    assert np.allclose(pi / none, 1 / S, rtol=1e-15)
    assert ntk[0] == none[0] and np.isclose(none[-1] / ntk[-1], S, rtol=1e-12)
    assert np.isclose(none[-1] / dynamic[-1], S * S - (S - 1), rtol=1e-12)
    ramp = posenc.yarn_ramp(D, base=BASE, original_max_position_embeddings=TRAINED)
    assert r[ramp == 0].max() == 20 and r[ramp == 1].min() == 46
    assert np.array_equal(yarn[r <= 20], none[r <= 20]) and np.allclose(yarn[r >= 46], none[r >= 46] / S, rtol=1e-15)
    wavelength = 2 * np.pi / none
    assert r[wavelength < TRAINED / 4].max() == 35 and r[wavelength > TRAINED].min() == 46
    assert np.array_equal(llama3[r <= 35], none[r <= 35])
    assert np.allclose(llama3[r >= 46], none[r >= 46] / S, rtol=1e-15)
    assert round(none[-1] / raised[-1]) == 47

    curves = [
        ("position interpolation", pi, "pi", "-"),
        ("NTK-aware, base 10000·8^(128/126)", ntk, "ntk", "-"),
        ("dynamic NTK at 32768", dynamic, "dynamic", "-."),
        ("YaRN", yarn, "yarn", "-"),
        ("Llama 3 (low 1, high 4)", llama3, "llama3", "--"),
        ("base 500000", raised, "base", ":"),
    ]
    fig, ax = plotting.new_figure(aspect=0.55)
    for label, values, method, style in curves:
        ax.plot(r, values / none, color=plotting.colour_of(method=method), linestyle=style, label=label)
    ax.set_yscale("log", base=2)
    ax.set_yticks([1, 1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32], ["1", "1/2", "1/4", "1/8", "1/16", "1/32"])
    ax.minorticks_off()
    ax.set_xlim(0, D // 2 - 1)
    ax.set_xlabel("pair index r")
    ax.set_ylabel("scaled / unscaled frequency")
    ax.legend(loc="lower left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
