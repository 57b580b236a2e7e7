"""Writes crates/specula-gguf/tests/fixtures/kquants.json: seeded random Q4_K and Q6_K
blocks and their weights as the `gguf` package dequantizes them, the independent
reference for specula-gguf's own K-quant decoders.

Run with the reference venv: $CACHE/pyref/bin/python scripts/reference/kquant_fixture.py
"""
import json
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

rng = np.random.default_rng(20261127)
cases = []
for ty, size in ((T.Q4_K, 144), (T.Q6_K, 210)):
    for _ in range(3):
        raw = rng.integers(0, 256, size=size, dtype=np.uint8)
        # Scales d (and dmin) as small finite halves, so no block decodes to inf/NaN.
        at = (0, 2) if ty == T.Q4_K else (208,)
        for a in at:
            raw[a:a + 2] = np.frombuffer(np.float16(rng.uniform(-0.1, 0.1)).tobytes(), np.uint8)
        values = dequantize(raw, ty).astype(np.float32).ravel()
        cases.append({"type": ty.name, "bytes": raw.tobytes().hex(), "values": [float(v) for v in values]})
json.dump({"cases": cases}, open(sys.argv[1] if len(sys.argv) > 1 else
          "crates/specula-gguf/tests/fixtures/kquants.json", "w"))
