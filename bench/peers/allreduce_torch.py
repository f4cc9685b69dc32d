#!/usr/bin/env python3
"""torch.distributed.all_reduce bus bandwidth, the peer of `gx_comm_mpi_tests bench`.

    mpirun -n N python3 bench/peers/allreduce_torch.py [max_exp]

One process per GPU (local rank = device), NCCL backend, f32 sum in place over 2^20 ..
2^max_exp bytes; rank 0 prints the same columns as gx's bench (the median of 20
timed runs after 3 warm-ups, the slowest rank's time, bus = alg * 2 (n - 1) / n).
The rendezvous comes from Open MPI's environment (OMPI_COMM_WORLD_*), so no torchrun
is needed.  NVLink multicast stays off, as in gx (NCCL_NVLS_ENABLE=0)."""
import os
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

torch.cuda.set_device(local % torch.cuda.device_count())
dist.init_process_group("nccl", rank=rank, world_size=size)
max_exp = int(sys.argv[1]) if len(sys.argv) > 1 else 28
if rank == 0:
    print(f"# torch.distributed.all_reduce f32 sum over {size} ranks (NCCL {torch.cuda.nccl.version()})")
    print("# bytes  time_us  algbw_GBps  busbw_GBps")
for e in range(20, max_exp + 1, 2):
    x = torch.ones((1 << e) // 4, dtype=torch.float32, device="cuda")
    times = []
    for i in range(-3, 20):
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = torch.tensor([time.perf_counter() - t0], device="cuda")
        dist.all_reduce(dt, op=dist.ReduceOp.MAX)
        if i >= 0:
            times.append(dt.item())
    times.sort()
    med = times[len(times) // 2]
    alg = x.numel() * 4 / med / 1e9
    if rank == 0:
        print(f"{x.numel() * 4:10d} {med * 1e6:10.1f} {alg:10.2f} {alg * 2 * (size - 1) / size:10.2f}")
dist.destroy_process_group()
