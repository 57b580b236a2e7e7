#!/usr/bin/env python3
"""Independent float32 numpy forward pass of a GGUF llama model.

Tensors are dequantized by the `gguf` package (not by our Rust code), so this
is a second implementation to compare the Rust engine's logits against.

Usage: llama_forward.py --model M.gguf --prompts prompts.json --out DIR
  prompts.json: {"prompts": [[token ids], ...]}
  DIR/logits.f32:  little-endian float32, every position of every prompt,
                   concatenated, row-major [positions, vocab]
  DIR/logits.json: {"vocab", "prompts", "rows", "greedy", "top2_gap", ...}

GGUF layout notes (what a Rust implementation must match):
  * 2-D tensor shapes are listed fastest dimension first (ne[0] = input
    features); gguf's reader hands back numpy arrays already as [out, in].
  * llama.cpp's converter permutes Q and K rows so that RoPE rotates ADJACENT
    pairs (2i, 2i+1) -- the "normal" rope of arch llama, not NeoX's half split.
  * output.weight may be absent: the output head is then token_embd (tied).
"""

import argparse
import json
import os
import time

import gguf
import numpy as np


# ---------------------------------------------------------------- loading

def field(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


class Model:
    def __init__(self, path):
        reader = gguf.GGUFReader(path)
        arch = field(reader, "general.architecture")
        if arch not in ("llama", "qwen2"):
            raise SystemExit(f"unsupported architecture {arch!r}")
        # llama.cpp rotates adjacent pairs for llama files and halves for qwen2 (NeoX).
        self.rope_style = "neox" if arch == "qwen2" else "norm"
        self.n_layer = int(field(reader, f"{arch}.block_count"))
        self.n_embd = int(field(reader, f"{arch}.embedding_length"))
        self.n_ff = int(field(reader, f"{arch}.feed_forward_length"))
        self.n_head = int(field(reader, f"{arch}.attention.head_count"))
        self.n_head_kv = int(field(reader, f"{arch}.attention.head_count_kv", self.n_head))
        self.head_dim = self.n_embd // self.n_head
        self.rope_dims = int(field(reader, f"{arch}.rope.dimension_count", self.head_dim))
        self.rope_base = float(field(reader, f"{arch}.rope.freq_base", 10000.0))
        self.eps = float(field(reader, f"{arch}.attention.layer_norm_rms_epsilon"))

        self.w = {}
        for t in reader.tensors:
            a = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32, copy=False)
            # Reader order is the reverse of GGUF's ne[] list: [out, in] for matrices.
            assert a.shape == tuple(int(d) for d in reversed(t.shape)), (t.name, a.shape, t.shape)
            self.w[t.name] = a
        self.tensor_types = {t.name: t.tensor_type.name for t in reader.tensors}
        self.output = self.w.get("output.weight", self.w["token_embd.weight"])
        self.vocab = self.output.shape[0]

    def layer(self, i, name):
        return self.w.get(f"blk.{i}.{name}")


# ---------------------------------------------------------------- pieces

def rmsnorm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope(x, positions, n_dims, base, style="norm"):
    """Rotate the first n_dims of each head. x: [seq, heads, head_dim].

    style "norm" (llama.cpp LLAMA_ROPE_TYPE_NORM): pairs (2i, 2i+1).
    style "neox": pairs (i, i + n_dims/2) -- kept only to show it is wrong here.
    """
    half = n_dims // 2
    inv_freq = base ** (-np.arange(half, dtype=np.float64) * 2.0 / n_dims)
    ang = positions[:, None].astype(np.float64) * inv_freq[None, :]      # [seq, half]
    cos = np.cos(ang).astype(np.float32)[:, None, :]
    sin = np.sin(ang).astype(np.float32)[:, None, :]
    out = x.copy()
    if style == "norm":
        a, b = x[..., 0:n_dims:2], x[..., 1:n_dims:2]
        out[..., 0:n_dims:2] = a * cos - b * sin
        out[..., 1:n_dims:2] = a * sin + b * cos
    else:
        a, b = x[..., :half], x[..., half:n_dims]
        out[..., :half] = a * cos - b * sin
        out[..., half:n_dims] = a * sin + b * cos
    return out


