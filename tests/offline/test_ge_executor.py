"""The offline GE executor's graph handling: Data/Const/NetOutput, ordering, host inputs, assigned
outputs, Airfuse nodes, the stand-in native module, and every refusal naming node and op."""

import random

import pytest
import torch

from airfuse.offline import native_module
from airfuse.offline.ge_executor import GeExecutionError, GeExecutor, UnsupportedGeOpsError
from ge_graphs import DataType, GeGraph, build_graph, ge, ge_ir_pb2, rand, run_graph, run_op, torchair


def test_data_nodes_take_inputs_by_index_not_by_position():
    graph = GeGraph()
    with graph:
        second = ge.Data(index=1, dtype=DataType.DT_FLOAT, shape=[2], placement="CPU")
        first = ge.Data(index=0, dtype=DataType.DT_FLOAT, shape=[2], placement="CPU")
        ge.NetOutput([ge.Sub(first, second)])
    a, b = rand(2), rand(2)
    torch.testing.assert_close(run_graph(graph._proto, a, b)[0], a - b)


@pytest.mark.parametrize(
    "value", [torch.tensor([[1.5, -2.0]]), torch.tensor(3, dtype=torch.int32), torch.tensor([True, False]),
              torch.tensor([0.1, 7.0], dtype=torch.bfloat16), torch.empty(0, 3, dtype=torch.float16)], ids=str
)
def test_const_decodes_its_tensor(value):
    out = run_op(lambda: ge.Const(value))
    assert out.dtype == value.dtype and torch.equal(out, value)


def test_net_output_order_and_outputs_that_own_their_memory():
    x = rand(3)
    outs = run_graph(build_graph(lambda t: [ge.Neg(t), t, ge.Abs(t), t], x), x)
    assert [o.shape for o in outs] == [(3,)] * 4
    torch.testing.assert_close(outs[0], -x)
    torch.testing.assert_close(outs[2], x.abs())
    # An output that is an input, or the same tensor twice, is copied, as GE writes fresh outputs.
    assert torch.equal(outs[1], x) and torch.equal(outs[3], x)
    pointers = {o.untyped_storage().data_ptr() for o in outs} | {x.untyped_storage().data_ptr()}
    assert len(pointers) == 5


def test_topological_order_does_not_depend_on_the_op_list_order():
    x = rand(4)
    graph = build_graph(lambda t: ge.Mul(ge.Exp(ge.Neg(t)), ge.Add(t, t)), x)
    ops = list(graph.op)
    random.Random(0).shuffle(ops)
    del graph.op[:]
    graph.op.extend(ops)
    torch.testing.assert_close(run_graph(graph, x)[0], torch.exp(-x) * (x + x))


def test_control_edges_only_order():
    x = rand(4)

    def build(t):
        first = ge.Abs(t)
        return ge.Neg(t, dependencies=[first])

    graph = build_graph(build, x)
    assert any(edge.endswith(":-1") for op in graph.op for edge in op.input)
    torch.testing.assert_close(run_graph(graph, x)[0], -x)


def test_cycles_and_dangling_inputs_are_refused():
    graph = build_graph(lambda t: ge.Neg(ge.Abs(t)), rand(2))
    neg, abs_ = [op for op in graph.op if op.type == "Neg"][0], [op for op in graph.op if op.type == "Abs"][0]
    abs_.input[0] = f"{neg.name}:0"
    with pytest.raises(GeExecutionError, match="cycle"):
        GeExecutor(graph)
    abs_.input[0] = "nowhere:0"
    with pytest.raises(GeExecutionError, match="unknown node 'nowhere'"):
        GeExecutor(graph)


def test_symbolic_sizes_arrive_as_one_element_host_tensors():
    graph = GeGraph()
    with graph:
        size = ge.Data(index=0, dtype=DataType.DT_INT64, shape=[], placement="CPU")
        value = ge.Data(index=1, dtype=DataType.DT_FLOAT, shape=[], placement="CPU")
        ge.NetOutput([ge.Fill(ge.Pack([size, ge.Const(3, dtype=DataType.DT_INT64)], N=2), value)])
    [out] = run_graph(graph._proto, torch.tensor([5]), torch.tensor(2.0))
    assert torch.equal(out, torch.full((5, 3), 2.0))


