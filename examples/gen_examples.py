#!/usr/bin/env python3
"""Generates the example op lists from one description of a DeepSeek-V3-style
decode layer, so the single layer, the 61-layer stack and the benchmarks'
variants cannot drift apart. The outputs are committed (reviewed text); run

    python3 examples/gen_examples.py

after changing this file. Only the standard library is used.

Shapes (small-model decode, every op a few microseconds or less):
  batch 1, hidden 512, 8 query heads x 64 (2 KV heads, grouped-query),
  KV cache of 64 positions, 8 routed experts per rank with top-2, expert
  intermediate 128, shared expert intermediate 256; bf16 projection weights.

The decode loop (decode_loop/decode_loop.json) is the same stack as a step of
generation: the position is element 0 of the i64 buffer "step", read at run
time by rope, the KV-cache append and decode attention (over the first
pos + 1 rows of caches of capacity CAP), and the step's last two ops copy the
output back to the input and advance the position. One compiled plan then
serves every token: T runs of it generate T tokens with nothing from the host.
"""
import argparse
import json
import os

HIDDEN = 512
HEADS = 8
KV_HEADS = 2
HEAD_DIM = 64
SEQ = 64
EXPERTS = 8
TOPK = 2
EXPERT_INTER = 128
SHARED_INTER = 256
EPS = 1e-6
THETA = 10000.0
CAP = 256  # KV-cache capacity (rows) of the decode loop

# block_dim per kind of op: a real engine picks them per op from the core
# count; mixing them exercises local, flag and counter edges.
BD_GEMV = 16
BD_VEC = 8
BD_ROW = 4


class OpList:
    def __init__(self, options):
        self.kernels = {}
        self.buffers = {}
        self.ops = []
        self.options = options

    def builtin(self, name):
        self.kernels.setdefault(name, {"builtin": name})
        return name

    def buf(self, name, dtype, shape, init=None):
        assert name not in self.buffers, name
        d = {"dtype": dtype, "shape": shape}
        if init:
            d["init"] = init
        self.buffers[name] = d
        return name

    def op(self, name, kernel, block_dim, args, scope, stream=0, macros=None):
        o = {"name": name, "kernel": self.builtin(kernel), "block_dim": block_dim, "stream": stream}
        if scope is not None:
            o["scope"] = scope
        o["args"] = args
        if macros:
            o["macros"] = {k: str(v) for k, v in macros.items()}
        self.ops.append(o)

    def json(self):
        return {
            "format": "superkernel.oplist",
            "version": 1,
            "target": "cpu",
            "arch": "native",
            "options": self.options,
            "kernels": self.kernels,
            "buffers": self.buffers,
            "ops": self.ops,
        }


def gemv(ol, name, w, x, y, rows, cols, scope, weight="bf16"):
    kernel = "gemv_bf16w" if weight == "bf16" else "gemv_f32"
    ol.op(name, kernel, BD_GEMV, {"w": w, "x": x, "y": y, "rows": rows, "cols": cols}, scope,
          macros={"SK_ROWS": rows, "SK_COLS": cols})