def attention(q, k, v, q_pos):
    """Causal grouped-query attention.

    q: [seq, n_head, hd] at absolute positions q_pos; k, v: [ctx, n_kv, hd] for
    positions 0..ctx-1. Query head h reads KV head h // (n_head / n_kv).
    """
    n_head, hd = q.shape[1], q.shape[2]
    group = n_head // k.shape[1]
    k = np.repeat(k, group, axis=1)                                       # [ctx, n_head, hd]
    v = np.repeat(v, group, axis=1)
    scores = np.einsum("shd,chd->hsc", q, k) / np.float32(np.sqrt(hd))   # [n_head, seq, ctx]
    mask = np.arange(k.shape[0])[None, :] > q_pos[:, None]               # future keys
    scores = np.where(mask[None], np.float32(-np.inf), scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hsc,chd->shd", p, v)                                # [seq, n_head, hd]


def swiglu(x, w_gate, w_up, w_down):
    g = x @ w_gate.T
    return ((g / (1.0 + np.exp(-g))) * (x @ w_up.T)) @ w_down.T


def linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


# ---------------------------------------------------------------- model

class KVCache:
    def __init__(self, n_layer):
        self.k = [None] * n_layer
        self.v = [None] * n_layer
        self.n = 0

    def append(self, i, k, v):
        self.k[i] = k if self.k[i] is None else np.concatenate([self.k[i], k])
        self.v[i] = v if self.v[i] is None else np.concatenate([self.v[i], v])
        return self.k[i], self.v[i]


def forward(m, tokens, cache, rope_style="norm"):
    """Run new tokens after cache.n earlier ones; return logits [len(tokens), vocab]."""
    seq = len(tokens)
    pos = np.arange(cache.n, cache.n + seq)
    x = m.w["token_embd.weight"][np.asarray(tokens)]
    hd = m.head_dim
    for i in range(m.n_layer):
        h = rmsnorm(x, m.layer(i, "attn_norm.weight"), m.eps)
        q = linear(h, m.layer(i, "attn_q.weight"), m.layer(i, "attn_q.bias")).reshape(seq, m.n_head, hd)
        k = linear(h, m.layer(i, "attn_k.weight"), m.layer(i, "attn_k.bias")).reshape(seq, m.n_head_kv, hd)
        v = linear(h, m.layer(i, "attn_v.weight"), m.layer(i, "attn_v.bias")).reshape(seq, m.n_head_kv, hd)
        q = rope(q, pos, m.rope_dims, m.rope_base, rope_style)
        k = rope(k, pos, m.rope_dims, m.rope_base, rope_style)
        k_all, v_all = cache.append(i, k, v)
        a = attention(q, k_all, v_all, pos).reshape(seq, m.n_head * hd)
        x = x + linear(a, m.layer(i, "attn_output.weight"), m.layer(i, "attn_output.bias"))
        h = rmsnorm(x, m.layer(i, "ffn_norm.weight"), m.eps)
        x = x + swiglu(h, m.layer(i, "ffn_gate.weight"), m.layer(i, "ffn_up.weight"),
                       m.layer(i, "ffn_down.weight"))
    cache.n += seq
    x = rmsnorm(x, m.w["output_norm.weight"], m.eps)
    return (x @ m.output.T).astype(np.float32)


def top2_gap(row):
    a, b = np.partition(row, -2)[-2:]
    return float(abs(b - a))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=32, help="greedy continuation length")
    ap.add_argument("--rope-style", choices=["norm", "neox"], default=None,
                    help="RoPE pairing; default: the architecture's (norm for llama, neox for qwen2)")
    args = ap.parse_args()

    t0 = time.time()
    m = Model(args.model)
    if args.rope_style is None:
        args.rope_style = m.rope_style
    t_load = time.time() - t0
    with open(args.prompts) as f:
        prompts = json.load(f)["prompts"]

    os.makedirs(args.out, exist_ok=True)
    rows, greedy, gaps = [], [], []
    t0 = time.time()
    with open(os.path.join(args.out, "logits.f32"), "wb") as f:
        for ids in prompts:
            cache = KVCache(m.n_layer)
            logits = forward(m, ids, cache, args.rope_style)
            f.write(logits.astype("<f4").tobytes())
            rows.append(len(ids))
            # Greedy continuation with the same model, via its own KV cache.
            out, gap, last = [], [], logits[-1]
            for _ in range(args.steps):
                nxt = int(np.argmax(last))
                out.append(nxt)
                gap.append(top2_gap(last))
                last = forward(m, [nxt], cache, args.rope_style)[-1]
            greedy.append(out)
            gaps.append(gap)
    t_run = time.time() - t0

    meta = {
        "model": os.path.basename(args.model),
        "vocab": m.vocab,
        "prompts": prompts,
        "rows": rows,
        "greedy": greedy,
        "top2_gap": gaps,
        "rope_style": args.rope_style,
    }
    with open(os.path.join(args.out, "logits.json"), "w") as f:
        json.dump(meta, f)
    print(f"loaded in {t_load:.1f}s; {sum(rows)} rows + {len(prompts)}x{args.steps} greedy steps in {t_run:.1f}s")
    for ids, g, gp in zip(prompts, greedy, gaps):
        print(f"prompt {ids} -> {g}  (min top-2 gap {min(gp):.3f})")


if __name__ == "__main__":
    main()
