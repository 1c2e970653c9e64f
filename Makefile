# Every target bootstraps .venv itself: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# requirements.lock pins every runtime and test dependency, transitively (Linux, Python 3.11):
# the venv gets exactly those versions, and Tebiki itself on top without re-resolving anything.
LOCK := requirements.lock
# The tool behind `make lock`, installed into the venv on demand (not part of the lock).
PIP_TOOLS := pip-tools==7.6.2

.PHONY: run test bench lint typecheck importlint fuzz lock sysdeps clean

# Re-bootstraps when the lock or pyproject.toml changes. pip comes first, at its locked version
# (pinned while a dependency needs it), so the rest is installed by the pip the lock was tested
# with. Packages dropped from the lock are not uninstalled; `make clean test` starts afresh.
$(STAMP): pyproject.toml $(LOCK)
	@$(MAKE) --no-print-directory sysdeps
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	if pin=$$(grep -m1 '^pip==' $(LOCK)); then $(PY) -m pip install --quiet "$$pin"; fi
	$(PY) -m pip install --quiet -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

# Refreshes the lock from pyproject.toml, keeping every existing pin that still fits;
# `make lock UPGRADE=1` moves everything to the newest allowed versions. It resolves through
# pip's own configuration (indexes, constraints). Does not need a bootstrapped venv, so a lock
# that no longer installs can still be repaired. The lock is replaced only when it changed, so
# an unchanged lock does not make the next target re-bootstrap.
lock:
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@test -x $(VENV)/bin/pip-compile || $(PY) -m pip install --quiet '$(PIP_TOOLS)'
	@cp $(LOCK) $(LOCK).new 2>/dev/null || true
	CUSTOM_COMPILE_COMMAND='make lock' $(VENV)/bin/pip-compile --quiet --extra test \
	  --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links \
	  $(if $(UPGRADE),--upgrade) --output-file $(LOCK).new pyproject.toml
	@if cmp -s $(LOCK).new $(LOCK); then rm $(LOCK).new; echo "$(LOCK): unchanged"; \
	 else mv $(LOCK).new $(LOCK); echo "$(LOCK): updated"; fi

# System tools: ripgrep and fd speed up grep/glob_search, git backs git_ops, bubblewrap is the
# sandbox every program runs in (Linux), desktop-file-utils checks the
# desktop entry in tests, and two xcb libraries are bundled by `make package`; ICU's tools, a C
# compiler and readelf rebuild Qt's ICU data without what Tebiki never reads (packaging/icu_data.py:
# without them the bundle ships it whole and misses its size budget).
# Installed when we are root on a Debian-like machine; otherwise we say what is missing.
sysdeps:
	@missing=""; \
	command -v rg >/dev/null 2>&1 || missing="$$missing ripgrep"; \
	command -v fd >/dev/null 2>&1 || command -v fdfind >/dev/null 2>&1 || missing="$$missing fd-find"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v desktop-file-validate >/dev/null 2>&1 || missing="$$missing desktop-file-utils"; \
	command -v icupkg >/dev/null 2>&1 && command -v genccode >/dev/null 2>&1 || missing="$$missing icu-devtools"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc"; \
	command -v readelf >/dev/null 2>&1 || missing="$$missing binutils"; \
	{ ldconfig -p 2>/dev/null | grep -q 'libxcb-icccm.so.4 '; } || missing="$$missing libxcb-icccm4"; \
	{ ldconfig -p 2>/dev/null | grep -q 'libxcb-keysyms.so.1 '; } || missing="$$missing libxcb-keysyms1"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing system packages:$$missing"; \
	    (apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $$missing >/dev/null 2>&1)) || \
	     echo "warning: could not install$$missing (optional; tests that need them adapt)"; \
	  else \
	    echo "note: optional system packages missing:$$missing (apt-get install$$missing)"; \
	  fi; \
	fi

# pip compiles installed packages to bytecode, but not an editable install's own modules, and
# with PYTHONDONTWRITEBYTECODE set Python never caches them: every start would recompile the app
# (~100 ms here). compileall only rewrites what changed.
BYTECODE := $(PY) -m compileall -q app >/dev/null

run: $(STAMP)
	@$(BYTECODE)
	$(PY) -m app

# Static checks first (cheap, and a type or layering error explains a test failure), then the
# suite. Hypothesis runs its "ci" profile (tests/conftest.py): derandomized, so two runs of the
# same tree try the same examples. pytest's exit code 5 (no test collected) fails like any other.
test: lint typecheck importlint mcp-reference
	HYPOTHESIS_PROFILE=ci QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests --ignore=tests/bench