def decode_layer(ol, l, h_in, scope, shared_weights=False, step=None):
    """Appends one layer: h_in (residual stream) -> returns the next residual.
    With `step` (a buffer name): the decode loop's layer, the position read at
    run time from step[0] and attention over a KV cache of capacity CAP."""
    p = f"l{l}_"
    wp = "w_" if shared_weights else f"l{l}_w_"

    def weight(name, dtype, shape):
        full = wp + name
        if full not in ol.buffers:
            ol.buf(full, dtype, shape, "random")
        return full

    def act(name, n, dtype="f32"):
        return ol.buf(p + name, dtype, [n])

    kv = KV_HEADS * HEAD_DIM
    q_dim = HEADS * HEAD_DIM
    # Attention block.
    hn = act("attn_in", HIDDEN)
    ol.op(p + "attn_norm", "rms_norm_f32", BD_ROW,
          {"x": h_in, "w": weight("attn_norm", "f32", [HIDDEN]), "y": hn, "rows": 1, "cols": HIDDEN, "eps": EPS},
          scope, macros={"SK_ROWS": 1, "SK_COLS": HIDDEN})
    q, k, v = act("q", q_dim), act("k", kv), act("v", kv)
    gemv(ol, p + "q_proj", weight("q", "bf16", [q_dim, HIDDEN]), hn, q, q_dim, HIDDEN, scope)
    gemv(ol, p + "k_proj", weight("k", "bf16", [kv, HIDDEN]), hn, k, kv, HIDDEN, scope)
    gemv(ol, p + "v_proj", weight("v", "bf16", [kv, HIDDEN]), hn, v, kv, HIDDEN, scope)
    qr = act("q_rope", q_dim)
    if step is not None:
        o = loop_attention(ol, p, q, k, v, qr, step, scope)
    else:
        o = frozen_attention(ol, p, q, k, v, qr, scope)
    return ffn_block(ol, p, weight, act, h_in, o, scope)


def loop_attention(ol, p, q, k, v, qr, step, scope):
    """RoPE at the runtime position, the new K/V row appended to the caches at
    that position, attention over positions 0..pos: returns the attention output."""
    kv = KV_HEADS * HEAD_DIM
    q_dim = HEADS * HEAD_DIM
    pos = {"from": step, "index": 0}
    ol.op(p + "rope_q", "rope_f32", BD_ROW,
          {"x": q, "y": qr, "heads": HEADS, "dim": HEAD_DIM, "pos": pos, "theta": THETA}, scope,
          macros={"SK_HEADS": HEADS, "SK_DIM": HEAD_DIM})
    kr = ol.buf(p + "k_rope", "f32", [kv])
    ol.op(p + "rope_k", "rope_f32", BD_ROW,
          {"x": k, "y": kr, "heads": KV_HEADS, "dim": HEAD_DIM, "pos": pos, "theta": THETA}, scope,
          macros={"SK_HEADS": KV_HEADS, "SK_DIM": HEAD_DIM})
    kcache = ol.buf(p + "k_cache", "f32", [CAP, KV_HEADS, HEAD_DIM])
    vcache = ol.buf(p + "v_cache", "f32", [CAP, KV_HEADS, HEAD_DIM])
    ol.op(p + "kv_append", "kv_append_f32", BD_VEC,
          {"k": kr, "v": v, "k_cache": kcache, "v_cache": vcache, "row": kv, "cap": CAP, "pos": pos}, scope,
          macros={"SK_ROW": kv, "SK_CAP": CAP})
    o = ol.buf(p + "attn_o", "f32", [q_dim])
    ol.op(p + "attention", "attn_decode_f32", BD_ROW,
          {"q": qr, "k_cache": kcache, "v_cache": vcache, "out": o, "heads": HEADS, "kv_heads": KV_HEADS,
           "dim": HEAD_DIM, "cap": CAP, "pos": pos, "scale": 1.0 / HEAD_DIM ** 0.5}, scope,
          macros={"SK_HEADS": HEADS, "SK_KV_HEADS": KV_HEADS, "SK_DIM": HEAD_DIM, "SK_CAP": CAP})
    return o


