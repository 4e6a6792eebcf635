"""GeCapture's accounting (node kinds, modeled HBM bytes) and its Graphviz picture."""

import pytest
import torch

import airfuse
from airfuse.ge_accounting import MATMUL_TYPES


def _matmul_relu(x, w):
    return torch.relu(x @ w).reshape(-1)  # the Reshape's shape is a Const node


def _capture(dynamic=False):
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    return airfuse.capture_ge_graph(_matmul_relu, x, w, dynamic=dynamic)


def test_hbm_traffic_counts_every_input_and_output_of_every_node():
    traffic = _capture().hbm_traffic()
    f32 = 4
    x, w, y = 4 * 8 * f32, 8 * 16 * f32, 4 * 16 * f32
    [matmul_type] = [t for t in traffic.by_type if t in MATMUL_TYPES]
    assert traffic.by_type[matmul_type] == x + w + y
    assert traffic.by_type["Relu"] == y + y
    assert traffic.matmul_bytes == x + w + y
    assert traffic.non_matmul_bytes == traffic.total_bytes - traffic.matmul_bytes >= 2 * y


def test_hbm_traffic_of_airfuse_rms_norm_is_its_tensors():
    x, gamma = torch.randn(6, 32, dtype=torch.float16), torch.rand(32, dtype=torch.float16)
    capture = airfuse.capture_ge_graph(lambda a, b: torch.ops.airfuse.rms_norm(a, b, 1e-6)[0], x, gamma)
    y, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    expected = sum(t.numel() * t.element_size() for t in (x, gamma, y, rstd))
    assert capture.hbm_traffic().by_type["AirfuseRmsNorm"] == expected


def test_hbm_traffic_needs_a_static_capture():
    with pytest.raises(ValueError, match=r"dynamic=False"):
        _capture(dynamic=True).hbm_traffic()


def test_node_counts_by_kind():
    counts = _capture().node_counts()
    assert counts["data"] == 2 and counts["output"] == 1 and counts["matmul"] == 1 and counts["other"] >= 1
    assert sum(counts.values()) == sum(_capture().op_types().values())


def test_to_dot_draws_nodes_and_data_edges(tmp_path):
    capture = _capture()
    dot = capture.to_dot()
    assert dot.startswith("digraph ge {") and dot.rstrip().endswith("}")
    [matmul] = [n for t in MATMUL_TYPES for n in capture.nodes(t)]
    assert f'"g0/{matmul.name}" [label="{matmul.type}\\n{matmul.name}"' in dot
    for source in matmul.inputs:
        assert f'"g0/{source}" -> "g0/{matmul.name}";' in dot
    [const] = capture.nodes("Const")
    assert f'"g0/{const.name}"' not in dot and f'"g0/{const.name}"' in capture.to_dot(consts=True)


def test_render_writes_the_dot_text_and_svg_where_graphviz_runs(tmp_path):
    written = _capture().render(tmp_path / "graph", formats=("svg",))
    assert written[0] == tmp_path / "graph.dot" and written[0].read_text().startswith("digraph")
    assert all(path.is_file() for path in written)
    assert written[1:] in ([], [tmp_path / "graph.svg"])
