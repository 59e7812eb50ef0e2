/* The interactive explainer's six panels (the page /explainer/): their drawings and registration.
 *
 * Each step is a panel (docs/javascripts/panels.js, loaded before this file, wires it): the
 * page writes it with {{ panel: NAME }} from docs/panels/NAME.html, and this file registers
 * NAME with its parameters, its readouts and its drawing.
 *
 * Every number it shows comes from explainer-math.js (window.posencExplainerMath), which
 * tests/javascript/test_explainer_math.py holds to posenc in Node; tests/browser/test_explainer.py and
 * tests/browser/test_panels.py drive the page in headless Chromium.
 *
 * No dependencies, no network.
 */
(function () {
  "use strict";

  if (window.posencExplainer) return; // a second copy of the script changes nothing

  // The arithmetic and the demo's data (explainer-math.js, loaded just before this file).
  const math = window.posencExplainerMath;
  const { WIDTHS, CONTENT, frequencies, wavelengths, sinusoidal, kernel, positionDot, ropeScore, dotMatrix, fixed } = math;
  const { svgElement, svgText, newCanvas, widthOf, inkOn, colourMap, axes, polylinePoints, range } = window.posencPanels.drawing;

  // The figures' colour maps. The diverging one (posenc.site.plotting's) the build writes on the
  // panel as --posenc-diverging (palette: [diverging]): its zero is clear, so the page shows
  // through. The sequential one is viridis, sampled at nine points.
  // Read off the panel's own style, which holds it even before the panel is on the page (a
  // computed style is empty there, and instant navigation builds panels off the page).
  const divergingIn = (element) => colourMap(
    element.closest("[data-panel]").style.getPropertyValue("--posenc-diverging").split(",").map((stop) => stop.trim()), -1, 1);
  const sequential = colourMap(
    ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"], 0, 1);

  // ---------------------------------------------------------------------------------------
  // The drawing of each step: built in its container at the width it has (text is never
  // scaled below its size in explainer.css), it returns draw(params)

  const DRAWINGS = {
    order(container) {
      const cell = 64;
      const left = 80;
      const top = 48;
      const svg = newCanvas(container, left + 3 * cell + 10, top + 3 * cell + 10);
      svgText(svg, left + 1.5 * cell, 14, "key word", { "text-anchor": "middle", class: "posenc-svg__muted" });
      const columns = range(0, 3).map((c) =>
        svgText(svg, left + (c + 0.5) * cell, top - 10, "", { "text-anchor": "middle" }));
      const rows = range(0, 3).map((r) =>
        svgText(svg, left - 8, top + (r + 0.5) * cell + 4, "", { "text-anchor": "end" }));
      const cells = range(0, 9).map((k) => {
        const x = left + (k % 3) * cell;
        const y = top + Math.floor(k / 3) * cell;
        const rect = svgElement("rect", { x: x + 1, y: y + 1, width: cell - 2, height: cell - 2, rx: 3 }, svg);
        const label = svgText(svg, x + cell / 2, y + cell / 2 + 5, "", { "text-anchor": "middle", class: "posenc-svg__cell" });
        return { rect, label };
      });
      return ({ order }) => {
        const words = order.split(" ");
        const matrix = dotMatrix(words).flat();
        words.forEach((word, k) => {
          columns[k].textContent = word;
          rows[k].textContent = word;
        });
        cells.forEach(({ rect, label }, k) => {
          rect.setAttribute("fill", sequential(matrix[k]));
          label.textContent = fixed(matrix[k], 2);
          // Inline, so the scheme's ink (explainer.css) does not override it: the number sits on the cell.
          label.style.fill = inkOn(sequential(matrix[k]));
        });
      };
    },

    heatmap(container) {
      const width = WIDTHS.heatmap;
      const length = 50;
      const left = 40;
      const top = 36;
      const cw = Math.floor((widthOf(container, left + width * 22 + 10) - left - 10) / width);
      const ch = 7;
      const svg = newCanvas(container, left + width * cw + 10, top + length * ch + 26);
      svgText(svg, left + (width * cw) / 2, 13, "channel (even: sin, odd: cos) →", { "text-anchor": "middle", class: "posenc-svg__label" });
      for (let c = 0; c < width; c += 2) svgText(svg, left + (c + 0.5) * cw, top - 6, String(c), { "text-anchor": "middle", class: "posenc-svg__small" });
      for (let t = 0; t < length; t += 10) svgText(svg, left - 5, top + t * ch + ch, String(t), { "text-anchor": "end", class: "posenc-svg__small" });
      svgText(svg, 0, 0, "position →", { "text-anchor": "middle", class: "posenc-svg__label", transform: `translate(10 ${top + (length * ch) / 2}) rotate(90)` });
      // The 1000 cells are one pixel each of a small bitmap, stretched: one SVG node instead of
      // a thousand keeps the layout after every input cheap.
      const diverging = divergingIn(container);
      const bitmap = document.createElement("canvas");
      bitmap.width = width;
      bitmap.height = length;
      const pen = bitmap.getContext("2d");
      for (let t = 0; t < length; t += 1) {
        sinusoidal(t, width).forEach((value, c) => {
          pen.fillStyle = diverging(value);
          pen.fillRect(c, t, 1, 1);
        });
      }
      // The bitmap goes in xlink:href, not href: Material's instant navigation sets the href
      // property of every element with an href attribute (to make links absolute), and an SVG
      // image's href property is read-only, so a plain href here threw in Material's code.
      const pixels = svgElement("image", {
        x: left, y: top, width: width * cw, height: length * ch,
        preserveAspectRatio: "none", class: "posenc-svg__pixels",
      }, svg);
      pixels.setAttributeNS("http://www.w3.org/1999/xlink", "xlink:href", bitmap.toDataURL());
      // Outlines drawn twice, white under black, stay visible on every cell colour and scheme.
      const outline = (attributes, kind) => {
        const group = svgElement("g", { class: `posenc-svg__${kind} posenc-svg__moving` }, svg);
        svgElement("rect", { ...attributes, class: "posenc-svg__halo" }, group);
        svgElement("rect", { ...attributes, class: "posenc-svg__ink" }, group);
        return group;
      };
      const row = outline({ x: left, y: top, width: width * cw, height: ch }, "band");
      const column = outline({ x: left, y: top, width: cw, height: length * ch }, "band");
      const mark = outline({ x: left - 1, y: top - 1, width: cw + 2, height: ch + 2 }, "mark");
      svgText(svg, left + (width * cw) / 2, top + length * ch + 18, "colour: −1 blue, 0 background, +1 red", { "text-anchor": "middle", class: "posenc-svg__small" });
      return ({ position, dimension }) => {
        row.style.transform = `translate(0px, ${position * ch}px)`;
        column.style.transform = `translate(${dimension * cw}px, 0px)`;
        mark.style.transform = `translate(${dimension * cw}px, ${position * ch}px)`;
      };
    },

    bands(container) {
      const channels = [0, 2, 4, 6];
      const last = 200;
      const outer = widthOf(container, 568);
      const box = { left: 84, top: 12, width: outer - 98, height: 0 };
      const rowHeight = 60;
      const svg = newCanvas(container, outer, box.top + channels.length * rowHeight + 40);
      const omega = frequencies(WIDTHS.bands);
      const lambda = wavelengths(WIDTHS.bands);
      const sx = (t) => box.left + (t / last) * box.width;
      const samples = range(0, 401).map((k) => (k * last) / 400);
      const bands = channels.map((channel, index) => {
        const middle = box.top + index * rowHeight + rowHeight / 2;
        const group = svgElement("g", { class: "posenc-svg__wave" }, svg);
        svgElement("line", { x1: box.left, x2: box.left + box.width, y1: middle, y2: middle, class: "posenc-svg__zero" }, group);
        const points = samples.map((t) => `${sx(t).toFixed(2)},${(middle - 20 * Math.sin(omega[channel / 2] * t)).toFixed(2)}`).join(" ");
        svgElement("polyline", { points, class: "posenc-svg__curve" }, group);
        svgText(group, box.left - 8, middle + 4, `channel ${channel}`, { "text-anchor": "end" });
        const reach = Math.min(lambda[channel / 2], last);
        const arrow = svgElement("g", { class: "posenc-svg__span" }, group);
        svgElement("line", { x1: sx(0), x2: sx(reach), y1: middle - 25, y2: middle - 25 }, arrow);
        svgElement("line", { x1: sx(reach), x2: sx(reach), y1: middle - 29, y2: middle - 21 }, arrow);
        svgElement("line", { x1: sx(0), x2: sx(0), y1: middle - 29, y2: middle - 21 }, arrow);
        return group;
      });
      const axisY = box.top + channels.length * rowHeight + 4;
      for (const t of [0, 50, 100, 150, 200]) svgText(svg, sx(t), axisY + 13, String(t), { "text-anchor": "middle", class: "posenc-svg__small" });
      svgText(svg, box.left + box.width / 2, axisY + 31, "position t (bar: one wavelength)", { "text-anchor": "middle", class: "posenc-svg__label" });
      return ({ dimension }) => {
        bands.forEach((group, index) => group.classList.toggle("is-selected", channels[index] === dimension));
      };
    },

    distance(container) {
      const width = WIDTHS.distance;
      const left = 64;
      const cw = Math.floor((widthOf(container, left + width * 28 + 14) - left - 14) / width);
      const svg = newCanvas(container, left + width * cw + 14, 336);
      // Every channel numbered when the cells leave room for two digits, every other one if not.
      const every = cw >= 20 ? 1 : 2;
      for (let c = 0; c < width; c += every) svgText(svg, left + (c + 0.5) * cw, 14, String(c), { "text-anchor": "middle", class: "posenc-svg__small" });
      const diverging = divergingIn(container);
      const strips = [0, 1].map((s) => {
        const y = 24 + s * 34;
        const label = svgText(svg, left - 8, y + 17, "", { "text-anchor": "end" });
        const cells = range(0, width).map((c) =>
          svgElement("rect", { x: left + c * cw + 1, y, width: cw - 2, height: 28, rx: 2 }, svg));
        return { label, cells };
      });
      const caption = svgText(svg, left + (width * cw) / 2, 106, "", { "text-anchor": "middle", class: "posenc-svg__label" });
      // On a narrow drawing the caption takes two lines.
      const lines = cw >= 24 ? ["channel values of P(i) and P(j), from −1 (blue) to 1 (red)"] : ["channel values of P(i) and P(j),", "from −1 (blue) to 1 (red)"];
      lines.forEach((line, k) => svgElement("tspan", { x: left + (width * cw) / 2, dy: k ? 16 : 0 }, caption).append(line));
      const box = { left, top: 140, width: width * cw, height: 146 };
      const offsets = range(0, 20);
      const values = offsets.map((d) => kernel(d, width));
      const { sx, sy } = axes(svg, box, [0, 19], [3, 8.5], {
        xTicks: [0, 5, 10, 15, 19], yTicks: [4, 6, 8], xLabel: "distance |i − j|", yLabel: "P(i)·P(j)",
      });
      // The sinusoidal kernel in its family's colour (the palette the build writes on the panel).
      const sinusoidalColour = "var(--posenc-family-sinusoidal)";
      svgElement("polyline", { points: polylinePoints(offsets, values, sx, sy), class: "posenc-svg__curve", style: `stroke: ${sinusoidalColour}` }, svg);
      offsets.forEach((d) => svgElement("circle", { cx: sx(d), cy: sy(values[d]), r: 2.5, class: "posenc-svg__dot", style: `fill: ${sinusoidalColour}` }, svg));
      const marker = svgElement("circle", { cx: sx(0), cy: sy(0), r: 6, class: "posenc-svg__ring" }, svg);
      return ({ i, j }) => {
        [i, j].forEach((position, s) => {
          strips[s].label.textContent = `P(${position})`;
          sinusoidal(position, width).forEach((value, c) => strips[s].cells[c].setAttribute("fill", diverging(value)));
        });
        const d = Math.abs(i - j);
        marker.setAttribute("cx", sx(d).toFixed(2));
        marker.setAttribute("cy", sy(kernel(d, width)).toFixed(2));
      };
    },

    rope(container) {
      const width = WIDTHS.rope;
      const pairs = width / 2;
      const size = 150;
      const across = widthOf(container, pairs * size) >= pairs * size ? pairs : 2;
      const rowHeight = size + 48;
      const svg = newCanvas(container, across * size, Math.ceil(pairs / across) * rowHeight);
      const theta = frequencies(width);
      const radius = Math.hypot(CONTENT[0], CONTENT[1]);
      const scale = 56 / radius;
      const panels = range(0, pairs).map((r) => {
        const cx = (r % across) * size + size / 2;
        const top = Math.floor(r / across) * rowHeight;
        const cy = top + size / 2 + 8;
        const panel = svgElement("g", { transform: `translate(${cx} ${cy}) scale(1 -1)` }, svg);
        svgElement("line", { x1: -68, x2: 68, y1: 0, y2: 0, class: "posenc-svg__zero" }, panel);
        svgElement("line", { x1: 0, x2: 0, y1: -68, y2: 68, class: "posenc-svg__zero" }, panel);
        svgElement("circle", { cx: 0, cy: 0, r: radius * scale, class: "posenc-svg__orbit" }, panel);
        const arrows = ["content", "query", "key"].map((kind) => {
          const group = svgElement("g", { class: `posenc-svg__arrow posenc-svg__arrow--${kind} posenc-svg__turning` }, panel);
          const [x, y] = CONTENT.map((v) => v * scale);
          const length = Math.hypot(x, y);
          const [ux, uy] = [x / length, y / length];
          // Query and key in their sides' colours, the figures' (the palette the build writes on the panel).
          const side = kind === "content" ? {} : { line: { style: `stroke: var(--posenc-side-${kind})` }, head: { style: `fill: var(--posenc-side-${kind})` } };
          svgElement("line", { x1: 0, y1: 0, x2: x - 6 * ux, y2: y - 6 * uy, ...side.line }, group);
          const head = [[x, y], [x - 9 * ux + 4 * uy, y - 9 * uy - 4 * ux], [x - 9 * ux - 4 * uy, y - 9 * uy + 4 * ux]];
          svgElement("polygon", { points: head.map((p) => p.map((v) => v.toFixed(2)).join(",")).join(" "), ...side.head }, group);
          return group;
        });
        svgText(svg, cx, top + 14, `pair ${r}`, { "text-anchor": "middle" });
        const caption = svgText(svg, cx, top + size + 24, "", { "text-anchor": "middle", class: "posenc-svg__small" });
        const angleText = svgText(svg, cx, top + size + 40, "", { "text-anchor": "middle", class: "posenc-svg__small" });
        return { arrows, caption, angleText, theta: theta[r] };
      });
      return ({ m, n }) => {
        panels.forEach(({ arrows, caption, angleText, theta: t }) => {
          // Inside the panel y points up, so a positive SVG rotation turns anticlockwise, like R(phi).
          arrows[1].style.transform = `rotate(${(m * t * 180) / Math.PI}deg)`;
          arrows[2].style.transform = `rotate(${(n * t * 180) / Math.PI}deg)`;
          caption.textContent = `θ = ${Number(t.toPrecision(3))}`;
          angleText.textContent = `(m − n)θ = ${Number(((m - n) * t).toPrecision(3))} rad`;
        });
      };
    },

    compare(container) {
      const width = WIDTHS.compare;
      const last = 40;
      const outer = widthOf(container, 568);
      // The legend's two entries side by side when they fit, one above the other if not.
      const stacked = outer < 480;
      const box = { left: 56, top: stacked ? 56 : 36, width: outer - 68, height: 220 };
      const svg = newCanvas(container, outer, box.top + box.height + 42);
      const { sx, sy } = axes(svg, box, [0, last], [-0.5, 4.5], {
        xTicks: [0, 10, 20, 30, 40], yTicks: [0, 1, 2, 3, 4], xLabel: "key position n", yLabel: "similarity",
      });
      const legend = svgElement("g", { class: "posenc-svg__legend" }, svg);
      // Each family in its colour, the one the figures give it (the palette the build writes on the panel).
      const sinusoidalStroke = "stroke: var(--posenc-family-sinusoidal)";
      const ropeStroke = "stroke: var(--posenc-family-rope)";
      svgElement("line", { x1: box.left, x2: box.left + 22, y1: 12, y2: 12, class: "posenc-svg__curve", style: sinusoidalStroke }, legend);
      svgText(legend, box.left + 28, 16, "sinusoidal P(m)·P(n)");
      const [dx, dy] = stacked ? [0, 20] : [190, 0];
      svgElement("line", { x1: box.left + dx, x2: box.left + dx + 22, y1: 12 + dy, y2: 12 + dy, class: "posenc-svg__curve posenc-svg__dashed", style: ropeStroke }, legend);
      svgText(legend, box.left + dx + 28, 16 + dy, "RoPE q(m)·k(n)");
      const mLine = svgElement("line", { y1: box.top, y2: box.top + box.height, class: "posenc-svg__guide" }, svg);
      const mLabel = svgText(svg, 0, box.top + 12, "", { class: "posenc-svg__muted" });
      const sinLine = svgElement("polyline", { class: "posenc-svg__curve", style: sinusoidalStroke }, svg);
      const ropeLine = svgElement("polyline", { class: "posenc-svg__curve posenc-svg__dashed", style: ropeStroke }, svg);
      const rings = [0, 1].map(() => svgElement("circle", { r: 6, class: "posenc-svg__ring" }, svg));
      const keys = range(0, last + 1);
      return ({ m, n }) => {
        const sin = keys.map((k) => positionDot(m, k, width));
        const rope = keys.map((k) => ropeScore(m, k, width));
        sinLine.setAttribute("points", polylinePoints(keys, sin, sx, sy));
        ropeLine.setAttribute("points", polylinePoints(keys, rope, sx, sy));
        mLine.setAttribute("x1", sx(m).toFixed(2));
        mLine.setAttribute("x2", sx(m).toFixed(2));
        mLabel.setAttribute("x", (sx(m) + 4).toFixed(2));
        mLabel.textContent = `m = ${m}`;
        [sin[n], rope[n]].forEach((value, k) => {
          rings[k].setAttribute("cx", sx(n).toFixed(2));
          rings[k].setAttribute("cy", sy(value).toFixed(2));
        });
      };
    },
  };

  // ---------------------------------------------------------------------------------------
  // Registration: the controls of each step are those of its template

  const PARAMS = { order: ["order"], heatmap: ["position", "dimension"], bands: ["dimension"],
                   distance: ["i", "j"], rope: ["m", "n"], compare: ["m", "n"] };

  for (const [name, params] of Object.entries(PARAMS)) {
    window.posencPanels.register(name, {
      params,
      readouts: (values) => math.readouts(name, values),
      texts: (values) => math.texts(name, values),
      // Only sliders whose bare number says too little (a channel: sine or cosine, which pair).
      valueTexts: (values) => Object.fromEntries(params
        .map((param) => [param, math.valueText(name, param, values[param])])
        .filter(([, text]) => text !== null)),
      build: (root) => {
        const container = root.querySelector("[data-drawing]");
        return container ? DRAWINGS[name](container) : () => {};
      },
    });
  }

  window.posencExplainer = Object.freeze({ steps: Object.keys(PARAMS) });
})();
