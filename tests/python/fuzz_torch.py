"""A differential fuzzer for superkernel.torch: random small PyTorch programs
(random shapes from a small pool, broadcasting, views, dtypes, in-place ops,
constants, Python scalars, -inf fills, reductions, softmax, matmul, cat,
indexing), each compiled and compared with eager.

A program passes when the compiled result equals eager (f32/f64: rtol 1e-4,
atol 1e-5; bf16: rtol and atol 2e-2, one bf16 step on values near 1; NaN
where eager has NaN) — whether each op was lowered or ran eagerly with a
reason. It fails on a different result, a wrong shape or dtype, or any
exception at compile or run time when eager ran fine (the package's own
error classes included: a valid program must compile).

    /usr/bin/python3 tests/python/fuzz_torch.py --count 2000 --seed 1   # a long run (PYTHONPATH=build/release/python)

CI runs a bounded number through test_torch_fuzz.py with a fixed seed. A
failure prints the program's source, so it reproduces without the fuzzer.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback

import torch

DIMS = (1, 3, 4)


class Gen:
    """Builds one program as Python source: `def prog(a, b, c):` over tensors of known shapes."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.lines = []
        self.vals = []      # (name, shape, dtype)
        self.n = 0

    def new(self, expr, shape, dtype):
        name = f"t{self.n}"
        self.n += 1
        self.lines.append(f"    {name} = {expr}")
        self.vals.append((name, tuple(shape), dtype))
        return name

    def pick(self, dtype=None, float_only=True):
        cands = [v for v in self.vals if (dtype is None or v[2] == dtype) and
                 (not float_only or v[2] in (torch.float32, torch.float64, torch.bfloat16))]
        return self.r.choice(cands) if cands else None

    def pick_pair(self):
        """Two float operands of one dtype that broadcast."""
        a = self.pick()
        same = [v for v in self.vals if v[2] == a[2] and _broadcast(a[1], v[1]) is not None]
        return a, self.r.choice(same)

    def step(self):
        r = self.r
        kind = r.choice(["unary", "unary", "binary", "binary", "scalar", "inplace", "view", "reduce", "softmax",
                         "matmul", "where", "cat", "index", "const", "cast"])
        a = self.pick()
        name, shape, dt = a
        ds = _dt(dt)
        if kind == "unary":
            f = r.choice(["torch.neg({})", "torch.exp({}.clamp(-5, 5))", "torch.tanh({})", "torch.sigmoid({})",
                          "torch.relu({})", "torch.abs({})", "torch.sqrt(torch.abs({}))", "torch.rsqrt(torch.abs({}) + 1)",
                          "torch.sin({})", "torch.cos({})", "torch.nn.functional.gelu({})",
                          "torch.nn.functional.gelu({}, approximate='tanh')", "torch.nn.functional.silu({})",
                          "torch.log(torch.abs({}) + 1)", "torch.erf({})", "{}.clamp(min=-0.5)", "{}.pow(2)"])
            return self.new(f.format(name), shape, dt)
        if kind == "binary":
            (x, sx, _), (y, sy, _) = self.pick_pair()
            op = r.choice(["+", "-", "*", "/", "max", "min"])
            if op == "/":
                expr = f"{x} / (torch.abs({y}) + 1)"
            elif op in ("max", "min"):
                expr = f"torch.{'maximum' if op == 'max' else 'minimum'}({x}, {y})"
            else:
                expr = f"{x} {op} {y}"
            return self.new(expr, _broadcast(sx, sy), dt)
        if kind == "scalar":
            c = r.choice(["2.0", "0.5", "1", "-3", "1e-3"])
            expr = r.choice([f"{name} * {c}", f"{c} - {name}", f"{name} + {c}", f"{name}.sum() + {c}",
                             f"{name} / {c}"])
            return self.new(expr, () if ".sum()" in expr else shape, dt)
        if kind == "inplace":
            t = self.new(f"{name}.clone()", shape, dt)
            (y, sy, _) = r.choice([v for v in self.vals if v[2] == dt and _broadcast(shape, v[1]) == shape])
            op = r.choice(["add_", "mul_", "sub_"])
            self.lines.append(f"    {t}.{op}({y})")
            return t
        if kind == "view" and len(shape) >= 2:
            i, j = r.sample(range(len(shape)), 2)
            v = r.choice(["transpose", "slice", "unsqueeze_expand", "reshape"])
            if v == "transpose":
                s = list(shape)
                s[i], s[j] = s[j], s[i]
                return self.new(f"{name}.transpose({i}, {j})", s, dt)
            if v == "slice" and shape[i] > 1:
                s = list(shape)
                s[i] = shape[i] - 1
                return self.new(f"{name}.narrow({i}, 1, {s[i]})", s, dt)
            if v == "unsqueeze_expand":
                return self.new(f"{name}.unsqueeze(0).expand(2, *{name}.shape)", (2,) + shape, dt)
            return self.new(f"{name}.reshape(-1)", (_prod(shape),), dt)
        if kind == "reduce" and shape:
            d = r.randrange(len(shape))
            keep = r.random() < 0.5
            f = r.choice(["sum", "mean", "amax"])
            s = list(shape)
            if keep:
                s[d] = 1
            else:
                s.pop(d)
            return self.new(f"{name}.{f}({d}, keepdim={keep})", s, dt)
        if kind == "softmax" and shape and dt != torch.bfloat16:
            d = r.randrange(len(shape))
            return self.new(f"torch.softmax({name}, dim={d})", shape, dt)
        if kind == "matmul" and len(shape) >= 2 and dt != torch.bfloat16:
            k = shape[-1]
            n = r.choice(DIMS)
            w = self.new(f"torch.linspace(-1, 1, {k * n}, dtype={ds}).reshape({k}, {n})", (k, n), dt)
            return self.new(f"{name} @ {w}", shape[:-1] + (n,), dt)
        if kind == "where":
            (y, sy, _) = r.choice([v for v in self.vals if v[2] == dt and _broadcast(shape, v[1]) == shape])
            fill = r.choice(["float('-inf')", "0.0", f"{y}"])
            if fill == f"{y}":
                return self.new(f"torch.where({name} > 0, {name}, {y})", shape, dt)
            if r.random() < 0.5:
                return self.new(f"{name}.masked_fill({name} < 0, {fill})", shape, dt)
            return self.new(f"torch.where({name} > 0, {name}, torch.full_like({name}, {fill}))", shape, dt)
        if kind == "cat" and shape:
            d = r.randrange(len(shape))
            s = list(shape)
            s[d] *= 2
            return self.new(f"torch.cat([{name}, {name} * 2], dim={d})", s, dt)
        if kind == "index" and shape and shape[0] > 1:
            idx = sorted(r.sample(range(shape[0]), 2))
            return self.new(f"{name}[torch.tensor({idx})]", (2,) + shape[1:], dt)
        if kind == "const":
            return self.new(f"{name} + torch.arange({_prod(shape)}, dtype={ds}).reshape({list(shape)}) * 0.1",
                            shape, dt)
        if kind == "cast" and dt == torch.float32:
            c = self.new(f"{name}.to(torch.float64)", shape, torch.float64)
            return self.new(f"({c} * 3).to(torch.float32)", shape, torch.float32)
        return self.new(f"{name} * 1.5", shape, dt)


