# SPDX-License-Identifier: BSD-3-Clause
"""Device tensors through pinned host memory: what optireduce.torch does with a CUDA tensor.

The library reduces host memory.  A CUDA tensor handed to a communicator (a DDP
gradient bucket, an all_reduce) goes, in order:

1. on the caller's thread: a copy to a pinned host buffer is queued on a side stream
   (to_host) after the work the current stream has queued (the bucket's last gradients),
   with an event after it; the call returns at once;
2. on the communicator's staging thread: waits for that event, then submits the host
   buffer to the communicator (optireduce_iallreduce on its worker, woken at once);
3. on the worker, when the library is done: a copy back is queued on a second side
   stream (to_device), and the future completes with that stream current, so a
   CUDA-aware future (torch.futures.Future(devices=[...])) records its event there: DDP's
   or the caller's next use of the tensor on its own stream waits for the copy back,
   not the host.

The two copies of one bucket run on their own streams while the library moves other
buckets: copies overlap network work, and copies of different buckets overlap each other
(one stream per direction).  Host buffers are pinned once and reused across steps (one
per bucket in flight of each size); a buffer goes back to the pool once the copy back
out of it has completed.  Host tensors never come here: they are reduced in place, with
no copy, as before, except that while device tensors wait for their copy a host
tensor queues behind them, so that every rank starts its operations in the order they
were handed over (the library requires it).
"""
import collections
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

import torch

from .communicator import Communicator


class StagingStats:
    """What went through pinned host memory (device tensors only).

    tensors and bytes count device tensors staged (each byte copied to the host and
    back); pinned_bytes is the host memory pinned for them so far (the pool);
    host_tensors_queued counts host tensors that waited behind a device one for order.
    """

    __slots__ = ("tensors", "bytes", "pinned_bytes", "host_tensors_queued")

    def __init__(self) -> None:
        self.tensors = 0
        self.bytes = 0
        self.pinned_bytes = 0
        self.host_tensors_queued = 0

    def __repr__(self) -> str:
        return "StagingStats(%s)" % ", ".join("%s=%r" % (k, getattr(self, k))
                                             for k in self.__slots__)


class _Item:
    """One tensor on its way: a device tensor to stage, or a host one queued for order."""

    __slots__ = ("tensor", "host", "key", "to_host_done", "dtype", "op", "finish", "device",
                 "t", "events")

    def __init__(self, tensor, host, key, to_host_done, dtype, op, finish, device):
        self.tensor = tensor
        self.host = host
        self.key = key
        self.to_host_done = to_host_done
        self.dtype = dtype
        self.op = op
        # Device tensor: finish(error, stream) completes the caller's future, with the stream
        # of the copy back (None after an error).  Host tensor: finish() submits it.
        self.finish = finish
        self.device = device
        self.t: Dict[str, float] = {}  # host times (perf_counter) when timing is on
        self.events: Dict[str, Any] = {}  # CUDA events when timing is on


