"""Count the airfuse ops a forward (or backward) actually dispatches."""

import collections

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class AirfuseOpCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "airfuse":
            self.counts[func._opname] += 1
        return func(*args, **(kwargs or {}))


def airfuse_op_counts(fn, *args) -> dict:
    with AirfuseOpCounter() as counter:
        fn(*args)
    return dict(counter.counts)
