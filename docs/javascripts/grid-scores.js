/* The grid-scores panel (the page /grids/, written by {{ panel: grid-scores }}): its heatmap of
 * the query patch's scores, the cells that move the query when tapped, and its registration.
 *
 * The page names it in its front matter (`scripts:`, after panels.js, which wires it and holds
 * the drawing helpers, and grid-scores-math.js). It registers the panel "grid-scores" with its
 * parameters (the query's row and column, the scheme), its readouts, the line that says what
 * each patch's vector is, and a build that draws the grid.
 *
 * Every number comes from grid-scores-math.js (window.posencGridScoresMath), which
 * tests/javascript/test_grid_scores_math.py holds to posenc in Node; tests/browser/test_grid_scores_panel.py
 * and tests/browser/test_panels.py drive the panel in headless Chromium. The sliders are the
 * keyboard's way to move the query; a tap or click on a cell sets them.
 */
(function () {
  "use strict";

  if (window.posencGridScores) return; // a second copy of the script changes nothing

  const math = window.posencGridScoresMath;
  const { svgElement, svgText, newCanvas, widthOf, range } = window.posencPanels.drawing;
  const { ROWS, COLS } = math;
  // Room for the row numbers and the rotated axis title on the left, the column numbers and the
  // axis title on top; cells between 18 and 34 px.
  const LEFT = 36;
  const TOP = 34;
  const RIGHT = 6;
  const SMALLEST_CELL = 18;
  const LARGEST_CELL = 34;
  // Below the mean in vermillion, above it in blue: the figures' palette, the same in both schemes
  // (both keep 3:1 against either page, and a cell is a fill, not text).
  const BELOW = "#d55e00";
  const ABOVE = "#0072b2";
  const LEGEND_STEPS = 21;

  /** What each patch's vector is, scheme by scheme (the formula line under the readouts). */
  const VECTORS = {
    axial: "x with pairs 0–15 turned by row × ωₖ and pairs 16–31 by column × ωₖ",
    mixed: "x with pair k turned by ωₖ (column + row) / √2 and pair 16 + k by ωₖ (row − column) / √2",
    sincos: "x plus the patch's row of the 2-D sin-cos table (MAE's layout)",
  };

  /** A cell's fill for a deviation `u` in [-1, 1] from the mean: transparent at 0, no outline in either scheme. */
  function paint(rect, u) {
    const strength = Math.min(1, Math.abs(u)).toFixed(3);
    rect.setAttribute("class", "");
    rect.setAttribute("style", `fill: ${u >= 0 ? ABOVE : BELOW}; stroke: none; fill-opacity: ${strength}`);
  }

  /** Sets the query sliders to (row, col) and lets panels.js redraw, as if they had been moved. */
  function moveQuery(root, row, col) {
    const sliders = { row: root.querySelector('input[data-param="row"]'), col: root.querySelector('input[data-param="col"]') };
    if (!sliders.row || !sliders.col) return;
    if (Number(sliders.row.value) === row && Number(sliders.col.value) === col) return;
    sliders.row.value = String(row);
    sliders.col.value = String(col);
    sliders.col.dispatchEvent(new Event("input", { bubbles: true })); // one input, one redraw
  }

  function buildDrawing(root, container) {
    const width = widthOf(container, LEFT + COLS * LARGEST_CELL + RIGHT);
    const cell = Math.max(SMALLEST_CELL, Math.min(LARGEST_CELL, Math.floor((width - LEFT - RIGHT) / COLS)));
    const gridWidth = COLS * cell;
    const gridHeight = ROWS * cell;
    const legendTop = TOP + gridHeight + 12;
    const height = legendTop + 10 + 38;
    const svg = newCanvas(container, LEFT + gridWidth + RIGHT, height);
    // Numbers on every axis step where they fit, every other one on a narrow grid.
    const every = cell >= 20 ? 1 : 2;
    svgText(svg, LEFT + gridWidth / 2, 13, "key column →", { "text-anchor": "middle", class: "posenc-svg__label" });
    svgText(svg, 0, 0, "key row →", {
      "text-anchor": "middle",
      class: "posenc-svg__label",
      // Turned a quarter clockwise, the glyphs stand to the right of x = 4, clear of the row numbers.
      transform: `translate(4 ${TOP + gridHeight / 2}) rotate(90)`,
    });
    for (let c = 0; c < COLS; c += every) {
      svgText(svg, LEFT + (c + 0.5) * cell, TOP - 6, String(c), { "text-anchor": "middle", class: "posenc-svg__small" });
    }
    for (let r = 0; r < ROWS; r += every) {
      svgText(svg, LEFT - 5, TOP + (r + 0.5) * cell + 4, String(r), { "text-anchor": "end", class: "posenc-svg__small" });
    }
    const cells = svgElement("g", { style: "cursor: pointer" }, svg);
    const rects = range(0, ROWS * COLS).map((k) => {
      const x = LEFT + (k % COLS) * cell;
      const y = TOP + Math.floor(k / COLS) * cell;
      return svgElement("rect", { x: x + 0.5, y: y + 0.5, width: cell - 1, height: cell - 1, "data-cell": k }, cells);
    });
    // The query's outline, white under black, visible on every cell colour and in both schemes.
    const mark = svgElement("g", { class: "posenc-svg__mark posenc-svg__moving" }, svg);
    for (const kind of ["halo", "ink"]) {
      svgElement("rect", { x: LEFT, y: TOP, width: cell, height: cell, class: `posenc-svg__${kind}` }, mark);
    }
    // The legend: the colour bar from (mean - spread) to (mean + spread), in scores.
    const step = gridWidth / LEGEND_STEPS;
    const bar = range(0, LEGEND_STEPS).map((k) =>
      svgElement("rect", { x: LEFT + k * step, y: legendTop, width: step + 0.2, height: 10 }, svg));
    bar.forEach((rect, k) => paint(rect, (2 * k) / (LEGEND_STEPS - 1) - 1));
    const labels = [
      svgText(svg, LEFT, legendTop + 24, "", { "text-anchor": "start", class: "posenc-svg__small" }),
      svgText(svg, LEFT + gridWidth / 2, legendTop + 24, "", { "text-anchor": "middle", class: "posenc-svg__small" }),
      svgText(svg, LEFT + gridWidth, legendTop + 24, "", { "text-anchor": "end", class: "posenc-svg__small" }),
    ];
    svgText(svg, LEFT + gridWidth / 2, legendTop + 40, "score: mean of the grid in the middle", {
      "text-anchor": "middle",
      class: "posenc-svg__small",
    });

    // A tap or click on a cell makes it the query.
    svg.addEventListener("click", (event) => {
      const box = svg.getBoundingClientRect();
      const scale = box.width > 0 ? (LEFT + gridWidth + RIGHT) / box.width : 1;
      const x = (event.clientX - box.left) * scale - LEFT;
      const y = (event.clientY - box.top) * scale - TOP;
      if (x < 0 || y < 0 || x >= gridWidth || y >= gridHeight) return;
      moveQuery(root, Math.floor(y / cell), Math.floor(x / cell));
    });

    return ({ row, col, scheme }) => {
      const values = math.scores(scheme, row, col);
      const { centre, spread } = math.colourScale(values);
      values.forEach((value, k) => paint(rects[k], spread > 0 ? (value - centre) / spread : 0));
      mark.style.transform = `translate(${col * cell}px, ${row * cell}px)`;
      labels[0].textContent = math.fixed(centre - spread, 1);
      labels[1].textContent = math.fixed(centre, 1);
      labels[2].textContent = math.fixed(centre + spread, 1);
    };
  }

  window.posencPanels.register("grid-scores", {
    params: ["row", "col", "scheme"],
    readouts: (params) => math.readouts(params),
    texts: ({ scheme }) => ({ vector: VECTORS[scheme] }),
    build: (root) => {
      const container = root.querySelector("[data-drawing]");
      return container ? buildDrawing(root, container) : () => {};
    },
  });

  window.posencGridScores = Object.freeze({ panel: "grid-scores", vectors: VECTORS });
})();
