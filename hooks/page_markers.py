"""MkDocs hook: the page markers, the pages generated beside them, and the checks of each page.

Entry points only; the work is in the ``site_build`` package (its docstring lists the modules).
Every marker is described in ``site_build/markers.py``. Generated pages (never files in
``docs/``): ``figures/NAME/`` for each rendered figure, ``derivations/ID/`` for each derivation,
and the explainer's data script.
"""

from __future__ import annotations

from site_build import citations, derivation_pages, explainer_data, figures, front_matter, markers
from site_build.state import BUILD


def on_startup(command, dirty):
    BUILD.serving = command == "serve"


def on_pre_build(config):
    if BUILD.serving:
        figures.refresh_for_preview()
    figures.read_failures()


def on_files(files, config):
    for file in [
        *figures.figure_page_files(config),
        *derivation_pages.derivation_page_files(config),
        explainer_data.explainer_data_file(config),
    ]:
        files.append(file)
    return files


def on_page_markdown(markdown, page, config, files):
    front_matter.check_scripts(page, files)
    markdown = markers.expand_markers(markdown, page, config)
    return citations.bibliography_markdown(markdown, page)


def on_page_content(html_content, page, config, files):
    return figures.inline_figures(html_content)


def on_page_context(context, page, config, nav):
    # After every hook's on_page_markdown: notebook_pages gives a notebook its description there.
    front_matter.warn_without_description(page)
    return context
