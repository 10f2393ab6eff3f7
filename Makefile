# One entry point for a fresh machine (`make setup`) and for the whole test suite (`make test`).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
# Test matrix: kubespray's pin and the newest ansible-core this machine's Python runs.
CORES ?= 2.18 2.19
ansible_pkg_2.18 := ansible-core==2.18.* ansible==11.*
ansible_pkg_2.19 := ansible-core==2.19.* ansible==12.*
LINT_CORE := 2.19

VENV_ROOT := .venv
COLL_ROOT := .build/collections
COLL_LINK := $(COLL_ROOT)/ansible_collections/kubewin/nodes

.PHONY: help setup setup-parts setup-lab-build check test units sanity lint changelog-lint lab-build lab-up lab-down lab-test lab-test-kubespray demo clean collection importer bench docs

help:
	@echo "make setup   - install everything a fresh machine needs (Python venvs per ansible-core and for the docs, lab build)"
	@echo "make demo    - the lab, then two simulated Windows nodes scaled up until Ready"
	@echo "make check   - the fast checks before a commit (lint and unit tests on one ansible-core)"
	@echo "make test    - run the whole test suite (lint, sanity, unit on every ansible-core, importer, docs, lab tests)"
	@echo "make docs    - build and check the docs site (antsibull-docs, Sphinx) into .build/docs; see CONTRIBUTING.md"
	@echo "make lab-up / lab-down - the test lab (see CONTRIBUTING.md)"

$(COLL_LINK):
	mkdir -p $(dir $(COLL_LINK))
	ln -sfn $(CURDIR) $(COLL_LINK)

# Every package at the exact version of tests/constraints/core-<core>.txt (security-2 N11): a new release of a
# dependency reaches CI only when someone updates that file, not on the next `make setup`.
$(VENV_ROOT)/core-%/.done: requirements.txt requirements-dev.txt tests/constraints/core-%.txt
	rm -rf $(VENV_ROOT)/core-$*
	$(PYTHON) -m venv $(VENV_ROOT)/core-$*
	$(VENV_ROOT)/core-$*/bin/pip install -q --upgrade pip -c tests/constraints/core-$*.txt
	$(VENV_ROOT)/core-$*/bin/pip install -q -r requirements-dev.txt -c tests/constraints/core-$*.txt $(ansible_pkg_$*)
	@# a requirement added without its pin would have come in at its newest release: stop and say which
	@unpinned=$$($(VENV_ROOT)/core-$*/bin/pip freeze --exclude-editable | grep -vxFf tests/constraints/core-$*.txt); \
	if [ -n "$$unpinned" ]; then echo "not pinned in tests/constraints/core-$*.txt: $$unpinned"; exit 1; fi
	touch $@

# galaxy-importer in its own venv: its ansible-core and ansible-lint pins must not move the core venvs.
$(VENV_ROOT)/importer/.done: tests/importer/requirements.txt
	rm -rf $(VENV_ROOT)/importer
	$(PYTHON) -m venv $(VENV_ROOT)/importer
	$(VENV_ROOT)/importer/bin/pip install -q --upgrade pip
	$(VENV_ROOT)/importer/bin/pip install -q -r tests/importer/requirements.txt
	touch $@

# The parts of `make setup` run at once (SETUP_JOBS): pip and apt wait on the network while lab-build's Go builds
# (two lanes of their own, lab/bin/lab-build) keep the cores busy. lab-build's lines are prefixed [lab-build]. A part
# that fails stops setup with an error (make lets the parts already running finish first).
SETUP_JOBS ?= 6
SETUP_PARTS := $(COLL_LINK) $(foreach c,$(CORES),$(VENV_ROOT)/core-$(c)/.done) $(VENV_ROOT)/importer/.done \
  $(VENV_ROOT)/docs/.done .build/psgate-mono/.done setup-lab-build
