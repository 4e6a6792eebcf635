"""GE-level accounting of captured graphs: node counts by kind and modeled HBM traffic.

The model is deliberately simple, so graphs compare side by side: every GE op node reads each of
its inputs from HBM and writes each of its outputs to HBM (no fusion, no caching, views copy).
Matmul and attention nodes are counted apart, since their traffic is the weights and activations
any implementation moves; the rest is what fusing elementwise/normalization chains can save.

Tensor sizes come from running the graph in airfuse's offline GE executor on zero-filled inputs
shaped as its ``Data`` nodes declare (sizes in these graphs do not depend on values), so shapes are
exact for every node, including those TorchAir emits without shape metadata. That needs static
shapes: capture with ``dynamic=False``.
"""

import collections
from dataclasses import dataclass

import torch

STRUCTURAL = {"Data": "data", "Const": "const", "NetOutput": "output"}
# GE's matrix-product and fused-attention op types (those TorchAir's aten and npu converters emit).
MATMUL_TYPES = frozenset(
    "MatMul MatMulV2 MatMulV3 BatchMatMul BatchMatMulV2 BatchMatMulV3 GroupedMatmul FlashAttentionScore "
    "FlashAttentionScoreGrad PromptFlashAttention IncreFlashAttention FusedInferAttentionScore".split()
)


def node_kind(op_type: str) -> str:
    """data / const / output (graph structure), matmul (matmul and attention), airfuse, or other."""
    if op_type in STRUCTURAL:
        return STRUCTURAL[op_type]
    if op_type in MATMUL_TYPES:
        return "matmul"
    return "airfuse" if op_type.startswith("Airfuse") else "other"


@dataclass(frozen=True)
class HbmTraffic:
    """Bytes read plus written per op type, if every GE op node went through HBM."""

    by_type: dict

    @property
    def matmul_bytes(self) -> int:
        return sum(b for t, b in self.by_type.items() if t in MATMUL_TYPES)

    @property
    def non_matmul_bytes(self) -> int:
        return sum(b for t, b in self.by_type.items() if t not in MATMUL_TYPES)

    @property
    def total_bytes(self) -> int:
        return sum(self.by_type.values())


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def _zero_inputs(graph, what):
    from airfuse.offline.ge_executor import proto_dtype_to_torch

    inputs = {}
    for op in graph.op:
        if op.type != "Data":
            continue
        desc = op.output_desc[0]
        dims = list(desc.shape.dim)
        if any(d < 0 for d in dims):
            raise ValueError(
                f"{what}: GE graph {graph.name!r} has symbolic input shapes (Data {op.name!r}: {dims}); "
                "HBM accounting needs a static capture (capture_ge_graph(..., dynamic=False))"
            )
        inputs[op.attr["index"].i] = torch.zeros(dims, dtype=proto_dtype_to_torch(desc.dtype, f"Data {op.name!r}"))
    return [inputs[i] for i in range(len(inputs))]


def hbm_traffic(graphs, what="HBM accounting") -> HbmTraffic:
    from airfuse.offline.ge_executor import GeExecutor

    by_type = collections.Counter()

    def observe(node, inputs, outputs):
        by_type[node.type] += _nbytes(inputs) + _nbytes(outputs)

    for graph in graphs:
        GeExecutor(graph).run(_zero_inputs(graph, what), observe=observe)
    return HbmTraffic(dict(sorted(by_type.items())))


def node_counts(graphs) -> collections.Counter:
    return collections.Counter(node_kind(op.type) for graph in graphs for op in graph.op)
