#!/usr/bin/env python3
"""A data-parallel loss step on two GPUs with torch.ops.tessel.mse_sum (samples/torch).

    python3 two_gpu_mse.py path/to/libtessel_torch_ops.so [log2_N]

One process per GPU (torch.multiprocessing.spawn; NCCL over tcp://127.0.0.1, no torchrun). Each
rank makes its half of a batch of N f32 (pred, target) pairs on its GPU from generators seeded per
rank, and takes the step: loss = all_reduce(mse_sum(pred_half, target_half), SUM) / N.

Checks (a failure exits 1): both ranks hold the same loss; on GPU 0, the whole batch (rank 0's
half, and rank 1's regenerated from its seeds -- compared with the half rank 1 sends) gives the
same loss with one mse_sum over all N (the single-GPU step), and both agree with a float64 torch
reference, each within a relative 1e-5.

Timing: the two-GPU step (both ranks leave a barrier, synchronize, step, synchronize; a rep takes
the slower rank's time) against the single-GPU step over the whole batch on GPU 0 (rank 1 waits at
a barrier meanwhile), medians of 20 after a warm-up; the throughput ratio t_single / t_two (target
>= 1.9x: the kernel reads memory at the GPU's bandwidth, and the all-reduce is 4 bytes) and each
GPU's bandwidth in the kernel alone (CUDA events). A missed target is reported, not failed.

N defaults to 2^30 (4 GiB per input: the kernel dominates the step). Prints a table; with OUT set
writes $OUT/two_gpu_mse.json. With fewer than 2 GPUs prints "NOT RUN: needs 2 GPUs", writes
{"skipped": ...} and exits 0.
"""
import os

# House rule on the device machines: NVLink multicast (NVLS) stays off. Before torch loads NCCL.
os.environ["NCCL_NVLS_ENABLE"] = "0"

import datetime  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

WORLD = 2
RTOL = 1e-5
TARGET_RATIO = 1.9
WARMUP = 3
REPS = 20
SEED = 1000  # rank r: pred from SEED + 2r, target from SEED + 2r + 1


def make_half(rank_seeded, n, device):
    """Rank `rank_seeded`'s half of the batch, made on `device`: values uniform in [-2, 3)."""
    def one(seed):
        g = torch.Generator(device=device)
        g.manual_seed(seed)
        return torch.rand(n, generator=g, device=device, dtype=torch.float32).mul_(5.0).sub_(2.0)
    return one(SEED + 2 * rank_seeded), one(SEED + 2 * rank_seeded + 1)


def ref_sum_f64(pred, target, piece=1 << 26):
    """sum((pred - target)^2) in float64, a piece at a time (no float64 copy of 4 GiB inputs)."""
    total = torch.zeros((), dtype=torch.float64, device=pred.device)
    for i in range(0, pred.numel(), piece):
        total += ((pred[i:i + piece].double() - target[i:i + piece].double()) ** 2).sum()
    return float(total)


def rel_err(got, want):
    return abs(got - want) / abs(want) if want != 0 else abs(got)


def median_ms(seconds):
    return statistics.median(seconds) * 1e3


def kernel_seconds(op, pred, target, reps):
    """The mse_sum kernel alone (its zeroing included), CUDA events on the current stream."""
    times = []
    for _ in range(WARMUP):
        op(pred, target)
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        op(pred, target)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)


