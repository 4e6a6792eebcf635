import pytest
import torch
from torch.utils._debug_mode import DebugMode


@pytest.fixture(scope="module", autouse=True)
def _imported_before_the_ranks_fork():
    """The ranks are forked from this process (``ranks.run_ranks``): what it has loaded once, each
    rank does not load again. DebugMode's first use imports Dynamo and Inductor (seconds)."""
    with DebugMode():
        torch.ones(1).add(1)
