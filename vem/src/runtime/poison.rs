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
//!    value); the reference engine and the cpu engine's interpreter fail at the
//!    instruction, so there this over-approximation is small.
//! 3. **Nothing is lost.** A failure whose poisoned arrays all die (or are overwritten
//!    whole) before anything reads them is raised once, by the next read of any array;
//!    one never raised by the time the runtime ends is printed as a warning.
//!
//! Writing a whole poisoned array (`x[...] = 0`, a fresh result into all of it, a host
//! write of every byte) makes it valid again.

use hassium_core::{BaseId, Error as CoreError, IdMap, Instr, OpClass, Opcode};

/// A failure and whether a read has raised it yet.
struct Failure {
    error: CoreError,
    reported: bool,
}

/// The poisoned bases of one runtime. Empty in a program that never fails, and then
/// costs one `is_empty` check per flush.
#[derive(Default)]
pub(super) struct Poison {
    /// Each poisoned base and the failure (an index into `failures`) that reached it.
    bases: IdMap<usize>,
    failures: Vec<Failure>,
    /// A failure whose every poisoned array died unread: the next read raises it, once.
    pending: Option<CoreError>,
}

impl Poison {
    pub fn is_empty(&self) -> bool {
        self.bases.is_empty() && self.pending.is_none()
    }

    pub fn contains(&self, id: BaseId) -> bool {
        self.bases.contains_key(&id)
    }

    /// Records a new failure; returns its handle for [`Poison::poison`].
    pub fn fail(&mut self, error: CoreError) -> usize {
        self.failures.push(Failure {
            error,
            reported: false,
        });
        self.failures.len() - 1
    }

    /// A failure no poisoned base carries any more, and that no read raised, is raised by
    /// the next read: its arrays died unread, or it reached none in memory (its result
    /// lived in registers and died there).
    pub fn unless_carried(&mut self, failure: usize) {
        let carried = self.bases.values().any(|&g| g == failure);
        let f = &mut self.failures[failure];
        if !carried && !f.reported && self.pending.is_none() {
            f.reported = true;
            self.pending = Some(f.error.clone());
        }
    }

    /// Marks `id` invalid by `failure` (a base poisoned twice keeps its first failure,
    /// the one that happened first in program order).
    pub fn poison(&mut self, id: BaseId, failure: usize) {
        self.bases.entry(id).or_insert(failure);
    }

    /// The failure that poisoned the first of `ids` found poisoned.
    pub fn first_of(&self, ids: impl IntoIterator<Item = BaseId>) -> Option<usize> {
        ids.into_iter().find_map(|id| self.bases.get(&id).copied())
    }

    /// The error a read of `id` raises: its failure's when it is poisoned, else a
    /// pending failure's (once), else none.
    pub fn read(&mut self, id: BaseId) -> Result<(), CoreError> {
        if let Some(&f) = self.bases.get(&id) {
            let failure = &mut self.failures[f];
            failure.reported = true;
            return Err(failure.error.clone());
        }
        match self.pending.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `id` is gone or wholly rewritten: it is no longer poisoned. Its failure becomes
    /// pending when no read raised it and no other poisoned base still carries it.
    pub fn clear(&mut self, id: BaseId) {
        let Some(f) = self.bases.remove(&id) else {
            return;
        };
        self.unless_carried(f);
        if self.bases.is_empty() && self.pending.is_none() {
            self.failures.clear();
        }
    }

    /// Before a batch runs: drops the instructions that read a poisoned base, poisoning
    /// what they write, and clears the poison of a base an instruction writes whole.
    /// An instruction that writes part of a poisoned base is dropped too: the base stays
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
            if !self.contains(i.out.base) {
                return true;
            }
            if writes_whole(i, nelem(i.out.base)) {
                self.clear(i.out.base);
                return true;
            }
            false
        });
    }

    /// The failures no read has raised, for the warning printed when the runtime ends.
    pub fn unreported(&self) -> impl Iterator<Item = &CoreError> {
        let live = self
            .failures
            .iter()
            .enumerate()
            .filter(move |(f, _)| self.bases.values().any(|g| g == f));
        (live
            .filter(|(_, failure)| !failure.reported)
            .map(|(_, failure)| &failure.error))
        .chain(self.pending.iter())
    }
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
    fn every_read_of_a_poisoned_base_raises_and_an_unread_failure_is_raised_once() {
        let mut p = Poison::default();
        let e = CoreError::OutOfBounds("index 9 is out of bounds".into());
        let f = p.fail(e.clone());
        p.poison(BaseId(1), f);
        p.poison(BaseId(2), f);
        assert_eq!(p.read(BaseId(1)), Err(e.clone()));
        assert_eq!(p.read(BaseId(1)), Err(e.clone()));
        assert_eq!(p.read(BaseId(3)), Ok(()));
        // Read once: dying does not raise it again.
        p.clear(BaseId(1));
        p.clear(BaseId(2));
        assert_eq!(p.read(BaseId(3)), Ok(()));
        assert!(p.is_empty());

        let g = p.fail(e.clone());
        p.poison(BaseId(4), g);
        p.poison(BaseId(5), g);
        p.clear(BaseId(4));
        // Still carried by base 5: not pending yet.
        assert_eq!(p.read(BaseId(3)), Ok(()));
        assert_eq!(p.unreported().count(), 1);
        p.clear(BaseId(5));
        assert_eq!(p.read(BaseId(3)), Err(e));
        assert_eq!(p.read(BaseId(3)), Ok(()));
        assert!(p.is_empty() && p.unreported().count() == 0);
    }
}
