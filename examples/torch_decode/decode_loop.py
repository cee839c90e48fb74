"""The main job's PyTorch part: a Llama-style model written as the
fast-inference repositories write it (tests/python/idioms.py: complex RoPE,
GQA through repeat_interleave, a KV cache written as cache[:, :, pos] = k),
compiled unchanged with superkernel.torch: a prompt through compile_chunked
(any length, log2 compiles), then a greedy decode loop. It prints tokens per
second eager vs fused, measured side by side, and checks that both produce
the same tokens.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/torch_decode/decode_loop.py [--tokens 32] [--dim 256]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Eager runs with one thread, its fastest on a small VM (a second thread competes for microsecond ops, PERFORMANCE.md
# section 10b); OpenBLAS's own pool is kept to that thread too, so that no BLAS thread spins beside the SuperKernel's
# workers in the next sample.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))
import idioms  # noqa: E402
import superkernel  # noqa: E402
import superkernel.torch as skt  # noqa: E402


def generate(step, prompt, tokens):
    """Greedy decoding: the prompt through `step`, then `tokens` tokens one by one."""
    logits = step(prompt, torch.arange(prompt.shape[1]))
    tok = logits[:, -1:].argmax(-1)
    out = [int(tok)]
    for t in range(prompt.shape[1], prompt.shape[1] + tokens - 1):
        tok = step(tok, torch.tensor([t])).argmax(-1)
        out.append(int(tok))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--prompt", type=int, default=11)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--cache-dir", default=None)
    a = ap.parse_args()
    workers = a.workers or int(os.environ.get("SK_NUM_WORKERS", "0") or 0) or os.cpu_count() or 1
    max_len = a.prompt + a.tokens + 1
    torch.manual_seed(0)
    model = idioms.Llama(vocab=512, dim=a.dim, heads=a.dim // 64, kv_heads=max(1, a.dim // 128), layers=a.layers,
                         max_seq=max_len, hidden=2 * a.dim).eval()
    eager = copy.deepcopy(model)
    prompt = torch.randint(0, 512, (1, a.prompt))
    t0 = time.perf_counter()
    fused = skt.compile_chunked(model, (prompt[:, :1], torch.arange(1)), seq_dims=(1, 0), max_len=max_len,
                                cache_dir=a.cache_dir, workers=workers)
    want = generate(lambda x, p: eager(x, p), prompt, a.tokens)
    with torch.no_grad():
        got = generate(fused, prompt, a.tokens)
    compile_s = time.perf_counter() - t0
    if got != want:
        print(f"decode loop: fused tokens {got} differ from eager {want}", file=sys.stderr)
        return 1
    print(f"PyTorch decode loop (examples/torch_decode): {a.layers}-layer Llama-style model, hidden {a.dim}, "
          f"prompt {a.prompt} + {a.tokens} tokens, batch 1, {workers} workers")
    print(f"  compiled unchanged: chunk lengths {fused.compiled_lengths} compiled or loaded in {compile_s:.1f} s "
          f"(first run compiles, later runs hit the cache); same {a.tokens} tokens as eager")
    def eager_step(x, p):
        torch.set_num_threads(1)
        return eager(x, p)

    sides = {"eager": eager_step, "fused": fused}
    secs = {k: [] for k in sides}
    with torch.no_grad():
        for k in sides:  # warm-up
            generate(sides[k], prompt, a.tokens)
        for r in range(a.reps):
            names = list(sides)
            for k in names[r % len(names):] + names[:r % len(names)]:  # rotated order
                t0 = time.perf_counter()
                generate(sides[k], prompt, a.tokens)
                secs[k].append(time.perf_counter() - t0)
    print(f"  {a.reps} runs of the whole loop per side, interleaved (rotated), after a warm-up; tokens/s median (min-max):")
    for k, xs in secs.items():
        tps = sorted(a.tokens / x for x in xs)
        print(f"  {k:6s} {statistics.median(tps):8.1f} tok/s ({tps[0]:.1f}-{tps[-1]:.1f})")
    for k in sides:
        if k != "fused":
            ratio = sorted(e / f for e, f in zip(secs[k], secs["fused"]))
            print(f"  fused over {k}: {statistics.median(ratio):.2f}x (min-max {ratio[0]:.2f}x-{ratio[-1]:.2f}x "
                  "over run pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
