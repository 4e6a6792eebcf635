"""TorchAir's npugraph_ex (aclgraph) mode, offline: TorchAir's own pipeline with a stand-in for
torch_npu (``capture_aclgraph``, in aclgraph_capture.py, shows what that mode captures).

In ``mode="npugraph_ex"`` (or ``"reduce-overhead"``, the older name of the same pipeline)
TorchAir keeps the FX graph AOTAutograd gives it, runs its aclgraph passes on it (stream and event
passes, view and no-op clean-ups, re-inplacing, ``decompose_auto_functionalized``, workspace and
core-limit passes), generates Python that captures the graph's eager kernels into an
``NPUGraph`` on the first call and replays it afterwards. Offline all of that runs unchanged;
``airfuse.offline.torch_npu_standin`` stands in for torch_npu while a graph compiles or runs, and
its ``NPUGraph`` records the kernels (airfuse's CPU kernels for airfuse ops) and replays them.
"""

import contextlib
import copy
import importlib
import warnings

from .offline import torch_npu_standin

ACLGRAPH_MODES = ("npugraph_ex", "reduce-overhead")


def is_aclgraph_mode(compiler_config) -> bool:
    return compiler_config is not None and compiler_config.mode.value in ACLGRAPH_MODES


def offline_config(compiler_config):
    """A copy of ``compiler_config`` without what needs CANN or torch_npu: the static-kernel path
    is refused, TorchAir's pattern fusion pass (its replacements call ``torch.ops.npu.*``, which
    only torch_npu registers) is turned off with a warning saying so."""
    config = copy.deepcopy(compiler_config)
    if config.experimental_config.aclgraph._aclnn_static_shape_kernel:
        raise RuntimeError(
            "airfuse: experimental_config.aclgraph._aclnn_static_shape_kernel compiles static-shape kernels with "
            "CANN's op compiler; it needs an Ascend NPU with CANN, and airfuse is running TorchAir offline"
        )
    if config.experimental_config.pattern_fusion_pass:
        warnings.warn(
            "airfuse: TorchAir's experimental_config.pattern_fusion_pass is turned off offline: its patterns are "
            "replaced by torch_npu's own ops (torch.ops.npu.*), which exist only where torch_npu is installed",
            UserWarning,
            stacklevel=4,
        )
        config.experimental_config.pattern_fusion_pass = False
    return config


def offline_backend(torchair, compiler_config, decompositions):
    """TorchAir's backend for an aclgraph-mode ``compiler_config``, compiling and running its graphs
    (forward and backward, whenever AOTAutograd compiles them) with the torch_npu stand-in installed."""
    backend = torchair.get_npu_backend(compiler_config=offline_config(compiler_config), custom_decompositions=decompositions)

    def aclgraph_backend(gm, example_inputs):
        with torch_npu_standin.installed(), _compilers_install_standin():
            return _runs_with_standin(backend(gm, example_inputs))

    return aclgraph_backend


@contextlib.contextmanager
def _compilers_wrapped(wrap):
    """TorchAir's backend asks ``get_compiler`` for the compiler AOTAutograd calls for the forward
    graph now and for the backward graph when autograd first needs it; for the block, the compilers
    handed out are ``wrap(compiler)``."""
    compiler_module = importlib.import_module("torchair.npu_fx_compiler")
    get_compiler = compiler_module.get_compiler
    compiler_module.get_compiler = lambda config=None: wrap(get_compiler(config))
    try:
        yield
    finally:
        compiler_module.get_compiler = get_compiler


def _compilers_install_standin():
    """The compilers install the stand-in themselves, for their compile and every run of its result."""
    return _compilers_wrapped(lambda compiler: _WrappedCompiler(compiler, _compile_with_standin))


def _compile_with_standin(compiler, gm, example_inputs):
    with torch_npu_standin.installed():
        return _runs_with_standin(compiler(gm, example_inputs))


class _WrappedCompiler:
    """A TorchAir compiler whose calls go through ``compile(compiler, gm, example_inputs)``."""

    def __init__(self, compiler, compile):
        self._compiler = compiler
        self._compile = compile

    def __getattr__(self, name):
        return getattr(self._compiler, name)

    def __call__(self, gm, example_inputs):
        return self._compile(self._compiler, gm, example_inputs)


def _runs_with_standin(compiled):
    def run(*args, **kwargs):
        with torch_npu_standin.installed():
            return compiled(*args, **kwargs)

    run._boxed_call = getattr(compiled, "_boxed_call", False)
    return run
