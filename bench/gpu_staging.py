#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What staging CUDA buckets through pinned host memory costs, next to the allreduce.

N ranks on one host (spawned here, FileStore; rank r on GPU r mod the GPUs there are), one
optireduce communicator each (--mode, exact by default).  For each bucket size (MB of
float32): rounds of K buckets handed over back to back as DDP hands its buckets over
(async all_reduce of K CUDA tensors, then wait for all), with the staging's timing on:

  to_host, to_device   each copy's time on the GPU (CUDA events), median over buckets
  reduce               the library's time for the staged bucket (submitted to done), median
  host reduce          the same allreduce of a host tensor of that size, no copies, median
                       over R runs one at a time: the allreduce the copies are weighed
                       against
  copies/reduce        (to_host + to_device) / host reduce
  overlapped           the share of the copies' time during which another bucket of this
                       rank was inside the library (its network work), from the events
                       placed on the host clock
  round GPU, CPU       a round of K buckets end to end, staged and on host tensors

Exit 77 without CUDA.  Rank 0 prints the table; --json FILE writes the rows.

  gpu_staging.py [--np 2] [--sizes 1,5,25,50,100] [--buckets 4] [--rounds 3] [--mode exact]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def overlap(interval, others):
    """Length of interval covered by the union of others (a list of (t0, t1))."""
    t0, t1 = interval
    covered, end = 0.0, t0
    for a, b in sorted(others):
        a, b = max(a, end), min(b, t1)
        if b > a:
            covered += b - a
            end = b
    return covered


def measure(comm, staging, device, mb, buckets, rounds):
    import torch
    import optireduce.torch as ort
    from optireduce import _staging as S
    n = int(mb * (1 << 20)) // 4
    host = torch.ones(n)
    ort.all_reduce(host, comm=comm)  # warm-up: buffers, connections
    host_ms = []
    for _ in range(rounds):
        t = time.perf_counter()
        ort.all_reduce(host, comm=comm)
        host_ms.append(1e3 * (time.perf_counter() - t))
    cpu_round = []
    hosts = [torch.ones(n) for _ in range(buckets)]
    for _ in range(rounds):
        t = time.perf_counter()
        for f in [ort.all_reduce(h, comm=comm, async_op=True) for h in hosts]:
            f.wait()
        cpu_round.append(1e3 * (time.perf_counter() - t))
    del hosts
    tensors = [torch.ones(n, device=device) for _ in range(buckets)]
    for f in [ort.all_reduce(t, comm=comm, async_op=True) for t in tensors]:  # pins buffers
        f.wait()
    torch.cuda.synchronize(device)
    staging.records.clear()
    ref = S.reference_event(device)
    gpu_round = []
    for _ in range(rounds):
        t = time.perf_counter()
        for f in [ort.all_reduce(x, comm=comm, async_op=True) for x in tensors]:
            f.wait()
        torch.cuda.synchronize(device)
        gpu_round.append(1e3 * (time.perf_counter() - t))
    recs = S.resolve_records(staging.records, ref)
    staging.records.clear()
    reductions = [(r["submitted"], r["reduced"]) for r in recs]
    copy_s = overlapped_s = 0.0
    for i, r in enumerate(recs):
        others = reductions[:i] + reductions[i + 1:]
        for a, b in (("to_host_t0", "to_host_t1"), ("to_device_t0", "to_device_t1")):
            copy_s += r[b] - r[a]
            overlapped_s += overlap((r[a], r[b]), others)
    med = statistics.median
    to_host = med(r["to_host_ms"] for r in recs)
    to_device = med(r["to_device_ms"] for r in recs)
    return {"mb": mb, "buckets": buckets, "rounds": rounds,
            "to_host_ms": to_host, "to_device_ms": to_device,
            "reduce_ms": med(r["reduce_ms"] for r in recs), "host_reduce_ms": med(host_ms),
            "copies_share": (to_host + to_device) / med(host_ms),
            "overlapped": overlapped_s / copy_s if copy_s > 0 else 0.0,
            "gpu_round_ms": med(gpu_round), "cpu_round_ms": med(cpu_round),
            "to_host_gbps": mb * (1 << 20) / 1e6 / to_host,
            "to_device_gbps": mb * (1 << 20) / 1e6 / to_device}


def rank_main(rank, size, path, args):
    import torch
    import torch.distributed as dist
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=size)
    import optireduce.torch as ort
    from optireduce import _staging as S
    comm = ort.init(args.mode)
    staging = S.staging_for(comm)
    staging.timing = True
    rows = []
    for mb in [float(x) for x in args.sizes.split(",")]:
        dist.barrier()
        rows.append(measure(comm, staging, device, mb, args.buckets, args.rounds))
        if rank == 0:
            r = rows[-1]
            print("%7.1f MB  to_host %7.2f ms (%5.1f GB/s)  to_device %7.2f ms (%5.1f GB/s)  "
                  "reduce %8.2f ms  host reduce %8.2f ms  copies/reduce %5.1f %%  "
                  "overlapped %5.1f %%  round GPU %8.1f ms CPU %8.1f ms"
                  % (r["mb"], r["to_host_ms"], r["to_host_gbps"], r["to_device_ms"],
                     r["to_device_gbps"], r["reduce_ms"], r["host_reduce_ms"],
                     100 * r["copies_share"], 100 * r["overlapped"], r["gpu_round_ms"],
                     r["cpu_round_ms"]), flush=True)
    if rank == 0:
        print("%d ranks, %s, torch %s, %s, %d buckets per round, %d rounds, provider %s"
              % (size, args.mode, torch.__version__, torch.cuda.get_device_name(device),
                 args.buckets, args.rounds, comm.provider), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": size, "mode": args.mode, "torch": torch.__version__,
                           "gpu": torch.cuda.get_device_name(device), "rows": rows}, f,
                          indent=1)
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--sizes", default="1,5,25,50,100", help="bucket sizes, MB of float32")
    ap.add_argument("--buckets", type=int, default=4, help="buckets handed over per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", default="exact", choices=("exact", "bounded"))
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("gpu_staging.py: no torch: skip")
        return 77
    if not torch.cuda.is_available():
        print("gpu_staging.py: no CUDA device: skip")
        return 77
    import torch.multiprocessing as mp
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        try:
            mp.spawn(rank_main, args=(args.np, os.path.join(d, "store"), args), nprocs=args.np)
        except mp.ProcessExitedException as e:
            print(e, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
