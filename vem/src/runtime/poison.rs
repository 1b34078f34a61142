//! Arrays made invalid by an instruction that failed while it ran.
//!
//! Hassium runs a program's operations later than the program issues them, so an error
//! that depends on computed values (a gather's index out of range, an integer raised to a
//! negative power) is found in the middle of a batch, after the program has moved on.
//! NumPy's user expects three things, and this module is how the runtime keeps them:
//!
//! 1. **The error is raised where the result is needed.** The failing instruction's
//!    outputs, and everything computed from them in the same or a later batch, are
//!    *poisoned*: every read of them (`float(x)`, printing, `np.asarray`, `hs_sync`)
//!    raises the failure's error (NumPy's `IndexError`, `ValueError`), every time.
//! 2. **Every other array holds exactly what NumPy would have given.** The engine stops at
//!    the failing kernel; the runtime then runs the rest of the batch, skipping only the
//!    kernels that read a poisoned array (their outputs are poisoned in turn). An in-place
//!    update queued before or after the failure and not depending on it is applied once.
//!    A kernel fuses several instructions, so an output of the failing kernel that did not
//!    depend on the failure is poisoned too (marked invalid rather than risk a half-written
//!    value). When the engine found the failure before the kernel wrote anything (a
//!    scatter's index array checked first, as NumPy does), the kernel's other
//!    instructions run one by one instead, and the scatter's target keeps its values, as
//!    in NumPy: it is *owed* the error, which its next read raises, once (or the first
//!    read of anything computed from it: the error is raised once in all).
//! 3. **An unrelated read never fails.** A failure whose arrays all die (or are
//!    overwritten whole) before anything reads them was never needed, so it is not raised;
//!    it is printed as a warning on stderr then, as is one still unread when the runtime
//!    ends.
//!
//! Writing a whole poisoned array (`x[...] = 0`, a fresh result into all of it, a host
//! write of every byte) makes it valid again.

use hassium_core::{BaseId, Error as CoreError, IdMap, Instr, OpClass, Opcode};

/// A failure and whether a read has raised it (or a warning reported it) yet.
struct Failure {
    error: CoreError,
    reported: bool,
}

/// How a failure marks a base.
#[derive(Clone, Copy)]
struct Mark {
    /// An index into `Poison::failures`.
    failure: usize,
    /// Invalid (every read raises) or owed (values valid, the next read raises once).
    invalid: bool,
}

/// The marked bases of one runtime. Empty in a program that never fails, and then costs
/// one `is_empty` check per flush.
#[derive(Default)]
pub(super) struct Poison {
    bases: IdMap<Mark>,
    failures: Vec<Failure>,
}

impl Poison {
    pub fn is_empty(&self) -> bool {
        self.bases.is_empty()
    }

    /// Whether a read of `id` fails.
    pub fn contains(&self, id: BaseId) -> bool {
        self.bases.contains_key(&id)
    }

    /// Whether `id` holds no valid values.
    fn is_invalid(&self, id: BaseId) -> bool {
        self.bases.get(&id).is_some_and(|m| m.invalid)
    }

    /// Records a new failure; returns its handle for [`Poison::poison`].
    pub fn fail(&mut self, error: CoreError) -> usize {
        self.failures.push(Failure {
            error,
            reported: false,
        });
        self.failures.len() - 1
    }

    /// Marks `id` invalid by `failure` (an invalid base keeps its first failure, the one
    /// that happened first in program order).
    pub fn poison(&mut self, id: BaseId, failure: usize) {
        let m = self.bases.entry(id).or_insert(Mark {
            failure,
            invalid: true,
        });
        if !m.invalid {
            *m = Mark {
                failure,
                invalid: true,
            };
        }
    }

    /// Marks `id`, whose values are valid, as owed `failure`: its next read raises it.
    pub fn owe(&mut self, id: BaseId, failure: usize) {
        self.bases.entry(id).or_insert(Mark {
            failure,
            invalid: false,
        });
    }

