"""Issue 19's anchors measured with PyTorch on the same GPU, to run in the
same device call as bench_linalg so that the ratios are side by side.

    python3 bench/anchors_torch.py [n ...]      (default 8192 16384)

float64 throughout, CUDA events, median of the repetitions after one
warm-up:
  - cuSOLVER's Cholesky on the device (torch.linalg.cholesky_ex); also by
    the host's clock from a synchronised device to the next, as
    bench_linalg times clbayes (its result comes from torch's caching
    allocator, clbayes's from a fresh OpenCL buffer);
  - host to host: a pinned host array copied in, factored, and the full L
    copied back into a pinned host array (what issue 19 calls torch's
    pinned copy + cholesky_ex + copy);
  - cuBLAS DGEMM (torch.matmul) on n x n operands, in TFLOP/s; also by the
    host's clock, as bench_linalg times clbayes's GEMM;
  - the Cholesky's reverse mode (torch.autograd.grad of cholesky's L with
    respect to A, given a lower-triangular adjoint of L; the anchor of
    gpu_chol_grad / bench_linalg's "grad device" column).
Prints one markdown table.
"""
import statistics
import sys
import time

import torch


def timed(fn, reps):
    fn()  # warm-up
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def wall(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def spd(n, device):
    g = torch.Generator(device=device).manual_seed(n)
    x = torch.randn(n, n, dtype=torch.float64, device=device, generator=g)
    a = x @ x.T / n
    a.diagonal().add_(1.0)
    return a


def main():
    sizes = [int(s) for s in sys.argv[1:]] or [8192, 16384]
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}")
    print()
    print("| n | cholesky_ex on device (ms) | the same, host clock (ms) "
          "| pinned copy + cholesky_ex + copy (ms) "
          "| DGEMM (ms) | DGEMM TFLOP/s | DGEMM, host clock (ms) | residual "
          "| Cholesky gradient (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        reps = 9 if n <= 8192 else 5
        a = spd(n, dev)
        result = {}

        def factor():
            result["l"] = torch.linalg.cholesky_ex(a)[0]

        t_dev = timed(factor, reps)
        t_wall = wall(factor, reps)
        l_dev = result.pop("l")
        host_a = a.cpu().pin_memory()
        host_l = torch.empty_like(host_a).pin_memory()

        def host_to_host():
            d = host_a.to(dev, non_blocking=True)
            host_l.copy_(torch.linalg.cholesky_ex(d)[0], non_blocking=True)

        t_host = timed(host_to_host, reps)
        resid = ((l_dev @ l_dev.T - a).abs().max() / a.abs().max()).item()
        del host_a, host_l
        b = spd(n, dev)
        c = torch.empty_like(a)

        def gemm():
            torch.matmul(a, b, out=c)

        t_gemm = timed(gemm, reps)
        t_gemm_wall = wall(gemm, reps)
        tflops = 2.0 * n ** 3 / (t_gemm * 1e-3) / 1e12
        del b, c
        a.requires_grad_(True)
        l_graph = torch.linalg.cholesky(a)
        l_adj = l_dev.tril()  # any lower-triangular adjoint

        def gradient():
            torch.autograd.grad(l_graph, a, l_adj, retain_graph=True)

        t_grad = timed(gradient, reps)
        print(f"| {n} | {t_dev:.2f} | {t_wall:.2f} | {t_host:.2f} | {t_gemm:.2f} | {tflops:.1f} "
              f"| {t_gemm_wall:.2f} | {resid:.1e} "
              f"| {t_grad:.2f} |")
        del a, l_dev, l_graph, l_adj
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