class Staging:
    """The staging of one communicator's device tensors (made on first use)."""

    def __init__(self, comm: Communicator, timing: bool = False) -> None:
        self._comm = comm
        self._cond = threading.Condition()
        self._queue: Deque[_Item] = collections.deque()
        self._streams: Dict[int, Tuple[Any, Any]] = {}
        self._free: Dict[Tuple[int, int], List[torch.Tensor]] = {}
        self._returning: List[Tuple[Any, Tuple[int, int], torch.Tensor]] = []
        self._pool_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self.stats = StagingStats()
        # With timing, each staged tensor's copy and reduction times are kept in records
        # (bench/gpu_staging.py): CUDA events with timing, host times around them.
        self.timing = timing
        self.records: List[Dict[str, float]] = []

    # -- pinned buffers --

    def _streams_for(self, device: torch.device) -> Tuple[int, Any, Any]:
        """The device's index and its two side streams: to the host, to the device."""
        index = device.index if device.index is not None else torch.cuda.current_device()
        streams = self._streams.get(index)
        if streams is None:
            streams = (torch.cuda.Stream(device=index), torch.cuda.Stream(device=index))
            self._streams[index] = streams
        return (index,) + streams

    def _acquire(self, key: Tuple[int, int]) -> torch.Tensor:
        with self._pool_lock:
            still = []
            for event, k, buf in self._returning:
                if event.query():
                    self._free.setdefault(k, []).append(buf)
                else:
                    still.append((event, k, buf))
            self._returning = still
            free = self._free.get(key)
            if free:
                return free.pop()
            self.stats.pinned_bytes += key[1]
        return pinned(key[1])

    def _release_after(self, event: Any, key: Tuple[int, int], buf: torch.Tensor) -> None:
        with self._pool_lock:
            if event is None:
                self._free.setdefault(key, []).append(buf)
            else:
                self._returning.append((event, key, buf))

    # -- the caller's thread --

    def submit_device(self, tensor: torch.Tensor, dtype: str, op: str,
                      finish: Callable[[Optional[BaseException], Any], None]) -> None:
        """Queue tensor's copy to the host and its reduction; finish(error, stream) runs on
        the worker once the copy back is queued on stream (None after an error)."""
        device = tensor.device
        index, to_host, to_device = self._streams_for(device)
        nbytes = tensor.numel() * tensor.element_size()
        key = (index, nbytes)
        buf = self._acquire(key)
        host = buf.view(tensor.dtype)
        flat = tensor.view(-1)
        item = _Item(tensor, buf, key, None, dtype, op, finish, device)
        with torch.cuda.device(device):
            # The tensor's values are those the current stream has queued by now.
            to_host.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(to_host):
                if self.timing:
                    item.t["handed"] = time.perf_counter()
                    item.events["to_host_start"] = _timed_event(to_host)
                host.copy_(flat, non_blocking=True)
                # Blocking: the staging thread sleeps in its synchronize() rather than spin
                # a CPU for the length of the copy.
                done = torch.cuda.Event(enable_timing=self.timing, blocking=True)
                done.record(to_host)
            # The caching allocator must not hand the memory out while a side stream uses it.
            tensor.record_stream(to_host)
            tensor.record_stream(to_device)
        item.to_host_done = done
        with self._cond:
            self.stats.tensors += 1
            self.stats.bytes += nbytes
            self._queue.append(item)
            self._cond.notify()
            self._start_thread()

    def submit_host(self, submit: Callable[[], None]) -> bool:
        """Run submit() (a host tensor's iallreduce) now if no device tensor waits for its
        copy, else queue it behind them.  True if it ran now."""
        with self._cond:
            if not self._queue:
                submit()
                return True
            item = _Item(None, None, None, None, None, None, None, None)
            item.finish = submit
            self.stats.host_tensors_queued += 1
            self._queue.append(item)
            self._cond.notify()
            return False

    # -- the staging thread: waits for each copy to the host, then submits in order --

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="optireduce-staging-%d" % self._comm.rank)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                item = self._queue[0]
            if item.to_host_done is not None:
                item.to_host_done.synchronize()  # releases the GIL
            with self._cond:
                self._queue.popleft()
                # Under the lock, so a host tensor handed over now cannot overtake it.
                if item.tensor is None:
                    try:
                        item.finish()
                    except BaseException:  # noqa: B902 -- its future holds the error
                        pass
                else:
                    self._submit(item)

    def _submit(self, item: _Item) -> None:
        if self.timing:
            item.t["submitted"] = time.perf_counter()
        try:
            self._comm.iallreduce(None, item.host.data_ptr(), item.tensor.numel(), item.dtype,
                                  item.op, callback=lambda e, _s: self._reduced(item, e),
                                  keep=item)
        except BaseException as e:  # noqa: B902 -- a closed communicator: the caller's future
            self._reduced(item, e)

    # -- the worker thread: the library is done with the host buffer --

    def _reduced(self, item: _Item, error: Optional[BaseException]) -> None:
        if self.timing:
            item.t["reduced"] = time.perf_counter()
        if error is not None:
            self._release_after(None, item.key, item.host)
            item.finish(error, None)
            return
        _, _, to_device = self._streams_for(item.device)
        try:
            with torch.cuda.device(item.device), torch.cuda.stream(to_device):
                if self.timing:
                    item.events["to_device_start"] = _timed_event(to_device)
                item.tensor.view(-1).copy_(item.host.view(item.tensor.dtype), non_blocking=True)
                back = torch.cuda.Event(enable_timing=self.timing)
                back.record(to_device)
                self._release_after(back, item.key, item.host)
                if self.timing:
                    item.events["to_device_done"] = back
                    item.events["to_host_done"] = item.to_host_done
                    self.records.append(_record(item))
                # With to_device current: a CUDA-aware future records its event here.
                item.finish(None, to_device)
        except BaseException as e:  # noqa: B902 -- the worker must go on
            item.finish(e, None)


def pinned(nbytes: int) -> torch.Tensor:
    """nbytes of page-locked host memory (what the device copies to and from directly)."""
    return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)


def _timed_event(stream: Any) -> Any:
    event = torch.cuda.Event(enable_timing=True)
    event.record(stream)
    return event


def _record(item: _Item) -> Dict[str, Any]:
    """Host times now, CUDA events resolved later (resolve_records): nothing waits here."""
    rec: Dict[str, Any] = dict(item.t)
    rec["bytes"] = item.tensor.numel() * item.tensor.element_size()
    rec["events"] = item.events
    return rec


def reference_event(device: torch.device) -> Tuple[Any, float]:
    """An event and the host time it completed: resolve_records places events on the host
    clock from it (within the tens of microseconds a synchronize takes)."""
    event = torch.cuda.Event(enable_timing=True)
    event.record(torch.cuda.current_stream(device))
    event.synchronize()
    return event, time.perf_counter()


def resolve_records(records: List[Dict[str, Any]],
                    ref: Optional[Tuple[Any, float]] = None) -> List[Dict[str, float]]:
    """Timed records with their copy times (ms) and, given a reference_event of the same
    device made before them, each copy's start and end on the host clock (perf_counter):
    to_host_t0/t1, to_device_t0/t1.  Synchronizes with the last copy back of each."""
    out = []
    for rec in records:
        ev = rec["events"]
        ev["to_device_done"].synchronize()
        r = {k: v for k, v in rec.items() if k != "events"}
        r["to_host_ms"] = ev["to_host_start"].elapsed_time(ev["to_host_done"])
        r["to_device_ms"] = ev["to_device_start"].elapsed_time(ev["to_device_done"])
        r["reduce_ms"] = 1e3 * (rec["reduced"] - rec["submitted"])
        if ref is not None:
            for name, event in (("to_host_t0", "to_host_start"), ("to_host_t1", "to_host_done"),
                                ("to_device_t0", "to_device_start"),
                                ("to_device_t1", "to_device_done")):
                r[name] = ref[1] + ref[0].elapsed_time(ev[event]) / 1e3
        out.append(r)
    return out


_make_lock = threading.Lock()


def staging_for(comm: Communicator, create: bool = True) -> Optional[Staging]:
    """The communicator's Staging (made on its first device tensor), or None."""
    staging = getattr(comm, "_staging", None)
    if staging is None and create:
        with _make_lock:
            staging = getattr(comm, "_staging", None)
            if staging is None:
                staging = comm._staging = Staging(comm)
    return staging