# apt-get runs one at a time (the Mono download here, Wine in lab-build): both take this lock.
APT_LOCK := /tmp/kubewin-apt.lock
setup:
	@start=$$(date +%s); $(MAKE) --no-print-directory -j$(SETUP_JOBS) setup-parts || exit $$?; \
	echo "make setup: done in $$(( $$(date +%s) - start )) s"

setup-parts: $(SETUP_PARTS)

setup-lab-build:
	@set -o pipefail; LAB_APT_LOCK=$(APT_LOCK) lab/bin/lab-build 2>&1 | sed -u 's/^/[lab-build] /'

# The Mono assemblies the PowerShell gate's .NET extract (tests/psgate/dotnet_surface.json) is made from, pinned
# by version and SHA-256: tests/unit/psgate/test_dotnet_surface.py regenerates the extract from them. Debian's
# mirror keeps only the newest point release: when the pinned one is gone, setup goes on and that test skips
# saying so (bump VERSION and the SHA-256s in dotnet_surface.py, regenerate, review the diff).
.build/psgate-mono/.done: tests/psgate/dotnet_surface.py
	if flock $(APT_LOCK) $(PYTHON) tests/psgate/dotnet_surface.py --fetch .build/psgate-mono; then touch $@; else \
	  echo "psgate: the pinned Mono packages could not be downloaded; test_dotnet_surface will skip"; fi

units: $(COLL_LINK)
	@for c in $(CORES); do \
	  echo "== unit tests on ansible-core $$c =="; \
	  $(VENV_ROOT)/core-$$c/bin/python -m pytest -q tests/unit || exit 1; \
	done

lint: $(COLL_LINK) changelog-lint
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/ruff check plugins tests lab bench
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/yamllint -s .
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/python tests/psgate/psgate.py
	cd $(COLL_LINK) && ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/$(COLL_ROOT) $(CURDIR)/$(VENV_ROOT)/core-$(LINT_CORE)/bin/ansible-lint --profile production

changelog-lint:
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/antsibull-changelog lint

# The fast checks before a commit: lint and the unit tests on one ansible-core (no sanity, no lab).
check: lint
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/python -m pytest -q tests/unit

sanity:
	@for c in $(CORES); do \
	  echo "== ansible-test sanity on ansible-core $$c =="; \
	  tests/sanity/run.sh $$c || exit 1; \
	done