def test_assigned_outputs_receive_the_results():
    x = rand(2, 3)
    target = torch.zeros(2, 3)
    graph = build_graph(lambda t: [ge.Neg(t), ge.Abs(t)], x)
    outs = run_graph(graph, x, assigned_outputs=[None, target])
    assert outs[1] is target and torch.equal(target, x.abs())
    torch.testing.assert_close(outs[0], -x)
    with pytest.raises(GeExecutionError, match="assigned tensor"):
        run_graph(graph, x, assigned_outputs=[torch.zeros(3)])


def test_output_dtypes_are_checked_in_ge_numbering():
    x = rand(2)
    graph = build_graph(lambda t: ge.Cast(t, dst_type=DataType.DT_FLOAT16), x)
    assert run_graph(graph, x, output_dtypes=[DataType.DT_FLOAT16])[0].dtype == torch.float16
    with pytest.raises(GeExecutionError, match="output 0 is torch.float16, GE declares torch.float32"):
        run_graph(graph, x, output_dtypes=[DataType.DT_FLOAT])
    with pytest.raises(GeExecutionError, match="output dtypes"):
        run_graph(graph, x, output_dtypes=[])


def test_declared_dtype_and_shape_of_a_traced_node_are_checked():
    """TorchAir records the FX node's fake tensor in ``_meta``; a node computing something else is a bug."""
    x = rand(2, 3)
    graph = build_graph(lambda t: ge.Cast(t, dst_type=DataType.DT_FLOAT16), x)
    [cast] = [op for op in graph.op if op.type == "Cast"]
    desc = cast.output_desc[0]
    desc.attr["_meta"].s = b"Tensor(...)"
    desc.dtype = ge_ir_pb2.DataType.Value("DT_FLOAT16")
    desc.shape.dim.extend([-1, 3])
    run_graph(graph, x)
    desc.dtype = ge_ir_pb2.DataType.Value("DT_BF16")
    with pytest.raises(GeExecutionError, match=r"node 'Cast'.*torch.float16, the graph declares torch.bfloat16"):
        run_graph(graph, x)
    desc.dtype = ge_ir_pb2.DataType.Value("DT_FLOAT16")
    desc.shape.dim[:] = [2, 4]
    with pytest.raises(GeExecutionError, match=r"shape \[2, 3\], the graph declares \[2, 4\]"):
        run_graph(graph, x)


def test_inputs_that_do_not_match_their_data_node_are_refused():
    graph = build_graph(ge.Neg, rand(2, 3))
    with pytest.raises(GeExecutionError, match="torch.int64, the graph declares torch.float32"):
        run_graph(graph, torch.zeros(2, 3, dtype=torch.int64))
    with pytest.raises(GeExecutionError, match="shape"):
        run_graph(graph, rand(3, 2))
    with pytest.raises(GeExecutionError, match="index 0, but the graph was run with 0 inputs"):
        run_graph(graph)


def test_an_unknown_op_type_is_refused_when_the_graph_is_built():
    graph = build_graph(ge.Neg, rand(2))
    [neg] = [op for op in graph.op if op.type == "Neg"]
    neg.type = "Erfinv"
    with pytest.raises(GeExecutionError) as error:
        GeExecutor(graph)
    message = str(error.value)
    assert f"'{neg.name}'" in message and "Erfinv" in message and "airfuse/offline/ge_ops.py" in message


