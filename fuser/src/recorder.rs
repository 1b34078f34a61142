//! Builds batches the way a bridge records them: every operation writes a fresh
//! temporary base, and the program frees temporaries after their last use. Tests,
//! benchmarks and the filters' tests use it to write `t1 = a*b; t2 = t1+c; FREE t1`
//! as code.

use hassium_core::{Base, BaseId, Batch, DType, Instr, Opcode, Operand, View};

pub struct Recorder {
    batch: Batch,
    next: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::starting_at(1)
    }

    /// A recorder whose new bases are numbered from `first` (one loop iteration after
    /// another gets fresh temporaries, as in a real program).
    pub fn starting_at(first: u64) -> Recorder {
        Recorder {
            batch: Batch::default(),
            next: first,
        }
    }

    /// Declares an existing base (an array made before this batch) and returns its
    /// contiguous view of `shape`.
    pub fn existing(&mut self, id: u64, dtype: DType, shape: &[usize]) -> View {
        let id = BaseId(id);
        let nelem = shape.iter().product();
        self.batch.bases.insert(id, Base { id, dtype, nelem });
        View::contiguous(id, dtype, shape)
    }

    /// A new base of `shape`, returned as its contiguous view.
    pub fn array(&mut self, dtype: DType, shape: &[usize]) -> View {
        let id = self.next;
        self.next += 1;
        self.existing(id, dtype, shape)
    }

    /// Appends an instruction as is.
    pub fn push(&mut self, instr: Instr) {
        self.batch.instrs.push(instr);
    }

    /// `out[...] = op(ins)` into an existing view.
    pub fn assign(&mut self, op: Opcode, out: &View, ins: impl IntoIterator<Item = Operand>) {
        self.push(Instr::new(op, out.clone(), ins));
    }

    /// `op(ins)` into a fresh temporary: the output shape is the first view input's (or
    /// `()` for scalar-only inputs), the dtype follows the opcode table.
    pub fn ewise(&mut self, op: Opcode, ins: impl IntoIterator<Item = Operand>) -> View {
        let ins: Vec<Operand> = ins.into_iter().collect();
        let values = if op == Opcode::Where {
            &ins[1..]
        } else {
            &ins[..]
        };
        let t = values.first().map_or(DType::Float64, Operand::dtype);
        let dtype = op.out_dtype(t).unwrap_or(t);
        let shape = ins
            .iter()
            .find_map(|o| o.as_view().map(|v| v.shape.clone()))
            .unwrap_or_default();
        let out = self.array(dtype, &shape);
        self.assign(op, &out, ins);
        out
    }

    pub fn unary(&mut self, op: Opcode, x: &View) -> View {
        self.ewise(op, [x.clone().into()])
    }

    pub fn binary(&mut self, op: Opcode, a: impl Into<Operand>, b: impl Into<Operand>) -> View {
        self.ewise(op, [a.into(), b.into()])
    }

    /// `x.astype(dtype)` into a fresh temporary.
    pub fn cast(&mut self, x: &View, dtype: DType) -> View {
        let out = self.array(dtype, &x.shape);
        self.assign(Opcode::Identity, &out, [x.clone().into()]);
        out
    }

    /// A reduction (or scan) of `x` along `axis` into a fresh temporary.
    pub fn reduce(&mut self, op: Opcode, x: &View, axis: usize) -> View {
        let mut shape = x.shape.clone();
        if op.is_reduction() {
            shape.remove(axis);
        }
        let dtype = op.out_dtype(x.dtype).unwrap_or(x.dtype);
        let out = self.array(dtype, &shape);
        self.push(Instr::new(op, out.clone(), [x.clone().into()]).with_axis(axis));
        out
    }

    /// `FREE` of the base behind `v` (a temporary's last use has passed).
    pub fn free(&mut self, v: &View) {
        let base = self.batch.bases[&v.base];
        self.push(Instr::system(Opcode::Free, &base));
    }

    /// Frees several temporaries.
    pub fn free_all<'v>(&mut self, vs: impl IntoIterator<Item = &'v View>) {
        for v in vs {
            self.free(v);
        }
    }

    /// Asks for the base behind `v` to reach host memory.
    pub fn sync(&mut self, v: &View) {
        self.batch.sync.push(v.base);
    }

    pub fn batch(&self) -> &Batch {
        &self.batch
    }

    /// The batch, whose filters may add temporaries numbered after the recorder's bases.
    pub fn finish(mut self) -> Batch {
        let past = self.batch.bases.keys().last().map_or(1, |id| id.0 + 1);
        self.batch.next_id = self.next.max(past);
        self.batch
    }
}
