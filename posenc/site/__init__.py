"""The site's machinery, kept apart from the library users import.

``registry`` + ``derivations`` (the SymPy proofs, run by ``python -m posenc.site.verify``),
``plotting`` + ``posenc.mplstyle`` (the figure helper, with ``svg_rewrite``, which makes
Matplotlib's SVG the page's), ``render`` (renders the figure scripts, each of their layouts),
``figure_files`` (where figures go and the metadata saved beside each) and ``explainer_demo``
(the explainer's demo data). ``import posenc`` imports none of them: they need Matplotlib or
SymPy (the ``plot`` and ``verify`` extras).
"""