def worker(rank, lib, log2_n, port, result_path):
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=180), device_id=dev)
    try:
        torch.ops.load_library(lib)
        op = torch.ops.tessel.mse_sum
        n = 1 << log2_n
        half = n // WORLD
        pred, target = make_half(rank, half, dev)

        def step():
            loss = op(pred, target)
            dist.all_reduce(loss, op=dist.ReduceOp.SUM)
            return loss / n  # n is a power of two: exact

        # ---- the two-GPU step: values, then timing ----
        loss2 = step()
        torch.cuda.synchronize()
        both = [torch.zeros(1, device=dev) for _ in range(WORLD)]
        dist.all_gather(both, loss2)
        step_losses = [float(t[0]) for t in both]

        for _ in range(WARMUP):
            step()
        times = []
        for _ in range(REPS):
            dist.barrier(device_ids=[rank])
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        # A rep lasts until the slower rank is done.
        t = torch.tensor(times, dtype=torch.float64, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        two_times = t.tolist()

        # Each GPU's bandwidth in the kernel alone (both read their halves at once).
        dist.barrier(device_ids=[rank])
        k = torch.tensor([kernel_seconds(op, pred, target, REPS)], dtype=torch.float64, device=dev)
        kernel_by_rank = [torch.zeros(1, dtype=torch.float64, device=dev) for _ in range(WORLD)]
        dist.all_gather(kernel_by_rank, k)
        kernel_by_rank = [float(v[0]) for v in kernel_by_rank]

        # ---- rank 1's half to rank 0, to check the regenerated one against ----
        if rank == 1:
            dist.send(pred, dst=0)
            dist.send(target, dst=0)
        else:
            got_p, got_t = torch.empty_like(pred), torch.empty_like(target)
            dist.recv(got_p, src=1)
            dist.recv(got_t, src=1)
        torch.cuda.synchronize()

        if rank == 0:
            received = [got_p, got_t]
            del got_p, got_t  # single_gpu_and_checks holds the only references (and drops them)
            result = single_gpu_and_checks(op, pred, target, received, n, dev, loss2, step_losses, two_times,
                                           kernel_by_rank)
            result["log2_n"] = log2_n
            with open(result_path, "w") as f:
                json.dump(result, f, indent=1)
        # Rank 1 waits here while rank 0 runs the single-GPU step on GPU 0 alone.
        dist.barrier(device_ids=[rank])
    finally:
        dist.destroy_process_group()


def single_gpu_and_checks(op, pred0, target0, received, n, dev, loss2, step_losses, two_times, kernel_by_rank):
    half = n // WORLD
    got_p, got_t = received
    received.clear()
    # The whole batch on GPU 0: rank 0's half, then rank 1's regenerated from its seeds.
    regen_p, regen_t = make_half(1, half, dev)
    regenerated_equal = bool(torch.equal(regen_p, got_p) and torch.equal(regen_t, got_t))
    if not regenerated_equal:  # another GPU's generator made other numbers: use what rank 1 had
        regen_p, regen_t = got_p, got_t
    full_p = torch.cat([pred0, regen_p])
    full_t = torch.cat([target0, regen_t])
    del regen_p, regen_t, got_p, got_t

    def single_step():
        return op(full_p, full_t) / n

    loss1 = float(single_step()[0])
    for _ in range(WARMUP):
        single_step()
    single_times = []
    for _ in range(REPS):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        single_step()
        torch.cuda.synchronize()
        single_times.append(time.perf_counter() - t0)
    kernel_single = kernel_seconds(op, full_p, full_t, REPS)

    ref = ref_sum_f64(full_p, full_t) / n
    loss_two = float(loss2[0])
    errors = {
        "two_vs_single": rel_err(loss_two, loss1),
        "two_vs_fp64": rel_err(loss_two, ref),
        "single_vs_fp64": rel_err(loss1, ref),
    }
    failures = [f"{k}: relative error {v:.3g} > {RTOL}" for k, v in errors.items() if not v <= RTOL]
    if len(set(step_losses)) != 1:
        failures.append(f"the ranks hold different losses after the all-reduce: {step_losses}")

    t_single, t_two = median_ms(single_times), median_ms(two_times)
    ratio = t_single / t_two
    bytes_half, bytes_full = 2 * half * 4, 2 * n * 4
    return {
        "ok": not failures,
        "failures": failures,
        "torch": torch.__version__,
        "nccl": nccl_version(),
        "devices": [torch.cuda.get_device_name(i) for i in range(WORLD)],
        "n": n,
        "per_gpu": half,
        "loss_two_gpu": loss_two,
        "loss_single_gpu": loss1,
        "loss_fp64": ref,
        "rel_err": errors,
        "rtol": RTOL,
        "ranks_losses": step_losses,
        "rank1_half_regenerated_on_gpu0_equal": regenerated_equal,
        "reps": REPS,
        "step_ms_single_median": t_single,
        "step_ms_two_median": t_two,
        "step_ms_single": [s * 1e3 for s in single_times],
        "step_ms_two": [s * 1e3 for s in two_times],
        "throughput_ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "target_met": ratio >= TARGET_RATIO,
        "kernel_ms_single": kernel_single * 1e3,
        "kernel_ms_by_rank": [s * 1e3 for s in kernel_by_rank],
        "kernel_gbps_single": bytes_full / kernel_single / 1e9,
        "kernel_gbps_by_rank": [bytes_half / s / 1e9 for s in kernel_by_rank],
        "step_gbps_per_gpu_two": bytes_half / (t_two / 1e3) / 1e9,
        "step_gbps_single": bytes_full / (t_single / 1e3) / 1e9,
    }


def nccl_version():
    v = torch.cuda.nccl.version()  # (major, minor, patch); an int in older releases
    return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)


