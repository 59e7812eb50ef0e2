/* The long-context panel (the page /long-context/, written by {{ panel: long-context }}): its
 * drawing, its table of selected pairs and its registration.
 *
 * The page names it in its front matter (`scripts:`, after panels.js, which wires it and holds
 * the drawing helpers, and long-context-math.js). It registers the panel "long-context" with its
 * parameters, readouts, slider texts and a build that draws each pair's slow-down and fills the
 * table.
 *
 * Every number comes from long-context-math.js (window.posencLongContextMath), which
 * tests/javascript/test_long_context_math.py holds to posenc in Node; tests/browser/test_long_context_panel.py and
 * tests/browser/test_panels.py drive the panel in headless Chromium.
 * Without scripts the panel stays hidden (explainer.css) and the static figure above it stands.
 */
(function () {
  "use strict";

  if (window.posencLongContext) return; // a second copy of the script changes nothing

  const math = window.posencLongContextMath;
  const { svgElement, svgText, newCanvas, widthOf, axes, polylinePoints } = window.posencPanels.drawing;
  // The drawing's height when its box has none; explainer.css reserves the box's height before the
  // script runs (no shift of the page), taller beside the controls than above them.
  const HEIGHT = 240;
  const TABLE_COLUMNS = ["pair", "turns", "slowdown", "targetTurns"];

  /** Each pair's slow-down omega / omega' on a log2 axis, the critical dimension and the scale marked. */
  function buildDrawing(container) {
    // As wide as the room it has (up to 560 px), as tall as the reserved box.
    const width = widthOf(container, 560);
    const height = Math.floor(container.clientHeight) || HEIGHT;
    const box = { left: 52, top: 16, width: width - 64, height: height - 16 - 44 };
    const svg = newCanvas(container, width, height);
    let frame = null;
    const pairs = math.frequencies().map((_, r) => r);
    return (params) => {
      const setting = math.setting(params);
      const omega = math.frequencies();
      const scaled = math.scaled(setting).frequencies;
      const slowdowns = omega.map((w, r) => Math.log2(w / scaled[r]));
      // The axis reaches the next whole power of two above the largest slow-down (at least 2).
      const top = Math.max(1, Math.ceil(Math.max(...slowdowns) - 1e-9));
      const step = Math.ceil(top / 6);
      const ticks = [];
      for (let k = 0; k <= top; k += step) ticks.push(k);
      if (frame) frame.remove();
      frame = svgElement("g", {}, svg);
      const { sx, sy } = axes(frame, box, [0, pairs.length - 1], [0, top], {
        xTicks: [0, 16, 32, 48, 63], xLabel: "pair index r", yLabel: "divided by",
      });
      // The y ticks read as the factor itself (1, 2, 4, ...), not its logarithm.
      const yTicks = svgElement("g", { class: "posenc-svg__axes" }, frame);
      for (const k of ticks) {
        svgElement("line", { x1: box.left - 4, x2: box.left, y1: sy(k), y2: sy(k) }, yTicks);
        svgText(yTicks, box.left - 7, sy(k) + 4, String(2 ** k), { "text-anchor": "end" });
      }
      const critical = math.criticalDimension(math.DIM, setting.training);
      if (critical >= 0 && critical <= pairs.length - 1) {
        svgElement("line", { x1: sx(critical), x2: sx(critical), y1: box.top, y2: box.top + box.height, class: "posenc-svg__guide" }, frame);
        // r with a subscript c, as the page writes the critical dimension.
        const label = svgText(frame, sx(critical) - 5, box.top + 12, "r", { "text-anchor": "end", class: "posenc-svg__muted posenc-svg__math" });
        label.replaceChildren("r", svgElement("tspan", { dy: 4, class: "posenc-svg__sub" }));
        label.lastChild.textContent = "c";
      }
      if (setting.scale > 1) {
        const level = Math.log2(setting.scale);
        svgElement("line", { x1: box.left, x2: box.left + box.width, y1: sy(level), y2: sy(level), class: "posenc-svg__guide" }, frame);
        svgText(frame, box.left + 6, sy(level) - 5, `s = ${setting.scale}`, { class: "posenc-svg__muted" });
      }
      // In the method's colour, the one the figures give it: the build writes the palette on the
      // panel as CSS properties (palette: [method] in its description).
      svgElement("polyline", {
        points: polylinePoints(pairs, slowdowns, sx, sy),
        class: "posenc-svg__curve",
        style: `stroke: var(--posenc-method-${params.method})`,
        "data-method": params.method,
      }, frame);
    };
  }

  function buildTable(body) {
    body.replaceChildren(); // built again when the drawing's width changes
    const cells = math.TABLE_PAIRS.map(() => {
      const row = document.createElement("tr");
      const out = {};
      for (const column of TABLE_COLUMNS) {
        const cell = document.createElement(column === "pair" ? "th" : "td");
        if (column === "pair") cell.scope = "row";
        cell.dataset.cell = column;
        row.appendChild(cell);
        out[column] = cell;
      }
      body.appendChild(row);
      return out;
    });
    return (params) => {
      math.table(params).forEach((values, k) => {
        for (const column of TABLE_COLUMNS) cells[k][column].textContent = values[column];
      });
    };
  }

  window.posencPanels.register("long-context", {
    params: ["exponent", "scale", "method"],
    readouts: (params) => math.readouts(params),
    valueTexts: (params) => math.valueTexts(params),
    build: (root) => {
      const container = root.querySelector("[data-drawing]");
      const draw = container ? buildDrawing(container) : () => {};
      const body = root.querySelector("[data-table]");
      const fill = body ? buildTable(body) : () => {};
      return (params) => {
        fill(params);
        draw(params);
      };
    },
  });

  window.posencLongContext = Object.freeze({ panel: "long-context" });
})();
