//! Planning and building: where each kernel runs (device or child) and which programs to build.

use super::{codegen_err, OpenClEngine};
use crate::config::SpecializePolicy;
use crate::error::{Error, Result};
use crate::program::{entry_name, Job, Origin};
use hassium_codegen::{lower, prelude, render, Lowered, Plan, Specialize, OPENCL};
use hassium_core::{kernel_key, Batch, DType, Error as CoreError, Kernel, KeyMode, Opcode};
use std::collections::HashSet;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_128;

/// What to do with one kernel of a batch.
pub(super) enum Task {
    Device {
        lowered: Box<Lowered>,
        key: u128,
        /// Built with the cautious options (see [`cautious`]).
        cautious: bool,
    },
    /// A `sort` or `argsort` the device runs (`sort.rs`).
    Sort,
    Child,
}

impl OpenClEngine {
    /// Whether the device can hold every dtype the kernel touches.
    fn dtypes_ok(&self, batch: &Batch, kernel: &Kernel) -> bool {
        let ok = |d: DType| match d {
            DType::Float64 => self.fp64,
            DType::Float16 => self.info.fp16,
            DType::Complex64 | DType::Complex128 => false,
            _ => true,
        };
        kernel.instrs.iter().all(|&k| {
            let i = &batch.instrs[k];
            ok(i.out.dtype) && i.ins.iter().all(|o| ok(o.dtype()))
        })
    }

    fn key_of(batch: &Batch, kernel: &Kernel, mode: KeyMode, l: &Lowered) -> u128 {
        let mut bytes = kernel_key(batch, kernel, mode).0.to_le_bytes().to_vec();
        bytes.extend_from_slice(&l.signature().to_le_bytes());
        xxh3_128(&bytes)
    }

    /// Decides where a kernel runs and, on the device, which specialisation.
    pub(super) fn plan(&mut self, batch: &Batch, kernel: &Kernel) -> Result<Task> {
        let extension = kernel
            .instrs
            .iter()
            .any(|&k| batch.instrs[k].op == Opcode::Extension);
        if let [k] = kernel.instrs[..] {
            if self.sorts_on_device(&batch.instrs[k]) {
                return Ok(Task::Sort);
            }
        }
        if extension || !self.dtypes_ok(batch, kernel) {
            return Ok(Task::Child);
        }
        let lowered = |spec| match lower(batch, kernel, spec) {
            Ok(l) => Ok(Some(l)),
            Err(hassium_codegen::Error::Value(m)) => Err(Error::Bytecode(CoreError::Invalid(m))),
            Err(e) => {
                tracing::debug!("kernel goes to the child engine: {e}");
                Ok(None)
            }
        };
        let max_bufs = (self.info.max_parameter_size / 8).saturating_sub(8).max(1);
        let careful = cautious(batch, kernel);
        let task = |l: Option<Lowered>, mode| match l {
            Some(l) if l.slots.len() <= max_bufs && !l.is_lagged() => {
                let key = Self::key_of(batch, kernel, mode, &l);
                Task::Device {
                    lowered: Box::new(l),
                    key,
                    cautious: careful,
                }
            }
            _ => Task::Child,
        };
        Ok(match self.cfg.specialize {
            SpecializePolicy::Dynamic => task(lowered(Specialize::Dynamic)?, KeyMode::Dynamic),
            SpecializePolicy::Fixed => task(lowered(Specialize::Fixed)?, KeyMode::Fixed),
            SpecializePolicy::Both => {
                let Some(l) = lowered(Specialize::Fixed)? else {
                    return Ok(Task::Child);
                };
                let key = Self::key_of(batch, kernel, KeyMode::Fixed, &l);
                if !matches!(l.plan, Plan::Empty) {
                    let dkey = kernel_key(batch, kernel, KeyMode::Dynamic).0;
                    let known = self.programs.in_memory(key).is_some();
                    let variants = self.fixed_variants.entry(dkey).or_default();
                    if !known && !variants.contains(&key) && variants.len() >= 2 {
                        return Ok(task(lowered(Specialize::Dynamic)?, KeyMode::Dynamic));
                    }
                    variants.insert(key);
                }
                task(Some(l), KeyMode::Fixed)
            }
        })
    }

