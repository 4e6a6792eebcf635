"""``capture_aclgraph`` on a Llama decoder layer: what TorchAir's npugraph_ex mode captures,
forward and backward, after its passes (offline: TorchAir's own passes, the kernels recorded by
the stand-in NPUGraph)."""

import collections

import torch

import airfuse
from aclgraph_cases import assert_all_close
from models import LlamaBlock, rope_cos_sin

# TorchAir 2.13's aclgraph passes, in the order they ran on each graph (its pattern fusion pass is
# off offline: its replacements are torch_npu's own ops).
PASSES = (
    "optimize_noop_ops", "recover_view_inplace_pattern", "view_to_reshape", "remove_cat_ops",
    "apply_event_closure_with_multi_stream", "apply_event_record", "eliminate_dead_code",
    "reinplace_inplaceable_ops_pass", "reinplace_input_mutated_ops", "decompose_auto_functionalized",
    "replace_dynamic_workspace_ops", "replace_core_limit_nodes", "resolve_default_stream_markers",
)

# The attention's scaling, causal mask and masked fill, and the backward's gradient sums.
FORWARD_REINPLACED = {"aten.div_.Tensor": 1, "aten.tril_.default": 1, "aten.bitwise_not_.default": 1, "aten.masked_fill_.Scalar": 1}
BACKWARD_REINPLACED = {"aten.add_.Tensor": 5, "aten.masked_fill_.Scalar": 1, "aten.div_.Tensor": 1}


def _inputs(seq, seed):
    torch.manual_seed(seed)
    x = torch.randn(2, seq, 64, requires_grad=True)
    return (x, *rope_cos_sin(seq, 16, torch.float32))


def test_llama_layer_fused_forward_and_backward():
    model = LlamaBlock(rope="airfuse")  # RoPE tables of q's rank (fusion leaves [S, D] tables as they are)
    inputs = _inputs(8, seed=1)
    capture = airfuse.capture_aclgraph(model, *inputs)
    [forward], [backward] = capture.forward, capture.backward
    assert capture.graph_breaks == 0
    assert forward.passes == PASSES and backward.passes == PASSES

    # Fusion put the airfuse ops in before AOTAutograd, so the backward graph has their backward ops;
    # each stays one node through TorchAir's passes.
    assert collections.Counter(forward.airfuse_ops()) == {
        "airfuse.rms_norm.default": 1, "airfuse.add_rms_norm.default": 1, "airfuse.rope.default": 2,
        "airfuse.silu_mul.default": 1,
    }
    assert collections.Counter(backward.airfuse_ops()) == {
        "airfuse.rms_norm_backward.default": 2, "airfuse.rope_backward.default": 2,
        "airfuse.silu_mul_backward.default": 1,
    }
    # Captured (a static graph: one capture each): each airfuse node is one kernel, and nothing read
    # device data on the host (the capture would have refused it).
    for graph in (forward, backward):
        [kernels] = graph.captured_kernels
        assert collections.Counter(k for k in kernels if k.startswith("airfuse.")) == collections.Counter(
            graph.airfuse_ops()
        )
    # TorchAir's re-inplacing: aten ops whose output may overwrite an input; airfuse's ops keep their outputs.
    assert forward.mutating_ops() == FORWARD_REINPLACED
    assert backward.mutating_ops() == BACKWARD_REINPLACED

    want = model(*inputs)
    assert_all_close([capture.outputs], [want], "Llama layer output (captured and replayed)")
