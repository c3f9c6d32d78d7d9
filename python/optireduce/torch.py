# SPDX-License-Identifier: BSD-3-Clause
"""PyTorch on liboptireduce: a DDP communication hook and all_reduce.

    import torch.distributed as dist, optireduce.torch as ort
    dist.init_process_group("gloo")              # bootstrap only
    comm = ort.init(mode="bounded")              # collective over the group
    model = DistributedDataParallel(net)
    model.register_comm_hook(comm, ort.allreduce_hook)
    ...
    stats = comm.take_step_stats()               # after each step: what was lost

Tensors must be dense and contiguous, with a dtype the library has (int8,
uint8, int32, int64, float16, bfloat16, float32, float64), in host memory or on
a CUDA device; anything else raises TypeError rather than being copied behind
the caller's back.  A host tensor is reduced in place, with no copy.  A CUDA
tensor is copied to pinned host memory on a side stream, reduced, and copied
back on another; the future completes so that the current stream's next use of
the tensor follows the copy back (optireduce/_staging.py, README "GPUs").
"""
import itertools
import os
from typing import Any, Optional, Union

import torch as _torch
import torch.distributed as _dist

from ._staging import StagingStats, staging_for
from .communicator import Communicator

__all__ = ["init", "allreduce_hook", "all_reduce", "default_communicator", "library_dtype",
           "staging_stats"]

_DTYPES = {
    _torch.int8: "int8",
    _torch.uint8: "uint8",
    _torch.int32: "int32",
    _torch.int64: "int64",
    _torch.float16: "float16",
    _torch.bfloat16: "bfloat16",
    _torch.float32: "float32",
    _torch.float64: "float64",
}
_OPS = ("sum", "avg", "min", "max", "prod")
_REDUCE_OPS = {"SUM": "sum", "AVG": "avg", "MIN": "min", "MAX": "max", "PRODUCT": "prod"}

_default = None
_creations = {}  # group's ranks -> communicators made on it so far (the store key's counter)


def library_dtype(dtype: _torch.dtype) -> str:
    """The library's name for a torch dtype; TypeError if it has none."""
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise TypeError("liboptireduce has no dtype for %s (it reduces %s)" % (
            dtype, ", ".join(str(d) for d in _DTYPES))) from None


def _check_tensor(t: Any, what: str = "tensor") -> str:
    if not isinstance(t, _torch.Tensor):
        raise TypeError("%s must be a torch.Tensor, not %s" % (what, type(t).__name__))
    if t.layout != _torch.strided:
        raise TypeError("%s is %s: liboptireduce reduces dense buffers only (use dense "
                        "gradients, e.g. nn.Embedding(sparse=False))" % (what, t.layout))
    if t.device.type not in ("cpu", "cuda"):
        raise TypeError("%s is on %s: liboptireduce reduces host memory and stages CUDA "
                        "tensors through it; move it with .cpu() yourself" % (what, t.device))
    dtype = library_dtype(t.dtype)
    if not t.is_contiguous():
        raise TypeError("%s is not contiguous: liboptireduce reduces one flat buffer "
                        "(call .contiguous() yourself)" % what)
    return dtype


def _op_name(op: Any) -> str:
    if isinstance(op, str):
        if op.lower() in _OPS:
            return op.lower()
    else:
        for name, ours in _REDUCE_OPS.items():
            if hasattr(_dist.ReduceOp, name) and op == getattr(_dist.ReduceOp, name):
                return ours
    raise ValueError("op must be one of %s (or the matching torch.distributed.ReduceOp), "
                     "not %r" % ("|".join(_OPS), op))


def _store_allgather(group):
    """An allgather over the process group's store: one key per rank and round."""
    rank, size = _dist.get_rank(group), _dist.get_world_size(group)
    ranks = tuple(_dist.get_process_group_ranks(group)) if group is not None else None
    tag = "world" if ranks is None else "g" + "-".join(map(str, ranks))
    n = _creations.get(tag, 0)
    _creations[tag] = n + 1
    prefix = "optireduce/%s/%d" % (tag, n)
    store = _dist.distributed_c10d._get_default_store()
    rounds = itertools.count()

    def allgather(data):
        key = "%s/%d" % (prefix, next(rounds))
        store.set("%s/%d" % (key, rank), data)
        return [store.get("%s/%d" % (key, r)) for r in range(size)]

    return rank, size, allgather


# The deadline's calibration for training (bounded mode), unless the caller or the
# environment (OPTIREDUCE_<NAME>) says otherwise.  The library's default, 1.1x the median
# phase, cuts bursts of cross traffic in an allreduce benchmark; in a data-parallel job the
# ranks also enter each bucket's allreduce at times that differ by their backward passes,
# and on shared CPUs that skew alone put the median x 1.1 under half the steps' phases:
# 5-50 % of the gradient of most steps was estimated on a clean network, and training
# needed 150 steps instead of 110 (docs/design.md, "Deadlines and the timeout
# controller").  The 90th percentile x 1.25 still cuts a burst that doubles a phase.
# deadline_anchor stays off: its tighter deadlines cut more of the gradient, and training
# needed more steps (docs/design.md, "Anchor").  consistent is on: without it a datagram lost
# in the last phase leaves the ranks with different gradients, DDP's replicas drift apart
# (0.1-1.3 % of a random projection of the parameters under harsher cross traffic), and
# training needed 120-160 steps to 0.80 against Gloo's 110-120; with it, seed 1 reached 0.80
# at step 110 with Gloo's accuracy (bench/PERFORMANCE.md, "Time to accuracy").  multicast is
# off: DDP's buckets overlap, so a try of the group phase at the whole rate overflows
# receivers whose ingress the other bucket's sends already fill (a quarter of the
# operation's datagrams lost), and with consistent each failed try held its step to about
# two deadlines: on a clean network 12 of 110 steps took 1.5-2.9 s and bounded trained 14 %
# slower than exact (docs/design.md, "Multicast").
TRAINING_PARAMS = {"calib_percentile": "90", "calib_margin": "1.25", "consistent": "1",
                   "multicast": "off"}


