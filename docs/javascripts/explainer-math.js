/* The arithmetic of the interactive explainer (/explainer/): no DOM, no dependencies.
 *
 * One file serves two readers. In a page it is a classic script (a page's front matter lists it
 * before explainer.js) and defines window.posencExplainerMath; from Node, require() returns the same
 * object, and tests/javascript/test_explainer_math.py evaluates it there over every setting the controls
 * allow and requires agreement with the Python library to 1e-12.
 *
 * The formulas repeat posenc/encodings.py: base 10000, pair r has the angular frequency
 * base^(-2r/d), the interleaved layout puts sin at channel 2r and cos at 2r + 1, and RoPE
 * rotates the pair (x[2r], x[2r+1]) by position * theta_r.
 *
 * The demo's data (the toy embeddings, the RoPE content and the width of each step) is written
 * once, in posenc/site/explainer_demo.json, which the figures beside the steps read too. Node
 * require()s that file; in a page it arrives as window.posencExplainerDemo, from the script
 * javascripts/explainer-demo.js that the site build (hooks/site_build/explainer_data.py) generates from it and
 * a page's front matter lists just before this one. The controls' ranges and starting values live in the
 * page's markup (docs/explainer.md).
 */
(function (root, build) {
  "use strict";
  if (typeof module === "object" && module.exports) {
    module.exports = build(require("../../posenc/site/explainer_demo.json"));
  } else if (!root.posencExplainerMath) {
    root.posencExplainerMath = build(root.posencExplainerDemo); // a second copy changes nothing
  }
})(typeof globalThis === "object" ? globalThis : this, function (demo) {
  "use strict";

  const BASE = 10000;

  /** The toy two-dimensional word embeddings of the first step. */
  const EMBEDDINGS = Object.freeze({ ...demo.embeddings });
  /** The content of every query and key pair in the RoPE steps. */
  const CONTENT = Object.freeze([...demo.content]);
  /** The model width each step computes at. */
  const WIDTHS = Object.freeze({ ...demo.widths });

  function checkWidth(width) {
    if (!Number.isInteger(width) || width <= 0 || width % 2 !== 0) {
      throw new RangeError(`width must be a positive even integer (channels come in pairs), got ${width}`);
    }
  }

  function checkBase(base) {
    if (!(Number.isFinite(base) && base > 1)) throw new RangeError(`base must be finite and > 1, got ${base}`);
  }

  /** omega_r = base^(-2r / width) for r = 0 .. width/2 - 1 (posenc.frequencies). */
  function frequencies(width, base = BASE) {
    checkWidth(width);
    checkBase(base);
    const out = [];
    for (let r = 0; r < width / 2; r += 1) out.push(Math.pow(base, (-2 * r) / width));
    return out;
  }

  /** 2 pi / omega_r, in positions (posenc.wavelengths). */
  function wavelengths(width, base = BASE) {
    return frequencies(width, base).map((omega) => (2 * Math.PI) / omega);
  }

  /** P(t): sin(t omega_r) at channel 2r, cos(t omega_r) at 2r + 1 (posenc.sinusoidal). */
  function sinusoidal(position, width, base = BASE) {
    const out = new Array(width);
    frequencies(width, base).forEach((omega, r) => {
      const phase = position * omega;
      out[2 * r] = Math.sin(phase);
      out[2 * r + 1] = Math.cos(phase);
    });
    return out;
  }

  /** The phase t omega_r that channel `channel` (pair r = floor(channel / 2)) takes the sine or cosine of. */
  function angle(position, channel, width, base = BASE) {
    return position * frequencies(width, base)[Math.floor(channel / 2)];
  }

  function dot(a, b) {
    let sum = 0;
    for (let k = 0; k < a.length; k += 1) sum += a[k] * b[k];
    return sum;
  }

  /** P(i) . P(j), multiplied out from the two position vectors. */
  function positionDot(i, j, width, base = BASE) {
    return dot(sinusoidal(i, width, base), sinusoidal(j, width, base));
  }

  /** K(offset) = sum_r cos(omega_r offset) (posenc.kernel; equals positionDot(t, t + offset)). */
  function kernel(offset, width, base = BASE) {
    return frequencies(width, base).reduce((sum, omega) => sum + Math.cos(offset * omega), 0);
  }

  /** One row of posenc.rope, interleaved layout: pair r of x turned by position * theta_r. */
  function rotate(x, position, base = BASE) {
    const theta = frequencies(x.length, base);
    const out = new Array(x.length);
    theta.forEach((t, r) => {
      const phase = position * t;
      const cos = Math.cos(phase);
      const sin = Math.sin(phase);
      const first = x[2 * r];
      const second = x[2 * r + 1];
      out[2 * r] = first * cos - second * sin;
      out[2 * r + 1] = first * sin + second * cos;
    });
    return out;
  }

  /** The vector of `width` channels that repeats `pair` in every channel pair. */
  function tile(pair, width) {
    checkWidth(width);
    const out = [];
    for (let r = 0; r < width / 2; r += 1) out.push(pair[0], pair[1]);
    return out;
  }

  /** The RoPE score q(m) . k(n) when query and key both hold `pair` in every channel pair. */
  function ropeScore(m, n, width, pair = CONTENT, base = BASE) {
    const content = tile(pair, width);
    return dot(rotate(content, m, base), rotate(content, n, base));
  }

  /** The position-free score matrix E E^T of the words in `order` (a string or a list of words). */
  function dotMatrix(order) {
    const words = typeof order === "string" ? order.split(" ") : Array.from(order);
    const rows = words.map((word) => {
      if (!Object.hasOwn(EMBEDDINGS, word)) throw new RangeError(`unknown word ${word}`);
      return EMBEDDINGS[word];
    });
    return rows.map((a) => rows.map((b) => dot(a, b)));
  }

  /**
   * `x` with `digits` decimals exactly as Python's format(x, f".{digits}f") writes it.
   * Number.prototype.toFixed rounds an exact tie away from zero and drops the sign of -0;
   * Python rounds a tie to the even neighbour and keeps "-0.00".
   */
  function fixed(x, digits) {
    const sign = x < 0 || Object.is(x, -0) ? "-" : "";
    const magnitude = Math.abs(x);
    let text = magnitude.toFixed(digits);
    const exact = magnitude.toFixed(digits + 25); // every double near a tie shows it here
    const cut = exact.length - 25;
    if (/^50*$/.test(exact.slice(cut))) {
      const down = exact.slice(0, cut).replace(/\.$/, "");
      if (Number(down.slice(-1)) % 2 === 0) text = down;
    }
    return sign + text;
  }

  // ---------------------------------------------------------------------------------------
  // What each step shows for given control values

  const STEP_READOUTS = {
    order: ({ order }) => ({
      scores: dotMatrix(order).flat().map((v) => fixed(v, 2)).join(" "),
    }),
    heatmap: ({ position, dimension }) => ({
      angle: fixed(angle(position, dimension, WIDTHS.heatmap), 2),
      value: fixed(sinusoidal(position, WIDTHS.heatmap)[dimension], 3),
    }),
    bands: ({ dimension }) => ({
      frequency: fixed(frequencies(WIDTHS.bands)[Math.floor(dimension / 2)], 4),
      wavelength: fixed(wavelengths(WIDTHS.bands)[Math.floor(dimension / 2)], 1),
    }),
    distance: ({ i, j }) => ({
      dot: fixed(positionDot(i, j, WIDTHS.distance), 2),
      distance: String(Math.abs(i - j)),
    }),
    rope: ({ m, n }) => ({
      score: fixed(ropeScore(m, n, WIDTHS.rope), 2),
      offset: String(m - n),
    }),
    compare: ({ m, n }) => ({
      sinusoidal: fixed(positionDot(m, n, WIDTHS.compare), 2),
      rope: fixed(ropeScore(m, n, WIDTHS.compare), 2),
    }),
  };

  // Extra text some steps show beside the readouts ([data-text]).
  const STEP_TEXTS = {
    heatmap: ({ position, dimension }) => {
      const fn = dimension % 2 === 0 ? "sin" : "cos";
      const divisor = 1 / frequencies(WIDTHS.heatmap)[Math.floor(dimension / 2)];
      const { angle: phase, value } = STEP_READOUTS.heatmap({ position, dimension });
      return { formula: `P(${position})[${dimension}] = ${fn}(${position} / ${fixed(divisor, 2)}) = ${fn}(${phase}) = ${value}` };
    },
    rope: ({ m, n }) => {
      const content = tile(CONTENT, WIDTHS.rope);
      const pair0 = (position) => `[${rotate(content, position).slice(0, 2).map((v) => fixed(v, 2)).join(", ")}]`;
      return { q: pair0(m), k: pair0(n) };
    },
  };

  function channelText(value) {
    return `${value} (${value % 2 === 0 ? "sin" : "cos"}, pair ${Math.floor(value / 2)})`;
  }
  // How a control's value reads aloud and beside the slider, when the bare number says too little.
  const VALUE_TEXTS = { heatmap: { dimension: channelText }, bands: { dimension: channelText } };

  /** Whether the explainer knows step `name`. */
  function hasStep(name) {
    return Object.hasOwn(STEP_READOUTS, name);
  }

  /** The text of every readout ([data-readout]) of step `name` for the control values `params`. */
  function readouts(name, params) {
    if (!hasStep(name)) throw new RangeError(`unknown step ${name}`);
    return STEP_READOUTS[name](params);
  }

  /** The extra texts ([data-text]) of step `name`; {} for a step without any. */
  function texts(name, params) {
    if (!hasStep(name)) throw new RangeError(`unknown step ${name}`);
    return Object.hasOwn(STEP_TEXTS, name) ? STEP_TEXTS[name](params) : {};
  }

  /** How control `param` of step `name` describes `value`, or null when the number says it all. */
  function valueText(name, param, value) {
    const describe = (VALUE_TEXTS[name] || {})[param];
    return describe ? describe(value) : null;
  }

  return Object.freeze({
    BASE,
    EMBEDDINGS,
    CONTENT,
    WIDTHS,
    frequencies,
    wavelengths,
    sinusoidal,
    angle,
    positionDot,
    kernel,
    rotate,
    tile,
    ropeScore,
    dotMatrix,
    fixed,
    hasStep,
    readouts,
    texts,
    valueText,
  });
});
