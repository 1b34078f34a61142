//! Writes the C API's opcode constants (`HS_OP_ADD: hs_opcode = hs_opcode(1)`, …) from
//! the opcode table, so that adding an opcode to `hassium_core` adds its constant.

use std::fmt::Write;

fn main() {
    let mut s = String::new();
    for &op in hassium_core::Opcode::ALL {
        let c = hassium_core::opcode_c_name(op);
        writeln!(s, "pub const {c}: hs_opcode = hs_opcode({});", op as u16).unwrap();
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("opcodes.rs"), s).expect("write opcodes.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
