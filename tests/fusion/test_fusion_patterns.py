"""Each composite fuse=True replaces, and the near misses it must leave alone, on small functions.

The backend here is ``airfuse.fusion.fusing`` around a backend that runs the fused aten graph as
it is (airfuse's CPU kernels), so each case shows which airfuse ops the graph got and that it
computes what the eager function does; TorchAir is exercised by test_fused_families.py."""

import collections
import math

import pytest
import torch
import torch.nn.functional as F

from airfuse.fusion import fusing

DTYPES = (torch.float32, torch.bfloat16)
TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


class FusedGraphs:
    """A Dynamo backend recording each fused graph's airfuse ops and running the fused graph."""

    def __init__(self):
        self.ops = collections.Counter()
        self.graphs = []

    def __call__(self, gm, example_inputs):
        def run_fused(fused_gm, _):
            self.graphs.append(fused_gm)
            self.ops.update(n.target._opname for n in fused_gm.graph.nodes if _is_airfuse(n))
            return fused_gm

        return fusing(run_fused)(gm, example_inputs)

    def aten_ops(self) -> set:
        return {str(n.target) for gm in self.graphs for n in gm.graph.nodes if n.op == "call_function"}


def _is_airfuse(node):
    return node.op == "call_function" and getattr(node.target, "namespace", None) == "airfuse"


def epsilons(backend) -> list:
    return [
        n.normalized_arguments(gm, normalize_to_only_use_kwargs=True).kwargs["epsilon"]
        for gm in backend.graphs
        for n in gm.graph.nodes
        if _is_airfuse(n)
    ]


def fused_ops(fn, *args, dtype=torch.float32, dynamic=False):
    """The airfuse ops fuse=True puts in ``fn``'s graph; also checks the fused graph equals eager."""
    backend = FusedGraphs()
    actual = torch.compile(fn, backend=backend, dynamic=dynamic, fullgraph=True)(*args)
    torch.testing.assert_close(actual, fn(*args), **TOLERANCE[dtype])
    return dict(backend.ops), backend


# -- RMSNorm forms --------------------------------------------------------------------------------

EPS = 1e-5


def hf_rms_norm(x, weight):
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)
    return weight * h.to(x.dtype)


def gemma_rms_norm(x, weight):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)
    return (h * (1.0 + weight.float())).type_as(x)


def functional_rms_norm(x, weight):
    return F.rms_norm(x, [x.shape[-1]], weight, EPS)


def _norm_inputs(dtype):
    return torch.randn(2, 5, 16, dtype=dtype), (torch.rand(16) + 0.5).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("norm", [hf_rms_norm, gemma_rms_norm, functional_rms_norm], ids=lambda f: f.__name__)
def test_rms_norm_forms_become_rms_norm(norm, dtype):
    ops, backend = fused_ops(norm, *_norm_inputs(dtype), dtype=dtype)
    assert ops == {"rms_norm": 1}
    assert "aten.rsqrt.default" not in backend.aten_ops()


def test_epsilon_is_the_graphs_own():
    ops, backend = fused_ops(hf_rms_norm, *_norm_inputs(torch.float32))
    assert epsilons(backend) == [EPS]


def eps_outside_rsqrt(x, weight):
    h = x.to(torch.float32)
    h = h * (torch.rsqrt(h.pow(2).mean(-1, keepdim=True)) + EPS)
    return weight * h.to(x.dtype)


def eps_added_to_root(x, weight):
    h = x.to(torch.float32)
    h = h / (torch.sqrt(h.pow(2).mean(-1, keepdim=True)) + EPS)
    return weight * h.to(x.dtype)


def missing_cast_back(x, weight):
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)
    return weight * h  # float32 out of a bfloat16 input: not rms_norm's dtype contract


def missing_cast_up(x, weight):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)  # statistics in bfloat16
    return weight * h.to(x.dtype)


def norm_over_another_dim(x, weight):
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(1, keepdim=True) + EPS)
    return weight * h.to(x.dtype)


def mean_of_abs(x, weight):
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.abs().mean(-1, keepdim=True) + EPS)
    return weight * h.to(x.dtype)


@pytest.mark.parametrize(
    "near_miss",
    [eps_outside_rsqrt, eps_added_to_root, missing_cast_back, missing_cast_up, norm_over_another_dim, mean_of_abs],
    ids=lambda f: f.__name__,
)
def test_rms_norm_near_misses_are_left_alone(near_miss):
    ops, backend = fused_ops(near_miss, *_norm_inputs(torch.bfloat16), dtype=torch.bfloat16)
    assert ops == {}
    assert "aten.mean.dim" in backend.aten_ops()


