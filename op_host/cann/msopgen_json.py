"""Write msOpGen's operator JSON for the ops that have Ascend C kernels, from airfuse's op
definitions (the single source of truth), for op_host/cann/package.cmake on a CANN host."""

import json
import sys
from pathlib import Path

from airfuse.ops import ALL_OPS

ROOT = Path(__file__).resolve().parents[2]


def params(op, params_):
    return [
        {
            "name": p.name,
            "param_type": p.kind,
            "format": ["ND"] * len(op.dtype_combos),
            "type": [str(c[p.name]).removeprefix("torch.") for c in op.dtype_combos],
        }
        for p in params_
    ]


def main(out: str):
    ops = [op for op in ALL_OPS.values() if (ROOT / "kernels" / f"{op.ir_base_name}.cpp").exists()]
    desc = [
        {
            "op": op.ir_type,
            "input_desc": params(op, op.inputs),
            "output_desc": params(op, op.outputs),
            "attr": [{"name": a.name, "param_type": "optional", "type": a.ge_type.lower(), "default_value": a.default} for a in op.attrs],
        }
        for op in ops
    ]
    Path(out).write_text(json.dumps(desc, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
