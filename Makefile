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

# Optional system tools: ripgrep speeds up grep_search, git backs git_ops.
# Installed when we are root on a Debian-like machine; otherwise we say what is missing.
sysdeps:
	@missing=""; \
	command -v rg >/dev/null 2>&1 || missing="$$missing ripgrep"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
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

run: $(STAMP)
	$(PY) -m app

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests --ignore=tests/bench

# Each benchmark is a script that prints `name: value` lines, baseline measured in the same run.
bench: $(STAMP)
	@set -e; for f in tests/bench/bench_*.py; do echo "== $$f"; QT_QPA_PLATFORM=offscreen $(PY) $$f; done

lint: $(STAMP)
	$(PY) -m ruff check app tests

clean:
	rm -rf $(VENV) build dist *.egg-info
