//! `bool`: NumPy's bool loops (add is or, multiply is and).

use super::{compare_ordered, unsupported, CastVal, Elem};
use hassium_core::{DType, Opcode, Result};

impl Elem for bool {
    const DTYPE: DType = DType::Bool;
    type Real = bool;

    unsafe fn load(ptr: *const u8) -> bool {
        // SAFETY: forwarded; read as a byte so any non-zero byte is true, never UB.
        unsafe { *ptr != 0 }
    }
    unsafe fn store(ptr: *mut u8, value: bool) {
        // SAFETY: forwarded.
        unsafe { *ptr = value as u8 }
    }
    fn to_cast(self) -> CastVal {
        CastVal::Bool(self)
    }
    fn from_cast(v: CastVal) -> bool {
        match v {
            CastVal::Bool(b) => b,
            CastVal::Int(i) => i != 0,
            CastVal::UInt(u) => u != 0,
            CastVal::Float(f) => f != 0.0,
            CastVal::Complex(r, i) => r != 0.0 || i != 0.0,
        }
    }
    fn is_nonzero(self) -> bool {
        self
    }
    fn unary(op: Opcode, a: bool) -> Result<bool> {
        match op {
            Opcode::Positive | Opcode::Floor | Opcode::Ceil | Opcode::Trunc | Opcode::Conj => Ok(a),
            Opcode::Invert => Ok(!a),
            _ => unsupported(op, DType::Bool),
        }
    }
    /// NumPy's bool loops: add is or, multiply is and, max/min are or/and.
    fn binary(op: Opcode, a: bool, b: bool) -> Result<bool> {
        match op {
            Opcode::Add | Opcode::Maximum | Opcode::Fmax | Opcode::BitwiseOr => Ok(a | b),
            Opcode::Multiply | Opcode::Minimum | Opcode::Fmin | Opcode::BitwiseAnd => Ok(a & b),
            Opcode::BitwiseXor => Ok(a ^ b),
            _ => unsupported(op, DType::Bool),
        }
    }
    fn to_real(op: Opcode, a: bool) -> Result<bool> {
        match op {
            Opcode::Absolute | Opcode::Real => Ok(a),
            Opcode::Imag => Ok(false),
            _ => unsupported(op, DType::Bool),
        }
    }
    fn compare(op: Opcode, a: bool, b: bool) -> Result<bool> {
        compare_ordered(op, a, b, DType::Bool)
    }
}
