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
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    w = max(1, args.workers)
    for kind in ("local", "flag", "counter", "barrier"):
        write(os.path.join(out, f"chain_{kind}.json"), chain(out, kind, args.chain_ops, args.chain_n, w))
    for n in [int(s) for s in args.sweep_n.split(",") if s]:
        write(os.path.join(out, f"sweep_n{n}.json"), chain(out, "counter", args.sweep_ops, n, w))
    opts = "early-start=1:preload-code=per-func"
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
    print(f"gen_sweep: op lists in {out} (W={w}, chain K={args.chain_ops} n={args.chain_n}, "
          f"decode layers={args.decode_layers})")


if __name__ == "__main__":
    main()
