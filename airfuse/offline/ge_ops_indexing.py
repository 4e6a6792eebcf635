"""GE shape, layout, indexing and ordering ops of the offline executor (see ``ge_ops.py``)."""

import torch
import torch.nn.functional as F

from airfuse.ge_dtypes import ge_dtype_to_torch

from .ge_op_base import _axes, _axis, _by_rank, _check, _int, _ints, _same_dtype, planned


# --- shapes, layout and indexing ---------------------------------------------------------------

def identity(node, x):
    return x


def shape(node, x):
    return torch.tensor(x.shape, dtype=ge_dtype_to_torch(node.int("dtype"), "attr dtype"))


@planned(1)
def reshape(node, shape_):
    node.expect("axis", 0)
    node.expect("num_axes", -1)
    dims = _ints(shape_, "shape")
    return lambda x, _: x.reshape(dims)


@planned(1)
def transpose(node, perm):
    dims = _ints(perm, "perm")

    def axes(rank):
        _check(len(dims) == rank, lambda: f"perm {dims} must list {rank} axes")
        return _axes(dims, rank, "perm")

    axes_of_rank = _by_rank(axes)
    return lambda x, _: x.permute(axes_of_rank(x.dim()))


@planned()
def squeeze(node):
    axes = node.ints("axis")
    dims_of_rank = _by_rank(lambda rank: _axes(axes, rank, "attr axis"))

    def run(x):
        if not axes:
            return x.squeeze()
        dims = dims_of_rank(x.dim())
        _check(all(x.shape[d] == 1 for d in dims), lambda: f"attr axis {axes} names dims of shape {list(x.shape)} that are not 1")
        return x.squeeze(dims)

    return run


@planned()
def unsqueeze(node):
    axes = node.ints("axes")
    order_of_rank = _by_rank(lambda rank: sorted(_axes(axes, rank, "attr axes")))

    def run(x):
        for axis in order_of_rank(x.dim() + len(axes)):
            x = x.unsqueeze(axis)
        return x

    return run


@planned(1)
def broadcast_to(node, shape_):
    dims = _ints(shape_, "shape")

    def check(rank):
        # -1 keeps x's size in that dim (TorchAir passes aten.expand's sizes through); it cannot
        # stand for a leading dim that x does not have.
        new_dims = len(dims) - rank
        _check(all(d >= 0 for d in dims[:new_dims]), lambda: f"shape {dims}: a new leading dim cannot be -1 or negative")
        _check(all(d >= -1 for d in dims[new_dims:]), lambda: f"shape {dims} has negative sizes other than -1")

    checked_rank = _by_rank(check)

    def run(x, _):
        _check(len(dims) >= x.dim(), lambda: f"shape {dims} has lower rank than x {list(x.shape)}")
        checked_rank(x.dim())
        return x.expand(dims)

    return run


def expand(node, x, shape_):
    # Broadcasting both ways (a 1 in shape keeps x's dim), unlike BroadcastTo's -1.
    dims = _ints(shape_, "shape")
    try:
        out_shape = torch.broadcast_shapes(x.shape, dims)
    except RuntimeError:
        raise ValueError(f"shape {dims} does not broadcast with x {list(x.shape)}") from None
    return x.expand(out_shape)


def fill(node, dims, value):
    _check(value.numel() == 1, lambda: f"value must hold one element, got shape {list(value.shape)}")
    return value.reshape(()).expand(_ints(dims, "dims")).clone()


def pack(node, *x):
    _check(len(x) == node.int("N"), lambda: f"attr N is {node.int('N')} but {len(x)} tensors are packed")
    _same_dtype(**{f"x{i}": t for i, t in enumerate(x)})
    return torch.stack(x, _axis(node.int("axis"), x[0].dim() + 1, "attr axis"))


@planned(-1)
def concat_v2(node, concat_dim):
    n, axis = node.int("N"), _int(concat_dim, "concat_dim")

    def run(*inputs):
        x = inputs[:-1]
        _check(len(x) == n, lambda: f"attr N is {n} but {len(x)} tensors are concatenated")
        if not all(t.dtype is x[0].dtype for t in x):
            _same_dtype(**{f"x{i}": t for i, t in enumerate(x)})
        # An input of shape [0] is skipped, whatever the others' rank (as torch.cat does): Hugging
        # Face's KV cache starts as one and is concatenated with 4-D states along dim -2.
        parts = [t for t in x if t.shape != (0,)] or [x[0]]
        rank = parts[0].dim()
        _check(all(t.dim() == rank for t in parts), lambda: f"inputs differ in rank: {[list(t.shape) for t in parts]}")
        return torch.cat(parts, _axis(axis, rank, "concat_dim"))

    return run


