use crate::{Opcode, TypeSet};
use serde::{Deserialize, Serialize};

/// What an engine can execute and fuse; the fuser never builds a kernel its engine refuses,
/// and the runtime sends what an engine cannot do at all to the next engine down the stack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Opcodes the engine executes (system opcodes are always accepted).
    pub opcodes: Vec<Opcode>,
    /// Dtypes the engine handles.
    pub dtypes: TypeSet,
    /// Extension methods the engine implements (e.g. "matmul").
    pub methods: Vec<String>,
    /// Most instructions one kernel may hold (1 = no fusion).
    pub max_kernel_instrs: usize,
    /// Most distinct bases one kernel may touch.
    pub max_kernel_operands: usize,
    /// The engine runs kernels that write an array they also read at shifted rows (a
    /// stencil updating its own grid, `g[1:-1, 1:-1] = f(g[:-2, 1:-1], g[2:, 1:-1], …)`)
    /// by holding each written row back until no later row reads its old value. Without
    /// it such a read and write are fuse-preventing, and the new values make a round trip
    /// through a temporary array. Absent from an engine's JSON: off.
    #[serde(default)]
    pub lagged_writes: bool,
}

impl Capabilities {
    /// Everything, with no limit on kernel size.
    pub fn all() -> Capabilities {
        Capabilities {
            opcodes: Opcode::ALL.to_vec(),
            dtypes: TypeSet::ALL,
            methods: crate::methods::ALL.iter().map(|&m| m.into()).collect(),
            max_kernel_instrs: usize::MAX,
            max_kernel_operands: usize::MAX,
            lagged_writes: true,
        }
    }

    pub fn supports(&self, instr: &crate::Instr) -> bool {
        supports(instr, |op| self.opcodes.contains(&op), self)
    }

    /// [`Capabilities::supports`] with the opcodes in a bit set: for the runtime, which
    /// asks about every instruction of every batch.
    pub fn checker(&self) -> Supports {
        let mut ops = [0u64; 4];
        for &op in &self.opcodes {
            let k = op as usize;
            // Skipping an opcode here would send its instructions to the fallback engine
            // without a word; a new opcode past 255 must widen the set instead.
            assert!(
                k < 256,
                "opcode {op:?} ({k}) does not fit the support bit set"
            );
            ops[k / 64] |= 1 << (k % 64);
        }
        Supports {
            ops,
            caps: self.clone(),
        }
    }
}

fn supports(instr: &crate::Instr, has_op: impl Fn(Opcode) -> bool, caps: &Capabilities) -> bool {
    if instr.op.is_system() {
        return true;
    }
    if !has_op(instr.op) {
        return false;
    }
    if let Some(m) = &instr.method {
        if !caps.methods.iter().any(|x| x == m) {
            return false;
        }
    }
    caps.dtypes.contains(instr.out.dtype)
        && instr.ins.iter().all(|o| caps.dtypes.contains(o.dtype()))
}

/// Answers [`Capabilities::supports`] for fixed capabilities (see
/// [`Capabilities::checker`]).
#[derive(Clone, Debug)]
pub struct Supports {
    ops: [u64; 4],
    caps: Capabilities,
}

impl Supports {
    #[inline]
    pub fn supports(&self, instr: &crate::Instr) -> bool {
        let has_op = |op: Opcode| {
            let k = op as usize;
            k < 256 && self.ops[k / 64] & (1 << (k % 64)) != 0
        };
        supports(instr, has_op, &self.caps)
    }

    /// The capabilities this answers for.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BaseId, DType, Instr, Operand, Scalar, View};

    #[test]
    fn the_checker_agrees_with_the_capabilities() {
        let caps = Capabilities {
            opcodes: vec![Opcode::Add, Opcode::Extension, Opcode::Sqrt],
            dtypes: TypeSet(1 << DType::Float64 as u16),
            methods: vec!["matmul".into()],
            ..Capabilities::all()
        };
        let check = caps.checker();
        let v = |d| View::contiguous(BaseId(1), d, &[4]);
        let s = |x| Operand::Scalar(Scalar::Float64(x));
        let mut ext = Instr::new(
            Opcode::Extension,
            v(DType::Float64),
            [v(DType::Float64).into()],
        );
        let mut instrs = vec![
            Instr::new(
                Opcode::Add,
                v(DType::Float64),
                [v(DType::Float64).into(), s(1.0)],
            ),
            Instr::new(
                Opcode::Add,
                v(DType::Float32),
                [v(DType::Float32).into(), s(1.0)],
            ),
            Instr::new(
                Opcode::Multiply,
                v(DType::Float64),
                [v(DType::Float64).into(), s(1.0)],
            ),
            Instr::new(Opcode::Sqrt, v(DType::Float64), [v(DType::Float64).into()]),
        ];
        ext.method = Some("matmul".into());
        instrs.push(ext.clone());
        ext.method = Some("solve".into());
        instrs.push(ext);
        let got: Vec<bool> = instrs.iter().map(|i| check.supports(i)).collect();
        let want: Vec<bool> = instrs.iter().map(|i| caps.supports(i)).collect();
        assert_eq!(got, want);
        assert_eq!(got, [true, false, false, true, true, false]);
    }

    #[test]
    fn every_opcode_fits_the_checker() {
        // `checker` refuses an opcode past its bit set rather than dropping it.
        let all = Capabilities::all().checker();
        let v = View::contiguous(BaseId(1), DType::Float64, &[4]);
        for &op in Opcode::ALL {
            let i = Instr::new(op, v.clone(), [v.clone().into()]);
            assert!(
                all.ops[op as usize / 64] & (1 << (op as usize % 64)) != 0,
                "{op:?}"
            );
            assert_eq!(all.supports(&i), Capabilities::all().supports(&i), "{op:?}");
        }
    }
}
