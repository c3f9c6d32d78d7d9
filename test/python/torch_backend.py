#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The "optireduce" torch.distributed backend on N ranks (spawned here, on loopback).

  - init_process_group("optireduce") works and all_reduce goes through the library
    (its communicator counts the operations), sum and max exact, async too;
  - what the library has no op for (BAND) goes to Gloo and is right;
  - a device tensor raises TypeError;
  - DistributedDataParallel on it, without a hook, keeps the same parameters as the same
    model on a Gloo group, step by step, with more than one bucket;
  - broadcast and all_gather (Gloo) work.

  torch_backend.py --np N
"""
import argparse
import os
import sys
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("rank %d: FAIL: %s" % (dist.get_rank(), msg), file=sys.stderr, flush=True)


def make_model():
    torch.manual_seed(3)
    # 2.1 MiB of parameters: more than DDP's 1 MiB first bucket, so several buckets.
    return nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def body(rank, size):
    pg = dist.distributed_c10d._get_default_group()
    comm = pg.optireduce
    check(pg.getBackendName() == "optireduce", "backend name %r" % pg.getBackendName())
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    check(bool((t == size * (size + 1) / 2).all()), "sum: %s" % t[:4].tolist())
    t = torch.arange(6, dtype=torch.int64) * (rank + 1)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    check(torch.equal(t, torch.arange(6) * size), "max: %s" % t.tolist())
    t = torch.full((5,), float(rank))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    check(work.is_completed() and bool((t == size * (size - 1) / 2).all()), "async: %s" % t)
    ops = comm.stats.operations
    check(ops == 3, "the library ran %d of 3 all_reduce" % ops)
    t = torch.tensor([7, 6, 5], dtype=torch.int32) - rank
    dist.all_reduce(t, op=dist.ReduceOp.BAND)
    want = torch.tensor([7, 6, 5], dtype=torch.int32)
    for r in range(1, size):
        want &= torch.tensor([7, 6, 5], dtype=torch.int32) - r
    check(torch.equal(t, want) and comm.stats.operations == ops, "band (gloo): %s" % t)
    try:
        dist.all_reduce(torch.zeros(3, device="meta"))
        check(False, "a device tensor did not raise")
    except TypeError as e:
        check("host memory" in str(e), "device tensor: %s" % e)

    gloo = dist.new_group(backend="gloo")
    net = DDP(make_model(), bucket_cap_mb=0.25)
    ref = DDP(make_model(), bucket_cap_mb=0.25, process_group=gloo)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (net, ref)]
    before = comm.stats.operations
    for step in range(3):
        g = torch.Generator().manual_seed(100 * step + rank)
        x, y = torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g)
        for m, o in zip((net, ref), opts):
            o.zero_grad()
            nn.functional.cross_entropy(m(x), y).backward()
            o.step()
        for p, q in zip(net.parameters(), ref.parameters()):
            check(torch.allclose(p, q, rtol=1e-5, atol=1e-6),
                  "DDP step %d: parameters differ by %g" % (step, (p - q).abs().max().item()))
    ddp_ops = comm.stats.operations - before
    # DDP rebuilds its buckets after the first step, which may have only one.
    check(ddp_ops >= 1 + 2 * 2, "DDP: %d library operations in 3 steps (want >= 2 buckets "
          "after the first)" % ddp_ops)

    b = torch.full((4,), float(rank))
    dist.broadcast(b, src=size - 1)
    check(bool((b == size - 1).all()), "broadcast: %s" % b)
    out = [torch.zeros(2) for _ in range(size)]
    dist.all_gather(out, torch.full((2,), float(rank)))
    check(all(bool((o == r).all()) for r, o in enumerate(out)), "all_gather: %s" % out)
    if rank == 0:
        print("backend: all_reduce on the library (%d operations, %d from DDP), BAND, "
              "broadcast and all_gather on Gloo; DDP equal to Gloo's over 3 steps"
              % (comm.stats.operations, ddp_ops))


def rank_main(rank, size, path):
    import faulthandler
    # A hang shows where every thread was, instead of only the timeout of run.sh.
    faulthandler.dump_traceback_later(240, exit=True)
    os.environ.pop("OPTIREDUCE_MODE", None)
    import optireduce.backend  # noqa: F401 -- registers "optireduce"
    dist.init_process_group("optireduce", init_method="file://" + path, rank=rank,
                            world_size=size)
    try:
        body(rank, size)
    except Exception:
        traceback.print_exc()
        failures.append("exception")
    t = torch.tensor([float(len(failures))])
    dist.all_reduce(t)
    if rank == 0:
        print("%s: %d failures" % ("FAIL" if t.item() else "PASS", t.item()))
    # No teardown (see torch_ddp.py): DDP's Reducer can hang the interpreter's exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if t.item() else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        try:
            mp.spawn(rank_main, args=(args.np, os.path.join(d, "store")), nprocs=args.np)
        except mp.ProcessExitedException as e:
            print(e, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
