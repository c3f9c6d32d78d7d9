# SPDX-License-Identifier: BSD-3-Clause
"""A torch.distributed backend named "optireduce".

    import optireduce.backend   # registers it
    dist.init_process_group("optireduce", ...)

all_reduce of a host or CUDA tensor with a library dtype (int8, uint8, int32,
int64, float16, bfloat16, float32, float64) and op (SUM, AVG, MIN, MAX,
PRODUCT) goes through liboptireduce, so DistributedDataParallel needs no hook,
on CPUs or GPUs; a CUDA tensor is staged through pinned host memory as with the
hook (optireduce/_staging.py).  The mode and parameters come from the
environment (OPTIREDUCE_MODE=bounded, OPTIREDUCE_<PARAM>=...; exact by
default).  Every other collective, and all_reduce of what the library has no
dtype or op for (bitwise ops, sparse tensors, bool...), goes to a Gloo process
group made on the same store, with Gloo's own limits; a tensor on another
device (meta, xpu...) raises TypeError.  The process group's
communicator is pg.optireduce (its take_step_stats() as with the hook).

It is a Python subclass of torch.distributed.ProcessGroup, through the pybind11
trampoline that torch 1.13 and torch 2.x both have, so no C++ extension is
needed: the creator registered with Backend.register_backend returns it, and
torch 2.x uses a ProcessGroup it gets back as the group itself.  Registration
declares the devices ("cpu", "cuda") where register_backend takes them (torch
2.x); on torch 2.x the Gloo group is also registered as the group's backend for
both devices, so that what asks the group for a backend by device (object
collectives, barrier's device) finds one.  Python code calling reduce, gather,
scatter or all_to_all gets Gloo; C++ callers of those get torch's "not
supported" error.
"""
import inspect
from typing import Any, Callable, List

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

from .communicator import Communicator
from .torch import _DTYPES, _REDUCE_OPS, start_allreduce, training_params

NAME = "optireduce"
DEVICES = ["cpu", "cuda"]


def _store_allgather(store: Any, rank: int, size: int) -> Callable[[bytes], List[bytes]]:
    state = {"round": 0}

    def allgather(data):
        key = "optireduce/%d" % state["round"]
        state["round"] += 1
        store.set("%s/%d" % (key, rank), data)
        return [store.get("%s/%d" % (key, r)) for r in range(size)]

    return allgather


class ProcessGroupOptiReduce(dist.ProcessGroup):
    """all_reduce on liboptireduce, everything else on Gloo over the same store."""

    def __init__(self, store: Any, rank: int, size: int, timeout: Any) -> None:
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("gloo", store), rank, size, timeout)
        self.optireduce = Communicator(rank, size, _store_allgather(store, rank, size),
                                       mode=None, **training_params({}))
        # torch 2.x: the Gloo group is a Backend that a ProcessGroup can hold per device.
        if hasattr(self, "_register_backend"):
            for device in DEVICES:
                self._register_backend(torch.device(device), dist.ProcessGroup.BackendType.GLOO,
                                       self._gloo)

    def getBackendName(self) -> str:
        return NAME

    def _get_backend_name(self) -> str:
        return NAME

    def allreduce(self, tensors: Any, opts: Any = None) -> Any:
        if isinstance(tensors, torch.Tensor):
            tensors = [tensors]
        if opts is None:
            opts = dist.AllreduceOptions()
        elif isinstance(opts, dist.ReduceOp):
            op, opts = opts, dist.AllreduceOptions()
            opts.reduceOp = op
        op = next((ours for name, ours in _REDUCE_OPS.items()
                   if opts.reduceOp == getattr(dist.ReduceOp, name, None)), None)
        if len(tensors) != 1:
            raise ValueError("optireduce backend: one tensor per all_reduce, got %d"
                             % len(tensors))
        t = tensors[0]
        if t.device.type not in DEVICES:
            raise TypeError("optireduce backend: %s tensor: the library reduces host memory "
                            "and stages CUDA tensors through it" % t.device)
        if (op is None or t.dtype not in _DTYPES or t.layout != torch.strided
                or not t.is_contiguous()):
            return self._gloo.allreduce(tensors, opts)
        # A C++ Work around the future: DDP's Reducer holds it, not a Python object that
        # could die before its getFuture() call.
        future = start_allreduce(self.optireduce, t, _DTYPES[t.dtype], op, tensors)
        return _create_work_from_future(future)

    # Everything else: Gloo.
    def allgather(self, *args, **kwargs):
        return self._gloo.allgather(*args, **kwargs)

    def _allgather_base(self, *args, **kwargs):
        return self._gloo._allgather_base(*args, **kwargs)

    def allgather_coalesced(self, *args, **kwargs):
        return self._gloo.allgather_coalesced(*args, **kwargs)

    def allreduce_coalesced(self, *args, **kwargs):
        return self._gloo.allreduce_coalesced(*args, **kwargs)

    def alltoall(self, *args, **kwargs):
        return self._gloo.alltoall(*args, **kwargs)

    def alltoall_base(self, *args, **kwargs):
        return self._gloo.alltoall_base(*args, **kwargs)

    def barrier(self, *args, **kwargs):
        return self._gloo.barrier(*args, **kwargs)

    def monitored_barrier(self, *args, **kwargs):
        return self._gloo.monitored_barrier(*args, **kwargs)

    def broadcast(self, *args, **kwargs):
        return self._gloo.broadcast(*args, **kwargs)

    def gather(self, *args, **kwargs):
        return self._gloo.gather(*args, **kwargs)

    def reduce(self, *args, **kwargs):
        return self._gloo.reduce(*args, **kwargs)

    def reduce_scatter(self, *args, **kwargs):
        return self._gloo.reduce_scatter(*args, **kwargs)

    def scatter(self, *args, **kwargs):
        return self._gloo.scatter(*args, **kwargs)

    def send(self, *args, **kwargs):
        return self._gloo.send(*args, **kwargs)

    def recv(self, *args, **kwargs):
        return self._gloo.recv(*args, **kwargs)

    def recv_anysource(self, *args, **kwargs):
        return self._gloo.recv_anysource(*args, **kwargs)


def _create(store: Any, rank: int, size: int, timeout: Any) -> ProcessGroupOptiReduce:
    return ProcessGroupOptiReduce(store, rank, size, timeout)


def _register() -> None:
    if NAME.upper() in dist.Backend._plugins:
        return
    # Devices where the running torch's register_backend takes them (torch 2.x: without
    # them it warns and assumes these two anyway).
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        dist.Backend.register_backend(NAME, _create, extended_api=False, devices=DEVICES)
    else:
        dist.Backend.register_backend(NAME, _create)


_register()
