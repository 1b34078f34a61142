use crate::{BaseId, Opcode, Scalar, View};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// An input of an instruction: a view of a base, or a constant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Operand {
    View(View),
    Scalar(Scalar),
}

impl Operand {
    pub fn as_view(&self) -> Option<&View> {
        match self {
            Operand::View(v) => Some(v),
            Operand::Scalar(_) => None,
        }
    }
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match self {
            Operand::Scalar(s) => Some(s),
            Operand::View(_) => None,
        }
    }
    pub fn dtype(&self) -> crate::DType {
        match self {
            Operand::View(v) => v.dtype,
            Operand::Scalar(s) => s.dtype(),
        }
    }
    pub fn base(&self) -> Option<BaseId> {
        self.as_view().map(|v| v.base)
    }
}

impl From<View> for Operand {
    fn from(v: View) -> Self {
        Operand::View(v)
    }
}
impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Self {
        Operand::Scalar(s)
    }
}

/// An instruction's inputs. Two inline: nearly every instruction is unary or binary, and
/// each inline slot (a whole view) makes every instruction larger to move on the
/// recording hot path; `where`'s third input goes to the heap.
pub type Operands = SmallVec<[Operand; 2]>;

/// One bytecode instruction; the output comes first, as in Bohrium.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Instr {
    pub op: Opcode,
    pub out: View,
    pub ins: Operands,
    /// The axis of a reduction or scan (of the input view).
    pub axis: Option<usize>,
    /// The method name of an [`Opcode::Extension`] (e.g. `"matmul"`).
    pub method: Option<String>,
}

impl Instr {
    pub fn new(op: Opcode, out: View, ins: impl IntoIterator<Item = Operand>) -> Instr {
        Instr {
            op,
            out,
            ins: ins.into_iter().collect(),
            axis: None,
            method: None,
        }
    }

    pub fn with_axis(mut self, axis: usize) -> Instr {
        self.axis = Some(axis);
        self
    }

    /// A `Free` or `Sync` of a whole base.
    pub fn system(op: Opcode, base: &crate::Base) -> Instr {
        Instr::new(op, base.full_view(), [])
    }

    /// An extension-method call such as matmul.
    pub fn extension(method: &str, out: View, ins: impl IntoIterator<Item = Operand>) -> Instr {
        Instr {
            method: Some(method.to_owned()),
            ..Instr::new(Opcode::Extension, out, ins)
        }
    }

    /// Views read by this instruction (for scatters, the output is read too).
    pub fn input_views(&self) -> impl Iterator<Item = &View> {
        self.ins.iter().filter_map(Operand::as_view)
    }

    /// True for a signed integer power whose exponent an array holds: it fails when run
    /// on a negative exponent, as NumPy's raises `ValueError` (a negative scalar exponent
    /// is rejected when recorded).
    pub fn raises_on_negative_power(&self) -> bool {
        self.op == Opcode::Power
            && self.ins.len() == 2
            && self.ins[1].as_view().is_some()
            && self.ins[1].dtype().is_signed_integer()
    }

    /// True when the instruction can fail on the values it reads rather than on its
    /// shapes, so a kernel holding it reports a status: an index out of range (gather,
    /// scatter) or a negative integer power.
    pub fn can_fail_when_run(&self) -> bool {
        self.op.class() == crate::OpClass::Index || self.raises_on_negative_power()
    }

    /// The input whose values make the instruction fail when run
    /// ([`Instr::can_fail_when_run`]): a gather's or scatter's index, a power's exponent.
    pub fn failing_operand(&self) -> Option<&View> {
        let k = match self.op {
            Opcode::Gather => 1,
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd => 0,
            _ if self.raises_on_negative_power() => 1,
            _ => return None,
        };
        self.ins.get(k).and_then(Operand::as_view)
    }

    /// True when the instruction reads its output's old values (scatters, `np.add.at`).
    pub fn reads_output(&self) -> bool {
        matches!(
            self.op,
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd
        )
    }
}
