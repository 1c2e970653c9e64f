# Every target bootstraps .venv itself: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench lint sysdeps clean

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory sysdeps
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

# System tools: ripgrep and fd speed up grep/glob_search, git backs git_ops, desktop-file-utils checks the
# desktop entry in tests, and two xcb libraries are bundled by `make package`.
# Installed when we are root on a Debian-like machine; otherwise we say what is missing.
sysdeps:
	@missing=""; \
	command -v rg >/dev/null 2>&1 || missing="$$missing ripgrep"; \
	command -v fd >/dev/null 2>&1 || command -v fdfind >/dev/null 2>&1 || missing="$$missing fd-find"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
	command -v desktop-file-validate >/dev/null 2>&1 || missing="$$missing desktop-file-utils"; \
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

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests --ignore=tests/bench

# Each benchmark is a script that prints `name: value` lines, baseline measured in the same run.
bench: $(STAMP)
	@$(BYTECODE)
	@set -e; for f in tests/bench/bench_*.py; do echo "== $$f"; QT_QPA_PLATFORM=offscreen $(PY) $$f; done

lint: $(STAMP)
	$(PY) -m ruff check app tests

clean:
	rm -rf $(VENV) build dist *.egg-info

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
