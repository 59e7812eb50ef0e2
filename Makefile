# posenc: `make` builds the site into site/, `make test` checks everything. `make help` lists targets.
#
# Dependencies are real files: a figure depends on its script, on the helper's files and on the
# style file (not on the posenc/ directory, whose timestamp does not change when a file in it is
# edited). Stale figures are queued and rendered in ONE Python process, so Matplotlib is imported
# once per build rather than once per figure.

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

FIGURE_DIR := docs/figures
FIGURE_SCRIPTS := $(sort $(wildcard figures_src/*.py))
FIGURES := $(patsubst figures_src/%.py,$(FIGURE_DIR)/%.svg,$(FIGURE_SCRIPTS))
FIGURE_QUEUE := build/stale-figures
FIGURE_STAMP := build/figures.stamp
LIBRARY := $(sort $(wildcard posenc/*.py))
# What a figure script can see of posenc: the library and the plotting helper with its style
# (the derivation registry is not drawn from, so editing a proof re-renders nothing).
FIGURE_INPUTS := $(filter-out posenc/registry.py posenc/derivations.py posenc/verify.py,$(LIBRARY)) \
                 posenc/posenc.mplstyle
VERIFY_REPORT := build/verify.json
SITE_STAMP := build/site.stamp
SITE_INPUTS = mkdocs.yml $(LIBRARY) $(shell find docs hooks overrides -type f -not -path 'docs/figures/*' -not -path '*/__pycache__/*' -not -name '.*')

step = @printf '\n==> %s\n' $(1)

.PHONY: all figures verify site serve test bench clean help

all: site ## Build everything: venv, figures, derivations, site/ (the default)

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

$(VENV_STAMP): requirements.lock pyproject.toml
	$(call step,"creating $(VENV) from requirements.lock")
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -m ipykernel install --prefix $(VENV) --name python3 >/dev/null
	@touch $@

$(NODE_STAMP): package-lock.json
	$(call step,"installing KaTeX and axe-core with npm ci")
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# A stale figure is deleted at once and joins the queue; the stamp's recipe then renders the
# whole queue in one process. Deleting first means an interrupted or failed render leaves the
# figure missing, so no later `make` can take the old file as fresh.
$(FIGURES): $(FIGURE_DIR)/%.svg: figures_src/%.py $(FIGURE_INPUTS) $(VENV_STAMP)
	@mkdir -p $(dir $(FIGURE_QUEUE))
	@rm -f $@ $(@:.svg=.json)
	@echo $< >> $(FIGURE_QUEUE)

# The folder is a prerequisite too: deleting a script changes its timestamp, so the orphan
# figure is removed below.
$(FIGURE_STAMP): $(FIGURES) figures_src
	@mkdir -p $(dir $@)
	@if [ -s $(FIGURE_QUEUE) ]; then \
	  printf '\n==> rendering %s stale figure(s)\n' "$$(sort -u $(FIGURE_QUEUE) | wc -l)"; \
	  $(PY) -m posenc.render --out $(FIGURE_DIR) $$(sort -u $(FIGURE_QUEUE)); \
	  rm -f $(FIGURE_QUEUE); \
	fi
	@# A figure whose script was deleted must not linger on the site.
	@for f in $(FIGURE_DIR)/*.svg; do \
	  [ -e "$$f" ] || continue; s=figures_src/$$(basename "$${f%.svg}").py; \
	  [ -f "$$s" ] || { echo "removing $$f (no $$s)"; rm -f "$$f" "$${f%.svg}.json"; }; \
	done
	@touch $@

figures: $(FIGURE_STAMP) ## Render every stale figure (one process for the stale set)

$(VERIFY_REPORT): $(LIBRARY) $(VENV_STAMP)
	$(call step,"proving the derivations")
	@mkdir -p $(dir $@)
	$(PY) -m posenc.verify --report $@

verify: $(VERIFY_REPORT) ## Prove every derivation with SymPy (python -m posenc.verify)

$(SITE_STAMP): $(FIGURE_STAMP) $(VERIFY_REPORT) $(NODE_STAMP) $(SITE_INPUTS)
	$(call step,"building the site with mkdocs build --strict")
	$(VENV)/bin/mkdocs build --strict
	@touch $@

site: $(SITE_STAMP) ## Build the site into site/ (strict: any warning fails)

serve: figures $(VERIFY_REPORT) $(NODE_STAMP) ## Preview with live reload (re-renders edited figures)
	$(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

test: all ## Run every test, browser tests included
	$(call step,"running the tests")
	$(PY) -m pytest

# The comparison with the libraries themselves (torch CPU, transformers) has its own environment,
# so `make` and `make test` never need torch.
PEERS_VENV := .venv-peers
PEERS_PY := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.installed

$(PEERS_STAMP): requirements-peers.txt pyproject.toml
	$(call step,"creating $(PEERS_VENV) from requirements-peers.txt")
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_PY) -m pip install --quiet --disable-pip-version-check -r requirements-peers.txt
	$(PEERS_PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

.PHONY: test-peers
test-peers: $(PEERS_STAMP) ## Compare posenc with torch and transformers (in .venv-peers)
	$(call step,"comparing posenc with torch and transformers")
	$(PEERS_PY) -m pytest tests/peers

bench: all ## Print build, render, explainer and precision timings (figures, not pass/fail)
	$(PY) tests/benchmark.py
	@# The precision benchmark adds the PyTorch rows when the peers environment exists.
	$(if $(wildcard $(PEERS_STAMP)),$(PEERS_PY),$(PY)) tests/benchmark_precision.py

# Lighthouse (pinned in package.json) on the main pages against the system Chromium: figures
# printed as a table, not pass/fail (timings vary by machine). The deterministic audits (axe,
# layout shift, page weight, links, offline, reproducible builds) run in `make test`.
.PHONY: audit
audit: all ## Print Lighthouse scores and FCP, LCP, TBT, CLS for the main pages (figures, not pass/fail)
	$(call step,"running Lighthouse on the main pages")
	$(PY) tests/lighthouse_audit.py

clean: ## Remove everything make generates (venv and node_modules included)
	rm -rf site build $(FIGURE_DIR) .cache $(VENV) .venv-peers node_modules .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
