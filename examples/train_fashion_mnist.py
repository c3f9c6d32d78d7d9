#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Data-parallel training of an MLP on Fashion-MNIST over Gloo or liboptireduce.

Every rank trains the same model (PyTorch DistributedDataParallel) on its own
share of each global batch; gradients are averaged by PyTorch's Gloo backend
(--comm gloo) or by liboptireduce through optireduce.torch.allreduce_hook in
exact or bounded mode.  Fixed seeds: the three ways see the same data in the
same order from the same initial weights.  Stops at --target test accuracy or
after --max-steps.

Rank 0 writes a CSV (one row per step; '#' lines describe the run) and a JSON
summary next to it, and prints a progress line at each evaluation.

    train wall time (wall_s): the sum of the steps' times (forward, backward,
        gradient averaging, optimizer), without the evaluations.
    test accuracy: every --eval-every steps on the first --eval-samples test
        images; at the end on all 10000.
    lost: share of gradient elements that bounded mode estimated instead of
        received (struct optireduce_status: elements expected minus received).
    blocks_empty: block contributions of which no element arrived, estimated
        whole (contributions_missing); partly lost blocks are rescaled and count
        only in lost, so under a few percent of random loss this stays 0.
    overlap: the most buckets in flight at once when one of the step's started.
    comm_s: a step's gradient averaging, from its first bucket handed to the
        hook to its last one reduced.
    The rest of the step (step_s - comm_s), in its parts: fwd_s, the forward
        pass and loss; pre_s, zero_grad and the backward pass until its first
        bucket is handed over; post_s, from the last bucket reduced until the
        backward pass returns (DDP copies the buckets into the gradients);
        opt_s, the optimizer step.
    cpu_s: the CPU time of the process (every thread: the library's and Gloo's
        included) during the step; the JSON summary's cpu_per_step_s is its mean
        over ranks and steps; fwd_cpu_s, the forward pass's share.
    start_spread_p50_ms (JSON): the median over steps of how far apart the ranks
        began the step, meaningful where the ranks share a clock (one machine).

