//! Type resolution as NumPy's ufuncs do it. The rules themselves (loops, casting, sum
//! accumulators, integer ranges) live in `hassium_core::resolve`, shared with the C API;
//! this module adds what only Python needs: ufunc names and their aliases.
//!
//! Pure logic, no Python: tested here and, exhaustively against NumPy's own
//! `ufunc.resolve_dtypes`, from `tests/test_extension.py`.

pub use hassium_core::resolve::*;
use hassium_core::{OpClass, Opcode};

/// The opcode of a ufunc name as NumPy spells it (with NumPy's aliases, from the opcode
/// table), or of an elementwise opcode the bridge applies by name (`where`, `real`).
pub fn ufunc_opcode(name: &str) -> Option<Opcode> {
    Opcode::ufunc_named(name).or_else(|| {
        Opcode::from_name(name)
            .filter(|op| op.class() == OpClass::Elementwise && *op != Opcode::Identity)
    })
}

/// The reduction opcode of a ufunc (`add` → `add.reduce`) or of `argmin`/`argmax`.
pub fn reduce_opcode(name: &str) -> Option<Opcode> {
    match name {
        "argmin" => Some(Opcode::ArgminReduce),
        "argmax" => Some(Opcode::ArgmaxReduce),
        _ => {
            let op = ufunc_opcode(name)?;
            Opcode::ALL
                .iter()
                .copied()
                .find(|r| r.is_reduction() && r.info().combine == Some(op))
        }
    }
}

/// The scan opcode of a ufunc (`add` → `add.accumulate`).
pub fn accumulate_opcode(name: &str) -> Option<Opcode> {
    let op = ufunc_opcode(name)?;
    Opcode::ALL
        .iter()
        .copied()
        .find(|r| r.is_scan() && r.info().combine == Some(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ufunc_names_and_aliases_map_to_opcodes() {
        assert_eq!(ufunc_opcode("true_divide"), Some(Opcode::Divide));
        assert_eq!(ufunc_opcode("identity"), None);
        assert_eq!(reduce_opcode("add"), Some(Opcode::AddReduce));
        assert_eq!(reduce_opcode("maximum"), Some(Opcode::MaximumReduce));
        assert_eq!(reduce_opcode("argmax"), Some(Opcode::ArgmaxReduce));
        assert_eq!(reduce_opcode("subtract"), None);
        assert_eq!(
            accumulate_opcode("multiply"),
            Some(Opcode::MultiplyAccumulate)
        );
    }
}