def pad_v3(node, x, paddings, constant_values):
    mode = node.str("mode")
    _check(mode == "constant", lambda: f"attr mode {mode!r} is not implemented by the offline executor (only 'constant')")
    pads = _ints(paddings, "paddings")
    _check(len(pads) == 2 * x.dim(), lambda: f"paddings {pads} must hold a (before, after) pair for each of x's {x.dim()} dims")
    # Contiguous: [before0, after0, before1, after1, ...]; otherwise all befores, then all afters.
    pairs = list(zip(pads[0::2], pads[1::2])) if node.bool("paddings_contiguous") else list(zip(pads[: x.dim()], pads[x.dim():]))
    value = 0
    if constant_values is not None:
        # Its type list is not x's T: TorchAir passes aten's Scalar as a float Const for int x.
        # The value must survive the conversion to x's dtype.
        _check(constant_values.numel() == 1, lambda: f"constant_values must hold one value, got shape {list(constant_values.shape)}")
        value = constant_values.reshape(()).to(x.dtype)
        _check(bool(value.to(constant_values.dtype) == constant_values.reshape(())), lambda: f"constant_values {constant_values.item()} is not a {x.dtype} value")
        value = value.item()
    # F.pad lists pairs from the last dim; negative sizes crop, as in aten.constant_pad_nd.
    return F.pad(x, [p for pair in reversed(pairs) for p in pair], value=value)


def index_by_tensor(node, x, *indices):
    # Advanced indexing: indices_mask[i] says whether dim i is indexed (by the next index tensor);
    # index tensors broadcast together, and the indexed dims are replaced as in aten.index.
    mask = node.ints("indices_mask")
    _check(len(mask) <= x.dim() and set(mask) <= {0, 1}, lambda: f"attr indices_mask {mask} must be 0/1 flags for x's {x.dim()} dims")
    _check(sum(mask) == len(indices), lambda: f"attr indices_mask {mask} marks {sum(mask)} dims, {len(indices)} index tensors given")
    index_tensors = iter(indices)
    key = []
    for dim, indexed in enumerate(mask):
        if not indexed:
            key.append(slice(None))
            continue
        index = next(index_tensors)
        _check(index.dtype == torch.int64, lambda: f"indices must be int64, got {index.dtype}")
        size = x.shape[dim]
        _check(bool(((index >= -size) & (index < size)).all()), lambda: f"indices out of range [-{size}, {size}) for dim {dim}")
        key.append(index)
    return x[tuple(key)]


def split_v(node, x, size_splits, split_dim):
    num_split = node.int("num_split")
    sizes = _ints(size_splits, "size_splits")
    dim = _axis(_int(split_dim, "split_dim"), x.dim(), "split_dim")
    _check(len(sizes) == num_split, lambda: f"size_splits {sizes} does not have num_split={num_split} entries")
    _check(sizes.count(-1) <= 1 and all(s >= -1 for s in sizes), lambda: f"size_splits {sizes}: at most one -1, no other negatives")
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[dim] - (sum(sizes) + 1)
    _check(sum(sizes) == x.shape[dim] and min(sizes) >= 0, lambda: f"size_splits {sizes} do not split dim {dim} of size {x.shape[dim]}")
    return tuple(torch.split(x, sizes, dim))


def scatter_elements(node, data, indices, updates):
    # y = data with y[..., indices[i], ...] = updates[i] along axis (aten.scatter), or += with
    # reduction "add" (aten.scatter_add: gather's gradient); negative indices count from the end.
    reduction = node.str("reduction")
    _check(reduction in ("none", "add"), f"attr reduction {reduction!r} is not implemented by the offline executor (only 'none', 'add')")
    _same_dtype(data=data, updates=updates)
    _check(indices.dtype in (torch.int32, torch.int64), f"indices must be int32 or int64, got {indices.dtype}")
    _check(indices.shape == updates.shape, f"indices {list(indices.shape)} and updates {list(updates.shape)} must have one shape")
    _check(indices.dim() == data.dim(), f"indices must have data's rank {data.dim()}, got {indices.dim()}")
    axis = _axis(node.int("axis"), data.dim(), "attr axis")
    size = data.shape[axis]
    _check(bool(((indices >= -size) & (indices < size)).all()), f"indices out of range [-{size}, {size}) for axis {axis}")
    index = indices.long() % max(size, 1)
    return data.scatter(axis, index, updates) if reduction == "none" else data.scatter_add(axis, index, updates)


