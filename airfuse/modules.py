"""Drop-in nn.Modules backed by airfuse ops.

``RMSNorm`` has the parameter and attribute names of Hugging Face's ``LlamaRMSNorm`` (``weight``,
``variance_epsilon``), so it loads the same state dict and can replace it module for module.
"""

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6, *, dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=dtype))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        return torch.ops.airfuse.rms_norm(hidden_states, self.weight, self.variance_epsilon)[0]

    def extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.variance_epsilon}"
