// Figures at full size. A figure's "Full size" link (and, on a phone, a tap on the figure)
// opens a copy of its SVG in a modal dialog: at its drawn width or wider, scrolling sideways
// when the screen is narrower. A figure with a narrow layout for phones shows that one on the
// page; the dialog shows its wide layout, the one the link's file holds. Escape or the Close
// button closes it and focus returns to where it was. Without this script the link opens the
// SVG file itself.
//
// One listener on the document serves every page: Material's instant navigation swaps the
// page content but keeps the document, so figures that arrive later need no set-up.
(() => {
  // Material's breakpoint below which the layout is a phone's (see posenc.css).
  const phone = window.matchMedia("(max-width: 44.984375em)");

  const XLINK = "http://www.w3.org/1999/xlink";
  const REFERENCE = /url\(#([^)]+)\)/g;

  // The copy draws with clip paths and markers of its own: each id gets "-full" added, and the
  // copy's references follow, so no id is on the page twice, and the copy does not depend on
  // the figure's SVG, which the page may not display (the wide layout on a phone).
  function ownIds(copy) {
    const renamed = new Map();
    for (const element of copy.querySelectorAll("[id]")) {
      renamed.set(element.id, `${element.id}-full`);
      element.id = `${element.id}-full`;
    }
    const rename = (value) => value.replace(REFERENCE, (whole, id) => (renamed.has(id) ? `url(#${renamed.get(id)})` : whole));
    for (const element of copy.querySelectorAll("*")) {
      const href = element.getAttributeNS(XLINK, "href");
      if (href && renamed.has(href.slice(1))) element.setAttributeNS(XLINK, "xlink:href", `#${renamed.get(href.slice(1))}`);
      for (const attribute of Array.from(element.attributes)) {
        if (attribute.value.includes("url(#")) element.setAttribute(attribute.name, rename(attribute.value));
      }
    }
    return copy;
  }

  function openFullSize(figure) {
    const drawn = figure.querySelector("svg:not(.posenc-figure__narrow)");
    if (!drawn) return false;
    const returnFocus = document.activeElement;
    const dialog = document.createElement("dialog");
    dialog.className = "posenc-figure-dialog";
    dialog.setAttribute("aria-label", "Figure at full size");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "posenc-figure-dialog__close";
    close.textContent = "Close";
    close.addEventListener("click", () => dialog.close());
    const copy = ownIds(drawn.cloneNode(true));
    copy.removeAttribute("data-search-exclude");
    copy.removeAttribute("class"); // the page hides the wide layout on a phone, not the dialog
    const width = Number(drawn.getAttribute("width"));
    const height = Number(drawn.getAttribute("height"));
    copy.style.setProperty("--posenc-drawn-width", `${width}px`);
    copy.style.setProperty("--posenc-aspect", String(width / height));
    dialog.append(close, copy);
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (returnFocus instanceof HTMLElement) returnFocus.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
    return true;
  }

  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return; // a modified click opens the SVG file as a link would
    }
    const figure = event.target.closest(".posenc-figure");
    if (!figure) return;
    const link = event.target.closest(".posenc-figure__enlarge");
    // A tap on the figure itself, unless it ended a text selection.
    const tap = phone.matches && event.target.closest("svg") && document.getSelection().isCollapsed;
    if ((link || tap) && openFullSize(figure)) event.preventDefault();
  });

  // Going back or forward while the dialog is open leaves the page it belongs to.
  window.addEventListener("popstate", () => {
    for (const dialog of document.querySelectorAll(".posenc-figure-dialog")) dialog.close();
  });
})();