def print_table(r):
    n, log2_n = r["n"], r["log2_n"]
    print(f"two_gpu_mse: N = 2^{log2_n} = {n} f32 pairs ({r['per_gpu']} per GPU), torch {r['torch']}, "
          f"NCCL {r['nccl']}, {' + '.join(r['devices'])}")
    print(f"{'loss':<34}{'value':>22}{'rel err vs fp64':>18}")
    print(f"{'two GPUs (mse_sum, all_reduce, /N)':<34}{r['loss_two_gpu']:>22.10g}{r['rel_err']['two_vs_fp64']:>18.3g}")
    print(f"{'one GPU (mse_sum over all N, /N)':<34}{r['loss_single_gpu']:>22.10g}"
          f"{r['rel_err']['single_vs_fp64']:>18.3g}")
    print(f"{'float64 torch reference':<34}{r['loss_fp64']:>22.10g}{'':>18}")
    regen = ("equal" if r["rank1_half_regenerated_on_gpu0_equal"]
             else "DIFFERENT (the check used the half rank 1 sent)")
    print(f"two GPUs vs one GPU: relative error {r['rel_err']['two_vs_single']:.3g} (limit {r['rtol']}); "
          f"rank 1's half regenerated on GPU 0 from its seeds: {regen}")
    print(f"{'step (median of ' + str(r['reps']) + ')':<34}{'ms':>10}{'GB/s per GPU':>16}{'kernel ms':>12}"
          f"{'kernel GB/s':>14}")
    print(f"{'one GPU, full batch':<34}{r['step_ms_single_median']:>10.3f}{r['step_gbps_single']:>16.0f}"
          f"{r['kernel_ms_single']:>12.3f}{r['kernel_gbps_single']:>14.0f}")
    by_rank = " / ".join(f"{g:.0f}" for g in r["kernel_gbps_by_rank"])  # rank 0 / rank 1
    print(f"{'two GPUs, half each + all_reduce':<34}{r['step_ms_two_median']:>10.3f}{r['step_gbps_per_gpu_two']:>16.0f}"
          f"{max(r['kernel_ms_by_rank']):>12.3f}{by_rank:>14}")
    print(f"throughput ratio t_single / t_two = {r['throughput_ratio']:.3f}x "
          f"(target >= {r['target_ratio']}x: {'met' if r['target_met'] else 'MISSED'})")
    if r["failures"]:
        print("FAIL: " + "; ".join(r["failures"]))
    else:
        print("PASS: losses agree within a relative " + str(r["rtol"]))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_json(obj):
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
        with open(os.path.join(os.environ["OUT"], "two_gpu_mse.json"), "w") as f:
            json.dump(obj, f, indent=1)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    lib = os.path.abspath(sys.argv[1])
    log2_n = int(sys.argv[2]) if len(sys.argv) == 3 else 30
    if not 1 <= log2_n <= 31:
        print(f"log2_N must be in [1, 31], got {log2_n}")
        return 2
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus < WORLD:
        print(f"NOT RUN: needs 2 GPUs (found {gpus})")
        write_json({"skipped": f"needs 2 GPUs, found {gpus}"})
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        try:
            mp.spawn(worker, args=(lib, log2_n, free_port(), result_path), nprocs=WORLD, join=True)
        except Exception as e:  # noqa: BLE001: a rank failed; say which and how
            print(f"FAIL: a rank failed: {type(e).__name__}: {e}")
            write_json({"ok": False, "failures": [f"a rank failed: {type(e).__name__}: {e}"]})
            return 1
        if not os.path.exists(result_path):
            print("FAIL: rank 0 wrote no result")
            write_json({"ok": False, "failures": ["rank 0 wrote no result"]})
            return 1
        with open(result_path) as f:
            result = json.load(f)
    print_table(result)
    write_json(result)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
