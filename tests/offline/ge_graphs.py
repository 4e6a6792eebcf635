"""Build small GE graphs with TorchAir's own op builders and run them with the offline executor."""

import torch

import airfuse
from airfuse.offline.ge_executor import GeExecutor

torchair = airfuse.import_torchair()  # offline TorchAir must be importable before the imports below

from torchair._ge_concrete_graph import ge_apis as ge  # noqa: E402
from torchair._ge_concrete_graph import ge_ir_pb2  # noqa: E402,F401
from torchair.ge import DataType  # noqa: E402
from torchair.ge._ge_graph import GeGraph, torch_type_to_ge_type  # noqa: E402

def build_graph(build, *inputs):
    """A GraphDef: one Data per input (in order), ``build(*datas)``'s tensor(s), a NetOutput."""
    graph = GeGraph()
    with graph:
        datas = [
            ge.Data(index=i, dtype=torch_type_to_ge_type(t.dtype), shape=list(t.shape), placement="CPU")
            for i, t in enumerate(inputs)
        ]
        outputs = build(*datas)
        ge.NetOutput(list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])
    return graph._proto


def run_graph(graph, *inputs, **kwargs):
    return GeExecutor(graph).run(list(inputs), **kwargs)


def run_op(build, *inputs):
    """Run ``build`` on ``inputs``; the single output, or a list when there are several."""
    outputs = run_graph(build_graph(build, *inputs), *inputs)
    return outputs[0] if len(outputs) == 1 else outputs


def ints(values, dtype=DataType.DT_INT64):
    """An index/shape Const in a chosen integer dtype (TorchAir passes int32 or int64)."""
    return ge.Const(list(values), dtype=dtype)


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, dtype=dtype)
