# Everything a target needs is installed by the target itself, idempotently.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
AGENTS  := agents-cli
APT_PKGS := git bubblewrap socat iproute2 hyperfine util-linux chromium curl openssl procps
PYTEST_ARGS ?=

.PHONY: serve test bench install system agents clean

install: system $(VENV)/.installed agents

system:
	@missing=""; for c in git bwrap socat ip hyperfine unshare chromium curl openssl pgrep; do command -v $$c >/dev/null 2>&1 || missing=1; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing system packages: $(APT_PKGS)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS)) >/dev/null; \
	  else echo "warning: missing system tools; run as root or: sudo apt-get install $(APT_PKGS)"; fi; \
	fi

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

agents: $(AGENTS)/node_modules/.installed

$(AGENTS)/node_modules/.installed: $(AGENTS)/package.json $(AGENTS)/package-lock.json
	cd $(AGENTS) && npm install --no-audit --no-fund --no-save --loglevel=error
	touch $@

serve: install
	$(BIN)/bot serve

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(AGENTS)/node_modules .bot-data
