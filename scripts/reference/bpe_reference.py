#!/usr/bin/env python3
"""Independent byte-level BPE reference for a GGUF "gpt2"-model tokenizer.

Builds a Hugging Face `tokenizers` Tokenizer from the vocabulary and merges
stored in the GGUF file (nothing is loaded from a hub), so the Rust tokenizer
can be checked against a second implementation on the same data.

The pre-tokenizer mirrors llama.cpp's "smollm" pre-type: digits split one by
one, then the GPT-2 byte-level regex, no prefix space.

Usage:
  bpe_reference.py --model M.gguf --out cases.json
      Encode >= 1,200 deterministic test strings; write
      {"cases": [{"text", "ids", "decoded"}]} and report round-trip failures.
  bpe_reference.py --model M.gguf --out prompts.json --encode TEXT [--encode TEXT ...]
      Write {"texts": [...], "prompts": [[ids], ...]} (input for llama_forward.py).
"""

import argparse
import json
import random
import sys

import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

# tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
TOKEN_CONTROL = 3
TOKEN_USER_DEFINED = 4


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def build_tokenizer(model_path):
    reader = gguf.GGUFReader(model_path)
    kind = field(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise SystemExit(f"unsupported tokenizer.ggml.model {kind!r} (want 'gpt2')")
    tokens = field(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    types = field(reader, "tokenizer.ggml.token_type") or [1] * len(tokens)

    vocab = {tok: i for i, tok in enumerate(tokens)}
    assert len(vocab) == len(tokens), "duplicate token strings in vocabulary"
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=None,
                               fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = [t for t, ty in zip(tokens, types) if ty in (TOKEN_CONTROL, TOKEN_USER_DEFINED)]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    # Added tokens must keep their vocabulary ids, not get fresh ones.
    for t in specials:
        assert tok.token_to_id(t) == vocab[t], t
    return tok


# ---------------------------------------------------------------- test strings

WORDS = ("the of and to in is was for that with as on by at from it his an were are which "
         "this be or has had not but first one their its new after who they have her she "
         "two been other when there all during into school time may years more most only "
         "over city some world would where later up such used many can state about national "
         "out known university united then made Paris France Emma girl little once upon "
         "don't it's we're they've I'm you'll he'd HELLO World CamelCase snake_case kebab-case "
         "tokenization speculative decoding transformer attention").split()
PUNCT = list(".,;:!?\"'()[]{}<>-_=+*/\\|@#$%^&~`") + ["...", "--", "—", "–", "«»", "“”", "‘’", "¿", "¡"]
CODE = [
    "def f(x):\n    return x * 2\n",
    "for i in range(10):\n\tprint(i, end=' ')\n",
    "class Foo(Bar):\n    def __init__(self):\n        super().__init__()\n",
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)\n",
    "fn main() {\n    println!(\"Hello, {}!\", name);\n}\n",
    "let v: Vec<u32> = (0..10).map(|x| x * x).collect();",
    "impl<'a> Iterator for Iter<'a> {\n    type Item = &'a str;\n}",
    "#[derive(Debug, Clone)]\nstruct P { x: f32, y: f32 }",
    "const add = (a, b) => a + b;\nconsole.log(add(1, 2));",
    "async function load(url) {\n  const r = await fetch(url);\n  return r.json();\n}",
    "if (x !== null && x?.y) { return `${x.y}px`; }",
    "<div class=\"a\">\n  <span>&amp;</span>\n</div>",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
    "{\"key\": [1, 2.5, -3e10, true, null]}",
    "    \n\t\n  x  \r\n",
]
UNICODE = [
    "café", "naïve", "résumé", "Ångström", "Zürich", "São Paulo", "jalapeño", "œuvre", "ß", "Łódź",
    "日本語のテキスト", "中文分词测试", "한국어 문장", "東京タワー",
    "Привет, мир!", "Съешь же ещё этих мягких французских булок",
    "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีครับ", "Γειά σου Κόσμε",
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "👩🏿‍💻", "🇫🇷🇯🇵", "❤️", "🤖 robots 🤖",
    "e\u0301", "a\u0308\u0323", "Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o", "\u00a0nbsp\u00a0",
    "\u200bzero\u200bwidth", "\ufeffbom", "ﬁ ligature", "①②③", "½ ¾", "²³", "١٢٣", "٣.١٤", "🔟",
]
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "<file_sep>"]


