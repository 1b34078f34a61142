//! Strided views of base buffers: offsets and strides in elements, strides signed.

use crate::{BaseId, DType, Error, Result};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The most dimensions a view may have.
pub const MAX_DIMS: usize = 16;

pub type Shape = SmallVec<[usize; 4]>;
pub type Strides = SmallVec<[isize; 4]>;

/// A strided window onto one base. Negative strides and stride-0 broadcasts are ordinary.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct View {
    pub base: BaseId,
    pub dtype: DType,
    pub offset: isize,
    pub shape: Shape,
    pub strides: Strides,
}

/// By hand: `SmallVec`'s own `Clone` collects element by element through an iterator,
/// while `from_slice` copies the (`Copy`) dimensions in one go. Recording one operation
/// clones several views, so this is on the hot path.
impl Clone for View {
    fn clone(&self) -> View {
        View {
            base: self.base,
            dtype: self.dtype,
            offset: self.offset,
            shape: clone_dims(&self.shape),
            strides: clone_dims(&self.strides),
        }
    }
}

/// A copy of a shape or strides vector: bit for bit when its dimensions are stored
/// inline (four or fewer), which is a few register moves where `from_slice` is a call
/// to `memcpy` and a length check (about 40 instructions; recording `c = a * b` clones
/// views about a dozen times).
fn clone_dims<T: Copy>(v: &SmallVec<[T; 4]>) -> SmallVec<[T; 4]> {
    if v.spilled() {
        SmallVec::from_slice(v)
    } else {
        // SAFETY: an inline `SmallVec` of `Copy` items owns no heap memory and its drop
        // frees nothing, so a bitwise copy is a second, independent value.
        unsafe { std::ptr::read(v) }
    }
}

/// `shape` as a [`Shape`]: four or fewer dimensions copied inline without a call to
/// `memcpy` (see [`clone_dims`]).
fn dims_of(shape: &[usize]) -> Shape {
    if shape.len() <= 4 {
        let mut buf = [0usize; 4];
        for (b, &d) in buf.iter_mut().zip(shape) {
            *b = d;
        }
        SmallVec::from_buf_and_len(buf, shape.len())
    } else {
        Shape::from_slice(shape)
    }
}

/// Row-major strides (in elements) of a contiguous array of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    if shape.len() <= 4 {
        // Filled in a plain array and moved in whole: `from_elem` and indexing a
        // `SmallVec` check its length and spill state at every step (a fresh result's
        // view is made once per recorded operation).
        let mut buf = [0isize; 4];
        let mut acc = 1isize;
        for i in (0..shape.len()).rev() {
            buf[i] = acc;
            acc *= shape[i].max(1) as isize;
        }
        return SmallVec::from_buf_and_len(buf, shape.len());
    }
    let mut strides: Strides = SmallVec::from_elem(0, shape.len());
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc *= shape[i].max(1) as isize;
    }
    strides
}

/// Whether two shapes are equal, compared inline: slice equality calls `memcmp`, whose
/// call costs more than comparing the few dimensions of a shape, and recording an
/// operation compares shapes several times.
#[inline]
pub fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// NumPy's broadcasting of two shapes.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Shape> {
    let n = a.len().max(b.len());
    let mut out: Shape = SmallVec::from_elem(1, n);
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::ShapeMismatch(format!(
                    "operands could not be broadcast together with shapes {} {}",
                    fmt_shape(a),
                    fmt_shape(b)
                )))
            }
        };
    }
    Ok(out)
}

/// Formats a shape as NumPy prints it: `(3,)`, `(2,3)`, `()`.
pub fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [] => "()".into(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// Formats a shape asked of `reshape` as NumPy prints it in its size-mismatch error:
/// a negative (inferred) extent reads `newaxis`, and leading ones are left out, so
/// `(5, -1)` is `(5,newaxis)` and `(-1, 5)` is `(5)`.
pub fn fmt_requested_shape(req: &[i64]) -> String {
    let first = req.iter().position(|&d| d >= 0).unwrap_or(req.len());
    let Some((&head, rest)) = req[first..].split_first() else {
        return "()".into();
    };
    let mut s = head.to_string();
    for &d in rest {
        if d < 0 {
            s.push_str(",newaxis");
        } else {
            s.push_str(&format!(",{d}"));
        }
    }
    if req.len() == 1 {
        format!("({s},)")
    } else {
        format!("({s})")
    }
}

fn normalize_axis(axis: isize, ndim: usize) -> Result<usize> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a >= ndim as isize {
        return Err(Error::BadAxis(format!(
            "axis {axis} is out of bounds for array of dimension {ndim}"
        )));
    }
    Ok(a as usize)
}

