"""Fake-tensor (meta) implementations, one module per op; importing registers them.

Installed as ``airfuse.meta`` (setup.py maps this top-level folder into the package).
"""

from . import add, add_rms_norm, gelu, rms_norm, rope, silu_mul, swiglu  # noqa: F401
