#!/usr/bin/env python3
"""torch.distributed.all_reduce bus bandwidth without MPI, the peer of gx_bench_dist's "allreduce"
(bench/peers/allreduce_torch.py is the mpirun form, the peer of gx_comm_mpi_tests bench).

    python3 bench/peers/allreduce_torch_spawn.py --ranks 2 [--log2 28] [--reps 5]

One process per GPU (torch.multiprocessing), NCCL backend over a local TCP rendezvous,
NVLink multicast off (NCCL_NVLS_ENABLE=0, as gx).  Each rank all-reduces 2^log2 f32
in place (sum); a timing is the slowest rank's from a barrier to
torch.cuda.synchronize(), the best of --reps after one warm-up.  Prints one line in
gx_bench_dist's table format:  | allreduce | torch  |  p | 2^N | ms | busbw GB/s | - |
with busbw = bytes / t * 2 (p - 1) / p (nccl-tests' definition).
"""
import argparse
import os
import time


def worker(rank, p, log2n, reps, port, out):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=p)
    x = torch.ones(1 << log2n, dtype=torch.float32, device="cuda")
    best = float("inf")
    for k in range(reps + 1):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        t = torch.tensor([(time.perf_counter() - t0) * 1e3], device="cuda", dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if k > 0:
            best = min(best, t.item())
    if rank == 0:
        out.put(best)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--log2", type=int, default=28)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--port", type=int, default=29533)
    a = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    mp.spawn(worker, args=(a.ranks, a.log2, a.reps, a.port, q), nprocs=a.ranks, join=True)
    ms = q.get()
    p = a.ranks
    bus = (1 << a.log2) * 4 / ms / 1e6 * 2 * (p - 1) / p if p > 1 else 0.0
    print("| %-9s | torch  | %2d | 2^%d | %10.3f | %8.2f | %7s |" % ("allreduce", p, a.log2, ms, bus, "-"))


if __name__ == "__main__":
    main()
