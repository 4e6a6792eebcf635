"""Inputs for every forward airfuse op, and the comparisons the aclgraph tests share."""

import torch

import airfuse
from airfuse.opdef import BACKWARD_SUFFIX
from airfuse.ops import ALL_OPS

FORWARD_OPS = [op for op in ALL_OPS.values() if not op.name.endswith(BACKWARD_SUFFIX)]
ACLGRAPH_MODES = airfuse.aclgraph.ACLGRAPH_MODES
REL_TOL = 1e-5  # float32: eager and the replayed kernels are the same CPU kernels; the backward graph may sum in another order


def _input_shape(name, batch, seq, hidden):
    # Per-column weights; rope's position tables broadcast over the batch; swiglu's x holds both halves.
    return {"gamma": (hidden,), "cos": (1, seq, hidden), "sin": (1, seq, hidden)}.get(name, (batch, seq, hidden))


# rope refuses cos/sin that require grad; every other tensor input is differentiated.
_NOT_DIFFERENTIATED = {"cos", "sin"}


def op_inputs(op, batch, seq, hidden, generator):
    """The op's tensor inputs in order, float32; swiglu's x twice as wide (it is split in two)."""
    tensors = []
    for param in op.inputs:
        shape = list(_input_shape(param.name, batch, seq, hidden))
        if op.name == "swiglu":
            shape[-1] *= 2
        tensor = torch.randn(shape, generator=generator)
        tensors.append(tensor.requires_grad_(param.name not in _NOT_DIFFERENTIATED))
    return tensors


def every_op_inputs(batch, seq, hidden=16, seed=0, static_hidden=True):
    """Each forward op's inputs. ``static_hidden`` marks the last dim static for Dynamo, as an LLM's
    hidden size is: only batch and sequence vary in a dynamic graph then."""
    generator = torch.Generator().manual_seed(seed)
    inputs = {op.name: op_inputs(op, batch, seq, hidden, generator) for op in FORWARD_OPS}
    if static_hidden:
        for tensor in leaves(inputs) + [t for tensors in inputs.values() for t in tensors if not t.requires_grad]:
            torch._dynamo.mark_static(tensor, tensor.dim() - 1)
    return inputs


def call_every_op(inputs):
    """Each forward op on its inputs (attrs at their defaults): {op name: outputs as a tuple}."""
    outputs = {}
    for name, tensors in inputs.items():
        result = getattr(torch.ops.airfuse, name)(*tensors)
        outputs[name] = result if isinstance(result, tuple) else (result,)
    return outputs


def differentiable(outputs):
    return [t for result in outputs.values() for t in result if t.requires_grad]


def leaves(inputs):
    return [t for tensors in inputs.values() for t in tensors if t.requires_grad]


def gradients(outputs, inputs):
    """Gradients of every input from a weighted sum of every differentiable output (fixed weights,
    so each output's gradient differs from the others')."""
    flat = differentiable(outputs)
    weights = [torch.linspace(-1.0, 1.0, t.numel()).reshape(t.shape) for t in flat]
    loss = sum((t * w).sum() for t, w in zip(flat, weights))
    return torch.autograd.grad(loss, leaves(inputs))


def relative_error(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, actual.shape, expected.shape)
    scale = expected.abs().max().clamp_min(1e-30)
    return ((actual - expected).abs().max() / scale).item()


def assert_all_close(actual, expected, what):
    assert len(actual) == len(expected), what
    for index, (a, e) in enumerate(zip(actual, expected)):
        error = relative_error(a.detach(), e.detach())
        assert error <= REL_TOL, f"{what} [{index}]: relative error {error:.3g}"


def aclgraph_backend(mode, fuse=False, **debug):
    """airfuse's backend in TorchAir's aclgraph ``mode``; ``debug`` sets ``config.debug.aclgraph`` options."""
    config = airfuse.import_torchair().CompilerConfig()
    config.mode = mode
    for name, value in debug.items():
        setattr(config.debug.aclgraph, name, value)
    return airfuse.get_npu_backend(config, fuse=fuse)
