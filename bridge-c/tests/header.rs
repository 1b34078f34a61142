//! The committed header must be what cbindgen makes of the current source, and every
//! opcode and dtype of the bytecode must have its C constant with the same number.

use hassium_core::{DType, Opcode};
use std::path::PathBuf;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate() -> String {
    let dir = crate_dir();
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml"))
        .expect("bridge-c/cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    let header = String::from_utf8(out).expect("the header is UTF-8");
    // The opcode constants come from the opcode table (build.rs writes their Rust side,
    // which cbindgen does not read): placed before the functions.
    let at = header
        .find("#ifdef __cplusplus\nextern \"C\" {")
        .expect("the header declares its functions in extern \"C\"");
    format!("{}{}\n{}", &header[..at], opcodes(), &header[at..])
}

/// The `#define HS_OP_*` lines, one per opcode in discriminant order, each with NumPy's
/// name for it and a heading where the class changes.
fn opcodes() -> String {
    let mut s = String::from(
        "// The opcodes (values of hs_opcode), from Hassium's opcode table. The comment is\n\
         // NumPy's name for the operation.\n",
    );
    let mut class = None;
    for &op in Opcode::ALL {
        if class != Some(op.class()) {
            class = Some(op.class());
            s.push_str(&format!("\n// {:?}\n", op.class()));
        }
        s.push_str(&format!(
            "#define {} {}  // {}\n",
            hassium_core::opcode_c_name(op),
            op as u16,
            op.info().name
        ));
    }
    s
}

#[test]
fn committed_header_matches_the_source() {
    let fresh = generate();
    let path = crate_dir().join("include/hassium.h");
    if std::env::var_os("HASSIUM_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/hassium.h");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "bridge-c/include/hassium.h is stale: regenerate it with \
         `HASSIUM_BLESS=1 cargo test -p hassium-bridge-c --test header` and commit it"
    );
}

#[test]
fn every_opcode_has_a_c_constant_with_its_number() {
    let header = generate();
    for &op in Opcode::ALL {
        let line = format!("#define {} {} ", hassium_core::opcode_c_name(op), op as u16);
        assert!(header.contains(&line), "missing `{line}` in hassium.h");
        let c = hassium::hs_opcode(op as u32);
        assert_eq!(c.to_core(), Some(op));
    }
    let count = header.matches("#define HS_OP_").count();
    assert_eq!(
        count,
        Opcode::ALL.len(),
        "the header has opcode constants the bytecode does not"
    );
}

#[test]
fn every_dtype_has_a_c_constant_with_its_number() {
    let header = generate();
    for d in DType::ALL {
        let line = format!("#define HS_{} {}", d.name().to_uppercase(), d as u8);
        assert!(header.contains(&line), "missing `{line}` in hassium.h");
    }
}
