"""airfuse's Python package.

The top-level folders ``meta/`` and ``converters/`` (fixed by the repository layout) are mapped
into the package as ``airfuse.meta`` and ``airfuse.converters``.
"""

from setuptools import setup

setup(
    name="airfuse",
    version="0.1.0",
    description="Fused LLM operators for Ascend NPUs: CANN custom ops, torch.library ops, TorchAir converters",
    python_requires=">=3.11",
    packages=["airfuse", "airfuse.ops", "airfuse.offline", "airfuse.onnx", "airfuse.meta", "airfuse.converters"],
    package_dir={"airfuse": "airfuse", "airfuse.meta": "meta", "airfuse.converters": "converters"},
    # torch is pinned to the release whose torch_npu wheel provides the pinned TorchAir.
    install_requires=["torch==2.13.0", "numpy", "protobuf>=3.13", "packaging"],
    # transformers: the real models of the tests and the demo; graphviz renders GE graphs (the
    # text form needs nothing, the pictures also need Graphviz's `dot` program).
    extras_require={
        "test": ["pytest", "hypothesis==6.170.15", "transformers==5.23.0", "graphviz==0.21"],
        "demo": ["transformers==5.23.0", "graphviz==0.21"],
        # airfuse.onnx: the exporter's ONNX Script translations, the checker, ONNX Runtime (and its
        # extensions' Python custom ops, which run the custom form on airfuse's CPU kernels).
        "onnx": ["onnx==1.23.2", "onnxscript==0.7.2", "onnxruntime==1.32.0", "onnxruntime-extensions==0.15.2"],
    },
)