def test_every_missing_op_type_is_named_in_one_message_with_its_origin():
    graph = build_graph(lambda t: [ge.Neg(ge.Neg(t)), ge.Abs(t)], rand(2))
    neg, neg_1, abs_ = [op for op in graph.op if op.type in ("Neg", "Abs")]
    neg.type, neg_1.type, abs_.type = "Erfinv", "Erfinv", "Digamma"
    neg.output_desc[0].attr["_fx_tensor_name"].s = b"erfinv-aten.erfinv.default.OUTPUT.0"
    with pytest.raises(UnsupportedGeOpsError) as error:
        GeExecutor(graph)
    message = str(error.value)
    assert "2 GE op type(s)" in message
    assert f"Digamma: 1 node(s), e.g. '{abs_.name}'" in message
    assert f"Erfinv: 2 node(s), e.g. '{neg.name}' from erfinv-aten.erfinv.default, '{neg_1.name}'" in message


def test_missing_op_types_read_once_through_torchairs_error_wrapper():
    """TorchAir re-raises compile() errors with the traceback (which repeats the message) appended."""
    from torchair._utils.error_code import pretty_error_msg

    graph = build_graph(ge.Neg, rand(2))
    [neg] = [op for op in graph.op if op.type == "Neg"]
    neg.type = "Erfinv"
    with pytest.raises(UnsupportedGeOpsError) as original:
        GeExecutor(graph)
    with pytest.raises(UnsupportedGeOpsError) as wrapped:
        pretty_error_msg(GeExecutor)(graph)
    assert str(wrapped.value) == str(original.value)
    assert wrapped.value.__suppress_context__  # the chained original would print the message again


def test_an_attr_the_op_does_not_read_is_refused():
    graph = build_graph(ge.Neg, rand(2))
    [neg] = [op for op in graph.op if op.type == "Neg"]
    neg.attr["approximate"].s = b"tanh"
    neg.attr["_bookkeeping"].i = 1  # TorchAir's own "_" attrs are not semantics
    with pytest.raises(GeExecutionError, match=r"attrs \['approximate'\] are not honoured.*airfuse/offline/ge_ops.py"):
        run_graph(graph, rand(2))


def test_a_missing_or_mistyped_attr_is_refused():
    graph = build_graph(lambda t: ge.Cast(t, dst_type=DataType.DT_FLOAT16), rand(2))
    [cast] = [op for op in graph.op if op.type == "Cast"]
    cast.attr["dst_type"].f = 1.0
    with pytest.raises(GeExecutionError, match="attr dst_type is f, expected i"):
        run_graph(graph, rand(2))
    del cast.attr["dst_type"]
    with pytest.raises(GeExecutionError, match="attr dst_type is missing"):
        run_graph(graph, rand(2))


def _rms_norm_graph(x, gamma, epsilon):
    return build_graph(
        lambda a, b: list(torchair.ge.custom_op(
            "AirfuseRmsNorm", inputs={"x": a, "gamma": b}, outputs=["y", "rstd"], attrs={"epsilon": torchair.ge.attr.Float(epsilon)}
        )),
        x, gamma,
    )


def test_airfuse_nodes_run_airfuse_kernels_with_their_attrs():
    x, gamma = rand(3, 16), torch.rand(16) + 0.5
    y, rstd = run_graph(_rms_norm_graph(x, gamma, 0.25), x, gamma)
    y_ref, rstd_ref = torch.ops.airfuse.rms_norm(x, gamma, 0.25)
    assert torch.equal(y, y_ref) and torch.equal(rstd, rstd_ref)


def test_airfuse_nodes_with_inputs_out_of_ir_order_are_refused():
    x, gamma = rand(3, 16), torch.rand(16)
    graph = _rms_norm_graph(x, gamma, 1e-6)
    [node] = [op for op in graph.op if op.type == "AirfuseRmsNorm"]
    node.input_desc[0].name, node.input_desc[1].name = "gamma", "x"
    with pytest.raises(GeExecutionError, match=r"inputs named \['gamma', 'x'\].*\['x', 'gamma'\]"):
        GeExecutor(graph)
    node.type = "AirfuseNoSuchOp"
    with pytest.raises(GeExecutionError, match="not an op airfuse defines"):
        GeExecutor(graph)


