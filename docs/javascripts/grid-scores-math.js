/* The arithmetic of the grid-scores panel (/grids/, {{ panel: grid-scores }}): no DOM, no dependencies.
 *
 * Like long-context-math.js, one file serves two readers: in a page it is a classic script (the
 * page's front matter lists it before grid-scores.js) and defines window.posencGridScoresMath;
 * from Node, require() returns the same object, and tests/javascript/test_grid_scores_math.py
 * evaluates it over every setting the panel's controls allow, and over other grids, and requires
 * agreement with posenc to 1e-12.
 *
 * Every patch of a rows x cols grid gets one vector of DIM = 64 channels from the content vector
 * x = (1, 1, ..., 1), and the panel shows the dot product of the query patch's vector with every
 * patch's. The three schemes repeat posenc/grids.py, patches numbered row by row, coordinates the
 * patch indices, base 10000, omega_k = base^(-k/16) for k < 16 (DIM / 4 frequencies):
 *
 *   axial   posenc.axial_rope_2d(x, rows, cols): interleaved pairs, pair k < 16 turned by
 *           row * omega_k, pair 16 + k by col * omega_k.
 *   mixed   posenc.mixed_rope_2d(x, rows, cols, F): pair p turned by fx[p] * col + fy[p] * row, with
 *           F the axial schedule turned by 45 degrees: pair k < 16 has (fx, fy) = omega_k (c, c),
 *           pair 16 + k has omega_k (-c, c), c = sqrt(1/2). This is the form of Heo et al.'s
 *           initialisation of RoPE-Mixed (they draw the angle at random per head, with base 10)
 *           with the angle fixed at 45 degrees and the other schemes' base.
 *   sincos  x + posenc.sincos_2d_table(rows, cols, 64, layout="mae"): the table is added to the
 *           content, sin(col), cos(col), sin(row), cos(row) in blocks of 16 channels.
 *
 * The sines and cosines of a sum come from the angle-sum formulas, as posenc computes them.
 * The controls' ranges and starting values live in the panel's description (docs/panels/grid-scores.yml).
 */