def gen_cases(seed=20240607):
    rng = random.Random(seed)
    out = []

    def words(n):
        return " ".join(rng.choice(WORDS) for _ in range(n))

    def space():
        return rng.choice([" ", "  ", "   ", "\t", "\n", "\n\n", " \n", "\t\t", "\r\n", " \t "])

    # ASCII words and sentences.
    for _ in range(200):
        s = words(rng.randint(1, 15))
        if rng.random() < 0.5:
            s = s[0].upper() + s[1:] + rng.choice([".", "!", "?", ",", ";", ""])
        out.append(s)
    # Whitespace runs, leading/trailing spaces.
    for _ in range(150):
        parts = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
        s = "".join(p + space() for p in parts)
        if rng.random() < 0.5:
            s = space() + s
        if rng.random() < 0.3:
            s = s.rstrip()
        out.append(s)
    out += [" ", "  ", "\n", "\t", "\n\n\n", "   \t  \n ", " a", "a ", "  a  ", "\ta\n"]
    # Digits and numbers.
    for _ in range(150):
        k = rng.randint(0, 4)
        if k == 0:
            s = str(rng.randint(0, 10 ** rng.randint(1, 30)))
        elif k == 1:
            s = f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 8)}f}"
        elif k == 2:
            s = f"{words(2)} {rng.randint(0, 99999)} {words(2)}"
        elif k == 3:
            s = f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(1900, 2100)}, {rng.randint(0, 23)}:{rng.randint(0, 59):02d}"
        else:
            s = "".join(rng.choice("0123456789 ,.-+e") for _ in range(rng.randint(1, 25)))
        out.append(s)
    # Punctuation.
    for _ in range(150):
        s = "".join(rng.choice([rng.choice(PUNCT), rng.choice(WORDS), " "]) for _ in range(rng.randint(1, 12)))
        out.append(s)
    # Code.
    out += CODE
    for _ in range(135):
        a, b = rng.sample(CODE, 2)
        out.append(a[: rng.randint(1, len(a))] + space() + b[rng.randint(0, len(b) - 1):])
    # Unicode, alone and mixed with ASCII.
    out += UNICODE
    for _ in range(250):
        parts = [rng.choice(UNICODE) if rng.random() < 0.5 else rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
        out.append("".join(p + (space() if rng.random() < 0.7 else "") for p in parts))
    # Random code points from several scripts (valid scalar values only).
    ranges = [(0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x600, 0x6FF),
              (0x900, 0x97F), (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x1F300, 0x1FAFF)]
    for _ in range(100):
        lo, hi = rng.choice(ranges)
        out.append("".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(1, 12))))
    # Special-token text inside ordinary text.
    out += [
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n",
        "text<|endoftext|>more text",
        "<|im_start|><|im_end|>",
        "< |im_start| > not special",
        "<|im_start",
    ]
    for _ in range(30):
        out.append(words(rng.randint(0, 4)) + rng.choice(SPECIAL) + space() + words(rng.randint(0, 4)))

    seen, cases = set(), []
    for s in out:
        if s and s not in seen:
            seen.add(s)
            cases.append(s)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--encode", action="append", metavar="TEXT",
                    help="encode these texts (special-token text allowed) instead of the test set")
    args = ap.parse_args()

    tok = build_tokenizer(args.model)

    if args.encode:
        ids = [tok.encode(t, add_special_tokens=False).ids for t in args.encode]
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"texts": args.encode, "prompts": ids}, f, ensure_ascii=False)
        for t, i in zip(args.encode, ids):
            print(json.dumps(t, ensure_ascii=False), "->", i)
        return

    texts = gen_cases()
    assert len(texts) >= 1200, len(texts)
    cases, bad = [], []
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False).ids
        decoded = tok.decode(ids, skip_special_tokens=False)
        cases.append({"text": text, "ids": ids, "decoded": decoded})
        if decoded != text:
            bad.append(text)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"cases": cases}, f, ensure_ascii=False, indent=0)
    n_ids = sum(len(c["ids"]) for c in cases)
    print(f"{len(cases)} cases, {n_ids} ids; round trip decode(encode(s)) == s: "
          f"{len(cases) - len(bad)}/{len(cases)}")
    for s in bad[:10]:
        print("  round-trip mismatch:", json.dumps(s, ensure_ascii=False))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
