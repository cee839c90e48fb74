#!/usr/bin/env python3
"""Generates the op lists the benchmarks (bench/suite.cpp) run, into --out.

  chain_{local,flag,counter,barrier}.json  K tiny ops chained with each sync kind
  sweep_n<N>.json                          the counter chain at element count N
  decode_layer.json                        one layer (the compile race)
  decode_stack.json, decode_stack_shared_weights.json
                                           the lead's 61-layer examples (copied), or
                                           --decode-layers L of them (smoke)
  static_macros.json / static_runtime.json the shared-weight stack with and without
                                           the shape macros (-DSK_ROWS=... ) per op
  kernel_<name>.json                       one big op of one builtin (the kernel benchmark:
                                           GB/s against kernel_stream.json's streaming read)
  blockdim_<B>.json                        --bd-ops tiny adds (64 floats) chained at block_dim B
  blockdim_<B>_percall.json                the same with the add kernel not declared
                                           block_dim_invariant (one call per block)
  decode_small.json                        the latency-bound decode stack: hidden 128
  decode_loop.json / decode_loop_small.json the decode stacks as a generation step:
                                           runtime position, KV caches of 256 rows
  a2a_<fmt>.json (+ a2a_<fmt>_w.bin)       llama.cpp test-barrier's graph: --a2a-ops gemvs
                                           (q8_0, q4_0) on a 64-element vector, alternating
                                           64 -> 128 and 128 -> 64, each with its own weights;
                                           every consumer block needs every producer block
  fanin_<f>.json                           the fan-in sweep: --fanin-ops tiny ops alternating
                                           block_dim P and P / f (x "block"), so every other
                                           boundary's consumer blocks each need f producer
                                           blocks (f = P: all of them)
  nodedup.json                             --nodedup-layers layers whose ops each get
                                           a unique macro: no two sub-kernels are
                                           identical, so deduplication cannot help

How each sync kind is produced (the harness checks the plan report agrees):
  local    every op has block_dim = W and x, y "partition": "block": block b of
           the consumer needs only block b of the producer, on the same worker.
  flag     block_dim alternates W and 2W: a consumer block needs one or two
           producer blocks, some on another worker, not all of them.
  counter  x is declared "partition": "all" (and read reversed): every consumer
           block needs every producer block.
  barrier  the local chain with early-start=0 (a sync_all before each op).

The decode stacks come from examples/gen_examples.py (imported, not copied),
so the benchmarks and the examples cannot drift apart.
"""
import argparse
import copy
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))
import gen_examples  # noqa: E402


