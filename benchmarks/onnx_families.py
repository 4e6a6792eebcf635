"""Per model family: ONNX export of one decoder layer, unfused / patched / fused, in both forms.

The tiny random-weight models of tests/fusion (1 layer, eager attention) are exported with a
symbolic batch and sequence (at batch 2, 7 tokens) by ``airfuse.onnx.export``: as written (``fuse=False``),
after ``airfuse.patch`` (``fuse=False``) and unpatched with ``fuse=True``; each program in the
``standard`` and the ``custom`` form. Printed per row: ONNX nodes (all, and ``ai.airfuse`` ones),
the logits' error in ONNX Runtime at batch 3, 9 tokens against eager (max |difference| / max |eager|),
and the process CPU seconds of ``torch.export`` (with fusion), of the ONNX translation, and of
creating the ONNX Runtime session.

    .venv/bin/python benchmarks/onnx_families.py [family ...]
"""

import collections
import copy
import sys
import time
from pathlib import Path

import torch

import airfuse
import airfuse.onnx
from airfuse.onnx import runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fusion"))
from tiny_hf_models import FAMILIES, tiny_model, token_ids  # noqa: E402

_DYNAMIC = ({0: torch.export.Dim("batch", min=1, max=32), 1: torch.export.Dim("seq", min=2, max=32)},)


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False).logits


def _variants(family):
    model = tiny_model(family, layers=1)
    yield "unfused", model, False
    yield "patched", airfuse.patch(copy.deepcopy(model)), False
    yield "fused", model, True


def _error(session, ids, expected) -> str:
    """max |ORT - eager| / max |eager|, or ONNX Runtime's refusal: on an unfused model the
    exporter's optimizer (ONNX Script's opset-23 fusions) makes a RotaryEmbedding of the RoPE
    composite whose caches ONNX Runtime 1.32 refuses at batch 3, 9 tokens ("cos_cache and
    sin_cache are expected to have the same shape as input x")."""
    try:
        [actual] = runtime.run(session, ids)
    except Exception as error:  # noqa: BLE001  (reported in the table, not raised)
        return f"ORT: {type(error).__name__}"
    return f"{((actual - expected).abs().max() / expected.abs().max()).item():.2e}"


def main(families):
    print("family      | variant | form     | nodes | ai.airfuse nodes | ORT vs eager | export s | translate s | session s")
    ids = token_ids(batch=3, seq=9, seed=2)
    for family in families:
        for variant, model, fuse in _variants(family):
            module = Logits(model).eval()
            with torch.no_grad():
                expected = module(ids)
            start = time.process_time()
            program = airfuse.onnx.export_program(module, (token_ids(),), dynamic_shapes=_DYNAMIC, fuse=fuse)
            exported = time.process_time() - start
            for form in airfuse.onnx.FORMS:
                start = time.process_time()
                proto = airfuse.onnx.export(program, form=form).model_proto
                translated = time.process_time() - start
                start = time.process_time()
                session = runtime.session(proto)
                opened = time.process_time() - start
                error = _error(session, ids, expected)
                custom = collections.Counter(n.op_type for n in proto.graph.node if n.domain == airfuse.onnx.CUSTOM_DOMAIN)
                print(f"{family:11} | {variant:7} | {form:8} | {len(proto.graph.node):5} | {sum(custom.values()):16} | "
                      f"{error:>12} | {exported:8.1f} | {translated:11.1f} | {opened:9.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or FAMILIES)
