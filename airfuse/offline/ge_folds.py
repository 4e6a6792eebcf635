"""Folds: groups of GE nodes that the offline executor's plan runs as one step.

TorchAir's GE graphs spell out what eager PyTorch does inside one call: ``F.linear(x, W)`` becomes
Transpose(W) -> Reshape(x) -> MatMul -> Reshape, and every view (view, transpose, unsqueeze, expand)
is a node of its own. Each node costs a run one step of the executor's loop and a Python call, so
a small model spends much of its time there. A fold runs such a group as one step, through a fast
function:

- linear: Transpose(W, perm [1, 0]) and [Reshape(x)] -> MatMul or MatMulV2 (no transposes, no
  bias, no offset) -> [Reshape], at least one of the Reshapes there, as ``F.linear(x, W)`` (x
  reshaped first where the Reshapes regroup its dims). Without a bias aten's linear is
  ``matmul(x, W.t())``, which flattens x's leading dims into the same ``mm`` the MatMul node
  runs: the same bits.
- views: a chain of view nodes (Reshape, Transpose, Squeeze, Unsqueeze, Identity, BroadcastTo)
  whose other inputs are Consts. The first time x comes with a layout (dtype, shape, strides and
  storage offset), the members' own functions are called one after the other; each stretch of
  them that only made views (of the tensor the stretch started from) is then, for that layout,
  one ``as_strided`` to the stretch's last view, and the calls that copied (a Reshape that cannot
  be a view) are made as they were: the same torch results (a view's elements are those its
  layout names), in one call per stretch instead of one per node.

A fold only takes nodes whose outputs nothing outside it reads (nor the graph's outputs), and
only nodes whose plan read all their attrs at compile (``ge_ops.planned``). Strictness is kept by
running the members one by one, as the unfolded plan does (their output checks, errors naming the
member node), whenever the fold meets an input signature (dtype and shape of each input) for the
first time; every output of these ops is a function of that signature. The fast function is used
for a signature only if, on that first run, it gave outputs of the same shape, strides and dtype
as the members did; otherwise (and whenever it raises) the members run.
"""

import operator

import torch
import torch.nn.functional as F

from .ge_op_base import _ints

