// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// Every data type that crosses from the wasm module to JavaScript.

export type * from "./types/options";
export type * from "./types/rounds";
export type * from "./types/summary";
export type * from "./types/lab";
export type * from "./types/plan";
