"""The offline stand-ins for torch_npu and its NPUGraph, on their own: capture records kernels
without running them, replay runs them on what the captured buffers hold, and what an NPU capture
refuses is refused."""

import math
import sys

import pytest
import torch

from airfuse.offline import npu_graph, torch_npu_standin


def _capture(fn, *args):
    graph = npu_graph.NPUGraph()
    with torch_npu_standin.installed() as torch_npu, torch_npu.npu.graph(graph):
        out = fn(*args)
    return graph, out


def test_capture_records_without_running_and_replay_reads_new_input_data():
    x = torch.ones(3)
    graph, out = _capture(lambda x: torch.sin(x) * 2, x)
    assert [str(call.func) for call in graph.calls] == ["aten.sin.default", "aten.mul.Tensor"]
    assert torch.isnan(out).all()  # undefined until a replay, as on an NPU
    x.copy_(torch.tensor([0.0, 1.0, 2.0]))
    graph.replay()
    torch.testing.assert_close(out, torch.sin(x) * 2, rtol=0, atol=0)


def test_in_place_ops_run_once_per_replay_not_at_capture():
    counter = torch.zeros(2)
    graph, _ = _capture(lambda c: c.add_(1), counter)
    assert counter.tolist() == [0.0, 0.0]
    graph.replay()
    graph.replay()
    assert counter.tolist() == [2.0, 2.0]


def test_views_and_allocations_run_at_capture():
    x = torch.arange(6.0)
    graph, (view, empty) = _capture(lambda x: (x.view(2, 3).t(), torch.empty(4)), x)
    assert graph.calls == [] and view.shape == (3, 2) and view.data_ptr() == x.data_ptr() and empty.shape == (4,)


@pytest.mark.parametrize(
    "sync", [lambda x: x.sum().item(), lambda x: x.nonzero(), lambda x: bool(x.any()), lambda x: x[x > 0]]
)
def test_host_synchronization_is_refused_in_capture(sync):
    with pytest.raises(RuntimeError, match="host.*aclgraph capture refuses"):
        _capture(sync, torch.ones(3))


def test_captured_memory_can_be_rebuilt_by_address_while_the_graph_lives():
    graph, out = _capture(lambda x: x + 1, torch.ones(2, 3))
    with torch_npu_standin.installed() as torch_npu:
        storage = torch_npu._C._construct_storage_from_data_pointer(out.data_ptr(), out.device, out.nbytes)
        metadata = dict(dtype=out.dtype, storage_offset=0, size=(3, 2), stride=(1, 3))
        rebuilt = torch_npu._C._construct_NPU_Tensor_From_Storage_And_Metadata(metadata, storage)
        graph.replay()
        torch.testing.assert_close(rebuilt, torch.full((3, 2), 2.0))
        graph.reset()
        with pytest.raises(RuntimeError, match="no buffer of a live captured NPUGraph"):
            torch_npu._C._construct_storage_from_data_pointer(out.data_ptr(), out.device, out.nbytes)


def test_replay_needs_a_capture_and_modes_are_checked():
    with pytest.raises(RuntimeError, match="nothing captured"):
        npu_graph.NPUGraph().replay()
    with pytest.raises(ValueError, match="capture_error_mode"):
        npu_graph.NPUGraph().capture_begin(capture_error_mode="loud")


def _npu_attributes():
    return sys.modules.get("torch_npu"), torch.__dict__.get("npu"), torch.Tensor.__dict__.get("is_npu")


def test_installed_only_inside_the_block_and_refuses_what_it_does_not_provide():
    before = _npu_attributes()  # the emulated NPU's torch.npu and is_npu when tests/npu ran first
    with torch_npu_standin.installed() as torch_npu:
        assert sys.modules["torch_npu"] is torch_npu and torch.npu is torch_npu.npu and torch.ones(1).is_npu
        with pytest.raises(AttributeError, match="not part of airfuse's offline torch_npu stand-in"):
            torch_npu.npu_rms_norm  # noqa: B018
        with pytest.raises(AttributeError, match="npu.ExternalEvent is not part"):
            torch.npu.ExternalEvent  # noqa: B018
    assert _npu_attributes() == before and before[0] is None


def test_never_installed_over_an_importable_torch_npu(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_npu", type(sys)("torch_npu"))
    with pytest.raises(RuntimeError, match="torch_npu is installed here"), torch_npu_standin.installed():
        pass


def test_stream_limits_are_remembered_per_stream():
    with torch_npu_standin.installed() as torch_npu:
        stream = torch.npu.Stream()
        torch.npu.set_stream_limit(stream, 8, 16)
        assert torch.npu.get_stream_limit(stream) == {"cube_core_num": 8, "vector_core_num": 16}
        with torch.npu.stream(stream):
            assert torch.npu.current_stream() is stream
        assert torch.npu.current_stream() is not stream
        assert math.prod(torch_npu.npu.graph_pool_handle()) == 0


def test_integer_indexing_is_a_kernel_not_a_synchronization():
    x, index = torch.arange(5.0), torch.tensor([4, 0])
    graph, out = _capture(lambda x, i: x[i], x, index)
    graph.replay()
    assert out.tolist() == [4.0, 0.0]


def test_writing_memory_read_through_another_view_is_refused():
    # As TorchAir's reinplacing made of Hugging Face's position diff: x[1:] -= x[:-1] in one call.
    x = torch.arange(6.0)
    with pytest.raises(RuntimeError, match="writes 'self' while reading 'other', another view of the same memory"):
        _capture(lambda x: x[1:].sub_(x[:-1]), x)
    graph, _ = _capture(lambda x: x.mul_(x), x)  # the same view read and written: elementwise, well defined
    graph.replay()
    assert x.tolist() == [0.0, 1.0, 4.0, 9.0, 16.0, 25.0]