def test_weight_of_another_shape_is_left_alone():
    x, _ = _norm_inputs(torch.float32)
    ops, _ = fused_ops(hf_rms_norm, x, torch.rand(5, 16))
    assert ops == {}


class EpsilonModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(16) + 0.5)
        self.variance_epsilon = 1e-6

    def forward(self, x):
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * h.to(x.dtype)


def test_dynamic_epsilon_is_specialized_with_a_guard():
    """With dynamic=True the module's epsilon reaches the graph as an input; the fused graph
    takes it as a constant, so a new value must recompile rather than reuse the old one."""
    model = EpsilonModule().requires_grad_(False)
    backend = FusedGraphs()
    compiled = torch.compile(model, backend=backend, dynamic=True, fullgraph=True)
    x = torch.randn(2, 5, 16) * 1e-3  # small enough that epsilon matters
    compiled(x)
    model.variance_epsilon = 1e-2
    torch.testing.assert_close(compiled(x), model(x))
    assert epsilons(backend) == [1e-6, 1e-2]


# -- residual add + RMSNorm -----------------------------------------------------------------------

def residual_block(x, y, weight):
    total = x + y
    return hf_rms_norm(total, weight) * 2.0, total + 1.0


def test_residual_add_into_rms_norm_becomes_add_rms_norm():
    x, weight = _norm_inputs(torch.bfloat16)
    ops, _ = fused_ops(residual_block, x, torch.randn_like(x), weight, dtype=torch.bfloat16)
    assert ops == {"add_rms_norm": 1}


def test_broadcasting_add_is_left_alone():
    x, weight = _norm_inputs(torch.float32)
    ops, _ = fused_ops(residual_block, x, torch.randn(16), weight)
    assert ops == {"rms_norm": 1}


def test_training_graph_gets_the_backward_of_the_fused_op():
    x, weight = _norm_inputs(torch.float32)
    weight.requires_grad_()
    backend = FusedGraphs()
    torch.compile(hf_rms_norm, backend=backend, fullgraph=True)(x, weight).sum().backward()
    expected = weight.grad.clone()
    weight.grad = None
    hf_rms_norm(x, weight).sum().backward()
    torch.testing.assert_close(expected, weight.grad)
    assert dict(backend.ops) == {"rms_norm": 1}


# -- RoPE -----------------------------------------------------------------------------------------

