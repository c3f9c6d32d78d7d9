# SPDX-License-Identifier: BSD-3-Clause
"""A liboptireduce communicator driven by one thread of its own.

The library wants a context and everything made from it used by one thread
at a time, and it progresses operations only inside its calls.  So each
Communicator has a worker thread that makes every C call after creation.
It starts every operation as soon as it is submitted (optireduce_iallreduce;
the library runs up to its max_inflight at once and queues the rest), then
alternates between optireduce_comm_progress, which progresses all of them
and sleeps in the kernel when nothing moves, and collecting the ones
optireduce_test says are done, in whatever order they finish.  Whoever
submits work calls optireduce_comm_wake, which ends that sleep: the work
starts at once rather than when the wait would have ended (docs/design.md,
"Waking the progress call").  With nothing pending the thread blocks on its
queue.  ctypes releases the GIL for the length of each call, so Python code,
the backward pass of a training step for instance, runs while data moves,
and gradient buckets overlap each other.
"""
import atexit
import collections
import ctypes
import queue
import sys
import threading
import time
import weakref
from typing import Any, Callable, List, Optional, Tuple

from . import _library as L
from .stats import Stats

_live = weakref.WeakSet()

# Longest wait inside one optireduce_comm_progress call while operations are pending.
# Finished operations and optireduce_comm_wake (called on every submission) end it at once,
# so it only bounds how long a wake-up lost to an unforeseen path could delay new work.  A
# library without optireduce_comm_wake gets POLL_MS: new work then starts within it.
WAIT_MS = 100
POLL_MS = 2
# How many of the latest submission delays Communicator.start_delays keeps.
START_DELAYS_KEPT = 4096

Callback = Callable[[Optional[BaseException], Optional[Stats]], None]


class Request:
    """One submitted operation: wait() returns its Stats or raises its error."""

    __slots__ = ("_event", "error", "stats", "_callback", "_keep", "submitted")

    def __init__(self, callback: Optional[Callback], keep: Any) -> None:
        self._event = threading.Event()
        self.error: Optional[BaseException] = None
        self.stats: Optional[Stats] = None
        self._callback = callback
        self._keep = keep  # the buffers' owners, alive until the operation ends
        self.submitted = time.perf_counter()

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: Optional[float] = None) -> Optional[Stats]:
        if not self._event.wait(timeout):
            raise TimeoutError("operation not finished after %s s" % timeout)
        if self.error is not None:
            raise self.error
        return self.stats

    def _finish(self, error, stats):
        self.error, self.stats = error, stats
        self._keep = None
        self._event.set()
        if self._callback is not None:
            try:
                self._callback(error, stats)
            except Exception:  # a failing callback must not stop the worker
                sys.excepthook(*sys.exc_info())