def _dt(dt):
    return {torch.float32: "torch.float32", torch.float64: "torch.float64", torch.bfloat16: "torch.bfloat16"}[dt]


def _prod(s):
    p = 1
    for d in s:
        p *= d
    return p


def _broadcast(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def program(seed: int):
    """(source, inputs) of program `seed`."""
    r = random.Random(seed)
    g = Gen(r)
    dt = r.choice([torch.float32] * 6 + [torch.float64, torch.bfloat16])
    nin = r.randint(1, 3)
    base = tuple(r.choice(DIMS) for _ in range(r.randint(1, 3)))
    args = []
    for i in range(nin):
        shape = base if i == 0 or r.random() < 0.5 else tuple(d if r.random() < 0.6 else 1 for d in base)
        name = f"a{i}"
        g.vals.append((name, shape, dt))
        args.append(name)
    for _ in range(r.randint(2, 7)):
        g.step()
    outs = [v[0] for v in g.vals[nin:]][-r.randint(1, 2):]
    src = f"def prog({', '.join(args)}):\n" + "\n".join(g.lines) + f"\n    return ({', '.join(outs)},)\n"
    gen = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*g.vals[i][1], generator=gen).to(dt) for i in range(nin)]
    return src, tuple(inputs)


def tolerance(dtype):
    if dtype == torch.bfloat16:
        return dict(rtol=2e-2, atol=2e-2)
    return dict(rtol=1e-4, atol=1e-5)


def check_one(seed: int, cache_dir: str, workers: int = 2):
    """None when program `seed` passes, else a report naming it and printing its source."""
    import superkernel.torch as skt
    src, inputs = program(seed)
    ns = {"torch": torch}
    exec(compile(src, f"<fuzz program {seed}>", "exec"), ns)
    fn = ns["prog"]
    try:
        with torch.no_grad():
            want = fn(*[a.clone() for a in inputs])
    except Exception:  # the generator made a program eager refuses: not a finding
        return None
    try:
        cm = skt.compile(fn, inputs, cache_dir=cache_dir, workers=workers)
        got = cm(*[a.clone() for a in inputs])
        for g, w in zip(got, want):
            if g.shape != w.shape or g.dtype != w.dtype:
                raise AssertionError(f"shape/dtype {tuple(g.shape)} {g.dtype} vs eager {tuple(w.shape)} {w.dtype}")
            torch.testing.assert_close(g, w, equal_nan=True, **tolerance(w.dtype))
    except Exception:
        return f"fuzz program {seed} failed:\n{src}{traceback.format_exc()}"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="the first program's index (split a long run over processes: "
                    "--start 0 --count 1000 and --start 1000 --count 1000 are the 2,000 programs of one seed)")
    ap.add_argument("--cache-dir", default=None)
    args = ap.parse_args(argv)
    cache = args.cache_dir or tempfile.mkdtemp(prefix="sk-fuzz-torch-")
    failures, t0 = 0, time.time()
    for i in range(args.count):
        seed = args.seed * 1_000_003 + args.start + i
        report = check_one(seed, cache)
        if report:
            failures += 1
            print(report, file=sys.stderr)
        if sys.stderr.isatty():
            print(f"\r{i + 1}/{args.count} programs, {failures} failed, {time.time() - t0:.0f} s", end="",
                  file=sys.stderr)
        elif (i + 1) % 100 == 0:  # a long run in a log: a line per hundred programs
            print(f"{i + 1}/{args.count} programs, {failures} failed, {time.time() - t0:.0f} s", flush=True)
    print(f"\nfuzz_torch: seed {args.seed}, programs {args.start}..{args.start + args.count - 1}: "
          f"{args.count - failures} passed, {failures} failed "
          f"({time.time() - t0:.0f} s, cache {cache})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