(function (root, build) {
  "use strict";
  const inNode = typeof module === "object" && module.exports;
  // The frequencies and Python's number formatting come from the explainer's module.
  const math = build(inNode ? require("./explainer-math.js") : root.posencExplainerMath);
  if (inNode) module.exports = math;
  else if (!root.posencGridScoresMath) root.posencGridScoresMath = math; // a second copy changes nothing
})(typeof globalThis === "object" ? globalThis : this, function (explainerMath) {
  "use strict";

  const { fixed } = explainerMath;

  /** The channels of every patch's vector, the base of every schedule, the panel's grid. */
  const DIM = 64;
  const BASE = 10000;
  const ROWS = 12;
  const COLS = 12;
  /** The schemes the panel offers, in the order of its buttons. */
  const SCHEMES = Object.freeze(["axial", "mixed", "sincos"]);
  /** Scores closer than this to the largest count as tied with it. */
  const TIE = 1e-9;
  /** A row-column interaction below this counts as none: the scores split into a row part plus a column part. */
  const SEPARABLE = 1e-9;

  /** omega_k = base^(-k / q), k < q = dim / 4 (posenc.rope_frequencies(dim / 2), to a few ulps). */
  function frequencies(dim = DIM, base = BASE) {
    return explainerMath.frequencies(dim / 2, base);
  }

  /** RoPE-Mixed's fixed frequencies: fx (per column) and fy (per row) of each of the dim / 2 pairs. */
  function mixedFrequencies(dim = DIM, base = BASE) {
    const omega = frequencies(dim, base);
    const half = Math.SQRT1_2; // cos 45 degrees = sin 45 degrees, correctly rounded
    return {
      fx: [...omega.map((w) => w * half), ...omega.map((w) => -w * half)],
      fy: [...omega.map((w) => w * half), ...omega.map((w) => w * half)],
    };
  }

  function checkGrid(rows, cols, dim) {
    for (const [name, value] of [["rows", rows], ["cols", cols]]) {
      if (!(Number.isInteger(value) && value >= 1)) throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
    if (!(Number.isInteger(dim) && dim >= 4 && dim % 4 === 0)) throw new RangeError(`dim must be a positive multiple of 4, got ${dim}`);
  }

  /** The content vector (1, ..., 1) with each pair p rotated by the angle of sin[p], cos[p] (posenc's interleaved rotation). */
  function rotatedOnes(sin, cos) {
    const out = new Array(2 * sin.length);
    sin.forEach((s, p) => {
      out[2 * p] = cos[p] - s;
      out[2 * p + 1] = s + cos[p];
    });
    return out;
  }

  // Each scheme's vector for the patch in row `row`, column `col`.
  const ENCODERS = {
    axial: (dim) => {
      const omega = frequencies(dim);
      return (row, col) => {
        const angles = [...omega.map((w) => row * w), ...omega.map((w) => col * w)];
        return rotatedOnes(angles.map(Math.sin), angles.map(Math.cos));
      };
    },
    mixed: (dim) => {
      const { fx, fy } = mixedFrequencies(dim);
      return (row, col) => {
        // sin(a + b) and cos(a + b) of a = fy row and b = fx col, from the sines and cosines of each.
        const sin = fx.map((_, p) => Math.sin(row * fy[p]) * Math.cos(col * fx[p]) + Math.cos(row * fy[p]) * Math.sin(col * fx[p]));
        const cos = fx.map((_, p) => Math.cos(row * fy[p]) * Math.cos(col * fx[p]) - Math.sin(row * fy[p]) * Math.sin(col * fx[p]));
        return rotatedOnes(sin, cos);
      };
    },
    sincos: (dim) => {
      const omega = frequencies(dim);
      return (row, col) => [
        ...omega.map((w) => 1 + Math.sin(col * w)),
        ...omega.map((w) => 1 + Math.cos(col * w)),
        ...omega.map((w) => 1 + Math.sin(row * w)),
        ...omega.map((w) => 1 + Math.cos(row * w)),
      ];
    },
  };

  /** Every patch's vector under `scheme`, row by row: an array of rows * cols vectors of dim channels. */
  function encode(scheme, rows = ROWS, cols = COLS, dim = DIM) {
    if (!Object.hasOwn(ENCODERS, scheme)) throw new RangeError(`unknown scheme ${scheme}`);
    checkGrid(rows, cols, dim);
    const at = ENCODERS[scheme](dim);
    const out = [];
    for (let row = 0; row < rows; row += 1) for (let col = 0; col < cols; col += 1) out.push(at(row, col));
    return out;
  }

  function dot(a, b) {
    let sum = 0;
    for (let c = 0; c < a.length; c += 1) sum += a[c] * b[c];
    return sum;
  }

  /** The score of the query patch (row, col) against every patch, row by row: rows * cols numbers. */
  function scores(scheme, row, col, rows = ROWS, cols = COLS, dim = DIM) {
    const vectors = encode(scheme, rows, cols, dim);
    if (!(Number.isInteger(row) && row >= 0 && row < rows)) throw new RangeError(`row must be an integer in [0, ${rows}), got ${row}`);
    if (!(Number.isInteger(col) && col >= 0 && col < cols)) throw new RangeError(`col must be an integer in [0, ${cols}), got ${col}`);
    const query = vectors[row * cols + col];
    return vectors.map((key) => dot(query, key));
  }

  /**
   * How far the scores are from a row part plus a column part: the largest
   * |S(r, c) - S(r, col) - S(row, c) + S(row, col)| over the grid, 0 exactly when S(r, c) = A(r) + B(c).
   */
  function interaction(values, row, col, rows = ROWS, cols = COLS) {
    let most = 0;
    for (let r = 0; r < rows; r += 1) {
      for (let c = 0; c < cols; c += 1) {
        const left = values[r * cols + c] - values[r * cols + col] - values[row * cols + c] + values[row * cols + col];
        most = Math.max(most, Math.abs(left));
      }
    }
    return most;
  }

  /** The largest score at a patch other than the query, the first patch (row by row) within TIE of it, and how many are. */
  function largestElsewhere(values, row, col, cols = COLS) {
    const query = row * cols + col;
    const others = values.filter((_, k) => k !== query);
    if (!others.length) return null;
    const best = Math.max(...others);
    const tied = values.map((v, k) => k).filter((k) => k !== query && values[k] >= best - TIE);
    return { score: best, row: Math.floor(tied[0] / cols), col: tied[0] % cols, ties: tied.length };
  }

  /**
   * The colour scale of the heatmap: centred on the mean score over the grid (drawn in the
   * panel's background), reaching full colour at `spread`, the largest distance of a score from it.
   */
  function colourScale(values) {
    const centre = values.reduce((sum, v) => sum + v, 0) / values.length;
    const spread = Math.max(...values.map((v) => Math.abs(v - centre)));
    return { centre, spread };
  }

  function checkParams({ row, col, scheme }) {
    if (!Object.hasOwn(ENCODERS, scheme)) throw new RangeError(`unknown scheme ${scheme}`);
    return { row, col, scheme };
  }

  /** Every number the panel shows for the control values `params` ({ row, col, scheme }), on the panel's grid. */
  function readouts(params) {
    const { row, col, scheme } = checkParams(params);
    const values = scores(scheme, row, col);
    const best = largestElsewhere(values, row, col);
    const apart = interaction(values, row, col);
    return {
      self: fixed(values[row * COLS + col], 3),
      best: fixed(best.score, 3),
      bestAt: `(${best.row}, ${best.col})` + (best.ties > 1 ? ` and ${best.ties - 1} more` : ""),
      lowest: fixed(Math.min(...values), 3),
      separable: apart < SEPARABLE ? "yes" : `no: off by up to ${fixed(apart, 3)}`,
    };
  }

  return Object.freeze({
    DIM,
    BASE,
    ROWS,
    COLS,
    SCHEMES,
    TIE,
    SEPARABLE,
    frequencies,
    mixedFrequencies,
    encode,
    scores,
    interaction,
    largestElsewhere,
    colourScale,
    fixed,
    readouts,
  });
});