def frozen_attention(ol, p, q, k, v, qr, scope):
    """One frozen step: the new token at the last of SEQ cached positions."""
    kv = KV_HEADS * HEAD_DIM
    q_dim = HEADS * HEAD_DIM

    def act(name, n):
        return ol.buf(p + name, "f32", [n])

    ol.op(p + "rope_q", "rope_f32", BD_ROW,
          {"x": q, "y": qr, "heads": HEADS, "dim": HEAD_DIM, "pos": SEQ - 1, "theta": THETA}, scope,
          macros={"SK_HEADS": HEADS, "SK_DIM": HEAD_DIM})
    kcache = ol.buf(p + "k_cache", "f32", [SEQ, KV_HEADS, HEAD_DIM], "random")
    vcache = ol.buf(p + "v_cache", "f32", [SEQ, KV_HEADS, HEAD_DIM], "random")
    # The new token's K (after RoPE) and V go straight into the cache's last slot:
    # views of the cache buffer, so earlier slots carry no dependency.
    slot = (SEQ - 1) * kv
    ol.op(p + "rope_k", "rope_f32", BD_ROW,
          {"x": k, "y": {"buffer": kcache, "offset": slot, "count": kv}, "heads": KV_HEADS, "dim": HEAD_DIM,
           "pos": SEQ - 1, "theta": THETA}, scope, macros={"SK_HEADS": KV_HEADS, "SK_DIM": HEAD_DIM})
    ol.op(p + "v_store", "copy_f32", BD_VEC,
          {"x": v, "y": {"buffer": vcache, "offset": slot, "count": kv}, "n": kv}, scope, macros={"SK_N": kv})
    s, pr = act("scores", HEADS * SEQ), act("probs", HEADS * SEQ)
    ol.op(p + "attn_scores", "attn_scores_f32", BD_VEC,
          {"q": qr, "k": kcache, "s": s, "heads": HEADS, "kv_heads": KV_HEADS, "seq": SEQ, "dim": HEAD_DIM,
           "scale": 1.0 / HEAD_DIM ** 0.5}, scope,
          macros={"SK_HEADS": HEADS, "SK_KV_HEADS": KV_HEADS, "SK_SEQ": SEQ, "SK_DIM": HEAD_DIM})
    ol.op(p + "softmax", "softmax_f32", BD_ROW, {"x": s, "y": pr, "rows": HEADS, "cols": SEQ}, scope,
          macros={"SK_ROWS": HEADS, "SK_COLS": SEQ})
    o = act("attn_o", q_dim)
    ol.op(p + "attn_out", "attn_weighted_sum_f32", BD_VEC,
          {"p": pr, "v": vcache, "o": o, "heads": HEADS, "kv_heads": KV_HEADS, "seq": SEQ, "dim": HEAD_DIM}, scope,
          macros={"SK_HEADS": HEADS, "SK_KV_HEADS": KV_HEADS, "SK_SEQ": SEQ, "SK_DIM": HEAD_DIM})
    return o