def test_airfuse_kernel_errors_name_the_node():
    x, gamma = rand(3, 8), torch.rand(16)
    with pytest.raises(GeExecutionError, match=r"node 'AirfuseRmsNorm'.*gamma must have shape \[8\]"):
        run_graph(_rms_norm_graph(x, gamma, 1e-6), x, gamma)


def test_airfuse_str_attrs_reach_the_kernel():
    x = rand(4, 16)
    graph = build_graph(
        lambda t: torchair.ge.custom_op("AirfuseGelu", inputs={"x": t}, outputs=["y"], attrs={"approximate": torchair.ge.attr.Str("none")}),
        x,
    )
    [y] = run_graph(graph, x)
    assert torch.equal(y, torch.ops.airfuse.gelu(x, "none")) and not torch.equal(y, torch.ops.airfuse.gelu(x, "tanh"))
    [node] = [op for op in graph.op if op.type == "AirfuseGelu"]
    node.attr["approximate"].s = b"erf"
    with pytest.raises(GeExecutionError, match=r"node 'AirfuseGelu'.*approximate must be one of 'tanh', 'none', got 'erf'"):
        run_graph(graph, x)
    node.attr["approximate"].i = 1
    with pytest.raises(GeExecutionError, match="attr approximate is i, expected s"):
        run_graph(graph, x)


def _serialized(graph):
    model = ge_ir_pb2.ModelDef()
    model.graph.add().CopyFrom(graph)
    return model.SerializeToString()


def test_stand_in_native_module_loads_compiles_and_runs():
    x = rand(2, 3)
    graph = build_graph(lambda t: [ge.Neg(t), ge.Cast(t, dst_type=DataType.DT_BF16)], x)
    npu_graph = native_module.TorchNpuGraphBase("g")
    npu_graph.load(_serialized(graph), {}, [1], [DataType.DT_FLOAT, DataType.DT_BF16], 0)
    with pytest.raises(RuntimeError, match="before compile"):
        npu_graph.run(([x], [], None))
    npu_graph.compile()
    outs = npu_graph.run(([x], [], None))
    assert isinstance(outs, list) and len(outs) == 2
    torch.testing.assert_close(outs[0], -x)
    assert outs[1].dtype == torch.bfloat16


def test_stand_in_compile_refuses_unknown_ops_before_running():
    graph = build_graph(ge.Neg, rand(2))
    [neg] = [op for op in graph.op if op.type == "Neg"]
    neg.type = "Erfinv"
    npu_graph = native_module.TorchNpuGraphBase("g")
    npu_graph.load(_serialized(graph), {}, [1], [DataType.DT_FLOAT], 0)
    with pytest.raises(GeExecutionError, match="Erfinv"):
        npu_graph.compile()


def _with_neg_function(monkeypatch, function):
    """Run the graph's Neg nodes with ``function`` instead of GE_OPS's (as an op added to GE_OPS would)."""
    from airfuse.offline import ge_executor

    monkeypatch.setitem(ge_executor.GE_OPS, "Neg", function)


def test_an_attr_is_checked_as_read_on_every_run_not_only_the_first(monkeypatch):
    """Which attrs a GE op function reads may depend on its inputs, so each run checks them."""

    def neg_reading_approximate_for_positive_sums(node, x):
        if x.sum() > 0:
            node.str("approximate")
        return -x

    _with_neg_function(monkeypatch, neg_reading_approximate_for_positive_sums)
    graph = build_graph(ge.Neg, rand(2))
    [neg] = [op for op in graph.op if op.type == "Neg"]
    neg.attr["approximate"].s = b"tanh"
    executor = GeExecutor(graph)
    torch.testing.assert_close(executor.run([torch.ones(2)])[0], -torch.ones(2))
    with pytest.raises(GeExecutionError, match=r"attrs \['approximate'\] are not honoured"):
        executor.run([-torch.ones(2)])


