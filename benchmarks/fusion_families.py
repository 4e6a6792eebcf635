"""Per model family: GE op nodes, airfuse nodes and modeled HBM bytes of one decoder layer's forward
graph, unfused / patched / fused.

The tiny random-weight models of tests/fusion (1 layer, eager attention, static shapes, batch 2,
7 tokens) are captured three ways with ``airfuse.capture_ge_graph``: as written (``fuse=False``),
after ``airfuse.patch`` (``fuse=False``) and unpatched through the backend's fusion (``fuse=True``).
Modeled bytes are ``GeCapture.hbm_traffic()``: every GE node's inputs read and outputs written once,
from the shapes the offline executor runs (airfuse.ge_accounting). The last column says whether the
fused graph has exactly the airfuse nodes, per type, of ``patch()`` + ``fuse=True``; the one before it,
Dynamo's graph breaks in the fused compile (compiled without ``fullgraph``, so a break would split the
graph rather than fail).

    .venv/bin/python benchmarks/fusion_families.py [family ...]
"""

import copy
import sys
from pathlib import Path

import torch

import airfuse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fusion"))
from tiny_hf_models import FAMILIES, tiny_model, token_ids  # noqa: E402


def _row(capture):
    counts, traffic = capture.node_counts(), capture.hbm_traffic()
    ops = sum(n for kind, n in counts.items() if kind not in ("data", "const", "output"))
    return ops, counts["airfuse"], traffic.non_matmul_bytes, traffic.matmul_bytes


def _airfuse_types(capture):
    return {t: n for t, n in capture.op_types().items() if t.startswith("Airfuse")}


def main(families):
    print("family      | GE op nodes unfused/patched/fused | airfuse nodes | non-matmul HBM bytes unfused / patched / fused"
          " | matmul bytes (all three) | graph breaks (fused) | fused airfuse nodes == patch()+fuse")
    for family in families:
        model = tiny_model(family, layers=1).requires_grad_(False)
        patched_model = airfuse.patch(copy.deepcopy(model))
        ids = token_ids()
        captures = {
            "unfused": airfuse.capture_ge_graph(model, ids, fuse=False),
            "patched": airfuse.capture_ge_graph(patched_model, ids, fuse=False),
            "fused": airfuse.capture_ge_graph(model, ids, fuse=True),
        }
        rows = {label: _row(capture) for label, capture in captures.items()}
        same = _airfuse_types(captures["fused"]) == _airfuse_types(airfuse.capture_ge_graph(patched_model, ids, fuse=True))
        matmul = {row[3] for row in rows.values()}
        print(f"{family:11} | {'/'.join(str(r[0]) for r in rows.values()):>33} | {'/'.join(str(r[1]) for r in rows.values()):>13} | "
              f"{' / '.join(f'{r[2]:,}' for r in rows.values()):>46} | {', '.join(f'{m:,}' for m in sorted(matmul)):>24} | "
              f"{captures['fused'].graph_breaks:>20} | {same}",
              flush=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    main(sys.argv[1:] or FAMILIES)