VIEW_TYPES = frozenset({"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "BroadcastTo"})
MATMUL_TYPES = frozenset({"MatMul", "MatMulV2"})
_REMEMBERED = 64  # signatures per fold; a compiled graph sees one or a few
_dtype_and_shape = operator.attrgetter("dtype", "shape")


def find(steps, const_of, results):
    """The folds of a plan, as lists of member positions in ``steps`` (in run order), the linear
    folds (whose first member is a Transpose) before the view chains.

    ``steps`` are the plan's steps in run order (each with ``node``, ``slots``, ``first``,
    ``count`` and ``planned``); ``const_of(slot)`` is the Const tensor a slot holds, else None;
    ``results`` the slots the graph outputs."""
    producer, readers = {}, {}
    for position, step in enumerate(steps):
        for slot in range(step.first, step.first + step.count):
            producer[slot] = position
        for slot in step.slots:
            readers.setdefault(slot, []).append(position)

    def only_reader(position):
        """The step reading ``position``'s single output, when nothing else reads it (once)."""
        step = steps[position]
        if step.count != 1 or step.first in results:
            return None
        users = readers.get(step.first, [])
        return users[0] if len(users) == 1 else None

    def source(step, index):
        """The position of the step producing input ``index`` of ``step``, if a step does."""
        return producer.get(step.slots[index]) if index < len(step.slots) else None

    taken, folds = set(), []
    for position in range(len(steps)):
        members = _linear_members(steps, position, source, only_reader, const_of)
        if members and not taken.intersection(members):
            taken.update(members)
            folds.append(members)
    for position, step in enumerate(steps):
        if position in taken or not _is_view(step, const_of):
            continue
        previous = source(step, 0)
        if previous is not None and previous not in taken and _is_view(steps[previous], const_of) and only_reader(previous) == position:
            continue  # not the head of its chain
        chain = [position]
        while (
            (following := only_reader(chain[-1])) is not None and following not in taken
            and _is_view(steps[following], const_of) and source(steps[following], 0) == chain[-1]
        ):
            chain.append(following)
        if len(chain) > 1:
            taken.update(chain)
            folds.append(chain)
    return folds


def const_ints(tensor):
    """The ints of a Const index/shape input, or None when it is not one."""
    try:
        return _ints(tensor, "Const")
    except ValueError:
        return None


def _is_view(step, const_of):
    """A planned view node whose inputs after the first are Consts."""
    return step.node.type in VIEW_TYPES and step.planned and all(const_of(slot) is not None for slot in step.slots[1:])


def _flag_false(node, name):
    return node.attrs.get(name) == ("b", False)


def _linear_members(steps, position, source, only_reader, const_of):
    """[transpose, reshape?, matmul, reshape?] positions when ``position`` is a MatMul that a
    linear fold can take (see the module's docstring), else None."""
    step = steps[position]
    node = step.node
    if node.type not in MATMUL_TYPES or not step.planned or not all(_flag_false(node, f) for f in ("transpose_x1", "transpose_x2")):
        return None
    if any(slot != 0 for slot in step.slots[2:]):  # a bias or offset_w is fed (slot 0: unfed)
        return None
    transpose = source(step, 1)
    if transpose is None or only_reader(transpose) != position or not _is_view(steps[transpose], const_of):
        return None
    if steps[transpose].node.type != "Transpose" or const_ints(const_of(steps[transpose].slots[1])) != [1, 0]:
        return None
    before = source(step, 0)
    head = before if before is not None and steps[before].node.type == "Reshape" and only_reader(before) == position and _is_view(steps[before], const_of) else None
    after = only_reader(position)
    tail = after if after is not None and steps[after].node.type == "Reshape" and _is_view(steps[after], const_of) else None
    if head is None and tail is None:
        return None  # a bare MatMul of a transposed weight gains too little to fold
    return [p for p in (transpose, head, position, tail) if p is not None]


def linear(x_shape):
    """fast(weight, x) of a linear fold: ``x_shape`` is x's shape as F.linear must see it, [*lead,
    -1] when the tail Reshape makes [*lead, N] (so the rows of the product are laid out as the tail's
    are), else the head Reshape's [M, K]. x is reshaped only when its shape differs (a reshape to
    its own shape would be a view of the same layout: the same result)."""
    x_shape = tuple(x_shape)
    *lead, last = x_shape
    lead = tuple(lead) if -1 not in lead else None

    def run(weight, x):
        if lead is None or x.shape[:-1] != lead or (last != -1 and x.shape[-1] != last):
            x = x.reshape(x_shape)
        return F.linear(x, weight)

    return run


def linear_input_shape(head_dims, tail_dims):
    """The ``x_shape`` of ``linear`` for a fold with these Reshape dims (None: that Reshape is absent)."""
    return [*tail_dims[:-1], -1] if tail_dims is not None else head_dims


def strided(calls):
    """fast(x) of a view chain: the members' ``calls`` (each with its bound Const inputs), and for
    a layout of x met before, its replay (see the module's docstring)."""
    calls = tuple(calls)
    replays = {}  # x's layout -> [(call, consts) or (None, (size, stride, storage offset))]

    def run(x):
        layout = (x.dtype, x.shape, x.stride(), x.storage_offset())
        replay = replays.get(layout)
        if replay is not None:
            for call, args in replay:
                x = call(x, *args) if call is not None else x.as_strided(*args)
            return x
        replay, start = [], x  # start: the tensor the current stretch of views began from
        for call, consts in calls:
            y = call(x, *consts)
            if y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr():
                if x is not start:
                    replay.append((None, (x.shape, x.stride(), x.storage_offset())))
                replay.append((call, consts))
                start = y
            x = y
        if x is not start:
            replay.append((None, (x.shape, x.stride(), x.storage_offset())))
        if len(replays) >= _REMEMBERED:
            replays.clear()
        replays[layout] = replay
        return x

    return run


class Fold:
    """What a run calls for a fold: ``fast`` for an input signature that passed, else ``unfolded``
    (the members one by one, with their checks), which then decides whether ``fast`` may serve
    that signature."""

    def __init__(self, unfolded, fast):
        self.unfolded, self.fast = unfolded, fast
        self.judged = {}  # signature -> whether fast serves it

    def __call__(self, *inputs):
        signature = tuple(map(_dtype_and_shape, inputs))
        serves = self.judged.get(signature)
        if serves:
            try:
                return self.fast(*inputs)
            except Exception:
                pass  # the members raise the error, naming the node (or give the result)
        out = self.unfolded(*inputs)
        if serves is None:
            if len(self.judged) >= _REMEMBERED:
                self.judged.clear()
            self.judged[signature] = self._same_layout(inputs, out)
        return out

    def _same_layout(self, inputs, out):
        try:
            return _layout(self.fast(*inputs)) == _layout(out)
        except Exception:
            return False


def _layout(out):
    outputs = out if type(out) is tuple else (out,)
    return [(t.dtype, t.shape, t.stride()) if isinstance(t, torch.Tensor) else t for t in outputs]
