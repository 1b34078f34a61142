//! The engine links the reference interpreter (its tiered and fallback path) as an rlib,
//! and that crate, being an engine library itself, also exports `hassium_engine_entry`.
//! In this cdylib (and this package's test and example binaries) the first definition — this crate's own, which the linker sees before
//! any dependency archive — must win; `the_cdylib_loads_through_the_abi_and_runs_a_batch`
//! checks that the loaded engine is "cpu".
fn main() {
    println!("cargo:rustc-link-arg=-Wl,--allow-multiple-definition");
}
