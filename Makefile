# Two commands do all the set-up on a fresh clone: `make test` and `make demo`.
# Each creates .venv if missing, installs airfuse editable with its test, demo and onnx extras (pinned),
# obtains offline TorchAir once (into $AIRFUSE_CACHE_DIR, default ~/.cache/airfuse) and runs.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.airfuse-installed

.PHONY: test demo fuzz hf-matrix dist-matrix onnx-matrix setup clean vendor-check vendor-build

test: setup twin vendor-build
	$(PY) -m pytest -q tests

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
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test,demo,onnx]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