Launch (Debian's /usr/bin/python3 has torch; the first python3 on PATH may not):
    torchrun --nproc_per_node 4 examples/train_fashion_mnist.py --comm bounded
    mpirun -np 4 /usr/bin/python3 examples/train_fashion_mnist.py --comm exact
    test/cluster/cluster.sh run -n 4 -- /usr/bin/python3 examples/train_fashion_mnist.py ...
Debian 12's torchrun (torch 1.13 on Python 3.11) fails parsing its default --redirects
("'NoneType' object has no attribute 'get'"); naming a local rank that does not exist works
around it: torchrun --redirects 9:1 --tee 9:1 --nproc_per_node 4 ...
Rank and size come from RANK/WORLD_SIZE (torchrun) or OMPI_COMM_WORLD_RANK/SIZE (mpirun).
On the emulated cloud (hostname orc-hN) the rendezvous defaults to 198.18.0.1 and Gloo
to eth0.  The optireduce package comes from PYTHONPATH (e.g. build/python) or the install.
"""
import argparse
import datetime
import gzip
import json
import math
import os
import socket
import struct
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

DATA_DIR = "/usr/share/datasets/fashion-mnist"
# Mean and standard deviation of the training images' pixels (0..1).
PIXEL_MEAN, PIXEL_STD = 0.2860, 0.3530


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--comm", choices=("gloo", "exact", "bounded"), default="bounded",
                    help="gradient averaging: PyTorch's Gloo backend, or liboptireduce's mode")
    ap.add_argument("--target", type=float, default=0.80, help="stop at this test accuracy")
    ap.add_argument("--max-steps", type=int, default=500, help="stop after this many steps")
    ap.add_argument("--batch", type=int, default=32, help="samples per rank and step")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--hidden", default="1024,1024",
                    help="hidden layer widths; 1024,1024 is 1.86 M parameters (7.4 MB)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=10, help="steps between evaluations")
    ap.add_argument("--eval-samples", type=int, default=10000,
                    help="test images used by the evaluations during training")
    ap.add_argument("--bucket-mb", type=float, default=25, help="DDP bucket_cap_mb")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="liboptireduce parameter (optireduce_info lists them); repeatable")
    ap.add_argument("--data", default=DATA_DIR, help="Fashion-MNIST IDX files (gzipped or not)")
    ap.add_argument("--csv", help="output CSV (default fashion_mnist_<comm>.csv)")
    ap.add_argument("--label", default="", help="free text recorded in the CSV, e.g. scenario")
    ap.add_argument("--master-addr", help="rendezvous host (default MASTER_ADDR, on the "
                    "emulated cloud 198.18.0.1, else 127.0.0.1)")
    ap.add_argument("--master-port", type=int, default=int(os.environ.get("MASTER_PORT", 29500)))
    ap.add_argument("--timeout", type=float, default=600, help="rendezvous timeout, seconds")
    args = ap.parse_args(argv)
    args.csv = args.csv or "fashion_mnist_%s.csv" % args.comm
    args.hidden = [int(h) for h in args.hidden.split(",") if h]
    params = {}
    for p in args.param:
        name, sep, value = p.partition("=")
        if not sep:
            ap.error("--param wants NAME=VALUE, got %r" % p)
        params[name] = value
    args.params = params
    return args


def world():
    """(rank, size) from torchrun's or Open MPI's environment."""
    for r, s in (("RANK", "WORLD_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        if r in os.environ and s in os.environ:
            return int(os.environ[r]), int(os.environ[s])
    return 0, 1


def on_emulated_cloud():
    return socket.gethostname().startswith("orc-h")


def read_idx(path):
    """An IDX file (unsigned bytes), gzipped or not, as a uint8 tensor."""
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            path = p
            break
    else:
        raise FileNotFoundError("%s(.gz) not found (Debian package dataset-fashion-mnist)"
                                % path)
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    if magic >> 8 != 0x08:  # 0x08: unsigned byte elements
        raise ValueError("%s: not an unsigned-byte IDX file (magic %#x)" % (path, magic))
    ndim = magic & 0xff
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = bytearray(data[4 + 4 * ndim:])
    if len(body) != math.prod(dims):
        raise ValueError("%s: %d bytes for dimensions %s" % (path, len(body), dims))
    return torch.frombuffer(body, dtype=torch.uint8).reshape(dims)


def load(data_dir):
    def images(name):
        return read_idx(os.path.join(data_dir, name)).reshape(-1, 784)

    return (images("train-images-idx3-ubyte"),
            read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte")).long(),
            images("t10k-images-idx3-ubyte"),
            read_idx(os.path.join(data_dir, "t10k-labels-idx1-ubyte")).long())


def normalize(x):
    return (x.float() / 255 - PIXEL_MEAN) / PIXEL_STD


def make_model(hidden, seed):
    torch.manual_seed(seed)
    layers, width = [], 784
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, 10))


class Batches:
    """Global batch of step s: size*batch samples of a per-epoch seeded permutation."""

    def __init__(self, x, y, rank, size, batch, seed):
        self.x, self.y, self.rank, self.size, self.batch, self.seed = x, y, rank, size, batch, seed
        self.per_epoch = len(x) // (size * batch)
        self.epoch, self.perm = -1, None

    def get(self, step):
        epoch, k = divmod(step - 1, self.per_epoch)
        if epoch != self.epoch:
            g = torch.Generator().manual_seed(self.seed * 1000003 + epoch)
            self.epoch, self.perm = epoch, torch.randperm(len(self.x), generator=g)
        start = (k * self.size + self.rank) * self.batch
        idx = self.perm[start:start + self.batch]
        return normalize(self.x[idx]), self.y[idx]


def evaluate(net, x, y, rank, size, n):
    """Test accuracy on the first n images, each rank taking every size-th one."""
    idx = torch.arange(rank, min(n, len(x)), size)
    correct = 0
    with torch.no_grad():
        for chunk in idx.split(1000):
            correct += int((net(normalize(x[chunk])).argmax(1) == y[chunk]).sum())
    t = torch.tensor([correct, len(idx)], dtype=torch.float64)
    dist.all_reduce(t)
    return t[0].item() / t[1].item()


class CommTimer:
    """Wraps a DDP hook: the span from a step's first bucket to its last one reduced."""

    def __init__(self, inner):
        self.inner, self.first, self.last, self.buckets = inner, None, None, 0

    def hook(self, state, bucket):
        if self.first is None:
            self.first = time.perf_counter()

        def done(fut):
            self.last = time.perf_counter()
            self.buckets += 1
            return fut.value()

        return self.inner(state, bucket).then(done)

    def take(self):
        """(first bucket handed over, last one reduced, buckets) of the step; resets."""
        got = (self.first, self.last, self.buckets)
        self.first, self.last, self.buckets = None, None, 0
        return got


def gloo_hook(group, bucket):
    """Gloo's allreduce of the bucket, averaged: what DDP does without a hook."""
    t = bucket.buffer().div_(dist.get_world_size(group))
    return dist.all_reduce(t, group=group, async_op=True).get_future().then(
        lambda f: f.value()[0])


def percentile(values, q):
    """Nearest-rank percentile."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]


COLUMNS = ("step", "wall_s", "elapsed_s", "step_s", "comm_s", "buckets", "loss", "test_acc",
           "train_loss_all", "lost", "lost_all", "blocks_empty", "overlap", "deadline_ms",
           "hard_bounds", "replica_spread", "fwd_s", "pre_s", "post_s", "opt_s", "cpu_s",
           "fwd_cpu_s")


def replica_spread(net, seed):
    """How far the ranks' model replicas are apart: the spread over ranks of one random
    projection of all parameters, relative to its mean.  0 while replicas are identical
    (Gloo, exact, bounded with consistent=1); bounded mode without it lets the ranks end an
    operation with different values, and the replicas drift."""
    g = torch.Generator().manual_seed(seed)
    proj = sum(float((p.detach().double().flatten() *
                      torch.randn(p.numel(), generator=g, dtype=torch.float64)).sum())
               for p in net.parameters())
    hi_lo = torch.tensor([proj, -proj], dtype=torch.float64)
    total = torch.tensor([proj], dtype=torch.float64)
    dist.all_reduce(hi_lo, op=dist.ReduceOp.MAX)
    dist.all_reduce(total)
    mean = total.item() / dist.get_world_size()
    return (hi_lo[0].item() + hi_lo[1].item()) / abs(mean) if mean else 0.0


def setup(args):
    rank, size = world()
    cloud = on_emulated_cloud()
    if cloud:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "eth0")
    addr = args.master_addr or os.environ.get("MASTER_ADDR") or (
        "198.18.0.1" if cloud else "127.0.0.1")
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (addr, args.master_port),
                            rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=args.timeout))
    return rank, size


def main(argv=None):
    args = parse_args(argv)
    rank, size = setup(args)
    x_train, y_train, x_test, y_test = load(args.data)
    net = DDP(make_model(args.hidden, args.seed), bucket_cap_mb=args.bucket_mb)
    nparams = sum(p.numel() for p in net.parameters())
    comm = None
    if args.comm == "gloo":
        timer = CommTimer(gloo_hook)
        net.register_comm_hook(None, timer.hook)
    else:
        import optireduce.torch as ort
        comm = ort.init(args.comm, **args.params)
        timer = CommTimer(ort.allreduce_hook)
        net.register_comm_hook(comm, timer.hook)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=args.momentum)
    batches = Batches(x_train, y_train, rank, size, args.batch, args.seed)

    out = None
    if rank == 0:
        out = open(args.csv, "w")
        head = {
            "command": " ".join([sys.executable] + sys.argv), "label": args.label,
            "comm": args.comm, "ranks": size, "parameters": nparams,
            "gradient_mb": round(nparams * 4 / 1e6, 2), "hidden": args.hidden,
            "batch_per_rank": args.batch, "lr": args.lr, "momentum": args.momentum,
            "seed": args.seed, "target": args.target, "max_steps": args.max_steps,
            "eval_every": args.eval_every, "eval_samples": args.eval_samples,
            "bucket_mb": args.bucket_mb, "library_params": args.params,
            "library": (repr(comm) if comm else "torch %s gloo" % torch.__version__),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        }
        for k, v in head.items():
            out.write("# %s: %s\n" % (k, v))
        out.write(",".join(COLUMNS) + "\n")
        print("[%s] %d ranks, %d parameters (%.1f MB of gradient), batch %d per rank, target "
              "%.3f; %s" % (args.comm, size, nparams, nparams * 4 / 1e6, args.batch,
                            args.target, head["library"]), flush=True)

    step_times, comm_times, reached_at = [], [], None
    wall = cpu_train = 0.0
    starts = []  # each step's start (CLOCK_MONOTONIC, the same clock on every rank of a host)
    loss_sum = 0.0
    lost_since = [0, 0]  # elements lost and expected on this rank since the last evaluation
    dist.barrier()
    t_start = time.perf_counter()
    acc = float("nan")
    for step in range(1, args.max_steps + 1):
        x, y = batches.get(step)
        t0, c0 = time.perf_counter(), time.process_time()
        loss = nn.functional.cross_entropy(net(x), y)
        t_fwd, c_fwd = time.perf_counter(), time.process_time()
        starts.append(t0)
        opt.zero_grad()
        loss.backward()
        t_bwd = time.perf_counter()
        opt.step()
        t_end = time.perf_counter()
        dt = t_end - t0
        cpu = time.process_time() - c0
        cpu_train += cpu
        wall += dt
        step_times.append(dt)
        first, last, nbuckets = timer.take()
        span = last - first if first is not None and last is not None else 0.0
        comm_times.append(span)
        loss_sum += loss.item()
        st = comm.take_step_stats() if comm else None
        row = {"step": step, "wall_s": "%.4f" % wall,
               "elapsed_s": "%.3f" % (time.perf_counter() - t_start), "step_s": "%.4f" % dt,
               "comm_s": "%.4f" % span, "buckets": nbuckets, "loss": "%.5f" % loss.item(),
               "fwd_s": "%.4f" % (t_fwd - t0), "opt_s": "%.4f" % (t_end - t_bwd),
               "cpu_s": "%.4f" % cpu, "fwd_cpu_s": "%.4f" % (c_fwd - c0)}
        if first is not None and last is not None:
            row.update(pre_s="%.4f" % (first - t_fwd), post_s="%.4f" % (t_bwd - last))
        if st is not None:
            row.update(lost="%.6f" % st.fraction_lost, blocks_empty=st.contributions_missing,
                       overlap=st.ops_in_flight_max,
                       deadline_ms="%.3f" % (st.deadline_us_max / 1e3),
                       hard_bounds=st.hard_bounds)
            # Summed over ranks at evaluations only: one more collective per step would
            # change what is measured.
            lost_since[0] += st.elements_lost
            lost_since[1] += st.elements_expected
        if step % args.eval_every == 0 or step == args.max_steps:
            acc = evaluate(net.module, x_test, y_test, rank, size, args.eval_samples)
            t = torch.tensor([loss_sum / args.eval_every] + lost_since, dtype=torch.float64)
            lost_since = [0, 0]
            dist.all_reduce(t)
            row["test_acc"] = "%.4f" % acc
            row["replica_spread"] = "%.3g" % replica_spread(net.module, step)
            row["train_loss_all"] = "%.5f" % (t[0].item() / size)
            if comm is not None and comm.mode == "bounded" and t[2] > 0:
                row["lost_all"] = "%.6f" % (t[1].item() / t[2].item())
            loss_sum = 0.0
            if rank == 0:
                print("[%s] step %4d  train %7.1f s  loss %.3f  test acc %.4f  step P50 %.3f s"
                      "%s" % (args.comm, step, wall, t[0].item() / size, acc,
                              percentile(step_times, 50),
                              "  lost %.3f%%" % (100 * float(row["lost_all"]))
                              if "lost_all" in row else ""), flush=True)
            if acc >= args.target and reached_at is None:
                reached_at = (step, wall, time.perf_counter() - t_start)
        if out:
            out.write(",".join(str(row.get(c, "")) for c in COLUMNS) + "\n")
            out.flush()
        if reached_at:
            break
    final_acc = evaluate(net.module, x_test, y_test, rank, size, len(x_test))
    total = comm.stats if comm else None
    cpu_all = torch.tensor([cpu_train], dtype=torch.float64)
    dist.all_reduce(cpu_all)
    mine = torch.tensor(starts, dtype=torch.float64)
    every = [torch.zeros_like(mine) for _ in range(size)]
    dist.all_gather(every, mine)
    spread = (torch.stack(every).max(0).values - torch.stack(every).min(0).values).median()
    if rank == 0:
        summary = {
            "comm": args.comm, "label": args.label, "ranks": size, "parameters": nparams,
            "target": args.target, "reached": reached_at is not None,
            "steps": step, "tta_steps": reached_at[0] if reached_at else None,
            "tta_s": round(reached_at[1], 3) if reached_at else None,
            "tta_elapsed_s": round(reached_at[2], 3) if reached_at else None,
            "train_s": round(wall, 3), "last_eval_acc": acc, "final_acc": final_acc,
            "step_p50_s": round(percentile(step_times, 50), 4),
            "step_p99_s": round(percentile(step_times, 99), 4),
            "comm_p50_s": round(percentile(comm_times, 50), 4),
            "comm_p99_s": round(percentile(comm_times, 99), 4),
            "cpu_per_step_s": round(cpu_all.item() / size / step, 4),
            "start_spread_p50_ms": round(1e3 * spread.item(), 2),
            "rank0_fraction_lost": total.fraction_lost if total else 0.0,
            "rank0_hard_bounds": total.hard_bounds if total else 0,
            "csv": os.path.abspath(args.csv),
        }
        out.write("# final_acc (all %d test images): %.4f\n" % (len(x_test), final_acc))
        out.close()
        with open(os.path.splitext(args.csv)[0] + ".json", "w") as f:
            json.dump(summary, f, indent=1)
        print("[%s] %s after %d steps, %.1f s of training; final test acc %.4f; step P50 %.3f "
              "P99 %.3f s; averaging P50 %.3f P99 %.3f s" % (
                  args.comm, "target reached" if reached_at else "target NOT reached", step,
                  wall, final_acc, summary["step_p50_s"], summary["step_p99_s"],
                  summary["comm_p50_s"], summary["comm_p99_s"]), flush=True)
    if comm is not None:
        comm.close()
    dist.barrier()
    return 0


if __name__ == "__main__":
    code = main()
    # Leave without tearing DDP down: in torch 1.13 the Reducer's destructor joins Gloo's
    # worker threads while holding the GIL, and a worker that frees a tensor of a hook's
    # future waits for the GIL, so interpreter exit can hang forever.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
