"""Offline TorchAir: TorchAir's real Python code on a machine without an NPU or CANN.

``fetch`` obtains TorchAir from the pinned torch_npu wheel; ``native_module`` stands in for the
one native module TorchAir needs, and its graphs run in ``ge_executor`` (op semantics in
``ge_ops``); ``cpu_sdpa`` decomposes the CPU SDPA ops TorchAir cannot convert;
``torch_npu_standin`` and ``npu_graph`` stand in for what TorchAir's npugraph_ex mode uses of
torch_npu (``airfuse.aclgraph``).
``airfuse.torchair_env`` decides when to use them.
"""