impl View {
    /// A contiguous row-major view of a whole base (or its prefix).
    pub fn contiguous(base: BaseId, dtype: DType, shape: &[usize]) -> View {
        View {
            base,
            dtype,
            offset: 0,
            shape: dims_of(shape),
            strides: contiguous_strides(shape),
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements the view addresses (1 for 0-d).
    pub fn nelem(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.nelem() == 0
    }

    /// True for a C-contiguous view (dimensions of extent 1 may have any stride).
    pub fn is_contiguous(&self) -> bool {
        let mut expect = 1isize;
        for i in (0..self.ndim()).rev() {
            if self.shape[i] != 1 && self.strides[i] != expect {
                return false;
            }
            expect *= self.shape[i] as isize;
        }
        true
    }

    /// The lowest and highest element offsets the view touches, or `None` when empty.
    pub fn extent(&self) -> Option<(isize, isize)> {
        if self.is_empty() {
            return None;
        }
        let (mut lo, mut hi) = (self.offset, self.offset);
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            let span = (n as isize - 1) * s;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    /// The element offset of a multi-index (no bounds check).
    pub fn offset_of(&self, index: &[usize]) -> isize {
        self.offset
            + index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>()
    }

    /// `view[start:stop:step]` along `axis`, with indices already normalised by the caller
    /// the way `slice.indices(n)` does (so the result may be empty, never out of range).
    pub fn slice(&self, axis: usize, start: isize, stop: isize, step: isize) -> Result<View> {
        if axis >= self.ndim() {
            return Err(Error::BadAxis(format!(
                "axis {axis} is out of bounds for array of dimension {}",
                self.ndim()
            )));
        }
        if step == 0 {
            return Err(Error::Invalid("slice step cannot be zero".into()));
        }
        // In i128: a step near isize::MIN or MAX (any Python int is a valid step) must
        // not overflow the count.
        let (b, e, st) = (start as i128, stop as i128, step as i128);
        let len = if st > 0 {
            if e > b {
                ((e - b + st - 1) / st) as usize
            } else {
                0
            }
        } else if b > e {
            ((b - e - st - 1) / -st) as usize
        } else {
            0
        };
        let mut v = self.clone();
        if len > 0 {
            v.offset += start * self.strides[axis];
        }
        v.shape[axis] = len;
        // With two or more elements the new stride spans memory inside the base, so it
        // fits; with one or none it is never used to address, and a huge step may not fit.
        v.strides[axis] = (self.strides[axis].checked_mul(step)).unwrap_or(self.strides[axis]);
        Ok(v)
    }

    /// `view[..., i, ...]`: drops `axis`, `i` may be negative as in NumPy.
    pub fn index(&self, axis: usize, i: isize) -> Result<View> {
        let n = *self.shape.get(axis).ok_or_else(|| {
            Error::BadAxis(format!(
                "too many indices for array: array is {}-dimensional",
                self.ndim()
            ))
        })? as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(Error::OutOfBounds(format!(
                "index {i} is out of bounds for axis {axis} with size {n}"
            )));
        }
        let mut v = self.clone();
        v.offset += j * self.strides[axis];
        v.shape.remove(axis);
        v.strides.remove(axis);
        Ok(v)
    }

    /// Permutes the axes; `perm` must be a permutation of `0..ndim`.
    pub fn transpose(&self, perm: &[usize]) -> Result<View> {
        let n = self.ndim();
        let mut seen = [false; MAX_DIMS];
        if perm.len() != n
            || perm
                .iter()
                .any(|&p| p >= n || std::mem::replace(&mut seen[p], true))
        {
            return Err(Error::Invalid("axes don't match array".into()));
        }
        let mut v = self.clone();
        v.shape = perm.iter().map(|&p| self.shape[p]).collect();
        v.strides = perm.iter().map(|&p| self.strides[p]).collect();
        Ok(v)
    }

    /// The element offsets at which the rows (all axes but the last) start, in C order:
    /// one offset for a 1-D or 0-d view.
    pub fn row_starts(&self) -> Vec<isize> {
        let outer = &self.shape[..self.ndim().saturating_sub(1)];
        let count: usize = outer.iter().product();
        let (mut rows, mut index, mut at) =
            (Vec::with_capacity(count), vec![0; outer.len()], self.offset);
        for _ in 0..count {
            rows.push(at);
            for d in (0..outer.len()).rev() {
                index[d] += 1;
                at += self.strides[d];
                if index[d] < outer[d] {
                    break;
                }
                at -= self.strides[d] * outer[d] as isize;
                index[d] = 0;
            }
        }
        rows
    }

    /// Reverses the axes (`.T`).
    pub fn reversed_axes(&self) -> View {
        let mut v = self.clone();
        v.shape.reverse();
        v.strides.reverse();
        v
    }

    /// Inserts a dimension of extent 1 at `axis` (0..=ndim).
    pub fn expand_dims(&self, axis: usize) -> Result<View> {
        if axis > self.ndim() || self.ndim() >= MAX_DIMS {
            return Err(Error::BadAxis(format!(
                "axis {axis} is out of bounds for array of dimension {}",
                self.ndim() + 1
            )));
        }
        let mut v = self.clone();
        v.shape.insert(axis, 1);
        v.strides.insert(axis, 0);
        Ok(v)
    }

    /// Removes every dimension of extent 1.
    pub fn squeeze(&self) -> View {
        let mut v = self.clone();
        let keep: Vec<usize> = (0..self.ndim()).filter(|&i| self.shape[i] != 1).collect();
        v.shape = keep.iter().map(|&i| self.shape[i]).collect();
        v.strides = keep.iter().map(|&i| self.strides[i]).collect();
        v
    }

    /// Broadcasts to `shape` with stride-0 dimensions, as `np.broadcast_to`.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<View> {
        if shape.len() < self.ndim() || shape.len() > MAX_DIMS {
            return Err(self.broadcast_error(shape));
        }
        let pad = shape.len() - self.ndim();
        let mut v = self.clone();
        v.shape = shape.into();
        v.strides = SmallVec::from_elem(0, shape.len());
        for i in 0..self.ndim() {
            let (src, dst) = (self.shape[i], shape[i + pad]);
            if src == dst {
                v.strides[i + pad] = self.strides[i];
            } else if src != 1 {
                return Err(self.broadcast_error(shape));
            }
        }
        Ok(v)
    }

    fn broadcast_error(&self, shape: &[usize]) -> Error {
        Error::ShapeMismatch(format!(
            "operands could not be broadcast together with remapped shapes [original->remapped]: {} and requested shape {}",
            fmt_shape(&self.shape),
            fmt_shape(shape)
        ))
    }

    /// Reshapes without copying when the strides allow it (as NumPy's `reshape` tries
    /// first); `None` means the caller must copy into a contiguous base first.
    /// Sizes must agree; the caller resolves `-1`.
    pub fn reshape(&self, shape: &[usize]) -> Option<View> {
        let n: usize = shape.iter().product();
        if n != self.nelem() || shape.len() > MAX_DIMS {
            return None;
        }
        if self.is_contiguous() || n == 0 {
            let mut v = View::contiguous(self.base, self.dtype, shape);
            v.offset = self.offset;
            return Some(v);
        }
        // Non-contiguous: merge the old axes into runs that are contiguous with respect to
        // each other, then split each run into the new axes that exactly cover it.
        let old: Vec<(usize, isize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&d, _)| d != 1)
            .map(|(&d, &s)| (d, s))
            .collect();
        let mut new_strides: Strides = SmallVec::from_elem(0, shape.len());
        let (mut oi, mut ni) = (0usize, 0usize);
        while ni < shape.len() {
            if shape[ni] == 1 {
                new_strides[ni] = 0;
                ni += 1;
                continue;
            }
            if oi >= old.len() {
                return None;
            }
            // Grow a block of old axes and a block of new axes until their sizes agree.
            let (mut op, mut np) = (old[oi].0, shape[ni]);
            let (o_start, n_start) = (oi, ni);
            while op != np {
                if op < np {
                    oi += 1;
                    op *= old.get(oi)?.0;
                } else {
                    ni += 1;
                    while ni < shape.len() && shape[ni] == 1 {
                        ni += 1;
                    }
                    np *= *shape.get(ni)?;
                }
            }
            for k in o_start..oi {
                if old[k].1 != old[k + 1].1 * old[k + 1].0 as isize {
                    return None;
                }
            }
            let mut stride = old[oi].1;
            for k in (n_start..=ni).rev() {
                new_strides[k] = stride;
                stride *= shape[k] as isize;
            }
            oi += 1;
            ni += 1;
        }
        if oi != old.len() {
            return None;
        }
        Some(View {
            base: self.base,
            dtype: self.dtype,
            offset: self.offset,
            shape: shape.into(),
            strides: new_strides,
        })
    }

