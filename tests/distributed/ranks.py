"""Run a function on N CPU processes joined in a gloo process group, bounded in time.

The processes are forked from a fork server that imported torch, Dynamo, airfuse and
transformers once (a fresh interpreter per rank would spend most of the test's time importing
them). Not from the test process itself: once a test has run a backward pass there, autograd's
worker threads make fork unsafe, and torch refuses it. Each rank runs one thread (the ranks share
two cores anyway). They meet through a FileStore in a fresh
directory (no port to pick); gloo's own connections bind ephemeral loopback ports. Every wait is
bounded: the process group's collectives time out, and the parent kills every rank still running
at the deadline and reports which ones hung.
"""

import datetime
import multiprocessing
import os
import queue
import tempfile
import time
import traceback

import torch
import torch.distributed as dist


def run_ranks(fn, world_size, *args, timeout=60.0):
    """``[fn(rank, world_size, *args) for rank in range(world_size)]``, each on its own rank of a
    gloo group; ``fn``'s results must pickle. A rank's exception fails the call with its traceback."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch.distributed", "torch._dynamo", "airfuse", "transformers"])
    results = context.Queue()
    with tempfile.TemporaryDirectory() as directory:
        store_path = os.path.join(directory, "store")
        processes = [
            context.Process(target=_rank_main, args=(fn, rank, world_size, store_path, timeout, results, args), daemon=True)
            for rank in range(world_size)
        ]
        for process in processes:
            process.start()
        try:
            return _collect(processes, results, world_size, timeout)
        finally:
            for process in processes:
                if process.is_alive():
                    process.kill()
                process.join(5)


def _collect(processes, results, world_size, timeout):
    deadline = time.monotonic() + timeout
    by_rank = {}
    while len(by_rank) < world_size:
        try:
            rank, ok, value = results.get(timeout=max(0.1, min(1.0, deadline - time.monotonic())))
        except queue.Empty:
            dead = [rank for rank, p in enumerate(processes) if not p.is_alive() and rank not in by_rank]
            if dead:
                raise RuntimeError(f"ranks {dead} of {world_size} exited (codes {[processes[r].exitcode for r in dead]}) without a result")
            if time.monotonic() > deadline:
                missing = sorted(set(range(world_size)) - set(by_rank))
                raise TimeoutError(f"ranks {missing} of {world_size} still running after {timeout:.0f} s: killed")
            continue
        if not ok:
            raise RuntimeError(f"rank {rank} of {world_size} failed:\n{value}")
        by_rank[rank] = value
    return [by_rank[rank] for rank in range(world_size)]


def _rank_main(fn, rank, world_size, store_path, timeout, results, args):
    try:
        torch.set_num_threads(1)
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        store = dist.FileStore(store_path, world_size)
        dist.init_process_group(
            "gloo", store=store, rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=timeout)
        )
        try:
            value = fn(rank, world_size, *args)
        finally:
            dist.destroy_process_group()
        results.put((rank, True, value))
    except BaseException:
        results.put((rank, False, traceback.format_exc()))