class Communicator:
    """A communicator of `size` ranks bootstrapped by `allgather`.

    allgather(data: bytes) -> list of `size` bytes objects (rank order), called
    collectively during creation.  mode is "exact" or "bounded" (None: the
    library's default, OPTIREDUCE_MODE or else exact); params are
    library parameters (see optireduce_info), set before the communicator
    exists, so creation-only ones (provider, timeout_min_us...) work too.
    """

    def __init__(self, rank: int, size: int, allgather: Callable[[bytes], List[bytes]],
                 mode: Optional[str] = "exact", **params: Any) -> None:
        if mode not in (None, "exact", "bounded"):
            raise ValueError("mode must be 'exact' or 'bounded', not %r" % (mode,))
        if not 0 <= rank < size:
            raise ValueError("rank %r outside 0..%r" % (rank, size - 1))
        self._lib = L.lib()
        self.rank, self.size, self.mode = int(rank), int(size), mode
        self._ctx = ctypes.c_void_p()
        self._comm = ctypes.c_void_p()
        self._lock = threading.Lock()
        self._total = Stats()
        self._step = Stats()
        self.last_status = None
        self._closed = False
        self._queue = queue.SimpleQueue()
        # Seconds from each submission to the worker's call of optireduce_iallreduce (which
        # starts the operation), the latest START_DELAYS_KEPT: what the wake-up saves.
        self.start_delays = collections.deque(maxlen=START_DELAYS_KEPT)
        self._create(allgather, params)
        self._wake = getattr(self._lib, "optireduce_comm_wake", None)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="optireduce-comm-%d" % self.rank)
        self._thread.start()
        _live.add(self)

    # -- creation, on the caller's thread (the worker does not exist yet) --

    def _create(self, allgather, params):
        lib = self._lib
        L.check(lib.optireduce_init(L.API_VERSION, ctypes.byref(self._ctx)), "optireduce_init")
        try:
            for name, value in params.items():
                if isinstance(value, bool):
                    value = "1" if value else "0"
                L.check(lib.optireduce_ctx_set_param(self._ctx, name.encode(),
                                                     str(value).encode()),
                        "parameter %s=%r" % (name, value))
            oob_error = []

            def oob(sbuf, rbuf, length, _info):
                try:
                    parts = allgather(ctypes.string_at(sbuf, length))
                    data = b"".join(parts)
                    if len(parts) != self.size or len(data) != length * self.size:
                        raise ValueError("allgather returned %d parts, %d bytes; expected %d, %d"
                                         % (len(parts), len(data), self.size,
                                            length * self.size))
                    ctypes.memmove(rbuf, data, len(data))
                    return 0
                except BaseException as e:  # noqa: B902 -- nothing may cross into C
                    oob_error.append(e)
                    return -L.EOOB

            attr = L.CommAttr()
            # C calls it only inside optireduce_comm_create; kept anyway for the object's life.
            self._oob_callback = L.OOB_ALLGATHER(oob)
            attr.oob.allgather = self._oob_callback
            attr.oob.rank, attr.oob.size = self.rank, self.size
            attr.mode = L.MODE[self.mode or "default"]
            ret = lib.optireduce_comm_create(self._ctx, ctypes.byref(attr),
                                             ctypes.byref(self._comm))
            if ret < 0:
                err = L.OptiReduceError(ret, "optireduce_comm_create")
                raise err from (oob_error[0] if oob_error else None)
        except BaseException:
            lib.optireduce_finalize(self._ctx)
            self._ctx = None
            raise
        self.provider = lib.optireduce_comm_provider(self._comm, L.MODE["exact"]).decode()
        bp = lib.optireduce_comm_provider(self._comm, L.MODE["bounded"])
        self.bounded_provider = bp.decode() if bp else None
        self.mode = "bounded" if bp else "exact"  # only a bounded communicator has one

    # -- the worker thread: every C call after creation --

    def _run(self):
        pending = []  # (C request, Request) in start order
        stopping = None
        rescan = False
        while True:
            try:
                job = self._queue.get(block=not pending and stopping is None)
            except queue.Empty:
                job = None
            while job is not None:
                if job[0] == "stop":
                    stopping = job[1]
                else:
                    self._handle(job, pending)
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    job = None
            if pending:
                wait = WAIT_MS if self._wake is not None else POLL_MS
                rescan = self._progress(pending, 0 if rescan else wait)
            elif stopping is not None:
                break
        self._destroy(stopping)

    def _progress(self, pending, timeout_ms):
        """Progress everything, then collect what is done.  True when some finished.

        optireduce_test progresses the communicator too, so an operation older than
        the one tested may finish inside it unseen: the caller then scans again
        without waiting.
        """
        lib = self._lib
        ret = lib.optireduce_comm_progress(self._comm, timeout_ms)
        if ret < 0:  # a bad handle only: operations fail through test and wait
            raise L.OptiReduceError(ret, "optireduce_comm_progress")
        still, finished = [], False
        for req, request in pending:
            if lib.optireduce_test(req) == L.INPROGRESS:
                still.append((req, request))
                continue
            st = L.Status()
            ret = lib.optireduce_wait(req, ctypes.byref(st))
            self._complete(request, ret, st)
            finished = True
        pending[:] = still
        return finished

    def _handle(self, job, pending):
        if job[0] == "op":
            _, sbuf, rbuf, count, dtype, op, request = job
            req = ctypes.c_void_p()
            self.start_delays.append(time.perf_counter() - request.submitted)
            ret = self._lib.optireduce_iallreduce(self._comm, sbuf, rbuf, count, dtype, op,
                                                  ctypes.byref(req))
            if ret < 0:
                request._finish(L.OptiReduceError(ret, "optireduce_iallreduce"), None)
            else:
                pending.append((req, request))
        elif job[0] == "call":
            _, fn, box = job
            try:
                box.append((True, fn()))
            except BaseException as e:  # noqa: B902 -- handed back to the caller
                box.append((False, e))
            box.event.set()

    def _complete(self, request, ret, st):
        one = Stats()
        one.add(st)
        with self._lock:
            self._total.merge(one)
            self._step.merge(one)
            self.last_status = st
        request._finish(L.OptiReduceError(ret, "allreduce") if ret < 0 else None, one)

    def _destroy(self, box):
        try:
            L.check(self._lib.optireduce_comm_destroy(self._comm), "optireduce_comm_destroy")
            L.check(self._lib.optireduce_finalize(self._ctx), "optireduce_finalize")
            box.append((True, None))
        except BaseException as e:  # noqa: B902
            box.append((False, e))
        box.event.set()

    # -- API for any thread --

    def _submit(self, job):
        with self._lock:
            if self._closed:
                raise RuntimeError("communicator is closed")
            self._queue.put(job)
            # Under the lock: close() cannot destroy the communicator meanwhile.
            if self._wake is not None:
                self._wake(self._comm)

    def _call(self, fn):
        """Run fn() on the worker thread (between operations) and return its result."""
        box = _Box()
        self._submit(("call", fn, box))
        box.event.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def iallreduce(self, sbuf: Optional[int], rbuf: int, count: int, dtype: str, op: str,
                   callback: Optional[Callback] = None, keep: Any = None) -> Request:
        """Start an allreduce of count elements at address rbuf (sbuf None: in place).

        dtype and op are names ("float32", "sum"...).  callback(error, stats), if
        given, runs on the worker thread when the operation ends; keep is held
        until then (the owner of the buffers).  Returns a Request.
        """
        try:
            dt, o = L.DTYPE[dtype], L.OP[op]
        except KeyError:
            raise ValueError("unknown dtype %r or op %r" % (dtype, op)) from None
        request = Request(callback, keep)
        s = L.IN_PLACE if sbuf is None else ctypes.c_void_p(sbuf)
        self._submit(("op", s, ctypes.c_void_p(rbuf), int(count), dt, o, request))
        return request

    def set_param(self, name: str, value: Any) -> None:
        """Set a parameter for the operations started after this call."""
        if isinstance(value, bool):
            value = "1" if value else "0"
        value = str(value)
        self._call(lambda: L.check(self._lib.optireduce_comm_set_param(
            self._comm, name.encode(), value.encode()), "parameter %s=%r" % (name, value)))

    def get_param(self, name: str) -> Tuple[str, str]:
        """(value, source) of a parameter; source is "default", "env" or "api"."""
        def get():
            buf = ctypes.create_string_buffer(512)
            src = ctypes.c_int()
            L.check(self._lib.optireduce_comm_get_param(self._comm, name.encode(), buf,
                                                        len(buf), ctypes.byref(src)),
                    "parameter %s" % name)
            return buf.value.decode(), ("default", "env", "api")[src.value]
        return self._call(get)

    @property
    def stats(self) -> Stats:
        """Totals since the communicator was made (a copy)."""
        with self._lock:
            s = Stats()
            s.merge(self._total)
            return s

    def take_step_stats(self) -> Stats:
        """Totals since the previous call (one training step), and start a new step."""
        with self._lock:
            s, self._step = self._step, Stats()
            return s

    def close(self) -> None:
        """Finish the operations already submitted, then free the communicator."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            box = _Box()
            self._queue.put(("stop", box))
        box.event.wait()
        self._thread.join()
        _live.discard(self)
        ok, value = box[0]
        if not ok:
            raise value

    def __enter__(self) -> "Communicator":
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<optireduce.Communicator rank %d of %d, %s, provider %s%s>" % (
            self.rank, self.size, self.mode, self.provider,
            ", bounded provider %s" % self.bounded_provider if self.bounded_provider else "")


class _Box(list):
    """A one-slot mailbox: the result of a call made on the worker thread."""

    def __init__(self):
        super().__init__()
        self.event = threading.Event()


@atexit.register
def _close_all():
    for comm in list(_live):
        try:
            comm.close()
        except Exception:
            pass
