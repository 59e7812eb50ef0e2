/* The arithmetic of the long-context panel (/long-context/#panel): no DOM, no dependencies.
 *
 * Like explainer-math.js, one file serves two readers: in a page it is a classic script
 * (the page's front matter lists it before long-context.js) and defines window.posencLongContextMath; from
 * Node, require() returns the same object, and tests/javascript/test_long_context_math.py evaluates it
 * over every setting the panel's controls allow and requires agreement with posenc to 1e-12.
 *
 * The formulas repeat posenc (conventions.py and long_context.py), operation for operation
 * where a floor, a ceiling or a comparison could turn on the last bit: the head width 128 and
 * base 10000 of the page, pair r turning at omega_r = base^(-2r/d) radians per position, and
 * each method's frequencies as Hugging Face transformers computes them.
 *
 * The controls' ranges and starting values live in the page's markup (docs/long-context.md);
 * the training-length slider holds the exponent k of L = 2^k.
 */
(function (root, build) {
  "use strict";
  const inNode = typeof module === "object" && module.exports;
  // The frequencies and Python's number formatting come from the explainer's module.
  const math = build(inNode ? require("./explainer-math.js") : root.posencExplainerMath);
  if (inNode) module.exports = math;
  else if (!root.posencLongContextMath) root.posencLongContextMath = math; // a second copy changes nothing
})(typeof globalThis === "object" ? globalThis : this, function (explainerMath) {
  "use strict";

  const { fixed } = explainerMath;

  /** The head width and base every number of the page is computed for. */
  const DIM = 128;
  const BASE = 10000;
  /** YaRN's turn thresholds (transformers' defaults) and Llama 3.1's band factors. */
  const YARN = Object.freeze({ betaFast: 32, betaSlow: 1 });
  const LLAMA3 = Object.freeze({ lowFreqFactor: 1, highFreqFactor: 4 });
  /** The methods the panel offers, in the order of its buttons. */
  const METHODS = Object.freeze(["pi", "ntk", "dynamic", "yarn", "llama3"]);
  /** The pairs the panel's table lists: every eighth and the last. */
  const TABLE_PAIRS = Object.freeze([0, 8, 16, 24, 32, 40, 48, 56, 63]);

  /** omega_r = base^(-2r / dim), r < dim / 2 (posenc.rope_frequencies, to a few ulps). */
  function frequencies(dim = DIM, base = BASE) {
    return explainerMath.frequencies(dim, base);
  }

  /** The real pair index at which `length` positions make `turns` turns (posenc.pair_index_at_turns). */
  function pairIndexAtTurns(dim, length, turns, base = BASE) {
    return (dim * Math.log(length / (turns * 2 * Math.PI))) / (2 * Math.log(base));
  }

  /** r_c: past it a pair's wavelength exceeds the training length (posenc.critical_dimension). */
  function criticalDimension(dim, trainingLength, base = BASE) {
    return pairIndexAtTurns(dim, trainingLength, 1, base);
  }

  /** YaRN's ramp ends (low, high) in pairs, floored and ceiled (posenc.yarn_correction_range). */
  function yarnCorrectionRange(dim, trainingLength, base = BASE) {
    let low = Math.floor(pairIndexAtTurns(dim, trainingLength, YARN.betaFast, base));
    let high = Math.ceil(pairIndexAtTurns(dim, trainingLength, YARN.betaSlow, base));
    low = Math.max(low, 0);
    high = Math.min(high, dim - 1);
    if (low === high) high += 0.001;
    return [low, high];
  }

  /** Each pair's YaRN weight: 0 keeps the frequency, 1 divides it by the scale (posenc.yarn_ramp). */
  function yarnRamp(dim, trainingLength, base = BASE) {
    const [low, high] = yarnCorrectionRange(dim, trainingLength, base);
    return frequencies(dim, base).map((_, r) => Math.min(1, Math.max(0, (r - low) / (high - low))));
  }

  /** YaRN's factor on queries and keys, 0.1 ln s + 1 for s > 1 (posenc.yarn_attention_factor). */
  function yarnAttentionFactor(scale) {
    return scale <= 1 ? 1 : 0.1 * Math.log(scale) + 1;
  }

  // Each method's frequencies for training length L and scale s (target length s L).
  const SCALINGS = {
    // Position interpolation: every frequency divided by s (posenc.linear_scaled_frequencies).
    pi: (L, s) => frequencies().map((omega) => omega / s),
    // NTK-aware: the base raised to b s^(d/(d-2)) (derivation rope-ntk-base).
    ntk: (L, s) => frequencies(DIM, BASE * Math.pow(s, DIM / (DIM - 2))),
    // Dynamic NTK at the target length (posenc.dynamic_ntk_frequencies with seq_len = s L).
    dynamic: (L, s) => {
      const stretch = (s * (s * L)) / L - (s - 1);
      return frequencies(DIM, BASE * Math.pow(stretch, DIM / (DIM - 2)));
    },
    // YaRN: blended by the ramp exactly as transformers writes it (posenc.yarn_frequencies).
    yarn: (L, s) => {
      const ramp = yarnRamp(DIM, L);
      return frequencies().map((omega, r) => {
        const keep = 1 - ramp[r];
        return (omega / s) * (1 - keep) + omega * keep;
      });
    },
    // Llama 3.1's rule: edges at 1 and 4 turns within L, a blend linear in the turns (posenc.llama3_frequencies).
    llama3: (L, s) => {
      const { lowFreqFactor: low, highFreqFactor: high } = LLAMA3;
      return frequencies().map((omega) => {
        const wavelength = (2 * Math.PI) / omega;
        if (wavelength >= L / high && wavelength <= L / low) {
          const smooth = (L / wavelength - low) / (high - low);
          return ((1 - smooth) * omega) / s + smooth * omega;
        }
        return wavelength > L / low ? omega / s : omega;
      });
    },
  };

  function checkSetting({ training, scale, method }) {
    if (!(Number.isInteger(training) && training >= 1)) throw new RangeError(`training must be a positive integer, got ${training}`);
    if (!(Number.isFinite(scale) && scale >= 1)) throw new RangeError(`scale must be >= 1, got ${scale}`);
    if (!Object.hasOwn(SCALINGS, method)) throw new RangeError(`unknown method ${method}`);
  }

  /** The method's frequencies and its factor on queries and keys, for one setting. */
  function scaled(setting) {
    checkSetting(setting);
    const { training, scale, method } = setting;
    return {
      frequencies: SCALINGS[method](training, scale),
      attentionFactor: method === "yarn" ? yarnAttentionFactor(scale) : 1,
    };
  }

  /** The control values as numbers of the page: L = 2^exponent. */
  function setting({ exponent, scale, method }) {
    return { training: Math.pow(2, exponent), scale, method };
  }

  /** A whole number with thousands separated by commas, as Python's format(n, ","). */
  function grouped(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  /** Every number the panel shows for the control values `params` ({ exponent, scale, method }). */
  function readouts(params) {
    const s = setting(params);
    const L = s.training;
    const target = s.scale * L;
    const omega = frequencies();
    const { frequencies: scaledOmega, attentionFactor } = scaled(s);
    const last = omega.length - 1;
    return {
      target: grouped(target),
      critical: fixed(criticalDimension(DIM, L), 2),
      untrained: String(omega.filter((w) => (2 * Math.PI) / w > L).length),
      unturned: String(scaledOmega.filter((w) => (2 * Math.PI) / w > target).length),
      slowest: fixed(omega[last] / scaledOmega[last], 2),
      angle: fixed(target * scaledOmega[last], 3),
      trainedAngle: fixed(L * omega[last], 3),
      attention: fixed(attentionFactor, 4),
    };
  }

  /** The table's rows: pair, turns within L, slow-down, turns within the target. */
  function table(params) {
    const s = setting(params);
    const target = s.scale * s.training;
    const omega = frequencies();
    const scaledOmega = scaled(s).frequencies;
    return TABLE_PAIRS.map((r) => {
      const wavelength = (2 * Math.PI) / omega[r];
      return {
        pair: String(r),
        turns: fixed(s.training / wavelength, 3),
        slowdown: fixed(omega[r] / scaledOmega[r], 2),
        targetTurns: fixed(target / ((2 * Math.PI) / scaledOmega[r]), 3),
      };
    });
  }

  /** What the sliders say aloud and beside them: lengths with their thousands marked. */
  function valueTexts(params) {
    const s = setting(params);
    return {
      exponent: `${grouped(s.training)} tokens`,
      scale: `${s.scale} (target ${grouped(s.scale * s.training)} tokens)`,
    };
  }

  return Object.freeze({
    DIM,
    BASE,
    YARN,
    LLAMA3,
    METHODS,
    TABLE_PAIRS,
    frequencies,
    pairIndexAtTurns,
    criticalDimension,
    yarnCorrectionRange,
    yarnRamp,
    yarnAttentionFactor,
    scaled,
    setting,
    fixed,
    grouped,
    readouts,
    table,
    valueTexts,
  });
});