def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def hf_rope(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def rotate_half_wrong_sign(q, k, cos, sin):
    x1, x2 = q[..., :4], q[..., 4:]
    return q * cos.unsqueeze(1) + torch.cat((x2, -x1), dim=-1) * sin.unsqueeze(1), k


def _rope_inputs(dtype):
    angles = torch.randn(2, 5, 8)
    return torch.randn(2, 4, 5, 8, dtype=dtype), torch.randn(2, 2, 5, 8, dtype=dtype), angles.cos().to(dtype), angles.sin().to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rotate_half_rope_becomes_rope(dtype):
    ops, backend = fused_ops(hf_rope, *_rope_inputs(dtype), dtype=dtype)
    assert ops == {"rope": 2}
    assert "aten.cat.default" not in backend.aten_ops()


def test_rope_with_another_rotation_is_left_alone():
    ops, _ = fused_ops(rotate_half_wrong_sign, *_rope_inputs(torch.float32))
    assert ops == {}


def partial_rope(q, cos, sin):
    """Phi-3's form: rotate the first ``cos.shape[-1]`` dims, append the rest (empty at full width)."""
    d = cos.shape[-1]
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    q_rot, q_pass = q[..., :d], q[..., d:]
    return torch.cat([(q_rot * cos) + (rotate_half(q_rot) * sin), q_pass], dim=-1) * 2


def test_full_width_partial_rope_drops_the_empty_concat():
    q, _, cos, sin = _rope_inputs(torch.float32)
    ops, backend = fused_ops(partial_rope, q, cos, sin)
    assert ops == {"rope": 1} and "aten.cat.default" not in backend.aten_ops()


def test_partial_rope_keeps_its_concat():
    q, _, cos, sin = _rope_inputs(torch.float32)
    ops, backend = fused_ops(partial_rope, torch.cat([q, q[..., :4]], -1), cos, sin)
    assert ops == {"rope": 1} and "aten.cat.default" in backend.aten_ops()


def kv_cache_update(cache, k):
    keys = torch.cat([cache, k * 2], dim=-2)
    return keys, keys.sum()


def test_concat_the_graph_returns_is_kept():
    """Hugging Face's KV cache starts as an empty tensor; its update, returned by the graph, stays a
    concatenation rather than become the tensor the graph also computes with."""
    ops, backend = fused_ops(kv_cache_update, torch.empty(0), torch.randn(2, 3, 4))
    assert ops == {} and "aten.cat.default" in backend.aten_ops()


def test_concat_whose_dtype_comes_from_an_empty_operand_is_kept():
    fn = lambda x, empty: torch.cat([x * 2, empty], 0).sum(0)  # noqa: E731
    _, backend = fused_ops(fn, torch.randn(3, 4, dtype=torch.bfloat16), torch.empty(0, 4))
    assert "aten.cat.default" in backend.aten_ops()


# -- gated activations ----------------------------------------------------------------------------

def separate_gate_up(a, b):
    return F.silu(a) * b, b * F.silu(a + 1.0)


def merged_gate_up(x):
    gate, up = x.chunk(2, dim=-1)
    return up * F.silu(gate)


def silu_of_the_second_half(x):
    up, gate = x.chunk(2, dim=-1)
    return up * F.silu(gate)


def silu_times_broadcast(a, b):
    return F.silu(a) * b


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_silu_products_become_silu_mul(dtype):
    a = torch.randn(2, 5, 16, dtype=dtype)
    ops, _ = fused_ops(separate_gate_up, a, torch.randn_like(a), dtype=dtype)
    assert ops == {"silu_mul": 2}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_silu_product_of_two_halves_becomes_swiglu(dtype):
    ops, _ = fused_ops(merged_gate_up, torch.randn(2, 5, 32, dtype=dtype), dtype=dtype)
    assert ops == {"swiglu": 1}


def test_halves_in_the_other_order_are_silu_mul_not_swiglu():
    """swiglu gates with the first half; SiLU of the second half is a silu_mul of the chunks."""
    ops, _ = fused_ops(silu_of_the_second_half, torch.randn(2, 5, 32))
    assert ops == {"silu_mul": 1}


def test_broadcasting_silu_product_is_left_alone():
    ops, _ = fused_ops(silu_times_broadcast, torch.randn(2, 5, 16), torch.randn(16))
    assert ops == {}


# -- GELU -----------------------------------------------------------------------------------------

def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_other_constant(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.04 * torch.pow(x, 3.0))))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "gelu", [gelu_new, lambda x: F.gelu(x, approximate="tanh")], ids=["formula", "functional"]
)
def test_tanh_gelu_becomes_gelu(gelu, dtype):
    ops, _ = fused_ops(gelu, torch.randn(2, 5, 16, dtype=dtype), dtype=dtype)
    assert ops == {"gelu": 1}


@pytest.mark.parametrize("near_miss", [gelu_other_constant, F.gelu], ids=["other_constant", "exact_erf_gelu"])
def test_other_gelus_are_left_alone(near_miss):
    ops, _ = fused_ops(near_miss, torch.randn(2, 5, 16))
    assert ops == {}


def test_graph_without_tensor_inputs_is_retraced():
    backend = FusedGraphs()
    compiled = torch.compile(lambda n: torch.ones(n) * 2, backend=backend, dynamic=True, fullgraph=True)
    torch.testing.assert_close(compiled(5), torch.full((5,), 2.0))
    assert len(backend.graphs) == 1 and dict(backend.ops) == {}


def transposed_copy(x):
    return x.transpose(1, 2).contiguous().view(x.shape[0], -1) * 2


def test_contiguous_is_kept_for_aot_autograd_to_decide():
    """``.contiguous()`` of a tensor that is contiguous when Dynamo traces it is still in the fused
    graph: AOTAutograd decides the copy again with its own strides (which a fused op or a
    decomposition can change: offline SDPA's made o_proj a batched matmul when it was dropped)."""
    x = torch.randn(2, 4, 3).transpose(1, 2)  # its transpose is contiguous
    _, backend = fused_ops(transposed_copy, x)
    assert "aten.contiguous.default" in backend.aten_ops()


def concat_of_a_view(x, empty):
    y = torch.cat([x.t(), empty], 0)
    return y.add_(1), x


def test_concat_of_a_view_stays_a_copy():
    """The concatenation copies: an in-place op on it must not reach the tensor it was a view of."""
    _, backend = fused_ops(concat_of_a_view, torch.randn(3, 4), torch.empty(0, 3))
    assert "aten.cat.default" in backend.aten_ops()
