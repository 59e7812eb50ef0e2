// Figures at full size. A figure's "Full size" link (and, on a phone, a tap on the figure)
// opens a copy of its SVG in a modal dialog: at its drawn width or wider, scrolling sideways
// when the screen is narrower. Escape or the Close button closes it and focus returns to
// where it was. Without this script the link opens the SVG file itself.
//
// One listener on the document serves every page: Material's instant navigation swaps the
// page content but keeps the document, so figures that arrive later need no set-up.
(() => {
  // Material's breakpoint below which the layout is a phone's (see posenc.css).
  const phone = window.matchMedia("(max-width: 44.984375em)");

  function openFullSize(figure) {
    const drawn = figure.querySelector("svg");
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
    const copy = drawn.cloneNode(true);
    // The copy draws with the figure's own clip paths and markers (found by id), so it drops
    // its ids: no id is on the page twice.
    for (const element of copy.querySelectorAll("[id]")) element.removeAttribute("id");
    copy.removeAttribute("data-search-exclude");
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