    /// The failure owed by the first owed base of `ids`.
    pub fn owed_of(&self, ids: impl IntoIterator<Item = BaseId>) -> Option<usize> {
        (ids.into_iter()).find_map(|id| {
            self.bases
                .get(&id)
                .filter(|m| !m.invalid)
                .map(|m| m.failure)
        })
    }

    /// The failure that made the first invalid base of `ids` invalid.
    pub fn first_of(&self, ids: impl IntoIterator<Item = BaseId>) -> Option<usize> {
        (ids.into_iter())
            .find_map(|id| self.bases.get(&id).filter(|m| m.invalid).map(|m| m.failure))
    }

    /// The error a read of `id` raises: its failure's, every time when it is invalid;
    /// once in all when it is owed (by it or by anything computed from it).
    pub fn read(&mut self, id: BaseId) -> Result<(), CoreError> {
        let Some(m) = self.bases.get(&id).copied() else {
            return Ok(());
        };
        let failure = &mut self.failures[m.failure];
        failure.reported = true;
        let e = failure.error.clone();
        if !m.invalid {
            self.bases
                .retain(|_, o| o.invalid || o.failure != m.failure);
            self.tidy();
        }
        Err(e)
    }

    /// `id` is gone or wholly rewritten: no longer marked. Its failure is warned about
    /// when no read raised it and no other base still carries it.
    pub fn clear(&mut self, id: BaseId) {
        let Some(m) = self.bases.remove(&id) else {
            return;
        };
        self.unless_carried(m.failure);
        self.tidy();
    }

    /// A failure no base carries any more, and that no read raised, is warned about: its
    /// arrays died unread, or it reached none in memory (its result lived in registers
    /// and died there).
    pub fn unless_carried(&mut self, failure: usize) {
        let carried = self.bases.values().any(|m| m.failure == failure);
        let f = &mut self.failures[failure];
        if !carried && !f.reported {
            f.reported = true;
            warn_unread(&f.error);
        }
    }

    fn tidy(&mut self) {
        if self.bases.is_empty() {
            self.failures.clear();
        }
    }

    /// Before a batch runs: drops the instructions that read an invalid base, poisoning
    /// what they write, and clears the mark of a base an instruction writes whole. An
    /// instruction that writes part of an invalid base is dropped too: the base stays
    /// invalid whatever it writes. `nelem` gives a base's element count.
    pub fn filter(&mut self, instrs: &mut Vec<Instr>, nelem: impl Fn(BaseId) -> Option<usize>) {
        instrs.retain(|i| {
            if i.op.is_system() {
                return true;
            }
            if let Some(f) = self.first_of(i.ins.iter().filter_map(|o| o.base())) {
                self.poison(i.out.base, f);
                return false;
            }
            if let Some(f) = self.owed_of(i.ins.iter().filter_map(|o| o.base())) {
                self.owe(i.out.base, f);
            }
            if !self.contains(i.out.base) {
                return true;
            }
            if writes_whole(i, nelem(i.out.base)) {
                self.clear(i.out.base);
                return true;
            }
            !self.is_invalid(i.out.base)
        });
    }

    /// Warns about every failure no read has raised (the runtime is ending).
    pub fn warn_unreported(&mut self) {
        for f in self.failures.iter_mut().filter(|f| !f.reported) {
            f.reported = true;
            warn_unread(&f.error);
        }
    }

    /// How many failures no read has raised nor a warning reported.
    #[cfg(test)]
    fn unreported(&self) -> usize {
        self.failures.iter().filter(|f| !f.reported).count()
    }
}

/// The one line a failure nothing read leaves.
fn warn_unread(e: &CoreError) {
    eprintln!("hassium: warning: an operation failed, but nothing read its result: {e}");
}

