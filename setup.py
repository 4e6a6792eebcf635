"""airfuse's Python package.

The top-level folders ``meta/`` and ``converters/`` (fixed by the repository layout) are mapped
into the package as ``airfuse.meta`` and ``airfuse.converters``.

A wheel (``pip install --no-build-isolation .``, ``pip wheel``) carries airfuse's fused CPU kernels,
compiled by CMake (``csrc/cpu/kernels.cmake``) against the torch this build imports, so torch must be
installed first (``build_support.py``). The editable install of ``make setup`` compiles nothing: a
checkout loads its libraries from ``build/`` (``make twin``).
"""

import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_support  # noqa: E402  (beside this file; not part of the package)


class BuildWithCpuKernels(build_py):
    """build_py, then the CPU kernels and the sources ``python -m airfuse.build_npu`` compiles."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        package = Path(self.build_lib) / "airfuse"
        build_support.build_cpu_kernels(package / "lib")
        build_support.copy_native_sources(package / "native")


class PlatformDistribution(Distribution):
    """The wheel holds a compiled library, so it is tagged for this platform and Python."""

    def has_ext_modules(self):
        return True


setup(
    name="airfuse",
    version="0.1.0",
    description="Fused LLM operators for Ascend NPUs: CANN custom ops, torch.library ops, TorchAir converters",
    python_requires=">=3.11",
    packages=build_support.packages(),
    package_dir={"airfuse": "airfuse", **build_support.FOLDERS_MAPPED},
    # Each torch minor has its torch_npu release (airfuse/offline/fetch.py); differences between
    # them are handled in airfuse/compat.py.
    install_requires=["torch>=2.10,<2.15", "numpy", "protobuf>=3.13", "packaging"],
    # transformers: the real models of the tests and the demo; graphviz renders GE graphs (the
    # text form needs nothing, the pictures also need Graphviz's `dot` program).
    extras_require={
        "test": ["pytest", "pytest-xdist==3.8.0", "hypothesis==6.170.15", "transformers==5.23.0", "graphviz==0.21"],
        "demo": ["transformers==5.23.0", "graphviz==0.21"],
        # airfuse.onnx: the exporter's ONNX Script translations, the checker, ONNX Runtime (and its
        # extensions' Python custom ops, which run the custom form on airfuse's CPU kernels).
        "onnx": ["onnx==1.23.2", "onnxscript==0.7.2", "onnxruntime==1.32.0", "onnxruntime-extensions==0.15.2"],
    },
    cmdclass={"build_py": BuildWithCpuKernels},
    distclass=PlatformDistribution,
)
