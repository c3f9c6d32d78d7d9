#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""optireduce/_staging.py without a GPU: torch.cuda's streams, events and pinned memory
replaced by stand-ins that log what was queued, host tensors standing in for device
ones, and a communicator that doubles float32 buffers on a thread of its own, finishing
them out of order.  What is checked is the logic a GPU cannot be needed for:

  - each tensor: copy to the host queued on the to-host stream after the current stream
    (wait_stream), its event waited for before the reduction is submitted, the result
    copied back on the to-device stream, and the future completed with that stream
    current (finish gets it), the values doubled;
  - order: reductions are submitted in hand-over order, and a host tensor handed over
    while device tensors wait for their copy is submitted after them (the ranks must
    agree on the order); with none waiting it is submitted at once, by its caller;
  - pinned buffers: one per tensor in flight, reused on the next steps once the copy back
    out of it completed (pinned_bytes stops growing), none reused while its copy back
    may still run;
  - a failed reduction completes the future with the error and returns the buffer.

  staging_fake.py [--np N]   (N ignored: one process)
"""
import contextlib
import ctypes
import random
import sys
import threading
import time

import torch

from optireduce import _staging as S

failures = []
log = []
lock = threading.Lock()


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: %s" % msg, file=sys.stderr, flush=True)


class Stream:
    count = 0

    def __init__(self, device=None):
        Stream.count += 1
        self.name = "stream%d" % Stream.count
        self.device = torch.device("cpu")

    def wait_stream(self, other):
        with lock:
            log.append(("wait_stream", self.name, other.name))


# Copies to the host (the staging's blocking events) end only while this is set: a step
# holds it clear until its host tensor is handed over, so that a rank descheduled for a
# few ms cannot see its device tensors' copies end first.
COPIES_MAY_END = threading.Event()
COPIES_MAY_END.set()


class Event:
    def __init__(self, enable_timing=False, blocking=False):
        self.done_at = None
        self.gated = blocking

    def record(self, stream):
        # A copy takes 0.5-2 ms: query() and synchronize() tell when it has ended.
        self.stream = stream.name
        self.done_at = time.perf_counter() + random.uniform(0.0005, 0.002)

    def query(self):
        return (not self.gated or COPIES_MAY_END.is_set()) and \
            time.perf_counter() >= self.done_at

    def synchronize(self):
        if self.gated:
            COPIES_MAY_END.wait()
        time.sleep(max(0.0, self.done_at - time.perf_counter()))

    def elapsed_time(self, other):
        return 1e3 * (other.done_at - self.done_at)


current = threading.local()


@contextlib.contextmanager
def stream_ctx(s):
    old = getattr(current, "s", None)
    current.s = s
    try:
        yield
    finally:
        current.s = old


DEFAULT = Stream()


def install():
    torch.cuda.Stream = Stream
    torch.cuda.Event = Event
    torch.cuda.stream = stream_ctx
    torch.cuda.device = lambda d: contextlib.nullcontext()
    torch.cuda.current_stream = lambda d=None: getattr(current, "s", None) or DEFAULT
    torch.cuda.current_device = lambda: 0
    torch.Tensor.record_stream = lambda self, s: None
    S.pinned = lambda n: torch.empty(n, dtype=torch.uint8)


class FakeComm:
    """Doubles float32 buffers on its own thread, in a shuffled order, like a worker."""

    rank = 0

    def __init__(self, fail_every=0):
        self.calls = []
        self.fail_every = fail_every
        self.cond = threading.Condition()
        self.jobs = []
        threading.Thread(target=self.run, daemon=True).start()

    def iallreduce(self, sbuf, rbuf, count, dtype, op, callback=None, keep=None):
        assert sbuf is None and dtype == "float32" and op == "sum"
        self.calls.append(rbuf)
        with self.cond:
            self.jobs.append((rbuf, count, callback, len(self.calls)))
            self.cond.notify()

    def run(self):
        while True:
            with self.cond:
                while not self.jobs:
                    self.cond.wait()
                random.shuffle(self.jobs)
                rbuf, count, callback, n = self.jobs.pop()
            time.sleep(random.uniform(0, 0.002))
            buf = (ctypes.c_float * count).from_address(rbuf)
            for i in range(count):
                buf[i] *= 2
            err = RuntimeError("injected") if self.fail_every and n % self.fail_every == 0 \
                else None
            callback(err, None)


def main():
    install()
    random.seed(5)
    comm = FakeComm()
    staging = S.Staging(comm)
    results = []
    sizes = [1000, 3000, 1000, 500]  # two tensors of one size: two buffers of it
    for step in range(6):
        done = []
        tensors = [torch.full((n,), float(step * 10 + i)) for i, n in enumerate(sizes)]
        COPIES_MAY_END.clear()
        for i, t in enumerate(tensors):
            def finish(err, stream, i=i):
                done.append((i, err, stream.name if stream is not None else None,
                             torch.cuda.current_stream().name))
            staging.submit_device(t, "float32", "sum", finish)
            if i == 1:
                # A host tensor handed over while device ones wait: queued behind them.
                h = torch.full((7,), 1.0)
                ran = staging.submit_host(lambda h=h: comm.iallreduce(
                    None, h.data_ptr(), 7, "float32", "sum", callback=lambda e, s: None,
                    keep=h))
                check(not ran, "step %d: a host tensor overtook device tensors" % step)
                COPIES_MAY_END.set()
        deadline = time.time() + 10
        while len(done) < len(sizes) and time.time() < deadline:
            time.sleep(0.001)
        check(len(done) == len(sizes), "step %d: %d of %d finished" % (step, len(done),
                                                                        len(sizes)))
        for i, err, stream, cur in done:
            check(err is None and stream is not None and stream == cur,
                  "step %d tensor %d: error %r, finished with %s current, copy back on %s"
                  % (step, i, err, cur, stream))
        for i, t in enumerate(tensors):
            check(bool((t == 2 * (step * 10 + i)).all()),
                  "step %d tensor %d: %s" % (step, i, t[:3].tolist()))
        results.append(staging.stats.pinned_bytes)
        # Reductions in hand-over order: device 0, 1, then the host tensor, then 2, 3.
        calls = comm.calls[-5:]
        check(calls[2] == h.data_ptr() and len(set(calls)) == 5,
              "step %d: submission order %s (host tensor %#x third)" % (step, calls,
                                                                      h.data_ptr()))
        time.sleep(0.005)  # the copies back complete: buffers go back to the pool
    # With nothing in flight a host tensor is submitted at once, by its caller.
    h = torch.ones(3)
    ran = staging.submit_host(lambda: comm.iallreduce(None, h.data_ptr(), 3, "float32",
                                                      "sum", callback=lambda e, s: None))
    check(ran and comm.calls[-1] == h.data_ptr(), "an idle staging queued a host tensor")
    want = sum(n * 4 for n in sizes)
    check(results[0] == want and results[-1] == want,
          "pinned bytes per step %s, want %d throughout (buffers reused)" % (results, want))
    check(staging.stats.tensors == 6 * len(sizes) and staging.stats.host_tensors_queued == 6,
          "stats %r" % staging.stats)
    waits = [e for e in log if e[0] == "wait_stream"]
    check(len(waits) == 6 * len(sizes) and all(e[2] == DEFAULT.name for e in waits),
          "copies to the host did not all wait for the current stream: %s" % waits[:3])
    # A failed reduction: the future gets the error, the buffer goes back.
    bad = S.Staging(FakeComm(fail_every=1))
    got = []
    bad.submit_device(torch.ones(10), "float32", "sum", lambda e, s: got.append((e, s)))
    deadline = time.time() + 5
    while not got and time.time() < deadline:
        time.sleep(0.001)
    check(len(got) == 1 and isinstance(got[0][0], RuntimeError) and got[0][1] is None,
          "failed reduction: %r" % got)
    check(sum(len(v) for v in bad._free.values()) == 1, "failed reduction kept its buffer")
    print("%s: %d failures" % ("FAIL" if failures else "PASS", len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