/// Whether `i` writes every element of its output base, whatever it holds: an
/// elementwise operation, a generator or a reduction over a view that covers the base
/// once (no broadcast output: verify rejects those).
fn writes_whole(i: &Instr, base_nelem: Option<usize>) -> bool {
    let whole_view = base_nelem == Some(i.out.nelem())
        && i.out.offset == 0
        && (i.out.strides.iter().zip(&i.out.shape)).all(|(&s, &n)| s != 0 || n <= 1);
    let overwrites = matches!(
        i.op.class(),
        OpClass::Elementwise | OpClass::Generator | OpClass::Reduce | OpClass::Scan
    ) || i.op == Opcode::Gather;
    whole_view && overwrites
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::{DType, View};

    fn v(id: u64, n: usize) -> View {
        View::contiguous(BaseId(id), DType::Float64, &[n])
    }

    fn add(out: View, a: View, b: View) -> Instr {
        Instr::new(Opcode::Add, out, [a.into(), b.into()])
    }

    #[test]
    fn readers_of_a_poisoned_base_are_dropped_and_poisoned_in_turn() {
        let mut p = Poison::default();
        let f = p.fail(CoreError::OutOfBounds("index 9 is out of bounds".into()));
        p.poison(BaseId(1), f);
        let mut instrs = vec![
            add(v(2, 4), v(1, 4), v(3, 4)), // reads the poisoned base
            add(v(4, 4), v(2, 4), v(3, 4)), // reads what the first wrote
            add(v(5, 4), v(3, 4), v(3, 4)), // unrelated
        ];
        p.filter(&mut instrs, |_| Some(4));
        assert_eq!(instrs.len(), 1);
        assert_eq!(instrs[0].out.base, BaseId(5));
        assert!(p.contains(BaseId(2)) && p.contains(BaseId(4)));
        assert!(!p.contains(BaseId(5)));
    }

    #[test]
    fn a_whole_write_heals_a_poisoned_base_and_a_partial_one_does_not() {
        let mut p = Poison::default();
        let f = p.fail(CoreError::OutOfBounds("bad".into()));
        p.poison(BaseId(1), f);
        let part = View {
            shape: [2].into_iter().collect(),
            ..v(1, 4)
        };
        let mut instrs = vec![add(part, v(3, 2), v(3, 2))];
        p.filter(&mut instrs, |_| Some(4));
        assert!(instrs.is_empty() && p.contains(BaseId(1)));
        let mut instrs = vec![add(v(1, 4), v(3, 4), v(3, 4))];
        p.filter(&mut instrs, |_| Some(4));
        assert_eq!(instrs.len(), 1);
        assert!(!p.contains(BaseId(1)));
    }

    #[test]
    fn every_read_of_a_poisoned_base_raises_and_a_failure_nothing_read_raises_nowhere() {
        let mut p = Poison::default();
        let e = CoreError::OutOfBounds("index 9 is out of bounds".into());
        let f = p.fail(e.clone());
        p.poison(BaseId(1), f);
        p.poison(BaseId(2), f);
        assert_eq!(p.read(BaseId(1)), Err(e.clone()));
        assert_eq!(p.read(BaseId(1)), Err(e.clone()));
        assert_eq!(p.read(BaseId(3)), Ok(()));
        p.clear(BaseId(1));
        p.clear(BaseId(2));
        assert!(p.is_empty() && p.unreported() == 0);

        let g = p.fail(e.clone());
        p.poison(BaseId(4), g);
        p.poison(BaseId(5), g);
        p.clear(BaseId(4));
        assert_eq!(p.unreported(), 1, "still carried by base 5");
        // The last carrier dies unread: warned about, and no read raises it.
        p.clear(BaseId(5));
        assert_eq!(p.unreported(), 0);
        assert_eq!(p.read(BaseId(3)), Ok(()));
        assert!(p.is_empty());
    }

    #[test]
    fn an_owed_base_raises_once_and_is_read_by_later_instructions() {
        let mut p = Poison::default();
        let e = CoreError::OutOfBounds("index 4 is out of bounds".into());
        let f = p.fail(e.clone());
        p.owe(BaseId(1), f);
        let mut instrs = vec![add(v(2, 4), v(1, 4), v(1, 4))];
        p.filter(&mut instrs, |_| Some(4));
        assert_eq!(instrs.len(), 1, "an owed base holds valid values");
        assert!(!p.contains(BaseId(2)));
        assert_eq!(p.read(BaseId(1)), Err(e));
        assert_eq!(p.read(BaseId(1)), Ok(()));
        assert!(p.is_empty());
    }
}
