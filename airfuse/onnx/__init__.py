"""ONNX export of models that use airfuse ops, through ``torch.onnx.export(..., dynamo=True)``.

``import airfuse.onnx`` (needs the ``airfuse[onnx]`` extra; ``import airfuse`` alone never imports
onnx, onnxscript or onnxruntime) gives every forward airfuse op a translation in two forms:

- ``"standard"``: standard ONNX ops of opset 23 only (``airfuse.onnx.standard``), which any ONNX
  consumer runs;
- ``"custom"``: one node per op in domain ``ai.airfuse``, op type the GE IR type, attributes as
  the op definition says (``airfuse.onnx.custom``), for converters that map custom op types to
  the NPU kernels. ``airfuse.onnx.runtime`` runs such models in ONNX Runtime on airfuse's CPU
  kernels.

``export(model, args, path, form=..., dynamic_shapes=..., fuse=True)`` wraps the exporter;
``export_program`` gives the ExportedProgram it translates, which ``export`` also takes. With
``fuse=True`` (as in ``get_npu_backend``) the composites airfuse recognizes (Hugging Face's
RMSNorm, rotate-half RoPE, SiLU products, tanh GELU, residual add + norm) are first replaced by
airfuse ops in the exported program, so an unpatched model exports with the same nodes as a
patched one.
"""

import torch

from .. import compat
from .._library import overload
from ..fusion.exported import fuse_exported_program
from ..ops import ALL_OPS
from . import custom, standard

OPSET_VERSION = 23
FORMS = ("standard", "custom")
CUSTOM_DOMAIN = custom.DOMAIN


def translation_table(form: str = "standard") -> dict:
    """``custom_translation_table`` for ``torch.onnx.export``: every forward airfuse op in ``form``."""
    translations = {"standard": standard.TRANSLATIONS, "custom": custom.TRANSLATIONS}.get(form)
    if translations is None:
        raise ValueError(f"airfuse.onnx: form must be one of {', '.join(map(repr, FORMS))}, got {form!r}")
    return {overload(ALL_OPS[name]): translate for name, translate in translations.items()}


def export_program(model, args, *, dynamic_shapes=None, kwargs=None, fuse: bool = True) -> torch.export.ExportedProgram:
    """``model``'s ExportedProgram (``torch.export.export``, non-strict), with ``fuse=True`` its
    composites replaced by airfuse ops. ``export`` takes it in place of a model, so one program can
    be translated to both forms."""
    program = torch.export.export(model, tuple(args), kwargs=kwargs, dynamic_shapes=dynamic_shapes, strict=False,
                                  **compat.export_options())
    if fuse:
        fuse_exported_program(program)
    return program


def export(model, args=(), path=None, *, form: str = "standard", dynamic_shapes=None, kwargs=None, fuse: bool = True, **options):
    """Export ``model`` called with ``args`` (and ``kwargs``) to ONNX at ``path`` (None: not saved).

    ``model`` may be an ``export_program`` result (then ``args``, ``dynamic_shapes``, ``kwargs`` and
    ``fuse`` were given there and must be left out here). ``dynamic_shapes`` as
    ``torch.export.export`` takes it; ``options`` go to ``torch.onnx.export`` (``input_names``,
    ``external_data``, ...). Returns torch's ``ONNXProgram`` (``.model_proto``, ``.save``)."""
    table = translation_table(form)
    if isinstance(model, torch.export.ExportedProgram):
        if args or kwargs or dynamic_shapes is not None:
            raise ValueError("airfuse.onnx.export: an ExportedProgram carries its inputs; pass args, kwargs and dynamic_shapes to export_program")
        program = model
    else:
        program = export_program(model, args, dynamic_shapes=dynamic_shapes, kwargs=kwargs, fuse=fuse)
    options.setdefault("verbose", False)
    return torch.onnx.export(
        program, f=path, dynamo=True, custom_translation_table=table, opset_version=OPSET_VERSION, **options
    )
