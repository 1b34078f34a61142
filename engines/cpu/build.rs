//! Gives the cpu engine a digest of the sources that decide a compiled kernel's code
//! (`HASSIUM_CPU_KERNEL_SOURCES`): codegen renders it, the core defines its operations,
//! and the engine picks the flags and calls it. The disk cache's directory is named by it,
//! so a build that renders a kernel differently never loads an older build's library for
//! the same kernel key.

include!("../../core/build-support/source_digest.rs");

fn main() {
    emit_source_digest(
        "HASSIUM_CPU_KERNEL_SOURCES",
        &["src", "../../codegen/src", "../../core/src"],
    );
}