def _gather(x, indices, axis, negative_ok):
    _check(not indices.dtype.is_floating_point and indices.dtype != torch.bool, lambda: f"indices must be integers, got {indices.dtype}")
    size = x.shape[axis]
    low = -size if negative_ok else 0
    _check(bool(((indices >= low) & (indices < size)).all()), lambda: f"indices out of range [{low}, {size}) for axis {axis}")
    flat = indices.reshape(-1).long() % max(size, 1)
    out = torch.index_select(x, axis, flat)
    return out.reshape((*x.shape[:axis], *indices.shape, *x.shape[axis + 1:]))


def gather(node, x, indices):
    node.expect("batch_dims", 0)
    node.bool("validate_indices")  # indices are always validated here
    node.expect("is_preprocessed", False)
    return _gather(x, indices, 0, node.bool("negative_index_support"))


def gather_v2(node, x, indices, axis):
    node.expect("batch_dims", 0)
    node.expect("is_preprocessed", False)
    dim = _axis(_int(axis, "axis"), x.dim(), "axis")
    return _gather(x, indices, dim, node.bool("negative_index_support"))


def gather_elements(node, x, index):
    # y[i][j] = x[index[i][j]][j] along dim (aten.gather): index has x's rank, no dim larger than x's
    # but dim's own; negative indices are refused (the converter passes aten's, which refuses them).
    dim = _axis(node.int("dim"), x.dim(), "attr dim")
    _check(index.dtype in (torch.int32, torch.int64), lambda: f"index must be int32 or int64, got {index.dtype}")
    _check(index.dim() == x.dim(), lambda: f"index must have x's rank {x.dim()}, got {index.dim()}")
    size = x.shape[dim]
    _check(bool(((index >= 0) & (index < size)).all()), lambda: f"index out of range [0, {size}) for dim {dim}")
    return torch.gather(x, dim, index.long())


def sort(node, x):
    # Values and int32 indices along axis. GE leaves the order of equal values open unless
    # ``stable``; here it is always the input order (a stable sort is one valid answer).
    axis = _axis(node.int("axis"), x.dim(), "attr axis")
    node.bool("stable")
    _check(x.dtype not in (torch.bfloat16, torch.float64, torch.bool), lambda: f"x dtype {x.dtype} is not one GE's Sort takes")
    values, indices = torch.sort(x, dim=axis, descending=node.bool("descending"), stable=True)
    return values, indices.to(torch.int32)


def top_k_v2(node, x, k):
    # The k largest (smallest) values along dim and their int32 indices, sorted or not; torch's
    # order for equal values is one GE allows.
    dim = _axis(node.int("dim"), x.dim(), "attr dim")
    node.expect("sort_policy", 1)  # the value TorchAir always sets; the others are not documented
    count = _int(k, "k")
    _check(0 <= count <= x.shape[dim], lambda: f"k {count} must be in [0, {x.shape[dim]}] for dim {dim}")
    values, indices = torch.topk(x, count, dim=dim, largest=node.bool("largest"), sorted=node.bool("sorted"))
    return values, indices.to(torch.int32)


@planned(1, 2, 3, 4)
def strided_slice_v2(node, begin, end, axes, strides):
    for mask in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        node.expect(mask, 0)
    begin_mask, end_mask = node.int("begin_mask"), node.int("end_mask")
    starts, stops = _ints(begin, "begin"), _ints(end, "end")
    # Without axes, entry i slices dim i and mask bit i names both; with axes, whether a bit names
    # the entry or the dim is not settled here, so masks are refused there (TorchAir sets none).
    _check(axes is None or begin_mask == end_mask == 0, "begin_mask/end_mask together with the axes input are not implemented")
    dims = _ints(axes, "axes") if axes is not None else list(range(len(starts)))
    steps = _ints(strides, "strides") if strides is not None else [1] * len(starts)
    _check(len(starts) == len(stops) == len(dims) == len(steps), "begin, end, axes and strides differ in length")
    _check(all(s != 0 for s in steps), lambda: f"strides {steps} contain 0")

    def run(x, *_):
        for i, (start, stop, dim, step) in enumerate(zip(starts, stops, _axes(dims, x.dim(), "axes"), steps, strict=True)):
            # A set mask bit i means: ignore begin[i] / end[i] and take the dim from its start / to its end.
            start = None if begin_mask >> i & 1 else start
            stop = None if end_mask >> i & 1 else stop
            start, stop, step = slice(start, stop, step).indices(x.shape[dim])
            if step > 0:
                x = x[(slice(None),) * dim + (slice(start, stop, step),)]  # a view, as torch slices
            else:
                x = torch.index_select(x, dim, torch.arange(start, stop, step))  # torch has no negative steps
        return x

    return run
