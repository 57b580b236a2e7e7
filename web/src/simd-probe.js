// Which build of the CPU-only module this browser can run: the relaxed-SIMD one where it
// compiles relaxed SIMD (load option cpuSimd).

/**
 * A module of one function running f32x4.relaxed_madd (opcode 0xfd 0x105) on three
 * constants: it validates exactly where the engine has relaxed SIMD.
 */
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // types: () -> ()
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x0a, 0x3e, 0x01, 0x3c, 0x00, // code: one body of 60 bytes, no locals
  ...[0, 1, 2].flatMap(() => [0xfd, 0x0c, ...new Array(16).fill(0)]), // v128.const 0, three times
  0xfd, 0x85, 0x02, // f32x4.relaxed_madd
  0x1a, 0x0b, // drop, end
]);

let compiles = null;

/** Whether this engine compiles relaxed SIMD (validated once: the answer cannot change). */
export function relaxedSimdCompiles() {
  if (compiles === null) {
    try {
      compiles = WebAssembly.validate(RELAXED_SIMD_PROBE);
    } catch {
      compiles = false;
    }
  }
  return compiles;
}