def ffn_block(ol, p, weight, act, h_in, o, scope):
    """o_proj, the residual add + norm, the MoE block: returns the layer's output."""
    q_dim = HEADS * HEAD_DIM
    ao = act("o_proj", HIDDEN)
    gemv(ol, p + "o_proj", weight("o", "bf16", [HIDDEN, q_dim]), o, ao, HIDDEN, q_dim, scope)
    # Residual add + norm before the MoE block.
    h2, h2n = act("resid1", HIDDEN), act("ffn_in", HIDDEN)
    ol.op(p + "add_norm", "add_rms_norm_f32", BD_ROW,
          {"x": ao, "residual": h_in, "w": weight("ffn_norm", "f32", [HIDDEN]), "sum": h2, "y": h2n, "rows": 1,
           "cols": HIDDEN, "eps": EPS}, scope, macros={"SK_ROWS": 1, "SK_COLS": HIDDEN})
    # MoE: router, top-k gating, routed experts, shared expert.
    logits = act("router", EXPERTS)
    gemv(ol, p + "router", weight("router", "f32", [EXPERTS, HIDDEN]), h2n, logits, EXPERTS, HIDDEN, scope,
         weight="f32")
    idx = ol.buf(p + "topk_idx", "i32", [TOPK])
    gw = act("topk_w", TOPK)
    ol.op(p + "gate_topk", "moe_gate_topk_f32", 1,
          {"logits": logits, "idx": idx, "weights": gw, "rows": 1, "experts": EXPERTS, "topk": TOPK, "sigmoid": 1,
           "normalize": 1}, scope, macros={"SK_ROWS": 1, "SK_EXPERTS": EXPERTS, "SK_TOPK": TOPK})
    eg, eu, eh = act("exp_gate", TOPK * EXPERT_INTER), act("exp_up", TOPK * EXPERT_INTER), act("exp_h", TOPK * EXPERT_INTER)
    ed = act("exp_down", TOPK * HIDDEN)
    for nm, w, out in (("exp_gate", "exp_gate", eg), ("exp_up", "exp_up", eu)):
        ol.op(p + nm, "moe_expert_gemv_bf16w", BD_GEMV,
              {"w": weight(w, "bf16", [EXPERTS, EXPERT_INTER, HIDDEN]), "x": h2n, "idx": idx, "y": out,
               "experts": EXPERTS, "topk": TOPK, "rows": EXPERT_INTER, "cols": HIDDEN, "x_per_slot": 0}, scope,
              macros={"SK_EXPERTS": EXPERTS, "SK_TOPK": TOPK, "SK_ROWS": EXPERT_INTER, "SK_COLS": HIDDEN,
                      "SK_X_PER_SLOT": 0})
    ol.op(p + "exp_swiglu", "swiglu_f32", BD_VEC, {"gate": eg, "up": eu, "y": eh, "n": TOPK * EXPERT_INTER}, scope,
          macros={"SK_N": TOPK * EXPERT_INTER})
    ol.op(p + "exp_down", "moe_expert_gemv_bf16w", BD_GEMV,
          {"w": weight("exp_down", "bf16", [EXPERTS, HIDDEN, EXPERT_INTER]), "x": eh, "idx": idx, "y": ed,
           "experts": EXPERTS, "topk": TOPK, "rows": HIDDEN, "cols": EXPERT_INTER, "x_per_slot": 1}, scope,
          macros={"SK_EXPERTS": EXPERTS, "SK_TOPK": TOPK, "SK_ROWS": HIDDEN, "SK_COLS": EXPERT_INTER,
                  "SK_X_PER_SLOT": 1})
    moe = act("moe_out", HIDDEN)
    ol.op(p + "moe_combine", "moe_combine_f32", BD_VEC,
          {"weights": gw, "expert_out": ed, "y": moe, "topk": TOPK, "rows": HIDDEN}, scope,
          macros={"SK_TOPK": TOPK, "SK_ROWS": HIDDEN})
    sg, su, sh, sd = act("sh_gate", SHARED_INTER), act("sh_up", SHARED_INTER), act("sh_h", SHARED_INTER), act("sh_down", HIDDEN)
    gemv(ol, p + "sh_gate", weight("sh_gate", "bf16", [SHARED_INTER, HIDDEN]), h2n, sg, SHARED_INTER, HIDDEN, scope)
    gemv(ol, p + "sh_up", weight("sh_up", "bf16", [SHARED_INTER, HIDDEN]), h2n, su, SHARED_INTER, HIDDEN, scope)
    ol.op(p + "sh_swiglu", "swiglu_f32", BD_VEC, {"gate": sg, "up": su, "y": sh, "n": SHARED_INTER}, scope,
          macros={"SK_N": SHARED_INTER})
    gemv(ol, p + "sh_down", weight("sh_down", "bf16", [HIDDEN, SHARED_INTER]), sh, sd, HIDDEN, SHARED_INTER, scope)
    ffn = act("ffn_out", HIDDEN)
    ol.op(p + "ffn_add", "add_f32", BD_VEC, {"x": moe, "y": sd, "z": ffn, "n": HIDDEN}, scope, macros={"SK_N": HIDDEN})
    h_out = act("out", HIDDEN)
    ol.op(p + "resid_add", "add_f32", BD_VEC, {"x": h2, "y": ffn, "z": h_out, "n": HIDDEN}, scope,
          macros={"SK_N": HIDDEN})
    return h_out


