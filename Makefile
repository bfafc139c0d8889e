# The README's two commands: `make demo` and `make test`. Each creates or refreshes .venv first.
VENV ?= .venv
PYTHON ?= python3
# transformers and verl need torch; the CPU build goes in first so nothing pulls a CUDA build.
TORCH ?= torch==2.13.0
TEST_WORKERS ?= 2
# More pytest arguments for make test's parallel run (--junitxml=/tmp/suite.xml: the time of each test file).
TEST_ARGS ?=
# `make test` is the whole suite: a test whose needs are missing (a Docker engine, ../shared, a host Python) fails
# and names them (tests/conftest.py `require`). `make test UNI_AGENT_GYM_TESTS=available` skips those tests instead.
UNI_AGENT_GYM_TESTS ?= all
BIN := $(VENV)/bin
# One venv, two installs. The demo's: the package and its core dependencies (no torch, no verl), without compiling
# every installed module to bytecode (Python writes the caches of what the demo imports). The tests': the `dev` extra
# (every other extra, torch, verl, pytest). The tests' install holds the demo's, so it stamps both: `make demo` after
# `make test` installs nothing, and `make test` after `make demo` adds the rest.
DEMO_STAMP := $(VENV)/.installed-core
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast bench docker-engine docs docs-check

$(DEMO_STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP) $(DEMO_STAMP)

# What the tests need beyond the engine: the whole venv, and the Debian packages some tests use.
setup: $(STAMP)
	@scripts/ensure-chromium.sh || echo "No Chromium: the viewer's browser test will fail until scripts/ensure-chromium.sh succeeds."
	@scripts/ensure-registry.sh || echo "No docker-registry: the ray deployment's tests will fail until scripts/ensure-registry.sh succeeds."
	@scripts/ensure-test-runners.sh || echo "No googletest, CMake, cargo, PHPUnit, Ruby's test-unit or RSpec: the canary tests of tests/test_canaries.py will fail until scripts/ensure-test-runners.sh succeeds."

docker-engine:
	@scripts/ensure-docker.sh || echo "No Docker engine (scripts/ensure-docker.sh could not start one): make demo falls back to the local deployment, make test stops."

# The demo needs the package, an engine (and debootstrap: scripts/ensure-docker.sh installs both) and the base image,
# which the demo builds on first use; nothing else the tests need. The venv (pip) and the engine (apt) are set up side
# by side. Without an engine, or where the base image cannot be built here, the demo runs on the local deployment.
demo:
	@$(MAKE) --no-print-directory -j2 $(DEMO_STAMP) docker-engine
	@unset PYTHONDONTWRITEBYTECODE; if docker info >/dev/null 2>&1; then $(BIN)/uni-agent-gym demo; \
	else $(BIN)/uni-agent-gym demo --deployment local; fi

# The suite in TEST_WORKERS parallel workers (pytest-xdist; each test file whole on one worker, grouped as
# tests/conftest.py says), then the few `serial` tests (a dockerd restart, the soak) alone. Both always run; either
# failing fails `make test`. Where a Docker engine answers, the ray deployment's test cluster (tests/ray_cluster.py:
# a head and two worker nodes on loopback, their own dockerds, a registry) is started first, shared by the
# workers (started beside the first tests: a test that needs it waits on the harness's lock), and stopped by its PIDs
# before the serial tests. Python writes its bytecode caches, as on a user's machine (PYTHONDONTWRITEBYTECODE, which
# some machines and images set, is dropped): otherwise every process that imports the package compiles it again
# (about 0.2 CPU-seconds each; docs/tests.md).
test: setup docker-engine
	@unset PYTHONDONTWRITEBYTECODE; export UNI_AGENT_GYM_TESTS=$(UNI_AGENT_GYM_TESTS); status=0; cluster=; \
	if [ "$(UNI_AGENT_GYM_TESTS)" = all ] && ! docker info >/dev/null 2>&1; then \
	  echo "make test: no Docker engine answers (scripts/ensure-docker.sh could not start one); make test UNI_AGENT_GYM_TESTS=available skips the Docker tests"; exit 1; fi; \
	if docker info >/dev/null 2>&1; then $(BIN)/python -m tests.ray_cluster start >/dev/null & cluster=$$!; fi; \
	UNI_AGENT_GYM_TEST_CLUSTER_KEPT=1 $(BIN)/python -m pytest -ra --durations=25 -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not serial" $(TEST_ARGS) || status=$$?; \
	if [ -n "$$cluster" ]; then wait $$cluster || status=$$?; fi; \
	$(BIN)/python -m tests.ray_cluster stop || status=$$?; \
	$(BIN)/python -m pytest -ra -m serial || status=$$?; \
	exit $$status

# The edit-test loop's tier: no Docker, no Ray cluster, no image or venv build, no slow test (tests/conftest.py's
# FAST); a few minutes of the suite's hour of worker time. `make test` stays the whole suite, and CI runs that.
test-fast: setup
	unset PYTHONDONTWRITEBYTECODE; UNI_AGENT_GYM_TESTS=fast $(BIN)/python -m pytest -q -ra --durations=10 -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not serial"

# The documentation site (mkdocs.yml, docs/): served locally, or built strictly as .ci/run does (build/ is ignored).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve -a 127.0.0.1:8001

docs-check: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# Every bench runs: one that lacks what it needs (fixture images, ../shared's tokenizers, Chromium, an engine) prints
# "skipped: why" and exits 0; one that fails is named, the rest still run, and `make bench` fails at the end.
BENCHES ?= deployment_latency rollout_cache env_latency reward_overhead gateway_overhead viewer_render validate_fixtures
bench: setup docker-engine
	@status=0; for name in $(BENCHES); do echo "== bench/$$name.py"; \
	  $(BIN)/python bench/$$name.py || { echo "make bench: bench/$$name.py failed"; status=1; }; done; exit $$status