def training_params(params: dict) -> dict:
    """params with TRAINING_PARAMS added where neither params nor the environment set them."""
    out = dict(params)
    for name, value in TRAINING_PARAMS.items():
        if name not in out and "OPTIREDUCE_" + name.upper() not in os.environ:
            out[name] = value
    return out


def init(mode: Optional[str] = "exact", group: Optional[Any] = None,
         **params: Any) -> Communicator:
    """A Communicator over `group` (None: the default process group).

    Collective: every rank of the group calls it, in the same order as any
    other init on that group.  torch.distributed must be initialized (any
    backend; its store carries the library's out-of-band allgather).  params
    are library parameters (optireduce_info lists them), e.g. hadamard=True,
    algorithm="ring", timeout_us=20000.  The first communicator made on the
    default group becomes the default of all_reduce and allreduce_hook.
    """
    global _default
    if not _dist.is_available() or not _dist.is_initialized():
        raise RuntimeError("optireduce.torch.init needs torch.distributed initialized first: "
                           "dist.init_process_group('gloo', ...) (it bootstraps through its store)")
    if group is not None and _dist.get_rank(group) < 0:
        raise ValueError("this rank is not a member of the group")
    rank, size, allgather = _store_allgather(group)
    comm = Communicator(rank, size, allgather, mode=mode, **training_params(params))
    if group is None and _default is None:
        _default = comm
    return comm


def default_communicator() -> Communicator:
    if _default is None:
        raise RuntimeError("no communicator: call optireduce.torch.init() first")
    return _default


def start_allreduce(comm: Communicator, tensor: _torch.Tensor, dtype: str, op: str,
                    value: Any) -> _torch.futures.Future:
    """Start reducing a checked tensor in place; a future that completes with value.

    A CUDA tensor goes through pinned host memory (optireduce/_staging.py) and its future
    is CUDA-aware: waiting on it, or a callback chained to it, orders the current stream
    after the copy back.  A host tensor is reduced where it is.
    """
    if tensor.device.type == "cuda":
        fut = _torch.futures.Future(devices=[tensor.device])

        def finish(error, _stream):
            if error is not None:
                fut.set_exception(error)
            else:
                fut.set_result(value)

        staging_for(comm).submit_device(tensor, dtype, op, finish)
        return fut
    fut = _torch.futures.Future()

    def done(error, _stats):
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(value)

    def submit():
        try:
            comm.iallreduce(None, tensor.data_ptr(), tensor.numel(), dtype, op, callback=done,
                            keep=tensor)
        except BaseException as e:  # noqa: B902 -- queued behind a device tensor: the future
            if not fut.done():
                fut.set_exception(e)
            raise

    staging = staging_for(comm, create=False)
    if staging is None:
        submit()
    else:  # now, or behind device tensors still on their way to the host
        staging.submit_host(submit)
    return fut


def staging_stats(comm: Optional[Communicator] = None) -> StagingStats:
    """What comm (None: the default) staged through pinned host memory: CUDA tensors only."""
    comm = comm if comm is not None else default_communicator()
    staging = staging_for(comm, create=False)
    return staging.stats if staging is not None else StagingStats()


def _start(comm, tensor, op, what):
    dtype = _check_tensor(tensor, what)
    comm = comm if comm is not None else default_communicator()
    return start_allreduce(comm, tensor, dtype, op, tensor)


# The hook's annotations are the ones DDP's register_comm_hook accepts (it checks them).
def allreduce_hook(state: Optional[Communicator],
                   bucket: _dist.GradBucket) -> _torch.futures.Future[_torch.Tensor]:
    """DDP communication hook: average the bucket with liboptireduce.

    state is the Communicator passed to register_comm_hook (None: the
    default).  The bucket is reduced in place on the communicator's thread
    while backward goes on; the returned future completes with the bucket.
    A CUDA bucket is staged through pinned host memory, its future CUDA-aware.
    """
    return _start(state, bucket.buffer(), "avg", "gradient bucket %d" % bucket.index())


def all_reduce(tensor: _torch.Tensor, op: Any = "sum", comm: Optional[Communicator] = None,
               async_op: bool = False) -> Union[_torch.Tensor, _torch.futures.Future]:
    """Reduce `tensor` in place over the communicator's ranks.

    op: "sum", "avg", "min", "max", "prod" or a torch.distributed.ReduceOp.
    Returns the tensor, or with async_op=True a torch.futures.Future of it.
    On a bounded communicator float sums and averages are bounded (lost data
    is estimated, see comm.take_step_stats()); other operations run exact.
    """
    fut = _start(comm, tensor, _op_name(op), "tensor")
    return fut if async_op else fut.wait()  # a CUDA tensor: the current stream waits
