#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""CUDA tensors through optireduce.torch and the optireduce backend, N ranks on one host.

Exit 77 (skip) without CUDA or without torch 2.x.  The ranks are spawned here
(torch.multiprocessing, a FileStore); rank r uses GPU r mod the GPUs there are, so two to
four ranks share one GPU if that is all there is.  Gloo (which reduces CUDA tensors too) is
the default group and the reference.

  hook, exact:      DDP on CUDA with allreduce_hook on an exact communicator, and the same
                    model with DDP on Gloo: each bucket's averaged gradient equals Gloo's
                    (reduced inside the hook for comparison), parameters stay equal step
                    by step, several buckets; CUDA bytes were staged, buckets overlapped.
  backend, exact:   a group made with backend "optireduce" (dist.new_group), DDP without a
                    hook on it: parameters equal to the Gloo model's step by step, and the
                    group's communicator ran the buckets.
  all_reduce:       CUDA float32/float16/int64 sums, an async one whose tensor is used on
                    the current stream right after wait() with no host synchronization
                    (the CUDA-aware future orders it after the copy back), a tensor on a
                    side stream: exact.
  host tensors:     a CPU tensor on a communicator that has staged CUDA ones reaches the
                    library at its own address and adds nothing to staging_stats.
  bounded:          CUDA all_reduce with inject_loss p = 0.05 over T trials: reported loss
                    >= 0.7 p, nmse within 1.3 x 2q/(1-q) + 0.01 of the reported loss q (the
                    estimator's bound, as torch_ddp.py on CPU); DDP with the hook on a
                    bounded communicator and on a bounded backend group
                    (OPTIREDUCE_MODE=bounded when it is made), with injected loss: gradient
                    nmse against Gloo's within the same bound, loss reported.

  gpu_ddp.py [--np N] [--quick] [--cpu]

--cpu runs the same checks on host tensors (any torch; nothing is staged, so the staging
checks are left out): the test's own logic, on a machine without a GPU.
"""
import argparse
import os
import sys
import tempfile
import traceback

failures = []
CPU = False  # --cpu: host tensors instead of CUDA ones


def check(cond, msg):
    import torch.distributed as dist
    if not cond:
        failures.append(msg)
        print("rank %d: FAIL: %s" % (dist.get_rank(), msg), file=sys.stderr, flush=True)


def skip_reason():
    try:
        import torch
    except ImportError:
        return "no torch"
    if int(torch.__version__.split(".")[0]) < 2:
        return "torch %s, not 2.x" % torch.__version__
    if not torch.cuda.is_available():
        return "no CUDA device"
    return None


def make_model():
    import torch.nn as nn
    import torch
    torch.manual_seed(1)
    # 2.1 MiB of parameters: DDP's 1 MiB first bucket and several of bucket_cap_mb.
    return nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def batch(rank, step, device):
    import torch
    g = torch.Generator().manual_seed(1000 * step + rank)
    return (torch.randn(16, 32, generator=g).to(device),
            torch.randint(0, 10, (16,), generator=g).to(device))


def train_step(net, opt, rank, step, device):
    import torch.nn as nn
    x, y = batch(rank, step, device)
    opt.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    opt.step()


def gather_sum(values):
    import torch
    import torch.distributed as dist
    t = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(t)
    return t.tolist()


def checking_hook(records, size):
    """allreduce_hook, with each bucket also reduced by Gloo here for comparison."""
    import torch.distributed as dist
    import optireduce.torch as ort

    def hook(comm, bucket):
        ref = bucket.buffer().clone()
        dist.all_reduce(ref)
        ref.div_(size)
        index = bucket.index()

        def compare(fut):
            t = fut.value()
            d = (t - ref).double()
            records.append((index, t.numel(), d.abs().max().item(), d.pow(2).sum().item(),
                            ref.double().pow(2).sum().item()))
            return t

        return ort.allreduce_hook(comm, bucket).then(compare)

    return hook


def ddp(net, device, **kw):
    from torch.nn.parallel import DistributedDataParallel as DDP
    return DDP(net.to(device), device_ids=None if CPU else [device.index], bucket_cap_mb=0.25,
               **kw)


def ddp_pair(device, **kw):
    return ddp(make_model(), device), ddp(make_model(), device, **kw)


def params_equal(a, b):
    import torch
    return max((p - q).abs().max().item() for p, q in zip(a.parameters(), b.parameters())), \
        all(torch.allclose(p, q, rtol=1e-5, atol=1e-6) for p, q in zip(a.parameters(),
                                                                       b.parameters()))


def test_hook_exact(comm, rank, size, device, steps):
    import torch
    import optireduce.torch as ort
    ref, net = ddp_pair(device)
    records = []
    net.register_comm_hook(comm, checking_hook(records, size))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    comm.take_step_stats()
    before = ort.staging_stats(comm).bytes
    inflight = 0
    for step in range(steps):
        records.clear()
        train_step(ref, ref_opt, rank, step, device)
        train_step(net, opt, rank, step, device)
        st = comm.take_step_stats()
        inflight = max(inflight, st.ops_in_flight_max)
        check(len(records) >= (2 if step else 1) and st.operations == len(records),
              "hook step %d: %d buckets, %d operations" % (step, len(records), st.operations))
        for index, n, maxdiff, _, ref2 in records:
            scale = (ref2 / n) ** 0.5
            check(maxdiff <= 1e-6 + 1e-5 * scale, "hook step %d bucket %d: max diff %g (rms %g)"
                  % (step, index, maxdiff, scale))
        diff, ok = params_equal(ref, net)
        check(ok, "hook step %d: parameters differ by %g" % (step, diff))
    staged = ort.staging_stats(comm).bytes - before
    check(staged > 0 or CPU, "hook: no CUDA bytes staged")
    if rank == 0:
        print("hook exact: %d steps, %d buckets in the last, equal to Gloo's; %d bytes staged, "
              "up to %d in flight" % (steps, len(records), staged, inflight), flush=True)


def test_backend_exact(rank, size, device, steps):
    import torch
    import torch.distributed as dist
    import optireduce.backend  # noqa: F401 -- registers "optireduce"
    group = dist.new_group(backend="optireduce")
    ref, net = ddp_pair(device, process_group=group)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    comm = group.optireduce
    comm.take_step_stats()
    for step in range(steps):
        train_step(ref, ref_opt, rank, step, device)
        train_step(net, opt, rank, step, device)
        diff, ok = params_equal(ref, net)
        check(ok, "backend step %d: parameters differ by %g" % (step, diff))
    ops = comm.take_step_stats().operations
    check(ops >= 2 * steps, "backend: the library ran %d operations in %d steps" % (ops, steps))
    if rank == 0:
        print("backend exact: %d steps on %s, %d operations on the library, equal to Gloo's"
              % (steps, group.name(), ops), flush=True)
    return group


def test_all_reduce(comm, rank, size, device):
    import torch
    import optireduce.torch as ort
    tri = size * (size + 1) / 2
    for dtype in (torch.float32, torch.float16, torch.int64):
        t = torch.full((1 << 16,), rank + 1, dtype=dtype, device=device)
        ort.all_reduce(t, "sum", comm=comm)
        check(bool((t == tri).all()), "all_reduce %s: %s" % (dtype, t[:3].tolist()))
    # Used on the current stream right after wait(): no host synchronization in between.
    t = torch.full((1 << 22,), float(rank + 1), device=device)
    fut = ort.all_reduce(t, "sum", comm=comm, async_op=True)
    fut.wait()
    u = t * 2  # queued on the current stream, which waits for the copy back
    check(bool((u == 2 * tri).all()), "async: %s" % u[:3].tolist())
    # A tensor produced on another stream: the copy to the host follows the current stream.
    if not CPU:
        side = torch.cuda.Stream(device=device)
        with torch.cuda.stream(side):
            v = torch.full((1 << 20,), float(rank + 1), device=device)
            v.mul_(3)
            ort.all_reduce(v, "sum", comm=comm)
            w = v.clone()
        torch.cuda.synchronize(device)
        check(bool((w == 3 * tri).all()), "side stream: %s" % w[:3].tolist())
    # A host tensor: reduced where it is, nothing staged.
    before = ort.staging_stats(comm)
    seen = []
    iallreduce = comm.iallreduce

    def recording(sbuf, rbuf, *args, **kwargs):
        seen.append(rbuf)
        return iallreduce(sbuf, rbuf, *args, **kwargs)

    comm.iallreduce = recording
    h = torch.ones(4096)
    ort.all_reduce(h, comm=comm)
    del comm.iallreduce
    after = ort.staging_stats(comm)
    check((CPU or after.bytes > 0) and seen == [h.data_ptr()] and after.bytes == before.bytes and
          after.tensors == before.tensors and bool((h == size).all()),
          "host tensor: library got %s for %#x, staged %d -> %d bytes"
          % (seen, h.data_ptr(), before.bytes, after.bytes))
    if rank == 0:
        print("all_reduce: CUDA float32/float16/int64, async, side stream exact; a host "
              "tensor unstaged (%d CUDA bytes staged, %d pinned)" % (after.bytes,
                                                                    after.pinned_bytes),
              flush=True)


def uniform(rank, trial, count, device):
    import torch
    g = torch.Generator().manual_seed(7919 * trial + rank)
    return (torch.rand(count, generator=g) - 0.5).to(device)


def test_bounded_all_reduce(rank, size, device, trials, p=0.05):
    import torch.distributed as dist
    import optireduce.torch as ort
    comm = ort.init("bounded", timeout_us=2000000, consistent=0)
    count = 16384
    comm.set_param("inject_loss", p)
    comm.take_step_stats()
    err2 = norm2 = 0.0
    for trial in range(trials):
        t = uniform(rank, trial + 1, count, device)
        truth = sum(uniform(r, trial + 1, count, device).double() for r in range(size))
        dist.barrier()
        ort.all_reduce(t, "sum", comm=comm)
        err2 += (t.double() - truth).pow(2).sum().item()
        norm2 += truth.pow(2).sum().item()
    st = comm.take_step_stats()
    lost, exp = gather_sum([st.elements_lost, st.elements_expected])
    seen = lost / exp
    nmse = err2 / norm2
    bound = 1.3 * 2 * seen / (1 - seen) + 0.01
    check(seen >= 0.7 * p - 0.002, "bounded all_reduce: reported %g lost for %g" % (seen, p))
    check(st.bounded_operations == trials, "bounded all_reduce: %d of %d ran bounded"
          % (st.bounded_operations, trials))
    check(nmse <= bound, "bounded all_reduce: nmse %g over %g" % (nmse, bound))
    if rank == 0:
        print("bounded all_reduce, loss %.2f: reported %.4f, nmse %.4f (bound %.4f)"
              % (p, seen, nmse, bound), flush=True)
    return comm


def bounded_ddp(net, rank, size, device, steps, stats):
    """Gradients of a bounded DDP against Gloo's average of the same gradients."""
    import torch
    import torch.distributed as dist
    err2 = norm2 = 0.0
    for step in range(steps):
        x, y = batch(rank, step, device)
        net.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        plain = make_model().to(device)
        plain.load_state_dict(net.module.state_dict())
        torch.nn.functional.cross_entropy(plain(x), y).backward()
        for p, q in zip(net.parameters(), plain.parameters()):
            ref = q.grad.clone()
            dist.all_reduce(ref)
            ref /= size
            err2 += (p.grad - ref).double().pow(2).sum().item()
            norm2 += ref.double().pow(2).sum().item()
    st = stats()
    lost, exp = gather_sum([st.elements_lost, st.elements_expected])
    return lost / max(exp, 1), err2 / norm2


def test_bounded_ddp(comm, rank, size, device, steps, p=0.05):
    import torch.distributed as dist
    import optireduce.torch as ort
    net = ddp(make_model(), device)
    net.register_comm_hook(comm, ort.allreduce_hook)
    comm.set_param("inject_loss", p)
    comm.take_step_stats()
    seen, nmse = bounded_ddp(net, rank, size, device, steps, comm.take_step_stats)
    comm.set_param("inject_loss", 0)
    bound = 1.3 * 2 * seen / (1 - seen) + 0.01
    check(seen >= 0.7 * p - 0.002 and nmse <= bound,
          "bounded hook: loss %g reported, gradient nmse %g (bound %g)" % (seen, nmse, bound))
    if rank == 0:
        print("bounded hook, loss %.2f: %d steps, reported %.4f, gradient nmse %.4f (bound %.4f)"
              % (p, steps, seen, nmse, bound), flush=True)
    # The backend, bounded: its mode and parameters come from the environment.
    os.environ.update(OPTIREDUCE_MODE="bounded", OPTIREDUCE_INJECT_LOSS=str(p),
                      OPTIREDUCE_CONSISTENT="0", OPTIREDUCE_TIMEOUT_US="2000000")
    try:
        group = dist.new_group(backend="optireduce")
    finally:
        for name in ("MODE", "INJECT_LOSS", "CONSISTENT", "TIMEOUT_US"):
            del os.environ["OPTIREDUCE_" + name]
    net = ddp(make_model(), device, process_group=group)
    group.optireduce.take_step_stats()
    seen, nmse = bounded_ddp(net, rank, size, device, steps, group.optireduce.take_step_stats)
    bound = 1.3 * 2 * seen / (1 - seen) + 0.01
    check(group.optireduce.mode == "bounded" and seen >= 0.7 * p - 0.002 and nmse <= bound,
          "bounded backend (%s): loss %g reported, gradient nmse %g (bound %g)"
          % (group.optireduce.mode, seen, nmse, bound))
    if rank == 0:
        print("bounded backend, loss %.2f: %d steps, reported %.4f, gradient nmse %.4f "
              "(bound %.4f)" % (p, steps, seen, nmse, bound), flush=True)


def rank_main(rank, size, path, quick, cpu):
    import faulthandler
    import torch
    import torch.distributed as dist
    global CPU
    CPU = cpu
    faulthandler.dump_traceback_later(420, exit=True)
    if CPU:
        device = torch.device("cpu")
    else:
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=size)
    steps, trials = (2, 8) if quick else (4, 30)
    try:
        import optireduce.torch as ort
        comm = ort.init("exact")
        test_hook_exact(comm, rank, size, device, steps)
        test_all_reduce(comm, rank, size, device)
        test_backend_exact(rank, size, device, steps)
        comm.close()
        bcomm = test_bounded_all_reduce(rank, size, device, trials)
        test_bounded_ddp(bcomm, rank, size, device, steps)
    except Exception:
        traceback.print_exc()
        failures.append("exception")
    total = gather_sum([len(failures)])[0]
    if rank == 0:
        where = "host tensors" if CPU else "%s, %d GPUs" % (torch.cuda.get_device_name(device),
                                                           torch.cuda.device_count())
        print("%s: %d failures (torch %s, %d ranks, %s)"
              % ("FAIL" if total else "PASS", total, torch.__version__, size, where), flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if total else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer steps and trials")
    ap.add_argument("--cpu", action="store_true", help="host tensors: the test's logic only")
    args = ap.parse_args()
    why = None if args.cpu else skip_reason()
    if why:
        print("gpu_ddp.py: %s: skip" % why)
        return 77
    import torch
    import torch.multiprocessing as mp
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        try:
            mp.spawn(rank_main, args=(args.np, os.path.join(d, "store"), args.quick, args.cpu),
                     nprocs=args.np)
        except mp.ProcessExitedException as e:
            print(e, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
