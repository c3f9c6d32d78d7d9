# SPDX-License-Identifier: BSD-3-Clause
"""A torch.distributed backend named "optireduce".

    import optireduce.backend   # registers it
    dist.init_process_group("optireduce", ...)

all_reduce of a CPU tensor with a library dtype (int8, uint8, int32, int64,
float16, bfloat16, float32, float64) and op (SUM, AVG, MIN, MAX, PRODUCT)
goes through liboptireduce, so DistributedDataParallel needs no hook.  The
mode and parameters come from the environment (OPTIREDUCE_MODE=bounded,
OPTIREDUCE_<PARAM>=...; exact by default).  Every other collective, and
all_reduce of what the library has no dtype or op for (bitwise ops, sparse
tensors, bool...), goes to a Gloo process group made on the same store, with
Gloo's own limits; a CUDA tensor raises TypeError.  The process group's communicator is pg.optireduce (its
take_step_stats() as with the hook).

It is a Python subclass of torch.distributed.ProcessGroup (pybind11
trampoline of torch 1.13), so no C++ extension is needed; Python code calling
reduce, gather, scatter or all_to_all gets Gloo, C++ callers of those get
torch's "not supported" error.
"""
import collections

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Work

from .communicator import Communicator
from .torch import _DTYPES, _REDUCE_OPS, training_params

NAME = "optireduce"


class OptiReduceWork(Work):
    """A liboptireduce operation as a torch.distributed Work."""

    def __init__(self, future, tensors):
        super().__init__()
        self._future = future
        self._tensors = tensors

    def wait(self, timeout=None):
        self._future.wait()
        return True

    def is_completed(self):
        return self._future.done()

    def is_success(self):
        if not self._future.done():
            return False
        try:
            self._future.value()
            return True
        except Exception:
            return False

    def get_future(self):
        return self._future

    def result(self):
        self._future.wait()
        return self._tensors


def _store_allgather(store, rank, size):
    state = {"round": 0}

    def allgather(data):
        key = "optireduce/%d" % state["round"]
        state["round"] += 1
        store.set("%s/%d" % (key, rank), data)
        return [store.get("%s/%d" % (key, r)) for r in range(size)]

    return allgather


class ProcessGroupOptiReduce(dist.ProcessGroup):
    """all_reduce on liboptireduce, everything else on Gloo over the same store."""

    # A Work made here and handed to C++ (DDP's Reducer calls getFuture() on it right after
    # allreduce returns) is a Python object: if it died, torch 1.13's trampoline would find
    # no get_future and fail ("Work::getFuture not implemented").  The most recent ones are
    # kept alive for C++ callers; Python callers hold their own.
    RECENT_WORKS = 256

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._recent = collections.deque(maxlen=self.RECENT_WORKS)
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("gloo", store), rank, size, timeout)
        self.optireduce = Communicator(rank, size, _store_allgather(store, rank, size),
                                       mode=None, **training_params({}))

    def getBackendName(self):
        return NAME

    def _get_backend_name(self):
        return NAME

    def allreduce(self, tensors, opts=None):
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
        if t.device.type != "cpu":
            raise TypeError("optireduce backend: %s tensor: the library reduces host memory "
                            "and does not copy device tensors" % t.device)
        if (op is None or t.dtype not in _DTYPES or t.layout != torch.strided
                or not t.is_contiguous()):
            return self._gloo.allreduce(tensors, opts)
        future = torch.futures.Future()

        def done(error, _stats):
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(tensors)

        self.optireduce.iallreduce(None, t.data_ptr(), t.numel(), _DTYPES[t.dtype], op,
                                   callback=done, keep=t)
        work = OptiReduceWork(future, tensors)
        self._recent.append(work)
        return work

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


def _create(store, rank, size, timeout):
    return ProcessGroupOptiReduce(store, rank, size, timeout)


if NAME.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(NAME, _create)
