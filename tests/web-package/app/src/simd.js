// The two builds of the CPU-only module (load option cpuSimd): which one auto picks, that
// each says which it is, that they compute the same logits up to the rounding of a fused
// multiply-add, and that the option's mistakes are typed errors.
import { Specula, SpeculaError } from "specula";

// f32x4.relaxed_madd on three constants: validates exactly where the browser has relaxed
// SIMD (written out here, not imported, so the test does not trust the worker's probe).
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00,
  0x0a, 0x3e, 0x01, 0x3c, 0x00, ...[0, 1, 2].flatMap(() => [0xfd, 0x0c, ...new Array(16).fill(0)]), 0xfd, 0x85, 0x02, 0x1a, 0x0b,
]);

/** The target's logits for 5 new positions after a 40-token prefix (a verification). */
async function verificationLogits(specula) {
  const model = specula.models.target;
  const sequence = Int32Array.from({ length: 45 }, (_, i) => (i * 7 + 3) % model.vocabSize);
  const queries = Array.from({ length: 5 }, (_, i) => ({ sequence: 0, prefixLen: 41 + i }));
  return model.forward({ committedLen: 0, sequences: [sequence], queries });
}

/** The error `Specula.load(options)` throws, or null (the instance then terminated). */
export async function refusal(options) {
  try {
    const s = await Specula.load(options);
    s.terminate();
    return null;
  } catch (error) {
    return error;
  }
}

/** `auto`: the build `cpu` loaded (its backend report), checked against this browser. */
export async function simdChecks(cpu, check, greedy) {
  const relaxedHere = WebAssembly.validate(RELAXED_PROBE);
  const expected = relaxedHere ? "relaxed-simd" : "simd128";
  check(cpu.backend.simd === expected, `simd: cpuSimd "auto" loads the ${expected} build here (${JSON.stringify(cpu.backend)})`);
  const plain = await Specula.load({ backend: "cpu", cpuSimd: "simd128" });
  check(plain.backend.simd === "simd128" && plain.backend.module === "cpu", `simd: cpuSimd "simd128" loads that build (${JSON.stringify(plain.backend)})`);
  const [a, b] = [await verificationLogits(cpu), await verificationLogits(plain)];
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  // A fused multiply-add rounds once where mul + add rounds twice: the sums of 1,280 terms
  // through 6 blocks drift by ~1e-6 relative; a wrong kernel is off by far more.
  check(a.length === b.length && a.length > 0 && worst <= 1e-4, `simd: both builds' logits agree (${a.length} values, worst relative difference ${worst.toExponential(2)})`);
  const args = { ...greedy, method: "speculative", gamma: 4 };
  const [x, y] = [await cpu.complete(args), await plain.complete(args)];
  check(x.text === y.text, `simd: the same greedy text from both builds (${JSON.stringify(x.text)})`);
  plain.terminate();
  if (relaxedHere) {
    const relaxed = await Specula.load({ backend: "cpu", cpuSimd: "relaxed-simd" });
    check(relaxed.backend.simd === "relaxed-simd", `simd: cpuSimd "relaxed-simd" loads that build here`);
    relaxed.terminate();
  }
  const wrong = await refusal({ backend: "cpu", cpuSimd: "avx" });
  check(
    wrong instanceof SpeculaError && wrong.code === "invalid_option" && wrong.field === "cpuSimd" && wrong.message.includes('"simd128"'),
    `simd: an unknown cpuSimd is refused naming the choices (${wrong?.code} ${wrong?.field}: ${wrong?.message})`,
  );
  // Modules served elsewhere without a relaxed build: insisting on it is refused before
  // anything downloads.
  const elsewhere = await refusal({ backend: "cpu", cpuSimd: "relaxed-simd", wasmCpuUrl: "/elsewhere/specula_wasm_bg.wasm" });
  check(
    elsewhere instanceof SpeculaError && elsewhere.code === "backend_unavailable" && elsewhere.field === "cpuSimd",
    `simd: cpuSimd "relaxed-simd" without a relaxed build served is backend_unavailable (${elsewhere?.code} ${elsewhere?.field}: ${elsewhere?.message})`,
  );
}
