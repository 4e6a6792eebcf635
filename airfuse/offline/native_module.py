"""A Python stand-in for TorchAir's native module ``torchair.core._torchair``.

It is installed only where no NPU environment exists (see ``airfuse.torchair_env``). It answers
what TorchAir asks on the way from an FX graph to a GE graph: IR definitions come from airfuse's
op definitions, and unknown IR types fail as CANN would. Loaded GE graphs run on the CPU
(``airfuse.offline.ge_executor``), and what needs a real Ascend toolchain is refused with a
message saying so.
"""

import types

from airfuse.ops import OPS_BY_IR_TYPE

MODULE_NAME = "torchair.core._torchair"

_NO_NPU = "needs an Ascend NPU with CANN; airfuse is running TorchAir offline (no NPU, no CANN)"


def get_registered_ir_def(op_type: str):
    """(status, inputs, outputs, attrs) as GE's GetRegisteredIrDef reports them."""
    op = OPS_BY_IR_TYPE.get(op_type)
    if op is None:
        return "ERROR", [], [], []
    return op.ir_def()


def check_cann_compat(op_type, optional_inputs, optional_attrs) -> str:
    # Built-in GE IRs are those of the CANN that TorchAir 2.13 targets; whether the offline
    # executor implements one is decided when the graph runs, where it names the node.
    return ""


class _GraphEngine:
    """The GE session: initialize once per process with consistent options."""

    options = None

    @classmethod
    def initialize(cls, options):
        cls.options = dict(options)

    @classmethod
    def finalize(cls):
        cls.options = None


class TorchNpuGraphBase:
    """What TorchAir's ``TorchNpuGraph`` derives from: load, compile and run one GE graph."""

    def __init__(self, name: str = ""):
        self.name = name
        self.model = None
        self.options = None
        self.input_placements = None
        self.output_dtypes = None
        self.hint_shapes = None
        self.executor = None

    def load(self, serialized_model, options, input_placements, output_dtypes, executor_type):
        from torchair._ge_concrete_graph import ge_ir_pb2

        model = ge_ir_pb2.ModelDef()
        model.ParseFromString(serialized_model)
        self.model = model
        self.options = dict(options)
        self.input_placements = list(input_placements)
        self.output_dtypes = list(output_dtypes)
        self.executor = None

    @property
    def graph(self):
        if self.model is None:
            raise RuntimeError(f"GE graph {self.name!r}: used before load()")
        return self.model.graph[0]

    def set_hint_shape(self, inputs_shape, outputs_shape):
        self.graph  # noqa: B018 - raises, as the native module does, when called before load
        self.hint_shapes = ([list(s) for s in inputs_shape], [list(s) for s in outputs_shape])

    def compile(self):
        # Building the executor refuses, before anything runs, op types it cannot execute.
        from .ge_executor import GeExecutor

        self.executor = GeExecutor(self.graph)

    def auto_tune(self, args):
        raise RuntimeError(f"GE graph {self.name!r}: AOE auto-tuning {_NO_NPU}")

    def run(self, args):
        inputs, assigned_outputs, _stream = args  # the stream is an NPU notion; the CPU runs in order
        if self.executor is None:
            raise RuntimeError(f"GE graph {self.name!r}: run() before compile()")
        return self.executor.run(list(inputs), list(assigned_outputs or ()), self.output_dtypes)


def _refuse(what):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"torchair.core._torchair.{what} {_NO_NPU}")

    refuse.__name__ = what
    return refuse


def _torch_data_type():
    # TorchAir only uses these as opaque enum values (dtype tables built at import).
    names = (
        "BOOL UINT8 INT8 INT16 UINT16 INT32 UINT32 INT64 UINT64 BF16 FLOAT16 FLOAT32 FLOAT64 "
        "COMPLEX64 COMPLEX128"
    ).split()
    return types.SimpleNamespace(**{name: index for index, name in enumerate(names)})


def build() -> types.ModuleType:
    module = types.ModuleType(MODULE_NAME, __doc__)
    module.__airfuse_offline__ = True
    module.get_registered_ir_def = get_registered_ir_def
    module.check_cann_compat = check_cann_compat
    module.InitializeGraphEngine = _GraphEngine.initialize
    module.FinalizeGraphEngine = _GraphEngine.finalize
    module.TorchNpuGraphBase = TorchNpuGraphBase
    module.TorchDataType = _torch_data_type()
    module.SetDebugLogPath = lambda path: None  # TorchAir's own Python logging still applies
    for what in (
        "export", "GetSocName", "InitDeviceStdoutChannel", "AclopStartDumpArgs", "AclopStopDumpArgs",
        "AclmdlSetDump", "CheckAclnnAvaliable", "as_torch_tensors",
    ):
        setattr(module, what, _refuse(what))
    return module