    /// Builds the programs of the device tasks not built yet, as one program.
    /// Builds the programs of `tasks` that are not built yet. With `tiered`, they build in
    /// the background instead, and the keys returned (those still building) run on the
    /// child engine this time.
    pub(super) fn build(&mut self, tasks: &[Task]) -> Result<HashSet<u128>> {
        let mut waiting = HashSet::new();
        let mut jobs: Vec<Job> = Vec::new();
        let mut queued = HashSet::new();
        for t in tasks {
            let Task::Device {
                lowered,
                key,
                cautious,
            } = t
            else {
                continue;
            };
            if matches!(lowered.plan, Plan::Empty) || !queued.insert(*key) {
                continue;
            }
            if self.programs.in_memory(*key).is_some() {
                self.stats.cache_hits_memory += 1;
                continue;
            }
            if self.programs.is_pending(*key) {
                waiting.insert(*key);
                continue;
            }
            let source = render(&OPENCL, lowered, &entry_name(*key)).map_err(codegen_err)?;
            jobs.push(Job {
                key: *key,
                has_fin: lowered.has_fin(),
                source,
                cautious: *cautious,
            });
        }
        if jobs.is_empty() {
            return Ok(waiting);
        }
        if self.cfg.strict_cache && self.calls > 0 {
            return Err(Error::Config(format!(
                "strict_cache: {} kernel(s) missed the program cache after the first batch",
                jobs.len()
            )));
        }
        // A program is built with one set of options: the cautious kernels build apart.
        let (careful, usual): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| j.cautious);
        let classes = [usual, careful].into_iter().filter(|j| !j.is_empty());
        if self.cfg.tiered {
            for jobs in classes {
                let keys: Vec<u128> = jobs.iter().map(|j| j.key).collect();
                let ctx = self.mem.context.clone();
                if !self
                    .programs
                    .build_in_background(ctx, &prelude(&OPENCL), jobs)
                {
                    return Err(Error::Config(
                        "tiered: cannot start a background build thread".into(),
                    ));
                }
                waiting.extend(keys);
            }
            return Ok(waiting);
        }
        let start = Instant::now();
        for jobs in classes {
            let _span = tracing::info_span!("compile", kernels = jobs.len()).entered();
            match self
                .programs
                .build(&self.mem.context, &prelude(&OPENCL), &jobs)?
            {
                Origin::Disk => self.stats.cache_hits_disk += jobs.len() as u64,
                Origin::Source => self.stats.kernels_compiled += jobs.len() as u64,
            }
        }
        self.stats.compile_seconds += start.elapsed().as_secs_f64();
        Ok(waiting)
    }
}

/// Whether `kernel` may give NVIDIA's assembler a chain of integer (or boolean) minimums
/// or maximums to fold into its three-input form, the one that dropped negations (see
/// `BuildOptions`): a minimum or maximum reduction, scan or arg-reduction (a fold along a
/// row), or two or more elementwise ones. Such kernels build with the cautious options. A
/// single elementwise one (`np.maximum(count, 1)`) has nothing to chain with.
pub(super) fn cautious(batch: &Batch, kernel: &Kernel) -> bool {
    let mut elementwise = 0;
    for &k in &kernel.instrs {
        let i = &batch.instrs[k];
        let (op, fold) = match i.op {
            Opcode::ArgminReduce => (Opcode::Minimum, true),
            Opcode::ArgmaxReduce => (Opcode::Maximum, true),
            op => match op.info().combine {
                Some(c) => (c, true),
                None => (op, false),
            },
        };
        let integer_min_max = matches!(
            op,
            Opcode::Minimum | Opcode::Maximum | Opcode::Fmin | Opcode::Fmax
        ) && i.ins.iter().any(|o| !o.dtype().is_inexact());
        if integer_min_max {
            if fold {
                return true;
            }
            elementwise += 1;
        }
    }
    elementwise >= 2
}

#[cfg(test)]
mod tests {
    use super::cautious;
    use hassium_core::{BaseId, Batch, DType, Instr, Kernel, Opcode, Operand, Scalar, View};

    /// A one-instruction kernel `op` over an input of `dtype` (reductions along axis 0).
    fn one(op: Opcode, dtype: DType) -> (Batch, Kernel) {
        let x = View::contiguous(BaseId(1), dtype, &[4]);
        let instr = if op.is_reduction() {
            let out = View::contiguous(BaseId(2), op.out_dtype(dtype).unwrap_or(dtype), &[]);
            Instr::new(op, out, [x.into()]).with_axis(0)
        } else {
            let out = View::contiguous(BaseId(2), dtype, &[4]);
            Instr::new(
                op,
                out,
                [x.into(), Operand::Scalar(Scalar::Int64(1).cast(dtype))],
            )
        };
        let batch = Batch {
            instrs: vec![instr],
            ..Batch::default()
        };
        let kernel = Kernel {
            instrs: [0].into_iter().collect(),
            ..Kernel::default()
        };
        (batch, kernel)
    }

    #[test]
    fn integer_minimum_and_maximum_folds_and_chains_build_cautiously_and_nothing_else_does() {
        use Opcode::*;
        for op in [
            MinimumReduce,
            MaximumReduce,
            ArgminReduce,
            ArgmaxReduce,
            MinimumAccumulate,
        ] {
            for d in [DType::Int64, DType::Int8, DType::UInt32, DType::Bool] {
                let (b, k) = one(op, d);
                assert!(cautious(&b, &k), "{op:?} over {d:?}");
            }
            let (b, k) = one(op, DType::Float64);
            assert!(!cautious(&b, &k), "{op:?} over float64");
        }
        for op in [Minimum, Maximum, Fmin, Fmax] {
            // One alone has nothing to chain with; two do (`np.clip` of integers).
            let (mut b, mut k) = one(op, DType::Int64);
            assert!(!cautious(&b, &k), "one {op:?} over int64");
            let second = b.instrs[0].clone();
            b.instrs.push(second);
            k.instrs.push(1);
            assert!(cautious(&b, &k), "two {op:?} over int64");
        }
        for op in [Add, Multiply, AddReduce] {
            let (b, k) = one(op, DType::Int64);
            assert!(!cautious(&b, &k), "{op:?} over int64");
        }
    }
}
