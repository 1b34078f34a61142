//! Gives the OpenCL engine a digest of the sources that decide a program's code and how
//! it is launched (`HASSIUM_OPENCL_KERNEL_SOURCES`): codegen renders the kernels, the
//! core defines their operations, and the engine picks build options, work-group shapes
//! and arguments. Program binaries are cached by kernel key, so the digest is part of
//! every entry's name: a build that renders or launches a kernel differently (a
//! reduction's work-group layout, say) never loads an older build's binary for the same
//! key, which would run with the wrong geometry.

include!("../../core/build-support/source_digest.rs");

fn main() {
    emit_source_digest(
        "HASSIUM_OPENCL_KERNEL_SOURCES",
        &["src", "../../codegen/src", "../../core/src"],
    );
}