    /// Normalises a possibly negative axis for this view.
    pub fn axis(&self, axis: isize) -> Result<usize> {
        normalize_axis(axis, self.ndim())
    }

    /// Iterates the element offsets in row-major order of the view's index space.
    pub fn offsets(&self) -> impl Iterator<Item = isize> + '_ {
        let n = self.nelem();
        let nd = self.ndim();
        let mut idx = [0usize; MAX_DIMS];
        let mut cur = self.offset;
        (0..n).map(move |k| {
            if k > 0 {
                let mut d = nd;
                while d > 0 {
                    d -= 1;
                    idx[d] += 1;
                    cur += self.strides[d];
                    if idx[d] < self.shape[d] {
                        break;
                    }
                    cur -= self.strides[d] * self.shape[d] as isize;
                    idx[d] = 0;
                }
            }
            cur
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(shape: &[usize]) -> View {
        View::contiguous(BaseId(1), DType::Float64, shape)
    }

    #[test]
    fn clones_are_equal_and_independent_inline_or_spilled() {
        for shape in [&[][..], &[3], &[2, 3, 4, 5], &[2, 1, 3, 1, 2, 2]] {
            let a = v(shape);
            let mut b = a.clone();
            assert_eq!(a, b);
            assert_eq!(b.shape.spilled(), shape.len() > 4);
            // Growing the copy past its inline room leaves the original as it was.
            b.shape.push(7);
            b.strides.push(1);
            b.shape[0] = 99;
            assert_eq!(a.shape.as_slice(), shape);
            assert_eq!(a.strides, contiguous_strides(shape));
        }
    }

    #[test]
    fn shapes_print_as_numpy_prints_them() {
        assert_eq!(fmt_shape(&[]), "()");
        assert_eq!(fmt_shape(&[3]), "(3,)");
        assert_eq!(fmt_shape(&[2, 3]), "(2,3)");
        // NumPy's reshape error: inferred extents read `newaxis`, leading ones vanish.
        assert_eq!(fmt_requested_shape(&[4, 2]), "(4,2)");
        assert_eq!(fmt_requested_shape(&[7]), "(7,)");
        assert_eq!(fmt_requested_shape(&[5, -1]), "(5,newaxis)");
        assert_eq!(fmt_requested_shape(&[2, -3, 5]), "(2,newaxis,5)");
        assert_eq!(fmt_requested_shape(&[-1, 5]), "(5)");
        assert_eq!(fmt_requested_shape(&[-1]), "()");
        assert_eq!(fmt_requested_shape(&[]), "()");
    }

    #[test]
    fn negative_step_slice_addresses_reversed_elements() {
        let a = v(&[5]);
        let r = a.slice(0, 4, -1, -1).unwrap();
        assert_eq!(r.offsets().collect::<Vec<_>>(), vec![4, 3, 2, 1, 0]);
        let e = a.slice(0, 3, 3, 1).unwrap();
        assert!(e.is_empty());
    }

    #[test]
    fn offsets_walk_a_transposed_view() {
        let t = v(&[2, 3]).reversed_axes();
        assert_eq!(t.offsets().collect::<Vec<_>>(), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn reshape_of_transposed_needs_a_copy() {
        let t = v(&[2, 3]).reversed_axes();
        assert!(t.reshape(&[6]).is_none());
        assert!(t.reshape(&[3, 2, 1]).is_some());
        let s = v(&[4, 6]).slice(1, 0, 6, 2).unwrap();
        let r = s.reshape(&[2, 2, 3]).unwrap();
        assert_eq!(
            r.offsets().collect::<Vec<_>>(),
            s.offsets().collect::<Vec<_>>()
        );
    }

    #[test]
    fn broadcast_uses_zero_strides() {
        let b = v(&[3, 1]).broadcast_to(&[2, 3, 4]).unwrap();
        assert_eq!(b.strides.as_slice(), &[0, 1, 0]);
        assert!(v(&[3]).broadcast_to(&[4]).is_err());
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap().as_slice(), &[3, 4]);
        assert!(broadcast_shapes(&[3], &[4]).is_err());
    }

    #[test]
    fn zero_d_view_has_one_element() {
        let s = v(&[]);
        assert_eq!(s.nelem(), 1);
        assert_eq!(s.extent(), Some((0, 0)));
        assert_eq!(s.offsets().collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn index_rejects_out_of_range() {
        assert!(v(&[3]).index(0, 3).is_err());
        assert_eq!(v(&[3, 2]).index(0, -1).unwrap().offset, 4);
    }
}
