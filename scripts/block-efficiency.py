#!/usr/bin/env python3
"""Block efficiency (tokens per target call) of `specula generate` settings over the four
prompts of `specula bench` and seeds 0..N-1, pooled over all runs; for settings the bench
has no row for (prefix trees, other L), with more seeds than a bench run takes.

Usage: scripts/block-efficiency.py N "SETTINGS" ["SETTINGS" ...]
  e.g. scripts/block-efficiency.py 100 "--method speculative --gamma 4" \
           "--method spectr --gamma 4 --drafts 4" "--method spectr --tree 2,2,1,1"
The binary is $SPECULA, else the release build under $CARGO_TARGET_DIR (or target/).
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

PROMPTS = ["ROMEO:\n", "JULIET:\n", "First Citizen:\n", "KING RICHARD III:\n"]
TOKENS = "200"


def binary():
    if os.environ.get("SPECULA"):
        return os.environ["SPECULA"]
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    return os.path.join(target, "release", "specula")


def run(args):
    out = subprocess.run(
        [binary(), "generate", "--max-tokens", TOKENS, "--json", *args],
        capture_output=True, text=True, check=True,
    ).stdout
    metrics = json.loads(out)["metrics"]
    return metrics["numGeneratedTokens"], metrics["numTargetCalls"]


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    seeds = int(sys.argv[1])
    if not os.path.isfile(binary()):
        sys.exit(f"no {binary()}: run `cargo build --release -p specula-cli` first "
                 "(or set SPECULA or CARGO_TARGET_DIR)")
    for settings in sys.argv[2:]:
        jobs = [["--prompt", p, "--seed", str(s), *settings.split()]
                for p in PROMPTS for s in range(seeds)]
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(run, jobs))
        tokens = sum(t for t, _ in results)
        calls = sum(c for _, c in results)
        print(f"{settings:45s} block efficiency {tokens / calls:.4f} "
              f"({tokens} tokens, {calls} target calls)", flush=True)


if __name__ == "__main__":
    main()