def test_an_output_of_the_wrong_dtype_is_caught_on_any_run(monkeypatch):
    calls = []

    def neg_in_float16_on_the_second_call(node, x):
        calls.append(x)
        return -x if len(calls) == 1 else (-x).half()

    _with_neg_function(monkeypatch, neg_in_float16_on_the_second_call)
    x = rand(2, 3)
    graph = build_graph(ge.Neg, x)
    [neg] = [op for op in graph.op if op.type == "Neg"]
    neg.output_desc[0].attr["_meta"].s = b"Tensor(...)"
    neg.output_desc[0].dtype = ge_ir_pb2.DataType.Value("DT_FLOAT")
    executor = GeExecutor(graph)
    executor.run([x])
    with pytest.raises(GeExecutionError, match=r"node 'Neg'.*output 0 is torch.float16, the graph declares torch.float32"):
        executor.run([x])


def test_runs_reuse_the_plan_made_at_compile(monkeypatch):
    """Attrs, Consts and descriptor dtypes are decoded once, when the executor is built."""
    from airfuse.offline import ge_executor

    x = rand(2, 3)
    graph = build_graph(lambda t: ge.Cast(ge.Reshape(ge.Mul(t, ge.Const(2.0)), ge.Const([3, 2])), dst_type=DataType.DT_FLOAT16), x)
    for op in graph.op:
        for desc in op.output_desc:
            desc.attr["_meta"].s = b"Tensor(...)"  # every output checked against its descriptor
    executor = GeExecutor(graph)

    def decoding_during_a_run(*args):
        raise AssertionError("decoded during a run")

    for name in ("_decode_attr", "_decode_const", "proto_dtype_to_torch", "_output_check"):
        monkeypatch.setattr(ge_executor, name, decoding_during_a_run)
    # Cast and Reshape (a Const shape) read their attrs when planned: a run reads none.
    monkeypatch.setattr(ge_executor.Node, "_value", decoding_during_a_run)
    expected = (x * 2).reshape(3, 2).half()
    for _ in range(2):
        assert torch.equal(executor.run([x], output_dtypes=[DataType.DT_FLOAT16])[0], expected)


def test_an_airfuse_node_with_an_attr_outside_its_ir_is_refused_at_compile():
    x, gamma = rand(3, 16), torch.rand(16)
    graph = _rms_norm_graph(x, gamma, 1e-6)
    [node] = [op for op in graph.op if op.type == "AirfuseRmsNorm"]
    node.attr["axis"].i = -1
    with pytest.raises(GeExecutionError, match=r"node 'AirfuseRmsNorm'.*attrs \['axis'\] are not honoured"):
        GeExecutor(graph)


def test_values_outlive_all_their_readers_and_unread_outputs_are_dropped():
    x = rand(3, 6)

    def build(t):
        first, _second = ge.SplitV(t, ge.Const([2, 4]), ge.Const(1), num_split=2)
        negated = ge.Neg(first)
        return [ge.Mul(negated, ge.Abs(negated)), ge.Add(negated, first)]

    product, total = run_graph(build_graph(build, x), x)
    torch.testing.assert_close(product, -x[:, :2] * x[:, :2].abs())
    torch.testing.assert_close(total, torch.zeros(3, 2))


def test_a_planned_op_runs_whole_on_each_run_where_its_input_is_not_a_const():
    x, shape = rand(2, 3, 4), torch.tensor([4, -1])
    graph = build_graph(lambda t, s: ge.Reshape(t, s), x, shape)
    torch.testing.assert_close(run_graph(graph, x, shape)[0], x.reshape(4, 6))
    [reshape] = [op for op in graph.op if op.type == "Reshape"]
    reshape.attr["axis"].i = 1
    with pytest.raises(GeExecutionError, match=r"node 'Reshape'.*attr axis=1 is not implemented"):
        run_graph(graph, x, shape)


def test_a_plan_that_fails_at_compile_raises_its_error_when_run():
    """As an op that is not planned: compile() refuses only what no run could execute."""
    x = rand(2, 3)
    executor = GeExecutor(build_graph(lambda t: ge.Reshape(t, ge.Const([3, 2]), axis=1), x))
    with pytest.raises(GeExecutionError, match=r"node 'Reshape'.*attr axis=1 is not implemented"):
        executor.run([x])
