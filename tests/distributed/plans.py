"""The three ways the tests spread a Hugging Face causal LM over ranks, as users write them.

- ``ddp``: ``DistributedDataParallel``; each rank trains on its slice of the batch.
- ``fsdp2``: ``fully_shard`` on every decoder layer and on the model; each rank its batch slice.
- ``tp``: torchtitan's Llama plan on Hugging Face's module names: attention and MLP projections
  column/row parallel, every RMSNorm sequence parallel (activations split along the sequence
  between the blocks), the embedding vocab-parallel, the LM head column parallel with replicated
  logits. Every rank sees the whole batch. Two departures, each forced by Hugging Face's model:
  the embedding's output stays a DTensor (Hugging Face derives positions and the causal mask from
  its shape, which must be the global one), and the gate/up projections return DTensors split
  along the features, so the MLP's activation runs on DTensors too. Qwen3's per-head q/k norms
  are sequence parallel along the heads (dim 2 of [batch, seq, heads, head_dim]), which is how
  their gradients get summed over the ranks.

``split_batch(plan, ids, rank, world_size)`` is the part of the batch a rank trains on, and
``gradients(plan, model)`` every parameter's gradient as a full tensor, by the reference model's
parameter names.
"""

import torch
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch.distributed.tensor.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)

PLANS = ("ddp", "fsdp2", "tp")


def parallelize(plan, model, world_size):
    mesh = init_device_mesh("cpu", (world_size,))
    if plan == "ddp":
        return torch.nn.parallel.DistributedDataParallel(model)
    if plan == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh)
        return fully_shard(model, mesh=mesh)
    if plan == "tp":
        return _tensor_parallel(model, mesh)
    raise ValueError(f"unknown plan {plan!r}; expected one of {PLANS}")


def _tensor_parallel(model, mesh):
    parallelize_module(
        model,
        mesh,
        {
            "model.embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1), use_local_output=False),
            "model.norm": SequenceParallel(),
            "lm_head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()),
        },
    )
    for layer in model.model.layers:
        block = {
            "input_layernorm": SequenceParallel(),
            "self_attn": PrepareModuleInput(
                input_kwarg_layouts={"hidden_states": Shard(1)}, desired_input_kwarg_layouts={"hidden_states": Replicate()}
            ),
            "self_attn.q_proj": ColwiseParallel(),
            "self_attn.k_proj": ColwiseParallel(),
            "self_attn.v_proj": ColwiseParallel(),
            "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
            "post_attention_layernorm": SequenceParallel(),
            "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "mlp.gate_proj": ColwiseParallel(use_local_output=False),
            "mlp.up_proj": ColwiseParallel(use_local_output=False),
            "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
        }
        if hasattr(layer.self_attn, "q_norm"):
            block["self_attn.q_norm"] = SequenceParallel(sequence_dim=2, use_local_output=True)
            block["self_attn.k_norm"] = SequenceParallel(sequence_dim=2, use_local_output=True)
        parallelize_module(layer, mesh, block)
    return model


def split_batch(plan, ids, rank, world_size):
    if plan == "tp":
        return ids
    return ids.chunk(world_size)[rank]


def _full(tensor):
    return tensor.full_tensor() if isinstance(tensor, DTensor) else tensor


def gradients(plan, model) -> dict:
    module = model.module if plan == "ddp" else model
    return {name: _full(p.grad) for name, p in module.named_parameters()}
