# Two commands do all the set-up on a fresh clone: `make test` and `make demo`.
# Each creates .venv if missing, installs airfuse editable with its test and demo extras (pinned),
# obtains offline TorchAir once (into $AIRFUSE_CACHE_DIR, default ~/.cache/airfuse) and runs.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.airfuse-installed

.PHONY: test demo fuzz hf-matrix setup clean

test: setup twin
	$(PY) -m pytest -q tests

demo: setup
	$(PY) examples/demo.py

# The cross-layer property harness (tests/property) with 1,000 examples per op; `make test` runs a few.
fuzz: setup twin
	AIRFUSE_PROPERTY_EXAMPLES=1000 $(PY) -m pytest -q tests/property

# Hugging Face models compiled vs eager over the whole cross product of family, attention, dtype,
# KV cache and static/dynamic (`make test` covers each axis per family); about 10x its time. With
# them, every family (and every op dynamic in both modes) in TorchAir's npugraph_ex mode.
hf-matrix: setup twin
	AIRFUSE_HF_MATRIX=full $(PY) -m pytest -q tests/graph/test_hf_models.py tests/graph/test_aclgraph_hf_models.py tests/graph/test_aclgraph_ops.py

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
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test,demo]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
