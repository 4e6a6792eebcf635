# Two commands do all the set-up on a fresh clone: `make test` and `make demo`.
# Each creates .venv if missing, installs airfuse editable with its test, demo and onnx extras (pinned),
# obtains offline TorchAir once (into $AIRFUSE_CACHE_DIR, default ~/.cache/airfuse) and runs.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.airfuse-installed
# The torch `make test` runs on (its CPU wheel is on this machine's disk); setup.py admits 2.10-2.14.
TORCH_TESTED := 2.13.0

.PHONY: test demo fuzz hf-matrix dist-matrix onnx-matrix setup clean vendor-check vendor-build

# Two pytest workers, one per core, each taking whole files (module fixtures load once): the suite
# is mostly single-threaded Python (compiles, tracing), so it takes about half the time of one.
test: setup twin vendor-build wheel-smoke
	$(PY) -m pytest -q -n 2 --dist loadfile tests

# airfuse judged by the vendor's own code (vendor_check/README.md): kernels and op_host compiled
# against CANN's headers, CANN's opbuild run on op_host. Skipped, with one line saying why, where
# no vendor sources are found; AIRFUSE_REQUIRE_CANN_OPEN=1 makes that an error.
vendor-check: vendor-build
	$(PY) -m pytest -q tests/vendor

vendor-build: setup
	@$(PY) vendor_check/cann_open.py --build build/vendor_check

demo: setup
	$(PY) examples/demo.py

# The cross-layer property harness (tests/property) with 1,000 examples per op; `make test` runs a few.
fuzz: setup twin
	AIRFUSE_PROPERTY_EXAMPLES=1000 $(PY) -m pytest -q tests/property

# Hugging Face models compiled vs eager over the whole cross product of family, attention, dtype,
# KV cache and static/dynamic (`make test` covers each axis per family), every family airfuse.patch
# gained with issue 32 compiled fused (`make test`: those the issue names), and every family (and
# every op dynamic in both modes) in TorchAir's npugraph_ex mode; about 10x its time.
hf-matrix: setup twin
	AIRFUSE_HF_MATRIX=full $(PY) -m pytest -q tests/graph/test_hf_models.py tests/fusion/test_more_families.py tests/fusion/test_patch.py \
	  tests/graph/test_aclgraph_hf_models.py tests/graph/test_aclgraph_ops.py

# Hugging Face Llama and Qwen3 trained one step on 2 gloo ranks under DDP, FSDP2 and tensor parallel,
# eager and compiled, patched and fused (`make test` runs a few of these); prints the figures.
dist-matrix: setup twin
	AIRFUSE_DIST_MATRIX=full $(PY) -m pytest -q -s tests/distributed/test_hf_training.py -k two_ranks

# ONNX export of every Hugging Face family, patched and fused, in both forms (`make test` exports four).
onnx-matrix: setup twin
	AIRFUSE_ONNX_MATRIX=full $(PY) -m pytest -q tests/onnx/test_onnx_families.py

# The CPU twin of the Ascend C kernels (build/libairfuse_twin.so), airfuse's fused CPU kernels
# (build/libairfuse_cpu.so, csrc/cpu), the NPU eager binding and the emulated NPU that tests it
# (csrc/npu/binding.cmake); incremental after the first run.
.PHONY: twin
twin:
	@test -f build/CMakeCache.txt || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	@cmake --build build -j2

setup: $(INSTALLED)
	$(PY) -m airfuse.offline

# Reinstalled only when the package metadata changes; pip finds torch==2.13.0 offline here.
$(INSTALLED): setup.py pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test,demo,onnx]' torch==$(TORCH_TESTED)
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info

# A wheel of this tree (its CPU kernels taken from the warm build/ of `make twin`), installed into
# a venv of its own and used from outside the checkout by tests/package/smoke.py. The venv is made
# afresh, with the wheel's dependencies from its own metadata and the same torch, whenever the
# package metadata changes; otherwise it is kept and only airfuse is reinstalled, since a fresh
# torch install takes minutes, and `pip check` proves the declared dependencies are all there.
# Not --system-site-packages: the base interpreter's packages could hide an undeclared dependency.
WHEEL_DIR := build/wheel-smoke
WHEEL_VENV := $(WHEEL_DIR)/venv
.PHONY: wheel-smoke
wheel-smoke: setup twin
	rm -rf $(WHEEL_DIR)/dist $(WHEEL_DIR)/run && mkdir -p $(WHEEL_DIR)/dist $(WHEEL_DIR)/run
	$(PY) -m pip wheel -q --no-build-isolation --no-deps -w $(WHEEL_DIR)/dist .
	test $(WHEEL_VENV)/.created -nt setup.py -a $(WHEEL_VENV)/.created -nt pyproject.toml || { rm -rf $(WHEEL_VENV) && \
	  $(PYTHON) -m venv $(WHEEL_VENV) && $(WHEEL_VENV)/bin/pip install -q --no-compile $(WHEEL_DIR)/dist/airfuse-*.whl \
	    torch==$$($(PY) -c 'import torch; print(torch.__version__)') && touch $(WHEEL_VENV)/.created; }
	$(WHEEL_VENV)/bin/pip install -q --no-compile --force-reinstall --no-deps $(WHEEL_DIR)/dist/airfuse-*.whl
	$(WHEEL_VENV)/bin/pip check
	cd $(WHEEL_DIR)/run && ../venv/bin/python -I $(CURDIR)/tests/package/smoke.py

# The whole suite on another torch: `make compat TORCH=2.12.0` (2.10-2.14; KEEP=1 keeps the venv).
# torch from the registry into .venv-torch<version> beside .venv, CMake's build in
# build/torch<version> (every step loads airfuse's libraries from there: build/ is .venv's torch),
# offline TorchAir of the matching torch_npu; the venv is removed afterwards.
COMPAT_VENV = .venv-torch$(TORCH)
COMPAT_BUILD = build/torch$(TORCH)
# Compile jobs of its build and pytest workers (1 each leaves a core to others).
JOBS ?= 2
WORKERS ?= 2
.PHONY: compat
compat:
	@test -n "$(TORCH)" || { echo "usage: make compat TORCH=2.12.0 [KEEP=1]" >&2; exit 2; }
	@set -e; test -n "$(KEEP)" || trap 'rm -rf $(COMPAT_VENV)' EXIT; \
	export AIRFUSE_BUILD_DIR=$(COMPAT_BUILD); \
	test -x $(COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(COMPAT_VENV); \
	$(COMPAT_VENV)/bin/pip install -q -e '.[test,onnx]' torch==$(TORCH); \
	$(COMPAT_VENV)/bin/python -m airfuse.offline; \
	cmake -S . -B $(COMPAT_BUILD) -DAIRFUSE_PYTHON=$(CURDIR)/$(COMPAT_VENV)/bin/python >/dev/null; \
	cmake --build $(COMPAT_BUILD) -j$(JOBS); \
	$(COMPAT_VENV)/bin/python -m pytest -q -n $(WORKERS) --dist loadfile tests
