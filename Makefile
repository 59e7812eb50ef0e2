# posenc: `make` builds the site into site/, `make test` checks everything. `make help` lists targets.
#
# Dependencies are real files: a figure depends on its script, on the helper's files and on the
# style file (not on the posenc/ directory, whose timestamp does not change when a file in it is
# edited). Deleting, adding or renaming a file moves no timestamp, so each set of inputs also
# has a list of its file names (build/lists/*) that is rewritten only when the set changes.
# The stale figures are rendered by one Python process (Matplotlib is imported once), each in a
# child of its own. A failed build never replaces the last good figure or site/.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := all
MAKEFLAGS += --no-builtin-rules

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed

# Defined once, in posenc/site/figure_files.py. sed reads it there in about a millisecond (starting
# Python to import posenc takes a hundred times longer, on every make); a test holds make's
# reading to Python's.
FIGURE_DIR := $(shell sed -n 's/^FIGURE_DIR = "\(.*\)"$$/\1/p' posenc/site/figure_files.py)
$(if $(FIGURE_DIR),,$(error posenc/site/figure_files.py defines no FIGURE_DIR = "..." line for make to read))
FIGURE_SCRIPTS := $(sort $(wildcard figures_src/*.py))
FIGURES := $(patsubst figures_src/%.py,$(FIGURE_DIR)/%.svg,$(filter figures_src/%.py,$(FIGURE_SCRIPTS)))
# What a render leaves for each figure: its SVG and sidecar, and the narrow layout's two files
# for the figures whose sidecar says they have one (posenc/site/figure_files.py); read with grep,
# which takes a millisecond. Each file deleted by hand makes the figures stale (if_missing below).
WIDE_SIDECARS := $(filter-out %.narrow.json,$(wildcard $(FIGURE_DIR)/*.json))
NARROW_FIGURES := $(basename $(if $(WIDE_SIDECARS),$(shell grep -l '"narrow": true' $(WIDE_SIDECARS))))
FIGURE_OUTPUTS := $(FIGURES) $(FIGURES:.svg=.json) $(addsuffix .narrow.svg,$(NARROW_FIGURES)) $(addsuffix .narrow.json,$(NARROW_FIGURES))
FIGURE_STAMP := build/figures.stamp
# Why each figure script failed in its last render (the preview shows it on the page).
FIGURE_ERRORS := build/figure-errors.json
# Seconds a figure script may run before it is stopped and named.
FIGURE_TIMEOUT ?= 120
# The package and its subpackages (posenc/site/ holds the site's machinery).
LIBRARY := $(sort $(shell find posenc -name '*.py' -not -path '*/__pycache__/*'))
# What a figure script can see of posenc: the library, the plotting helper with its style and the
# explainer's demo data (the derivation registry is not drawn from, so editing a proof re-renders nothing).
FIGURE_INPUTS := $(filter-out posenc/site/registry.py posenc/site/derivations% posenc/site/verify.py,$(LIBRARY)) \
                 posenc/site/posenc.mplstyle posenc/site/explainer_demo.json
VERIFY_REPORT := build/verify.json
SITE_DIR := site
SITE_STAMP := build/site.stamp
# The Conventions page lists what these compare ({{ peers }}, hooks/site_build/peer_tests.py).
PEER_TESTS := $(sort $(wildcard tests/peers/test_*.py))
SITE_INPUTS = mkdocs.yml $(LIBRARY) posenc/site/explainer_demo.json $(PEER_TESTS) $(shell find docs hooks overrides -type f -not -path '$(FIGURE_DIR)/*' -not -path '*/__pycache__/*' -not -name '.*')

# The file lists: each name is the command that prints one set of input files.
LISTS := build/lists
list_figure-scripts := find figures_src -maxdepth 1 -name '*.py'
list_library := find posenc -type f -not -name '.*' -not -path '*/__pycache__/*'
list_pages := find mkdocs.yml docs hooks overrides $(PEER_TESTS) -type f -not -path '$(FIGURE_DIR)/*' -not -path '*/__pycache__/*' -not -name '.*'
# Each page says when its sources last changed in git (hooks/site_build/page_meta.py): a commit, or a source
# that becomes dirty or clean again, changes that line, so the site is rebuilt. Empty without git.
list_history := { { git rev-parse HEAD && git status --porcelain --untracked-files=all -- docs figures_src posenc tests/peers; } 2>/dev/null || true; }

step = @printf '\n==> %s\n' $(1)
# Stop with a message naming a missing command and how to get it, before anything is built.
require = @command -v $(1) >/dev/null 2>&1 || { printf '%s\n' "$(1) is not installed or not on PATH: $(2)" >&2; exit 1; }
NODE_HELP := install Node.js 20 with npm (Debian: apt-get install nodejs npm); KaTeX runs on it to render the math

.PHONY: all figures verify site pdf serve lint test test-lib test-site bench clean help FORCE

all: site pdf ## Build everything: venv, figures, derivations, site/ and its PDF (the default)

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

# A changed lock recreates the environment from nothing, so a package dropped from the lock
# does not stay installed.
$(VENV_STAMP): requirements.lock pyproject.toml
	$(call step,"creating $(VENV) from requirements.lock")
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -m ipykernel install --prefix $(VENV) --name python3 >/dev/null
	@touch $@

$(NODE_STAMP): package-lock.json
	$(call require,npm,$(NODE_HELP))
	$(call step,"installing KaTeX and axe-core with npm ci")
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Checked on every run, rewritten only when the sorted list of names differs.
$(LISTS)/%: FORCE
	@mkdir -p $(@D)
	@$(list_$*) | LC_ALL=C sort > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

FORCE:

# A script whose name holds a space is two words to make; this rule without a recipe lets those
# words pass as updated, so the renderer runs and rejects the name clearly.
$(FIGURE_SCRIPTS):

# An output deleted by hand makes its stamp stale.
if_missing = $(if $(filter-out $(wildcard $(1)),$(1)),FORCE)

# The renderer decides which figures are stale (a file missing, or older than their script or an
# input), renders each stale script in every layout it has and removes figures whose script is
# gone; nothing is queued between runs. The stamp
# takes the time the recipe started, so a script edited during a render is rendered again.
$(FIGURE_STAMP): $(FIGURE_SCRIPTS) $(FIGURE_INPUTS) $(LISTS)/figure-scripts $(LISTS)/library $(VENV_STAMP) $(call if_missing,$(FIGURE_OUTPUTS))
	@mkdir -p $(@D) && touch $@.start
	@shopt -s nullglob; $(PY) -m posenc.site.render --update --out $(FIGURE_DIR) --scratch build/render \
	  --errors $(FIGURE_ERRORS) --timeout $(FIGURE_TIMEOUT) --depends $(FIGURE_INPUTS) $(VENV_STAMP) -- figures_src/*.py
	@mv $@.start $@

figures: $(FIGURE_STAMP) ## Render every stale figure (one process for the stale set)

$(VERIFY_REPORT): $(LIBRARY) $(LISTS)/library $(VENV_STAMP)
	$(call step,"proving the derivations")
	@mkdir -p $(dir $@)
	$(PY) -m posenc.site.verify --report $@

verify: $(VERIFY_REPORT) ## Prove every derivation with SymPy (python -m posenc.site.verify)

# mkdocs writes into a fresh folder; site/ is replaced (two renames) only after a build that
# succeeded, so a failed build leaves the last good site whole.
$(SITE_STAMP): $(FIGURE_STAMP) $(VERIFY_REPORT) $(NODE_STAMP) $(SITE_INPUTS) $(LISTS)/pages $(LISTS)/library $(LISTS)/history \
              $(call if_missing,$(SITE_DIR)/index.html)
	$(call require,node,$(NODE_HELP))
	$(call step,"building the site with mkdocs build --strict")
	@touch $@.start
	@rm -rf build/site.new build/site.old
	$(VENV)/bin/mkdocs build --strict --site-dir build/site.new
	@if [ -e $(SITE_DIR) ]; then mv $(SITE_DIR) build/site.old; fi
	@mv build/site.new $(SITE_DIR) && rm -rf build/site.old
	@mv $@.start $@

site: $(SITE_STAMP) ## Build the site into site/ (strict: any warning fails)

# The PDF is printed from the built pages by headless Chromium, so it lives in site/ beside them
# (the home and Cite pages link it) and is made again whenever site/ is rebuilt: from the parts
# kept in build/pdf-parts, of which only those whose pages or files changed are printed again.
# `make` prints it too, so the site it leaves has no dead link; that needs Chromium, as `make test` does.
SITE_PDF := $(SITE_DIR)/posenc.pdf
# The script reads the release, the address to cite and the derivation pages through hooks/site_build/.
SITE_BUILD_PACKAGE := $(sort $(wildcard hooks/site_build/*.py))

$(SITE_PDF): $(SITE_STAMP) hooks/site_pdf.py $(SITE_BUILD_PACKAGE) CITATION.cff
	$(call step,"printing the articles into $@ with headless Chromium")
	$(PY) hooks/site_pdf.py --site $(SITE_DIR) --out $@

pdf: $(SITE_PDF) ## Print every article and the derivations into site/posenc.pdf (needs Chromium)

serve: figures $(VERIFY_REPORT) $(NODE_STAMP) ## Preview with live reload (re-renders edited figures)
	$(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

lint: $(VENV_STAMP) ## Check the Python with ruff (lint and format), then type-check posenc/ with mypy (settings in pyproject.toml)
	$(call step,"linting with ruff")
	$(VENV)/bin/ruff check .
	$(call step,"checking the layout with ruff format (ruff format . applies it)")
	$(VENV)/bin/ruff format --check .
	$(call step,"type-checking posenc/ with mypy")
	$(VENV)/bin/mypy

# Each test's time goes to TEST_REPORT (JUnit XML), where `make bench` reads the suite's slowest parts.
TEST_REPORT := build/test-report.xml
# The tests run in this many pytest-xdist workers (0: in pytest's own process). Most of the suite
# is Chromium working on one page at a time, so two workers keep two cores busy; every test run
# in one colour scheme goes to one worker, which visits each page once in it, and the others go a
# file at a time (tests/conftest.py). They are handed out in the order of the files, not largest
# group first, so the two schemes' groups start early instead of after the long parametrized files.
TEST_WORKERS ?= 2

# The linters run first: ruff takes a second, mypy a few (less from its cache), and both name the line.
test: lint all ## Lint, then run every test, browser tests included
	$(call step,"running the tests")
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --junitxml=$(TEST_REPORT)

# The loop while working on posenc/: its tests and proofs need neither the site nor Chromium,
# so they run in seconds without building anything first (`make test` still runs them all). A file
# goes to one worker whole, so each proof runs once (tests/library/test_derivations.py's `proved`).
test-lib: $(VENV_STAMP) ## Run the library and proof tests alone (tests/library, posenc's doctests): no build
	$(call step,"running the library and proof tests")
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile tests/library posenc

# The checks of the built site that need no browser: the hooks, the built files, the panels'
# arithmetic in Node. The figures' second render (every script run again, to hold a render to
# the bytes of the last) builds rather than reads, so it is left to `make test`.
SECOND_RENDER := tests/built_site/test_figures.py::test_output_is_small_described_and_deterministic
test-site: all ## Run the checks of the built site that need no browser (tests/hooks, tests/built_site, tests/javascript)
	$(call step,"checking the built site without a browser")
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile tests/hooks tests/built_site tests/javascript --deselect $(SECOND_RENDER)

# The comparison with the libraries themselves (torch CPU, transformers, timm's layers, torchscale's xPos,
# x-transformers, vit-pytorch's 2-D sin-cos table, fla-core's reference attention) has its own environment,
# so `make` and `make test` never need torch.
PEERS_VENV := .venv-peers
PEERS_PY := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.installed

$(PEERS_STAMP): requirements-peers.txt requirements-peers-nodeps.txt pyproject.toml
	$(call step,"creating $(PEERS_VENV) from requirements-peers.txt")
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_PY) -m pip install --quiet --disable-pip-version-check -r requirements-peers.txt
	$(PEERS_PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-peers-nodeps.txt
	$(PEERS_PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

.PHONY: test-peers
test-peers: $(PEERS_STAMP) ## Compare posenc with torch, transformers, timm, torchscale, x-transformers, vit-pytorch and fla-core (in .venv-peers)
	$(call step,"comparing posenc with torch and transformers and timm and torchscale and x-transformers and vit-pytorch and fla-core")
	$(PEERS_PY) -m pytest tests/peers

bench: all ## Print build, render, explainer, precision and test-suite timings (figures, not pass/fail)
	$(PY) tests/bench/benchmark.py --test-report $(TEST_REPORT)
	@# The precision benchmark adds the PyTorch rows when the peers environment exists.
	$(if $(wildcard $(PEERS_STAMP)),$(PEERS_PY),$(PY)) tests/bench/benchmark_precision.py

# Lighthouse (pinned in package.json) on every page in the sitemap, mobile and desktop presets,
# against the system Chromium: figures printed as a table, not pass/fail (timings vary by machine).
# The deterministic audits (axe, layout shift, page weight and budgets, links, offline, reproducible
# builds) run in `make test`.
# AUDIT_RUNS=3 audits each page three times and reports the median run (scores vary between runs).
AUDIT_RUNS ?= 1
.PHONY: audit
audit: all ## Print Lighthouse scores and FCP, LCP, TBT, CLS of every page, mobile and desktop (figures, not pass/fail)
	$(call step,"running Lighthouse on every page (mobile and desktop presets)")
	$(PY) tests/bench/lighthouse_audit.py --runs $(AUDIT_RUNS)

clean: ## Remove everything make generates (venv and node_modules included)
	rm -rf $(SITE_DIR) build $(FIGURE_DIR) .cache $(VENV) .venv-peers node_modules .pytest_cache .hypothesis posenc.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
