"""superkernel.torch's matmul kernel (skt_mm) against eager PyTorch on one linear layer.

One F.linear(x, W, b) compiled by superkernel.torch on 1 and 2 workers, and
eager PyTorch on 1 thread (its BLAS: set OPENBLAS_NUM_THREADS=1 and unset
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE to time OpenBLAS as Debian ships it),
side by side: warm-up, then --reps rounds with the variants rotated, each
sample the mean call over about 200 ms; medians with min-max, GFLOP/s.

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 PYTHONPATH=build/release/python \\
    /usr/bin/python3 bench/torch_matmul.py --shapes 16x512x1536,16x2048x512,1x512x1536
"""
import argparse
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

import superkernel.torch as skt


def sample(fn, budget_s):
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < budget_s:
        fn()
        n += 1
    return (time.perf_counter() - t0) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="16x512x1536,16x2048x512,16x512x2048,1x512x1536",
                    help="MxKxN: x [M, K] times W [N, K] transposed, plus a bias [N]")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--smoke", action="store_true", help="one small shape, one round (CI: the script cannot rot)")
    args = ap.parse_args()
    budget = 0.2
    if args.smoke:
        args.shapes, args.reps, budget = "4x64x96", 1, 0.01
    torch.set_num_threads(1)
    cache = args.cache_dir or tempfile.mkdtemp(prefix="sk-bench-mm-")
    print("| M×K×N | variant | µs per call, median (min–max) | GFLOP/s | eager / variant |")
    print("|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        m, k, n = (int(v) for v in shape.split("x"))
        torch.manual_seed(0)
        x, w, b = torch.randn(m, k), torch.randn(n, k), torch.randn(n)
        want = F.linear(x, w, b)
        variants = {"eager, 1 thread": lambda: F.linear(x, w, b)}
        for workers in (int(v) for v in args.workers.split(",")):
            cm = skt.compile(lambda x, w, b: F.linear(x, w, b), (x, w, b), cache_dir=cache, workers=workers)
            torch.testing.assert_close(cm(x, w, b), want, rtol=1e-4, atol=1e-4)
            variants[f"superkernel, W = {workers}"] = lambda cm=cm: cm(x, w, b)
        names = list(variants)
        for name in names:
            sample(variants[name], budget / 4)
        samples = {name: [] for name in names}
        for r in range(args.reps):
            for name in names[r % len(names):] + names[:r % len(names)]:
                samples[name].append(sample(variants[name], budget))
        eager = samples[names[0]]
        for name in names:
            s = samples[name]
            med = statistics.median(s)
            ratios = [e / v for e, v in zip(eager, s)]
            print(f"| {shape} | {name} | {med * 1e6:.0f} ({min(s) * 1e6:.0f}–{max(s) * 1e6:.0f}) | "
                  f"{2 * m * k * n / med / 1e9:.1f} | {statistics.median(ratios):.2f}× "
                  f"({min(ratios):.2f}–{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
