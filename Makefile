# Everything a target needs is installed by the target itself, idempotently.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
AGENTS  := agents-cli
SPECS   := tests/specs
# system packages: what the service needs, and what the tests add (tools the escape suite runs
# inside the sandbox, the browser for the settings pages, hyperfine for the benchmarks, podman with
# runc and mmdebstrap for the image built and run by tests/deploy/test_container_e2e.py)
SERVE_CMDS := git bwrap ip unshare rg cc
SERVE_PKGS := git bubblewrap iproute2 util-linux ripgrep gcc libc6-dev
TEST_CMDS  := $(SERVE_CMDS) socat hyperfine chromium curl openssl pgrep pg_ctlcluster podman runc mmdebstrap
TEST_PKGS  := $(SERVE_PKGS) socat hyperfine chromium curl openssl procps postgresql podman runc mmdebstrap
PYTEST_ARGS ?=
# make test runs the suite's files on this many workers (pytest-xdist, a whole file to a worker: its
# module fixtures start once); the tests mostly wait on real CLIs, servers and sandboxes, so two
# workers on two cores halve the wall time. TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2

.PHONY: serve test test-fast bench soak screenshots install install-test prereqs system-serve system-test agents specs launcher clean

install: prereqs system-serve $(VENV)/.installed-serve agents launcher
install-test: prereqs system-test $(VENV)/.installed-test agents specs launcher

# what make cannot install itself (Python >= 3.11 with venv, Node.js >= 20 with npm), one line each
prereqs:
	@./scripts/check-prereqs "$(PY)"

system-serve:
	@./scripts/ensure-system "$(SERVE_CMDS)" "$(SERVE_PKGS)"

system-test:
	@./scripts/ensure-system "$(TEST_CMDS)" "$(TEST_PKGS)"

# serving needs the package and its dependencies; the tests add their tools and the browser driver
$(VENV)/.installed-serve: pyproject.toml
	@test -x $(BIN)/python || { echo "== creating the virtual environment $(VENV)"; $(PY) -m venv $(VENV); }
	@echo "== installing the bot and what it needs to serve into $(VENV) (pip shows each download and its size)"
	$(BIN)/pip install --progress-bar on --upgrade pip
	$(BIN)/pip install --progress-bar on -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-serve
	@echo "== installing the test tools (the test extras of pyproject.toml: pytest, ruff, mypy, playwright, ...) into $(VENV)"
	$(BIN)/pip install --progress-bar on -e '.[test]'
	touch $@

# the compiled layer launcher every tier-1 sandbox starts under (sandbox/native/layer_launcher.c, built
# into sandbox/native/build/ under its source's digest; a start builds it too when it is missing)
launcher: $(VENV)/.installed-serve
	@$(BIN)/python -m sandbox.launcher

agents: $(AGENTS)/node_modules/.installed

$(AGENTS)/node_modules/.installed: $(AGENTS)/package.json $(AGENTS)/package-lock.json
	@echo "== installing the pinned agent CLIs into $(AGENTS)/node_modules (claude-code, codex, opencode, gemini-cli: about 1.2 GB on disk; npm warns here if this Node is too old for one)"
	cd $(AGENTS) && npm install --no-audit --no-fund --no-save --loglevel=warn
	touch $@

# GitHub's REST OpenAPI description and webhook schemas, which the fake GitHub is checked against
specs: $(SPECS)/node_modules/.installed

$(SPECS)/node_modules/.installed: $(SPECS)/package.json $(SPECS)/package-lock.json
	@echo "== installing GitHub's OpenAPI description and webhook schemas into $(SPECS)/node_modules (@octokit/openapi, @octokit/webhooks-schemas: about 390 MB on disk)"
	cd $(SPECS) && npm ci --no-audit --no-fund --loglevel=warn
	touch $@

serve: install
	@echo "== the bot command (bot run, bot doctor, bot runs) is $(CURDIR)/$(BIN)/bot; put it on your PATH with: export PATH=\"$(CURDIR)/$(BIN):\$$PATH\""
	$(BIN)/bot serve

test: install-test
	$(BIN)/ruff check bot adapters sandbox tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# the edit-test loop: everything but the real CLIs, sandboxes and containers (a few minutes)
test-fast: install-test
	$(BIN)/ruff check bot adapters sandbox tests bench
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not e2e and not sandbox and not container" $(PYTEST_ARGS)

bench: install-test
	$(BIN)/python -m bench

# the fault and load suite's figures (bench/soak.py; SOAK_THREADS, SOAK_PER_THREAD scale it)
soak: install-test
	$(BIN)/python -m bench soak

# docs/screenshots/<page>-<1280|390>.png: every settings page and / in Debian's chromium, both widths;
# review-first.png, review-rereview.png: one pull request's review threads; review-settings-<width>.png:
# the repository page's learned rules and signal (docs/reviews.md)
screenshots: install-test
	rm -f docs/screenshots/*.png
	SCREENSHOTS_DIR=docs/screenshots $(BIN)/python -m pytest -q -p no:cacheprovider \
		tests/settings/test_responsive.py tests/review/test_review_screenshots.py \
		tests/settings/test_review_page_browser.py \
		-k "test_no_page_scrolls_sideways or test_the_review_threads_render_as_github_shows_them or test_the_review_parts or test_the_signal_over_time"

clean:
	rm -rf $(VENV) $(AGENTS)/node_modules $(SPECS)/node_modules .bot-data
