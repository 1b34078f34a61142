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
            methods: vec!["matmul".into()],
            max_kernel_instrs: usize::MAX,
            max_kernel_operands: usize::MAX,
            lagged_writes: true,
        }
    }

    pub fn supports(&self, instr: &crate::Instr) -> bool {
        if instr.op.is_system() {
            return true;
        }
        if !self.opcodes.contains(&instr.op) {
            return false;
        }
        if let Some(m) = &instr.method {
            if !self.methods.iter().any(|x| x == m) {
                return false;
            }
        }
        self.dtypes.contains(instr.out.dtype)
            && instr.ins.iter().all(|o| self.dtypes.contains(o.dtype()))
    }
}
