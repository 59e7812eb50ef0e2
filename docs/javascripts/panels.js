/* The one way to make an interactive panel: drawing helpers, control wiring and registration.
 *
 * A panel is an element [data-panel="NAME"] on a page, written by the page marker
 * {{ panel: NAME }} from its description (docs/panels/NAME.yml, hooks/site_build/panels.py), and a
 * script that calls window.posencPanels.register(NAME, {...}). Registration names the panel's
 * parameters (the data-param of its controls), its readouts and its drawing:
 *
 *   params      the names of its controls' data-param (sliders, or buttons of which one is pressed)
 *   readouts    params -> { key: text } for every [data-readout="key"]
 *   texts       optional: params -> { key: text } for [data-text="key"]
 *   valueTexts  optional: params -> { param: text } shown beside a slider and given as its
 *               aria-valuetext (a slider left out shows its bare value)
 *   build       optional: root -> draw(params), which builds the drawing and redraws it; it is
 *               called again when the drawing's width changes, so it lays out for that width
 *               (drawing.widthOf) and may be called more than once
 *
 * Pages that use a panel name this file in their front matter (`scripts:`) before the panel's
 * own script. tests/browser/test_panels.py moves every control of every registered panel in Chromium.
 * No dependencies, no network.
 */
(function () {
  "use strict";

  if (window.posencPanels) return; // a second copy of the script changes nothing

  const SVG_NS = "http://www.w3.org/2000/svg";

  // ---------------------------------------------------------------------------------------
  // Drawing helpers (SVG; colours of ink come from Material's CSS variables in explainer.css)

  function svgElement(name, attributes = {}, parent = null) {
    const node = document.createElementNS(SVG_NS, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  function svgText(parent, x, y, content, attributes = {}) {
    const node = svgElement("text", { x, y, ...attributes }, parent);
    node.textContent = content;
    return node;
  }

  function newCanvas(container, width, height) {
    const svg = svgElement("svg", {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      class: "posenc-svg",
      "aria-hidden": "true",
      focusable: "false",
    });
    container.replaceChildren(svg);
    return svg;
  }

  /** A colour map: `stops` (#rrggbb, or #rrggbbaa for a translucent one) evenly spaced over
   * [low, high], interpolated in sRGB; an opaque colour is rgb(), a translucent one rgba(). */
  function colourMap(stops, low, high) {
    const rgba = stops.map((hex) => [1, 3, 5, 7].map((k) => (k < hex.length ? parseInt(hex.slice(k, k + 2), 16) : 255)));
    return (value) => {
      const u = Math.min(1, Math.max(0, (value - low) / (high - low))) * (rgba.length - 1);
      const k = Math.min(rgba.length - 2, Math.floor(u));
      const f = u - k;
      const mix = rgba[k].map((c, index) => Math.round(c + f * (rgba[k + 1][index] - c)));
      const alpha = mix.pop();
      return alpha === 255 ? `rgb(${mix.join(",")})` : `rgba(${mix.join(",")},${(alpha / 255).toFixed(3)})`;
    };
  }

  /** The width of a box's content (its padding aside), in whole CSS px. */
  function contentWidth(box) {
    const style = getComputedStyle(box);
    return Math.floor(box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight));
  }

  /**
   * The width to draw at: the room the container gives, never more than `widest`. Drawings are
   * laid out at this width and shown at 1:1, so their text keeps its size on a narrow screen.
   */
  function widthOf(container, widest) {
    const room = contentWidth(container);
    return room > 0 ? Math.min(widest, room) : widest;
  }

  /** Black or white, whichever contrasts more with the colour `rgb(r,g,b)` (WCAG's luminance). */
  function inkOn(colour) {
    const channels = colour.match(/\d+/g).slice(0, 3).map((c) => {
      const v = Number(c) / 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    const luminance = 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2];
    // Contrast with black (L + 0.05) / 0.05 against with white 1.05 / (L + 0.05).
    return (luminance + 0.05) ** 2 > 0.05 * 1.05 ? "#000000" : "#ffffff";
  }

  /**
   * A line chart's axes in the static figures' style: left and bottom spines only, ticks outward,
   * labels in the page's ink. Maps data to the plot box and returns the maps.
   */
  function axes(svg, box, xRange, yRange, { xTicks = [], yTicks = [], xLabel = "", yLabel = "" } = {}) {
    const [x0, x1] = xRange;
    const [y0, y1] = yRange;
    const sx = (x) => box.left + ((x - x0) / (x1 - x0)) * box.width;
    const sy = (y) => box.top + box.height - ((y - y0) / (y1 - y0)) * box.height;
    const bottom = box.top + box.height;
    const frame = svgElement("g", { class: "posenc-svg__axes" }, svg);
    svgElement("line", { x1: box.left, x2: box.left + box.width, y1: bottom, y2: bottom }, frame);
    svgElement("line", { x1: box.left, x2: box.left, y1: box.top, y2: bottom }, frame);
    for (const x of xTicks) {
      svgElement("line", { x1: sx(x), x2: sx(x), y1: bottom, y2: bottom + 4 }, frame);
      svgText(frame, sx(x), bottom + 17, String(x), { "text-anchor": "middle" });
    }
    for (const y of yTicks) {
      svgElement("line", { x1: box.left - 4, x2: box.left, y1: sy(y), y2: sy(y) }, frame);
      svgText(frame, box.left - 7, sy(y) + 4, String(y), { "text-anchor": "end" });
    }
    if (xLabel) {
      svgText(frame, box.left + box.width / 2, bottom + 35, xLabel, { "text-anchor": "middle", class: "posenc-svg__label" });
    }
    if (yLabel) {
      svgText(frame, 0, 0, yLabel, {
        "text-anchor": "middle",
        class: "posenc-svg__label",
        transform: `translate(13 ${box.top + box.height / 2}) rotate(-90)`,
      });
    }
    return { sx, sy };
  }

  function polylinePoints(xs, ys, sx, sy) {
    return xs.map((x, k) => `${sx(x).toFixed(2)},${sy(ys[k]).toFixed(2)}`).join(" ");
  }

  const range = (start, stop) => Array.from({ length: stop - start }, (_, k) => start + k);

  // ---------------------------------------------------------------------------------------
  // Wiring a panel to its controls

  /**
   * Make a panel's controls live: sliders and button groups (one pressed button per data-param)
   * call render(), the controls are enabled, and the panel is drawn once and marked live.
   */
  function liven(root, render) {
    root.addEventListener("input", (event) => {
      if (event.target.matches("input[data-param]")) render();
    });
    root.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-param]");
      if (!button || !root.contains(button)) return;
      for (const other of root.querySelectorAll(`button[data-param="${button.dataset.param}"]`)) {
        other.setAttribute("aria-pressed", String(other === button));
      }
      render();
    });
    for (const control of root.querySelectorAll("[data-param]")) control.disabled = false;
    render();
    root.setAttribute("data-live", "");
  }

  /** The values the controls hold: a slider's number, the pressed button's data-value. */
  function readParams(root) {
    const params = {};
    for (const control of root.querySelectorAll("[data-param]")) {
      const name = control.dataset.param;
      if (control.tagName === "INPUT") params[name] = Number(control.value);
      else if (control.getAttribute("aria-pressed") === "true") params[name] = control.dataset.value;
    }
    return params;
  }

  function writeTexts(root, attribute, values) {
    for (const node of root.querySelectorAll(`[${attribute}]`)) {
      const key = node.getAttribute(attribute);
      // Always written, even when unchanged: one input, one write per readout.
      if (key in values) node.textContent = values[key];
    }
  }

  const registry = new Map();
  const wired = new WeakSet();

  function wire(root) {
    const name = root.dataset.panel;
    if (wired.has(root) || !registry.has(name)) return;
    wired.add(root);
    const panel = registry.get(name);
    // A template and a registration that disagree would leave a control or a readout dead.
    const held = [...new Set(Array.from(root.querySelectorAll("[data-param]"), (c) => c.dataset.param))].sort();
    if (held.join() !== [...panel.params].sort().join()) {
      console.error(`panel ${name}: its controls are ${held.join(", ")}, its registration names ${panel.params.join(", ")}`);
    }
    let draw = panel.build ? panel.build(root) : () => {};
    // A drawing is laid out for the width it has: when that changes (a phone turned, a window
    // resized), it is built again at the new width and drawn for the controls' values.
    const container = root.querySelector("[data-drawing]");
    if (panel.build && container && window.ResizeObserver) {
      let built = contentWidth(container);
      new ResizeObserver(() => {
        const width = contentWidth(container);
        if (width === built || width === 0) return;
        built = width;
        draw = panel.build(root);
        draw(readParams(root));
      }).observe(container);
    }

    function render() {
      const params = readParams(root);
      const values = panel.readouts(params);
      const missing = Array.from(root.querySelectorAll("[data-readout]"), (n) => n.dataset.readout).filter((k) => !(k in values));
      if (missing.length) console.error(`panel ${name}: no value for readouts ${missing.join(", ")}`);
      writeTexts(root, "data-readout", values);
      if (panel.texts) writeTexts(root, "data-text", panel.texts(params));
      const described = panel.valueTexts ? panel.valueTexts(params) : {};
      for (const input of root.querySelectorAll("input[data-param]")) {
        const param = input.dataset.param;
        const shown = param in described ? described[param] : input.value;
        if (param in described) input.setAttribute("aria-valuetext", shown);
        for (const node of root.querySelectorAll(`[data-value-of="${param}"]`)) node.textContent = shown;
      }
      draw(params);
    }

    liven(root, render);
  }

  function wireAll(name) {
    const selector = name === undefined ? "[data-panel]" : `[data-panel="${name}"]`;
    for (const root of document.querySelectorAll(selector)) wire(root);
  }

  /** Register panel `name` (see the top of this file) and wire it if its page is already in. */
  function register(name, { params, readouts, texts = null, valueTexts = null, build = null }) {
    if (registry.has(name)) throw new Error(`panel ${name} is registered twice`);
    if (!Array.isArray(params) || typeof readouts !== "function") {
      throw new TypeError(`panel ${name}: register it with params (a list) and readouts (a function)`);
    }
    registry.set(name, Object.freeze({ params: Object.freeze([...params]), readouts, texts, valueTexts, build }));
    // A panel script may run after init has seen the page (instant navigation brings scripts late).
    if (document.readyState !== "loading") wireAll(name);
  }

  /** Wire every registered panel of the current page; safe to call any number of times. */
  function init() {
    wireAll();
  }

  /**
   * Call init on this page and on every page Material's instant navigation brings later (its
   * document$ emits for each). These scripts load only on the pages that name them, inside the
   * page content: on a first load they run before Material's bundle has defined document$, so
   * they wait for the parsed page; brought by instant navigation, they run once the page is in.
   */
  function onEveryPage(callback) {
    const follow = () => {
      if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(callback);
      else callback();
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", follow, { once: true });
    else follow();
  }

  const drawing = Object.freeze({ svgElement, svgText, newCanvas, widthOf, inkOn, colourMap, axes, polylinePoints, range });

  window.posencPanels = Object.freeze({
    register,
    registered: () => [...registry.keys()],
    get: (name) => registry.get(name),
    readParams,
    liven,
    drawing,
    init,
  });
  onEveryPage(init);
})();