# Each benchmark is a script that prints `name: value` lines, baseline measured in the same run.
bench: $(STAMP)
	@$(BYTECODE)
	@set -e; for f in tests/bench/bench_*.py; do echo "== $$f"; QT_QPA_PLATFORM=offscreen $(PY) $$f; done

lint: $(STAMP)
	$(PY) -m ruff check app tests

typecheck: $(STAMP)
	$(PY) -m mypy app

# Contracts live in pyproject.toml's [tool.importlinter].
importlint: $(STAMP)
	$(VENV)/bin/lint-imports

# Longer, randomized bug hunting (not part of `make test`): the parser fuzzer for two minutes,
# then every Hypothesis test (Hypothesis's pytest plugin marks them `hypothesis`) under the
# "fuzz" profile of tests/conftest.py: random seeds, ten times each test's own example count,
# failing examples kept in .hypothesis/ and replayed first next time.
fuzz: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) tests/security/fuzz_parser.py --seconds 120
	HYPOTHESIS_PROFILE=fuzz QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests \
	  --ignore=tests/bench -m 'hypothesis and not slow'

clean:
	rm -rf $(VENV) build dist *.egg-info

# ---- MCP reference servers (issue 19): the real servers the MCP tests run against ----
# Pinned npm packages (the machine's npm; apt-get installs it when missing and we are root) into
# tests/.mcp-reference/node, pinned PyPI servers into their own venv tests/.mcp-reference/venv so
# their dependencies never mix with Tebiki's. The stamp records the pins: changing a pin
# reinstalls, an unchanged one costs one file comparison.
MCP_REF := tests/.mcp-reference
MCP_REF_NPM := @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
MCP_REF_PYPI := mcp-server-git==2026.10.19 mcp-server-time==2026.10.19
MCP_REF_STAMP := $(MCP_REF)/.installed
.PHONY: mcp-reference

mcp-reference:
	@if [ "$$(cat $(MCP_REF_STAMP) 2>/dev/null)" = "$(MCP_REF_NPM) $(MCP_REF_PYPI)" ] && \
	   [ -f $(MCP_REF)/node/node_modules/@modelcontextprotocol/server-everything/package.json ] && \
	   [ -x $(MCP_REF)/venv/bin/mcp-server-git ]; then exit 0; fi; \
	set -e; \
	if ! command -v npm >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing nodejs and npm"; \
	    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || \
	      (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq nodejs npm >/dev/null 2>&1); \
	  else echo "error: npm is missing (apt-get install nodejs npm)"; exit 1; fi; \
	fi; \
	rm -f $(MCP_REF_STAMP); mkdir -p $(MCP_REF)/node; \
	echo '{"private": true}' > $(MCP_REF)/node/package.json; \
	npm install --prefix $(MCP_REF)/node --no-audit --no-fund --loglevel=error --save-exact $(MCP_REF_NPM); \
	test -x $(MCP_REF)/venv/bin/python || $(PYTHON) -m venv $(MCP_REF)/venv; \
	$(MCP_REF)/venv/bin/python -m pip install --quiet $(MCP_REF_PYPI); \
	echo "$(MCP_REF_NPM) $(MCP_REF_PYPI)" > $(MCP_REF_STAMP)

# ---- Packaging (issue 8): `make package`, `make install-desktop`, `make uninstall-desktop` ----
# `package` builds the PyInstaller one-dir bundle into dist/tebiki/ and, on Linux, the tarball
# dist/tebiki-<version>-linux-<arch>.tar.gz. install-desktop installs that bundle for the current
# user (~/.local/lib/tebiki, ~/.local/bin/tebiki, menu entry and icons; PREFIX, XDG_DATA_HOME and
# DESTDIR override the locations). `icons` re-renders resources/icons from the SVG sources.
.PHONY: package install-desktop uninstall-desktop icons

package: $(STAMP)
	$(PY) packaging/build.py

install-desktop: $(STAMP)
	@test -x dist/tebiki/tebiki || $(MAKE) --no-print-directory package
	sh packaging/linux/install-desktop.sh dist/tebiki

uninstall-desktop:
	sh packaging/linux/uninstall-desktop.sh

icons: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) packaging/make_icons.py
# ---- end of packaging block ----
