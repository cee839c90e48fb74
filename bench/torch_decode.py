"""Decode step at batch 1, from PyTorch, of models written as the public
repositories write them (--models):
  stack   the project's Llama-style decoder stack (tests/python/models.py)
  llama   idioms.Llama: complex RoPE, GQA through repeat_interleave, a KV cache
          written as cache[:, :, input_pos] = k, tied-free output head; one token
  gpt     idioms.TiedGPT (the minimal-training-repository GPT-2): tied embeddings,
          LayerNorm + GELU, split qkv, -inf mask; a 16-token window, last logits
  moe     idioms.EinsumMoE (Mixtral-style experts gathered by index, einsum)
          with a shared expert; one token

Variants, one model copy each (same weights), in one process:
  eager_tN   eager PyTorch, torch.set_num_threads(N)
  jit_tN     torch.jit.trace + torch.jit.freeze, N threads
  sk_unfused superkernel.torch.compile(fuse=False): the same kernels, one launch per op
  sk_fused   superkernel.torch.compile: one SuperKernel per step
Method: after a warm-up, R repetitions; in each, every variant (in a rotated
order) takes one sample = the median time of one call over a batch of calls
lasting about --sample-ms. Reported: per variant the median and min-max of
its samples; per pair, the ratio of the two variants' samples in the same
repetition, median and min-max. libgomp's threads are told to sleep when idle
(OMP_WAIT_POLICY=PASSIVE) so that one variant's spinning threads do not steal
the cores of the next.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/torch_decode.py \\
      [--dims 256,512] [--dtypes f32,bf16] [--layers 8] [--reps 7] [--sample-ms 200] [--workers 2] [--smoke]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import copy  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
import superkernel  # noqa: E402
import superkernel.torch as skt  # noqa: E402
import _compat  # noqa: E402
import idioms  # noqa: E402
from models import DecoderStack, decode_inputs  # noqa: E402


def sample(fn, budget_s):
    """The median time of one call over a batch lasting about budget_s."""
    times = []
    end = time.perf_counter() + budget_s
    while True:
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        times.append(t1 - t0)
        if t1 >= end and len(times) >= 3:
            return statistics.median(times)


def threads(n, fn):
    def run():
        torch.set_num_threads(n)
        return fn()
    return run


def fmt_us(xs):
    xs = [x * 1e6 for x in xs]
    return f"{statistics.median(xs):.1f} ({min(xs):.1f}–{max(xs):.1f})"


def fmt_ratio(rs):
    return f"{statistics.median(rs):.2f}× ({min(rs):.2f}–{max(rs):.2f})"


def make_model(name, dim, dtype, args):
    """(model, example args) of one configuration."""
    torch.manual_seed(0)
    heads, kv = max(2, dim // 64), max(1, dim // 128)
    if name == "stack":
        base = DecoderStack(layers=args.layers, dim=dim, heads=heads, kv_heads=kv, ffn=2 * dim, max_seq=args.max_seq)
        x, pos = decode_inputs(dim, 0)
        inputs = (x.to(dtype), pos)
    elif name == "llama":
        base = idioms.Llama(vocab=256, dim=dim, heads=heads, kv_heads=kv, layers=args.layers, max_seq=args.max_seq,
                            hidden=2 * dim)
        inputs = (torch.tensor([[7]]), torch.tensor([3]))
    elif name == "gpt":
        base = idioms.TiedGPT(vocab=256, dim=dim, heads=heads, layers=args.layers, max_seq=16)
        inputs = (torch.randint(0, 256, (1, 16)),)
    elif name == "moe":
        base = idioms.EinsumMoE(dim=dim, hidden=2 * dim, experts=8, top_k=2, shared=True)
        inputs = (torch.randn(1, 1, dim).to(dtype),)
    else:
        raise SystemExit(f"unknown model {name!r} (stack, llama, gpt, moe)")
    base = base.eval()
    if dtype == torch.bfloat16:
        base = base.to(torch.bfloat16)
    return base, inputs


def bench_config(name, dim, dtype, args, cache_dir):
    base, inputs = make_model(name, dim, dtype, args)
    variants = {}
    with torch.no_grad():
        for t in args.threads:
            m = copy.deepcopy(base)
            variants[f"eager_t{t}"] = threads(t, lambda m=m: m(*inputs))
            try:  # TorchScript where it traces
                jm = torch.jit.freeze(torch.jit.trace(copy.deepcopy(base), inputs, check_trace=False))
                jm(*inputs)
                variants[f"jit_t{t}"] = threads(t, lambda jm=jm: jm(*inputs))
            except Exception as e:  # noqa: BLE001 - reported, not timed
                print(f"# {name}: torch.jit.trace fails ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
    t0 = time.perf_counter()
    un = skt.compile(copy.deepcopy(base), inputs, cache_dir=cache_dir, workers=args.workers, fuse=False)
    fu = skt.compile(copy.deepcopy(base), inputs, cache_dir=cache_dir, workers=args.workers)
    compile_s = time.perf_counter() - t0
    variants["sk_unfused"] = threads(1, lambda: un(*inputs))
    variants["sk_fused"] = threads(1, lambda: fu(*inputs))
    # Same results before timing: the fused step against eager.
    with torch.no_grad():
        want = copy.deepcopy(base)(*inputs)
    got = fu(*inputs)
    # f32: the tests' rtol 1e-4 / atol 1e-5, the absolute part scaled by the output's magnitude (hidden 512 sums
    # ~1,000 products per dot in another order than BLAS); bf16: 3e-2 (tests/python/test_torch_layers.py says why).
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    scale = max(1.0, float(want.abs().max()))
    torch.testing.assert_close(got, want, rtol=tol, atol=(tol * 0.1 if dtype == torch.float32 else tol) * scale)
    names = list(variants)
    for _ in range(args.warmup):
        for n in names:
            sample(variants[n], args.sample_ms / 4000)
    samples = {n: [] for n in names}
    for r in range(args.reps):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            samples[n].append(sample(variants[n], args.sample_ms / 1000))
    s = un.summary()
    f = fu.summary()
    return samples, compile_s, s, f


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="stack")
    ap.add_argument("--dims", default="256,512")
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--max-seq", type=int, default=64)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sample-ms", type=float, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition: checks the script runs")
    args = ap.parse_args()
    if args.smoke:
        args.dims, args.dtypes, args.layers, args.reps, args.warmup, args.sample_ms = "64", "f32", 1, 1, 0, 5
        args.max_seq = 8
    _compat.install()
    args.threads = [int(t) for t in args.threads.split(",")]
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="sk-torch-bench-")
    load = os.getloadavg()
    print(f"# superkernel.torch decode step: {args.models}, {args.layers} layers, batch 1, W = {args.workers} superkernel workers, "
          f"torch {torch.__version__}, {os.cpu_count()} cpus, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"# {args.reps} repetitions, {args.sample_ms:g} ms samples, variants rotated per repetition; "
          f"command: {' '.join(sys.argv)}")
    for name, dim, dn in [(m, int(d), t) for m in args.models.split(",") for d in args.dims.split(",")
                          for t in args.dtypes.split(",")]:
        samples, compile_s, su, sf = bench_config(name, dim, dtypes[dn], args, cache_dir)
        print(f"\n## {name}, hidden {dim}, {dn} weights and activations "
              f"(compile {compile_s:.1f} s; {sf['aten_ops']} aten ops -> fused {sf['launches']} launch(es), "
              f"unfused {su['launches']}; eager ops {sf['eager_ops']})\n")
        print("| variant | µs per step, median (min–max) |\n|---|---|")
        for n, xs in samples.items():
            print(f"| {n} | {fmt_us(xs)} |")
        print("\n| ratio (same repetition) | median (min–max) |\n|---|---|")
        fused = samples["sk_fused"]
        for n in samples:
            if n != "sk_fused":
                print(f"| {n} / sk_fused | {fmt_ratio([a / b for a, b in zip(samples[n], fused)])} |")
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
