"""TorchAir's backend on graphs with tensor-subclass inputs: the DTensor parameters of a tensor
or sequence parallel model (``parallelize_module``).

AOTAutograd hands the backend's compilers such a graph with each subclass flattened into its
parts: a DTensor becomes its local tensor and its ``DeviceMesh``, an opaque object input (a
reference type: never a constant). TorchAir 2.13 assumes every input is a tensor or a SymInt in
two places, and both break on these graphs:

1. ``_get_inputs_custom_attr`` records per-input attrs of Dynamo's inputs (static-input and
   parameter marks, dim gears) by position counted from the end and sets them on AOTAutograd's
   inputs at the same positions, which the flattening has moved: the attrs land on other inputs,
   and on a mesh fail ("Tried to call __setattr__ ... on a FakeScriptObject"). Here TorchAir gets
   no per-input attrs: it marks the parameters again from AOTAutograd's own static-input indices
   (``_mark_static_inputs_attr``), which do count the flattening; dim gears, which nothing else
   sets, are refused.
2. The FX-to-GE conversion skips a non-tensor placeholder but numbers the next GE ``Data`` by the
   count of GE inputs so far, and at run time picks the call's arguments by that number: every
   tensor after a mesh reads the argument before it (the offline executor then refuses "input 1 is
   DeviceMesh, expected a tensor"). Here the compiler gets the graph without its opaque inputs
   (nothing in a graph TorchAir can convert reads them: collectives name their group by string)
   and the compiled graph is called without them.
"""

import torch
from torch.utils._python_dispatch import is_traceable_wrapper_subclass


def with_tensor_subclass_inputs(backend):
    """``backend`` (TorchAir's) compiling graphs with tensor-subclass inputs as described above;
    other graphs go to it untouched."""

    def compile_graph(gm, example_inputs):
        if not any(is_traceable_wrapper_subclass(t) for t in example_inputs):
            return backend(gm, example_inputs)
        geared = [i for i, t in enumerate(example_inputs) if getattr(t, "dim_gears", None) is not None]
        if geared:
            raise ValueError(
                f"airfuse.get_npu_backend: inputs {geared} set dim_gears in a graph with tensor-subclass (DTensor) "
                "inputs, where TorchAir 2.13 cannot place per-input attrs"
            )
        from torchair import npu_fx_compiler

        recorded = npu_fx_compiler._get_inputs_custom_attr, npu_fx_compiler.get_compiler
        npu_fx_compiler._get_inputs_custom_attr = lambda inputs: {}
        npu_fx_compiler.get_compiler = lambda config: _WithoutOpaqueInputs(recorded[1](config))
        try:
            return backend(gm, example_inputs)
        finally:
            npu_fx_compiler._get_inputs_custom_attr, npu_fx_compiler.get_compiler = recorded

    return compile_graph


def _is_opaque(value) -> bool:
    return value is not None and not isinstance(value, (torch.Tensor, torch.SymInt, int, float, bool))


class _WithoutOpaqueInputs:
    """TorchAir's FX compiler, given each graph without its opaque-object inputs."""

    def __init__(self, compiler):
        self._compiler = compiler

    def __getattr__(self, name):
        return getattr(self._compiler, name)

    def __call__(self, gm, example_inputs):
        opaque = [index for index, value in enumerate(example_inputs) if _is_opaque(value)]
        if not opaque:
            return self._compiler(gm, example_inputs)
        placeholders = gm.graph.find_nodes(op="placeholder")
        [output] = gm.graph.find_nodes(op="output")
        results = list(output.args[0])
        passed_through = {}  # output position -> input index: a mesh returned as it came (saved for backward)
        for index in opaque:
            node = placeholders[index]
            readers = [user for user in node.users if user is not output]
            if readers:
                raise NotImplementedError(
                    f"airfuse.get_npu_backend: graph input {node.name} ({type(example_inputs[index]).__name__}) is read by "
                    f"{', '.join(map(str, readers))}; TorchAir 2.13 converts tensor and SymInt inputs only"
                )
            for position, result in enumerate(results):
                if result is node:
                    passed_through[position] = index
                    results[position] = None
        output.args = (type(output.args[0])(results),)
        for index in opaque:
            gm.graph.erase_node(placeholders[index])
        gm.recompile()
        kept = [index for index in range(len(example_inputs)) if index not in set(opaque)]
        compiled = self._compiler(gm, [example_inputs[index] for index in kept])

        def run(*args):
            outputs = list(compiled(*[args[index] for index in kept]))
            for position, index in passed_through.items():
                outputs[position] = args[index]
            return outputs

        if getattr(compiled, "_boxed_call", False):
            raise NotImplementedError("airfuse.get_npu_backend: TorchAir returned a boxed graph runner; expected TorchAir 2.13's unboxed one")
        return run