def decode_stack(layers, options, shared_weights=False, scope="decode"):
    ol = OpList(options)
    h = ol.buf("embed", "f32", [HIDDEN], "random")
    for l in range(layers):
        h = decode_layer(ol, l, h, scope, shared_weights)
    return ol.json()


def decode_loop(layers, options, scope="decode"):
    """The stack as one step of a generation loop: its output becomes the next
    step's input and the position advances, inside the plan."""
    ol = OpList(options)
    h_in = ol.buf("embed", "f32", [HIDDEN], "random")
    step = ol.buf("step", "i64", [1])
    h = h_in
    for l in range(layers):
        h = decode_layer(ol, l, h, scope, step=step)
    ol.op("feed_back", "copy_f32", BD_VEC, {"x": h, "y": h_in, "n": HIDDEN}, scope, macros={"SK_N": HIDDEN})
    ol.op("advance", "increment_i64", 1, {"x": step, "n": 1, "delta": 1}, scope, macros={"SK_N": 1})
    return ol.json()


def two_stream(options):
    """A matmul-heavy stream and a vector stream joined by events."""
    ol = OpList(options)
    m, k, n = 4, 256, 256
    a = ol.buf("a", "f32", [m, k], "random")
    x = ol.buf("x", "f32", [4096], "random")
    prev = a
    for i in range(6):
        w = ol.buf(f"w{i}", "bf16", [k, n], "random")
        c = ol.buf(f"mm{i}", "f32", [m, n])
        ol.op(f"matmul_{i}", "matmul_bf16w", BD_GEMV, {"a": prev, "b": w, "c": c, "m": m, "k": k, "n": n},
              "sk", stream=0, macros={"SK_M": m, "SK_K": k, "SK_N": n})
        prev = c
    ol.ops.append({"record": "mm_done", "stream": 0})
    v = x
    for i in range(6):
        y = ol.buf(f"v{i}", "f32", [4096])
        ol.op(f"scale_{i}", "scale_f32", BD_VEC, {"x": v, "y": y, "alpha": 0.5 + 0.1 * i, "n": 4096}, "sk",
              stream=1, macros={"SK_N": 4096})
        v = y
    ol.ops.append({"record": "vec_done", "stream": 1})
    ol.ops.append({"wait": "mm_done", "stream": 1})
    out = ol.buf("joined", "f32", [m * n])
    ol.op("join_add", "add_f32", BD_VEC,
          {"x": {"buffer": prev, "offset": 0, "count": m * n}, "y": {"buffer": v, "offset": 0, "count": m * n},
           "z": out, "n": m * n}, "sk", stream=1, macros={"SK_N": m * n})
    return ol.json()


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    print(f"wrote {path} ({len(obj['ops'])} ops, {len(obj['buffers'])} buffers)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    d = args.out
    write(os.path.join(d, "decode_layer", "decode_layer.json"), decode_stack(1, "early-start=1"))
    write(os.path.join(d, "decode_stack", "decode_stack.json"), decode_stack(61, "early-start=1"))
    write(os.path.join(d, "decode_stack", "decode_stack_shared_weights.json"),
          decode_stack(61, "early-start=1", shared_weights=True))
    write(os.path.join(d, "two_stream", "two_stream.json"), two_stream("stream-fusion=1"))
    os.makedirs(os.path.join(d, "decode_loop"), exist_ok=True)
    write(os.path.join(d, "decode_loop", "decode_loop.json"), decode_loop(61, "early-start=1"))
    # Two layers: the loop for the simulators' tests (cuda-sim runs a fused launch in about a second).
    write(os.path.join(d, "decode_loop", "decode_loop_2layers.json"),
          decode_loop(2, "early-start=1"))


if __name__ == "__main__":
    main()
