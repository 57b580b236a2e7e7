//! Links the wasm module as a "reactor". Without an exported `__wasm_call_ctors`, wasm-ld
//! treats the module as a command and makes every export call the constructors first;
//! burn's GPU stack registers hundreds of them (cubecl's `inventory`), which then ran on
//! every call from JavaScript (~1.7 ms each, many per generated token). With it exported,
//! `install_panic_hook` runs them once at start.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo::rustc-link-arg=--export=__wasm_call_ctors");
    }
}