def axpb_decl(out_dir, partition):
    src = os.path.relpath(os.path.join(HERE, "kernels", "bench_axpb.cpp"), out_dir)
    return {
        "source": src,
        "entry": "bench_axpb",
        "core_type": "vector",
        "early_start": False,
        "params": [
            {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": partition},
            {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
            {"name": "alpha", "kind": "scalar", "dtype": "f32"},
            {"name": "beta", "kind": "scalar", "dtype": "f32"},
            {"name": "n", "kind": "scalar", "dtype": "i64"},
            {"name": "reverse", "kind": "scalar", "dtype": "i32"},
        ],
    }


def chain(out_dir, kind, k, n, workers):
    """K ops, op i reading buffer t{i} and writing t{i+1}: only read-after-write
    edges. (Ping-ponging two buffers would add write-after-read/-write edges to
    older ops; the planner keeps many of them for flag chains, see
    docs/PERFORMANCE.md, which made a 256-op flag SuperKernel 5.5 MB of source.)"""
    kernel = "axpb_all" if kind == "counter" else "axpb_block"
    ops = []
    for i in range(k):
        src, dst = f"t{i}", f"t{i + 1}"
        bd = workers
        if kind == "flag" and i % 2 == 1:
            bd = 2 * workers
        ops.append({"name": f"op{i}", "kernel": kernel, "block_dim": bd, "stream": 0, "scope": "chain",
                    "args": {"x": src, "y": dst, "alpha": 0.5, "beta": 1.0, "n": n,
                             "reverse": 1 if kind == "counter" else 0}})
    return {
        "format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
        "options": "early-start=0" if kind == "barrier" else "early-start=1",
        "kernels": {kernel: axpb_decl(out_dir, "all" if kind == "counter" else "block")},
        "buffers": {f"t{i}": ({"dtype": "f32", "shape": [n], "init": "random"} if i == 0 else
                              {"dtype": "f32", "shape": [n]}) for i in range(k + 1)},
        "ops": ops,
    }


def strip_macros(ol):
    ol = copy.deepcopy(ol)
    for op in ol["ops"]:
        op.pop("macros", None)
    for k in ol["kernels"].values():
        k.pop("macros", None)
    return ol


def unique_macros(ol):
    ol = copy.deepcopy(ol)
    for i, op in enumerate(ol["ops"]):
        op.setdefault("macros", {})["SK_BENCH_UNIQUE"] = str(i)
    return ol


def single_op(kernels, buffers, name, kernel, block_dim, args, macros=None):
    op = {"name": name, "kernel": kernel, "block_dim": block_dim, "stream": 0, "scope": "k", "args": args}
    if macros:
        op["macros"] = {k: str(v) for k, v in macros.items()}
    return {"format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
            "options": "early-start=1", "kernels": kernels, "buffers": buffers, "ops": [op]}


def kernel_lists(out_dir, mib, workers):
    """One op per builtin, sized so that the bytes it must move are about
    `mib` MiB (well past the caches): name -> (op list, bytes moved per run).
    Weight-streaming kernels count their weights plus activations; row
    kernels their reads and writes."""
    bd = 4 * workers  # a few blocks per worker: the decode stack's shape
    lists = {}
    f32 = lambda shape, init=True: ({"dtype": "f32", "shape": shape, "init": "random"} if init else
                                    {"dtype": "f32", "shape": shape})
    n = mib * 2**20 // 4
    stream_src = os.path.relpath(os.path.join(HERE, "kernels", "bench_stream.cpp"), out_dir)
    lists["stream"] = (single_op(
        {"stream": {"source": stream_src, "entry": "bench_stream", "core_type": "vector", "early_start": False,
                    "params": [{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "all"},
                               {"name": "out", "kind": "buffer", "dtype": "f32", "access": "write",
                                "partition": "block"},
                               {"name": "n", "kind": "scalar", "dtype": "i64"}]}},
        {"x": f32([n]), "out": f32([workers], False)}, "stream", "stream", workers,
        {"x": "x", "out": "out", "n": n}), 4 * n)
    cols = 4096
    for kern, dt, wbytes in (("gemv_f32", "f32", 4.0), ("gemv_bf16w", "bf16", 2.0), ("gemv_f16w", "f16", 2.0),
                             ("gemv_q8_0", "u8", 34.0 / 32), ("gemv_q4_0", "u8", 18.0 / 32)):
        rows = int(mib * 2**20 / wbytes / cols)
        wshape = [rows, cols // 32 * int(wbytes * 32)] if dt == "u8" else [rows, cols]
        winit = {"dtype": dt, "shape": wshape, "init": "random"}
        lists[kern] = (single_op({kern: {"builtin": kern}}, {"w": winit, "x": f32([cols]), "y": f32([rows], False)},
                                 kern, kern, bd, {"w": "w", "x": "x", "y": "y", "rows": rows, "cols": cols},
                                 {"SK_ROWS": rows, "SK_COLS": cols}),
                       int(rows * cols * wbytes) + 4 * (cols + rows))
    m, k = 4, 4096
    ncols = int(mib * 2**20 / 2 / k)
    lists["matmul_bf16w"] = (single_op({"matmul_bf16w": {"builtin": "matmul_bf16w"}},
                                       {"a": f32([m, k]), "b": {"dtype": "bf16", "shape": [k, ncols], "init": "random"},
                                        "c": f32([m, ncols], False)},
                                       "matmul_bf16w", "matmul_bf16w", bd,
                                       {"a": "a", "b": "b", "c": "c", "m": m, "k": k, "n": ncols},
                                       {"SK_M": m, "SK_K": k, "SK_N": ncols}), 2 * k * ncols + 4 * m * (k + ncols))
    cols = 4096
    rows = n // cols // 2
    lists["rms_norm_f32"] = (single_op({"rms_norm_f32": {"builtin": "rms_norm_f32"}},
                                       {"x": f32([rows, cols]), "w": f32([cols]), "y": f32([rows, cols], False)},
                                       "rms_norm", "rms_norm_f32", bd,
                                       {"x": "x", "w": "w", "y": "y", "rows": rows, "cols": cols, "eps": 1e-6},
                                       {"SK_ROWS": rows, "SK_COLS": cols}), 8 * rows * cols)
    lists["softmax_f32"] = (single_op({"softmax_f32": {"builtin": "softmax_f32"}},
                                      {"x": f32([rows, cols]), "y": f32([rows, cols], False)},
                                      "softmax", "softmax_f32", bd, {"x": "x", "y": "y", "rows": rows, "cols": cols},
                                      {"SK_ROWS": rows, "SK_COLS": cols}), 8 * rows * cols)
    heads, dim = n // 2 // 64, 64
    lists["rope_f32"] = (single_op({"rope_f32": {"builtin": "rope_f32"}},
                                   {"x": f32([heads, dim]), "y": f32([heads, dim], False)},
                                   "rope", "rope_f32", bd,
                                   {"x": "x", "y": "y", "heads": heads, "dim": dim, "pos": 4095, "theta": 10000.0},
                                   {"SK_HEADS": heads, "SK_DIM": dim}), 8 * heads * dim)
    h, kvh, d = 8, 2, 64
    seq = n // (kvh * d)
    lists["attn_scores_f32"] = (single_op({"attn_scores_f32": {"builtin": "attn_scores_f32"}},
                                          {"q": f32([h, d]), "k": f32([seq, kvh, d]), "s": f32([h, seq], False)},
                                          "attn_scores", "attn_scores_f32", bd,
                                          {"q": "q", "k": "k", "s": "s", "heads": h, "kv_heads": kvh, "seq": seq,
                                           "dim": d, "scale": 0.125},
                                          {"SK_HEADS": h, "SK_KV_HEADS": kvh, "SK_SEQ": seq, "SK_DIM": d}),
                                4 * (seq * kvh * d + h * seq))
    lists["attn_weighted_sum_f32"] = (single_op({"attn_weighted_sum_f32": {"builtin": "attn_weighted_sum_f32"}},
                                                {"p": f32([h, seq]), "v": f32([seq, kvh, d]), "o": f32([h, d], False)},
                                                "attn_wsum", "attn_weighted_sum_f32", bd,
                                                {"p": "p", "v": "v", "o": "o", "heads": h, "kv_heads": kvh,
                                                 "seq": seq, "dim": d},
                                                {"SK_HEADS": h, "SK_KV_HEADS": kvh, "SK_SEQ": seq, "SK_DIM": d}),
                                      4 * (seq * kvh * d + h * seq))
    return lists


# Bytes per 32 weights of the block formats (kernels/cpu/sk_simd.h).
BLOCK_BYTES = {"q8_0": 34, "q4_0": 18}


def block_weights(fmt, rows, cols, rng):
    """rows x cols weights in ggml's block layout: random quants, one f16 scale
    per matrix chosen so that E[w^2] = 1 / cols (a chain of such gemvs keeps
    its values O(1): no overflow, no subnormals, the same arithmetic every
    run)."""
    bpb = BLOCK_BYTES[fmt]
    nblocks = rows * cols // 32
    data = bytearray(rng.randbytes(nblocks * bpb))
    # E[q^2]: q8_0 int8 uniform over -128..127; q4_0 q - 8 uniform over -8..7.
    eq2 = 5461.5 if fmt == "q8_0" else 21.5
    d = struct.pack("<e", 1.0 / (eq2 * cols) ** 0.5)
    data[0::bpb] = d[0:1] * nblocks
    data[1::bpb] = d[1:2] * nblocks
    return bytes(data)


def a2a_chain(out_dir, fmt, k, workers, hidden=64, inner=128):
    """llama.cpp's tests/test-barrier.cpp graph: K matrix-vector products on
    a `hidden`-element vector, alternating hidden -> inner and inner -> hidden,
    each op with its own weights (views of one buffer `w`, read from
    a2a_<fmt>_w.bin). The gemv reads x whole ("partition": "all"), so every
    consumer block needs every producer block: an all-to-all boundary per op.
    Static shapes (SK_ROWS / SK_COLS), block_dim = W (the builtin is
    block_dim_invariant)."""
    bpb = BLOCK_BYTES[fmt]
    rng = random.Random(4242 + bpb)
    kern = f"gemv_{fmt}"
    ops, blobs, off = [], [], 0
    bufs = {"t0": {"dtype": "f32", "shape": [hidden], "init": "random"}}
    for i in range(k):
        rows, cols = (inner, hidden) if i % 2 == 0 else (hidden, inner)
        nbytes = rows * cols // 32 * bpb
        blobs.append(block_weights(fmt, rows, cols, rng))
        bufs[f"t{i + 1}"] = {"dtype": "f32", "shape": [rows]}
        ops.append({"name": f"mm{i}", "kernel": kern, "block_dim": workers, "stream": 0, "scope": "chain",
                    "args": {"w": {"buffer": "w", "offset": off, "count": nbytes}, "x": f"t{i}", "y": f"t{i + 1}",
                             "rows": rows, "cols": cols},
                    "macros": {"SK_ROWS": str(rows), "SK_COLS": str(cols)}})
        off += nbytes
    wfile = f"a2a_{fmt}_w.bin"
    with open(os.path.join(out_dir, wfile), "wb") as f:
        for b in blobs:
            f.write(b)
    bufs["w"] = {"dtype": "u8", "shape": [off], "init": {"file": wfile}}
    return {"format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
            "options": "early-start=1", "kernels": {kern: {"builtin": kern}}, "buffers": bufs, "ops": ops}


def fanin_chain(out_dir, k, n, p, f):
    """The fan-in sweep: K axpb ops (bench/kernels/bench_axpb.cpp, x and y
    "partition": "block", not block_dim_invariant, so the plan keeps every
    block) alternating block_dim p and p / f. A consumer at p / f blocks
    needs f consecutive producer blocks (f = p: all of them, one consumer
    block); the way back (p blocks reading a p / f producer) needs one.
    Block b runs on worker b % W, so with f >= 2 every wide-fan-in consumer
    block waits for producer blocks of every worker."""
    assert p % f == 0
    ops = []
    for i in range(k):
        ops.append({"name": f"op{i}", "kernel": "axpb_block", "block_dim": p if i % 2 == 0 else p // f, "stream": 0,
                    "scope": "chain", "args": {"x": f"t{i}", "y": f"t{i + 1}", "alpha": 0.5, "beta": 1.0, "n": n,
                                               "reverse": 0}})
    return {
        "format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native", "options": "early-start=1",
        "kernels": {"axpb_block": axpb_decl(out_dir, "block")},
        "buffers": {f"t{i}": ({"dtype": "f32", "shape": [n], "init": "random"} if i == 0 else
                              {"dtype": "f32", "shape": [n]}) for i in range(k + 1)},
        "ops": ops,
    }


def blockdim_chain(k, n, bd, out_dir=None):
    """K tiny adds chained (t_{i+1} = t_i + c), all at block_dim bd: local edges.
    With out_dir, the add kernel is declared inline from the builtin's JSON
    without "block_dim_invariant": the planner then keeps one call per block
    (the cost before plan/Coarsen.cpp)."""
    ops = [{"name": f"add{i}", "kernel": "add", "block_dim": bd, "stream": 0, "scope": "chain",
            "args": {"x": f"t{i}", "y": "c", "z": f"t{i + 1}", "n": n}, "macros": {"SK_N": str(n)}}
           for i in range(k)]
    bufs = {f"t{i}": {"dtype": "f32", "shape": [n]} for i in range(1, k + 1)}
    bufs["t0"] = {"dtype": "f32", "shape": [n], "init": "random"}
    bufs["c"] = {"dtype": "f32", "shape": [n], "init": "random"}
    kernel = {"builtin": "add_f32"}
    if out_dir:
        kdir = os.path.join(ROOT, "kernels", "cpu")
        with open(os.path.join(kdir, "add_f32.json")) as f:
            kernel = json.load(f)
        kernel.pop("block_dim_invariant", None)
        kernel["source"] = os.path.relpath(os.path.join(kdir, kernel["source"]), out_dir)
    return {"format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
            "options": "early-start=1", "kernels": {"add": kernel}, "buffers": bufs, "ops": ops}


def small_decode_stack(layers, options, loop=False):
    """The latency-bound configuration: the same layer at hidden 128 (2 query
    heads of 64, 1 KV head, 32 cached positions, expert intermediate 64,
    shared intermediate 128): ops of well under a microsecond, where a
    per-op launch or barrier is a large part of the step. loop: as the decode
    loop (gen_examples.decode_loop, KV caches of capacity CAP)."""
    keys = ("HIDDEN", "HEADS", "KV_HEADS", "SEQ", "EXPERT_INTER", "SHARED_INTER")
    saved = {key: getattr(gen_examples, key) for key in keys}
    try:
        for key, val in zip(keys, (128, 2, 1, 32, 64, 128)):
            setattr(gen_examples, key, val)
        if loop:
            return gen_examples.decode_loop(layers, options)
        return gen_examples.decode_stack(layers, options)
    finally:
        for key, val in saved.items():
            setattr(gen_examples, key, val)


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--chain-ops", type=int, default=256)
    ap.add_argument("--chain-n", type=int, default=4096, help="elements per tiny op")
    ap.add_argument("--sweep-ops", type=int, default=64)
    ap.add_argument("--sweep-n", default="2048,8192,32768,131072,524288")
    ap.add_argument("--decode-layers", type=int, default=61)
    ap.add_argument("--nodedup-layers", type=int, default=4)
    ap.add_argument("--kernel-mib", type=int, default=256, help="bytes each kernel benchmark op moves")
    ap.add_argument("--bd-ops", type=int, default=1000)
    ap.add_argument("--bd-list", default="")
    ap.add_argument("--small-layers", type=int, default=61)
    ap.add_argument("--a2a-ops", type=int, default=2000, help="gemvs of the all-to-all chain (test-barrier: 2000)")
    ap.add_argument("--fanin-ops", type=int, default=256)
    ap.add_argument("--fanin-n", type=int, default=4096, help="elements per op of the fan-in sweep")
    ap.add_argument("--fanin-blocks", type=int, default=16,
                    help="P, a power of two: block_dim of the producers of the fan-in sweep (f = 1, 2, 4, ..., P)")
    args = ap.parse_args()
    if args.fanin_blocks < 1 or args.fanin_blocks & (args.fanin_blocks - 1):
        ap.error(f"--fanin-blocks must be a power of two (got {args.fanin_blocks})")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    w = max(1, args.workers)
    for kind in ("local", "flag", "counter", "barrier"):
        write(os.path.join(out, f"chain_{kind}.json"), chain(out, kind, args.chain_ops, args.chain_n, w))
    for n in [int(s) for s in args.sweep_n.split(",") if s]:
        write(os.path.join(out, f"sweep_n{n}.json"), chain(out, "counter", args.sweep_ops, n, w))
    opts = "early-start=1"
    if args.decode_layers == 61:
        # Byte-identical to the committed examples (checked: same generator).
        stack = gen_examples.decode_stack(61, opts)
        shared = gen_examples.decode_stack(61, opts, shared_weights=True)
    else:
        stack = gen_examples.decode_stack(args.decode_layers, opts)
        shared = gen_examples.decode_stack(args.decode_layers, opts, shared_weights=True)
    write(os.path.join(out, "decode_layer.json"), gen_examples.decode_stack(1, opts))
    write(os.path.join(out, "decode_stack.json"), stack)
    write(os.path.join(out, "decode_stack_shared_weights.json"), shared)
    write(os.path.join(out, "static_macros.json"), shared)
    write(os.path.join(out, "static_runtime.json"), strip_macros(shared))
    write(os.path.join(out, "nodedup.json"),
          unique_macros(gen_examples.decode_stack(args.nodedup_layers, opts, shared_weights=True)))
    moved = {}
    for name, (ol, nbytes) in kernel_lists(out, args.kernel_mib, w).items():
        write(os.path.join(out, f"kernel_{name}.json"), ol)
        moved[name] = nbytes
    write(os.path.join(out, "kernel_bytes.json"), moved)
    bds = [int(b) for b in args.bd_list.split(",") if b] or sorted({w, 2 * w, 4 * w, 40, 10 * w})
    for bd in bds:
        write(os.path.join(out, f"blockdim_{bd}.json"), blockdim_chain(args.bd_ops, 64, bd))
        write(os.path.join(out, f"blockdim_{bd}_percall.json"), blockdim_chain(args.bd_ops, 64, bd, out))
    write(os.path.join(out, "decode_small.json"), small_decode_stack(args.small_layers, opts))
    # The decode loop (runtime position, KV caches): the committed example and its hidden-128 twin.
    write(os.path.join(out, "decode_loop.json"), gen_examples.decode_loop(args.decode_layers, opts))
    write(os.path.join(out, "decode_loop_small.json"), small_decode_stack(args.small_layers, opts, loop=True))
    for fmt in ("q8_0", "q4_0"):
        write(os.path.join(out, f"a2a_{fmt}.json"), a2a_chain(out, fmt, args.a2a_ops, w))
    f = 1
    while f <= args.fanin_blocks:
        write(os.path.join(out, f"fanin_{f}.json"), fanin_chain(out, args.fanin_ops, args.fanin_n, args.fanin_blocks, f))
        f *= 2
    print(f"gen_sweep: op lists in {out} (W={w}, chain K={args.chain_ops} n={args.chain_n}, "
          f"decode layers={args.decode_layers})")


if __name__ == "__main__":
    main()
