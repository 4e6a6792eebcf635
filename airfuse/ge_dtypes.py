"""GE dtypes as torch dtypes, shared by the converters and the offline GE executor.

GE numbers dtypes twice: GE's DataType (``torchair.ge.DataType``: attrs such as ``dst_type``,
a ``torchair.ge.Tensor``'s ``.dtype``, TorchAir's output dtypes) and the protobuf enum of tensor
descriptors. Both are looked up here by name, from TorchAir's own tables.
"""

import torch

TORCH_DTYPE_OF_GE_NAME = {
    "DT_FLOAT": torch.float32,
    "DT_FLOAT16": torch.float16,
    "DT_BF16": torch.bfloat16,
    "DT_DOUBLE": torch.float64,
    "DT_INT8": torch.int8,
    "DT_UINT8": torch.uint8,
    "DT_INT16": torch.int16,
    "DT_INT32": torch.int32,
    "DT_INT64": torch.int64,
    "DT_BOOL": torch.bool,
}


_TORCH_DTYPE_OF_GE_NUMBER = {}


def ge_dtype_to_torch(number: int, what: str) -> torch.dtype:
    """A GE DataType number (``torchair.ge.DataType``, not the protobuf enum) as a torch dtype."""
    if not _TORCH_DTYPE_OF_GE_NUMBER:
        # Read TorchAir's table once: the offline executor converts on every run.
        from torchair.ge import DataType

        _TORCH_DTYPE_OF_GE_NUMBER.update((getattr(DataType, name), dtype) for name, dtype in TORCH_DTYPE_OF_GE_NAME.items())
    dtype = _TORCH_DTYPE_OF_GE_NUMBER.get(number)
    if dtype is not None:
        return dtype
    raise NotImplementedError(
        f"{what} is GE DataType {number}, which airfuse does not map to a torch dtype "
        f"(it knows {', '.join(TORCH_DTYPE_OF_GE_NAME)})"
    )