collection: $(COLL_LINK)
	rm -rf kubewin-nodes-*.tar.gz .build/installed
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/ansible-galaxy collection build --force .
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/ansible-galaxy collection install --force --no-deps -p .build/installed kubewin-nodes-*.tar.gz
	@for m in $(basename $(notdir $(wildcard plugins/modules/*.py))); do \
	  ANSIBLE_NOCOLOR=1 ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.build/installed $(VENV_ROOT)/core-$(LINT_CORE)/bin/ansible-doc kubewin.nodes.$$m \
	    | grep -q "MODULE kubewin.nodes.$$m" || { echo "ansible-doc kubewin.nodes.$$m: no documentation"; exit 1; }; \
	  echo "ansible-doc kubewin.nodes.$$m: ok"; \
	done
	@filters=$$(ANSIBLE_NOCOLOR=1 ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.build/installed $(VENV_ROOT)/core-$(LINT_CORE)/bin/ansible-doc -t filter -l kubewin.nodes | awk '{print $$1}'); \
	[ -n "$$filters" ] || { echo "ansible-doc -t filter -l kubewin.nodes: no filters"; exit 1; }; \
	docs=$$(ANSIBLE_NOCOLOR=1 ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.build/installed $(VENV_ROOT)/core-$(LINT_CORE)/bin/ansible-doc -t filter $$filters); \
	for f in $$filters; do \
	  grep -q "^> FILTER $$f " <<<"$$docs" || { echo "ansible-doc -t filter $$f: no documentation (plugins/filter/$${f#kubewin.nodes.}.yml)"; exit 1; }; \
	done; echo "ansible-doc of $$(echo $$filters | wc -w) filters: ok"

# galaxy-importer (what Galaxy and Automation Hub run on an upload, ansible-lint on) on the tarball built above.
importer: collection $(VENV_ROOT)/importer/.done
	tests/importer/run.sh

# The docs site: antsibull-docs and Sphinx in their own venv (docs/requirements.txt), so they never move the test
# venvs' pins. The collection is kubewin.nodes through $(COLL_LINK). build.sh of `antsibull-docs sphinx-init` is
# run as its two steps, with the offline intersphinx inventories written between them (no network here).
# Fails on any Sphinx warning (broken internal references included), on a finding of antsibull-docs' linter and
# on a broken relative link in README.md, CONTRIBUTING.md or docs/*.md.
DOCS_VENV := $(VENV_ROOT)/docs
DOCS_SITE := .build/docs
DOCS_ENV := PATH=$(CURDIR)/$(DOCS_VENV)/bin:$$PATH ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/$(COLL_ROOT)

$(DOCS_VENV)/.done: docs/requirements.txt
	rm -rf $(DOCS_VENV)
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/pip install -q --upgrade pip
	$(DOCS_VENV)/bin/pip install -q -r docs/requirements.txt
	touch $@

docs: $(COLL_LINK) $(DOCS_VENV)/.done
	rm -rf $(DOCS_SITE) && mkdir -p $(DOCS_SITE)
	$(DOCS_ENV) antsibull-docs sphinx-init --use-current --dest-dir $(DOCS_SITE) \
	  --project kubewin.nodes --title "kubewin.nodes" --html-short-title kubewin.nodes kubewin.nodes
	mkdir -p $(DOCS_SITE)/rst && chmod og-w $(DOCS_SITE)/rst
	cd $(DOCS_SITE) && $(DOCS_ENV) antsibull-docs --config-file antsibull-docs.cfg collection \
	  --cleanup everything --use-current --fail-on-error --dest-dir rst kubewin.nodes
	$(DOCS_VENV)/bin/python tests/docs/offline_inventory.py $(DOCS_SITE)
	cd $(DOCS_SITE) && $(DOCS_ENV) sphinx-build -M html rst build -c . -W --keep-going -q
	cd $(COLL_LINK) && $(DOCS_ENV) antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs self .
	$(DOCS_VENV)/bin/python tests/docs/check_links.py
	@echo "docs: $(DOCS_SITE)/build/html/index.html"

# The lab: a real control plane on 127.0.0.1 and simulated Windows hosts (lab/README.md).
lab-build:
	lab/bin/lab-build

lab-up: lab-build
	lab/bin/lab-up
	LAB_PYTHON=$(CURDIR)/$(VENV_ROOT)/core-$(LINT_CORE)/bin/python lab/mirror/mirror-up

lab-down:
	-lab/mirror/mirror-down
	-LAB_FLAVOUR=kubespray lab/bin/lab-down
	lab/bin/lab-down

lab-test: lab-up
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/python -m pytest -q --durations=40 tests/lab lab/tests
	PATH=$(CURDIR)/$(VENV_ROOT)/core-$(LINT_CORE)/bin:$$PATH molecule test
	$(MAKE) --no-print-directory lab-test-kubespray

# The lab's kubespray flavour (lab/README.md): the control plane as kubespray builds it, with flannel, then as
# kubespray's default Calico cluster. A kubespray user's run (tests/lab/test_kubespray_as_built.py) on kubespray's pin,
# ansible-core 2.18, the oldest supported (its scale-up, re-run, upgrade and reset are that version's run of the main
# path), and with flannel on the newest too. It takes the default lab's ports, so that lab stops first (the mirror
# stays); each flavour is stopped and purged whatever its tests did. The rendering tests (test_kubespray_flavour.py's
# rendered_config ones) need no cluster and ran with the default lab's.
KUBESPRAY_FIXTURE ?= $(abspath $(CURDIR)/../shared/fixtures/kubespray/v2.31.0)
lab-test-kubespray: lab-build
	@if [ ! -d "$(KUBESPRAY_FIXTURE)" ]; then \
	  echo "== the kubespray flavour: skipped, kubespray's files are not at $(KUBESPRAY_FIXTURE) (../shared/fixtures) =="; \
	  exit 0; fi; \
	lab/bin/lab-down >/dev/null; status=0; \
	LAB_PYTHON=$(CURDIR)/$(VENV_ROOT)/core-$(LINT_CORE)/bin/python lab/mirror/mirror-up >/dev/null || exit 1; \
	for net in flannel calico; do \
	  echo "== the kubespray flavour, $$net: lab/tests/test_kubespray_flavour.py tests/lab/test_kubespray_as_built.py =="; \
	  start=$$(date +%s); \
	  LAB_FLAVOUR=kubespray lab/bin/lab-down --purge >/dev/null; \
	  LAB_FLAVOUR=kubespray LAB_KUBESPRAY_NETWORK=$$net LAB_KUBESPRAY_FIXTURE=$(KUBESPRAY_FIXTURE) \
	    lab/bin/lab-up >/dev/null && \
	  echo "lab-up ($$net): $$(( $$(date +%s) - start )) s" && \
	  LAB_FLAVOUR=kubespray LAB_KUBESPRAY_FIXTURE=$(KUBESPRAY_FIXTURE) \
	    $(VENV_ROOT)/core-2.18/bin/python -m pytest -q -rs --durations=5 -k "not rendered_config" \
	    lab/tests/test_kubespray_flavour.py tests/lab/test_kubespray_as_built.py || status=1; \
	  if [ $$net = flannel ]; then \
	    echo "== the kubespray flavour, $$net, ansible-core $(LINT_CORE): tests/lab/test_kubespray_as_built.py =="; \
	    LAB_FLAVOUR=kubespray LAB_KUBESPRAY_FIXTURE=$(KUBESPRAY_FIXTURE) \
	      $(VENV_ROOT)/core-$(LINT_CORE)/bin/python -m pytest -q -rs tests/lab/test_kubespray_as_built.py || status=1; \
	  fi; \
	  LAB_FLAVOUR=kubespray lab/bin/lab-down --purge >/dev/null || status=1; \
	  echo "the kubespray flavour, $$net: $$(( $$(date +%s) - start )) s"; \
	done; exit $$status

# Remote operations per Windows node and control-plane module calls (counts, asserted against the ratchet in
# bench/remote_ops.py) and wall-time ratios, for BENCH_NODES nodes (e.g. make bench BENCH_NODES=1,10); not part of
# `make test`.
BENCH_NODES ?= 1,10,50
bench: lab-up
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/python bench/remote_ops.py --nodes $(BENCH_NODES)

# The newcomer's first run: the lab, then two simulated Windows nodes scaled up with the playbook.
demo: lab-up
	$(VENV_ROOT)/core-$(LINT_CORE)/bin/python lab/demo.py

# The whole suite, stage by stage, then a table of each stage's seconds; stops at the first failing stage,
# and always stops the lab it ran on (a second checkout's CI on the same machine needs its ports).
TEST_STAGES := lint sanity units collection importer docs lab-test
test:
	@status=0; table=""; \
	for stage in $(TEST_STAGES); do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$stage || status=$$?; \
	  table="$$table$$(printf '%-12s %5d' $$stage $$(( $$(date +%s) - start )))\n"; \
	  [ $$status -eq 0 ] || break; \
	done; \
	$(MAKE) --no-print-directory lab-down >/dev/null 2>&1 || true; \
	printf "== make test: seconds per stage (exit status %d) ==\n$$table" $$status; \
	exit $$status

clean:
	rm -rf .build kubewin-nodes-*.tar.gz .pytest_cache importer_result.json
