"""The posenc site's build: what the MkDocs hooks in ``hooks/`` do, one concern per module.

The hooks are thin entry points; the work is here, under public names the tests call. Every hook
imports this package as ``site_build`` (MkDocs puts ``hooks/`` on ``sys.path`` while it loads a
hook), so all of them, and the tests, share one copy of it and of its ``state``.
Design history: docs/design-notes.md#hooks-package

Modules:

``paths``            where the build reads from (the repository, docs/, figures, reports)
``state``            what one hook sets and another reads during a build (a module's own memo
                     of one build's reading, such as ``page_meta``'s articles, is forgotten
                     when the next build starts)
``kept``             results one build keeps for the next, each under a digest of its inputs
``highlighting``     Pygments' highlighting, kept per code block
``signatures``       the API page's signatures as the code formatter lays them out, kept
``search_entries``   the search index's entries of each page, kept
``templates``        the theme's templates as Jinja compiles them, kept
``rendered_pages``   each page's Markdown converted to HTML, kept with what the conversion registered
``markers``          the ``{{ ... }}`` page markers: finding them outside code and expanding them
``front_matter``     a page's own title, and checks of its front matter (``scripts:``, ``description``)
``figures``          a figure on a page, its generated page, and the failed renders a preview shows
``derivation_pages`` the derivations' own pages and their index
``citations``        CITATION.cff, BibTeX records, the Cite page and the address to cite
``peer_tests``       the ``{{ peers }}`` list, read from tests/peers
``panels``           the ``{{ panel: NAME }}`` interactive panels, written from docs/panels/NAME.yml
``explainer_data``   the explainer's data script, generated from posenc/site/explainer_demo.json
``api_source``       the API reference's module source pages and its links to them
``katex``            the one KaTeX process, math rendering, font preloads and shipped fonts
``notebooks``        notebook pages: description, download link, math, slimmed CSS
``page_meta``        what a page's head and foot say about it: citation tags, and the two below
``link_previews``    Open Graph and Twitter card tags, and the card image drawn for each page
``last_change``      the line saying when a page's sources last changed in git
``first_paint``      the marker that ends what the first paint waits for
``tables``           wide tables labelled for the phone's stacked layout
``docstring_markdown`` the griffe extension that makes the API docstrings safe Markdown
"""
