//! Indexing arithmetic: Python slices, basic indexing as views, and the element offsets
//! of advanced (integer-array) indexing. Pure logic; the Python side parses keys into
//! [`Item`]s and turns index arrays into [`IndexArray`]s.

use hassium_core::{View, MAX_DIMS};

/// One entry of an indexing key.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Int(isize),
    Slice(Option<isize>, Option<isize>, Option<isize>),
    NewAxis,
    Ellipsis,
    /// An integer index array (boolean masks arrive as one array per mask dimension);
    /// the payload is its position in the list of index arrays.
    Array(usize),
}

/// Why a key cannot index a view; the variants map onto NumPy's exception types.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexError {
    /// `IndexError`.
    OutOfBounds(String),
    /// `ValueError`.
    Value(String),
}

/// An integer index array in host memory, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexArray {
    pub data: Vec<i64>,
    pub shape: Vec<usize>,
}

/// Python's `slice.indices(n)`: clamps start and stop the way `a[start:stop:step]` does.
pub fn slice_indices(
    start: Option<isize>,
    stop: Option<isize>,
    step: Option<isize>,
    n: usize,
) -> Result<(isize, isize, isize), IndexError> {
    let n = n as isize;
    // Python clamps a step to `-isize::MAX` so that its negation fits.
    let step = step.unwrap_or(1).max(-isize::MAX);
    if step == 0 {
        return Err(IndexError::Value("slice step cannot be zero".into()));
    }
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let clamp = |v: Option<isize>, default: isize| match v {
        None => default,
        Some(v) if v < 0 => (v + n).max(lo),
        Some(v) => v.min(hi),
    };
    let (start, stop) = if step > 0 {
        (clamp(start, lo), clamp(stop, hi))
    } else {
        (clamp(start, hi), clamp(stop, lo))
    };
    Ok((start, stop, step))
}

/// The result of applying the basic part of a key.
#[derive(Clone, Debug, PartialEq)]
pub struct Basic {
    /// The view after ints, slices, `None` and `...`; each index array's dimension is kept
    /// whole.
    pub view: View,
    /// For each index array: the dimension of `view` it indexes, and the array's number.
    pub arrays: Vec<(usize, usize)>,
    /// True when the advanced indices (arrays, and ints among them) are adjacent in the
    /// key: NumPy then puts the broadcast index dimensions in their place, else first.
    pub adjacent: bool,
}

fn too_many(ndim: usize, indexed: usize) -> IndexError {
    IndexError::OutOfBounds(format!(
        "too many indices for array: array is {ndim}-dimensional, but {indexed} were indexed"
    ))
}

/// Applies ints, slices, `None` and `...` as a view (NumPy's basic indexing).
pub fn apply_basic(view: &View, key: &[Item]) -> Result<Basic, IndexError> {
    let ndim = view.ndim();
    let consumed = key
        .iter()
        .filter(|i| matches!(i, Item::Int(_) | Item::Slice(..) | Item::Array(_)))
        .count();
    let ellipses = key.iter().filter(|i| matches!(i, Item::Ellipsis)).count();
    if ellipses > 1 {
        return Err(IndexError::OutOfBounds(
            "an index can only have a single ellipsis ('...')".into(),
        ));
    }
    if consumed > ndim {
        return Err(too_many(ndim, consumed));
    }
    let mut shape = Vec::with_capacity(MAX_DIMS);
    let mut strides = Vec::with_capacity(MAX_DIMS);
    let mut offset = view.offset;
    let mut arrays = Vec::new();
    // Positions (in the key, ellipsis expanded) of the advanced items, to decide adjacency.
    let mut adv_positions = Vec::new();
    let has_arrays = key.iter().any(|i| matches!(i, Item::Array(_)));
    let mut dim = 0usize;
    let mut pos = 0usize;
    let push_full = |dim: usize, shape: &mut Vec<usize>, strides: &mut Vec<isize>| {
        shape.push(view.shape[dim]);
        strides.push(view.strides[dim]);
    };
    for item in key {
        match *item {
            Item::Int(i) => {
                let n = view.shape[dim] as isize;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(IndexError::OutOfBounds(format!(
                        "index {i} is out of bounds for axis {dim} with size {n}"
                    )));
                }
                offset += j * view.strides[dim];
                if has_arrays {
                    adv_positions.push(pos);
                }
                dim += 1;
                pos += 1;
            }
            Item::Slice(start, stop, step) => {
                let n = view.shape[dim];
                let (start, stop, step) = slice_indices(start, stop, step, n)?;
                // `(span - 1) / |step| + 1`, never `span + |step| - 1`: a step may be as
                // large as `isize::MAX` (`a[::10**20]`).
                let len = if step > 0 && stop > start {
                    ((stop - start - 1) / step + 1) as usize
                } else if step < 0 && start > stop {
                    ((start - stop - 1) / -step + 1) as usize
                } else {
                    0
                };
                if len > 0 {
                    offset += start * view.strides[dim];
                }
                shape.push(len);
                // The product only overflows for a step beyond the dimension, which leaves
                // at most one element: any stride then addresses it.
                strides.push(
                    view.strides[dim]
                        .checked_mul(step)
                        .unwrap_or(view.strides[dim]),
                );
                dim += 1;
                pos += 1;
            }
            Item::NewAxis => {
                shape.push(1);
                strides.push(0);
                pos += 1;
            }
            Item::Ellipsis => {
                let fill = ndim - consumed;
                for _ in 0..fill {
                    push_full(dim, &mut shape, &mut strides);
                    dim += 1;
                    pos += 1;
                }
            }
            Item::Array(k) => {
                arrays.push((shape.len(), k));
                adv_positions.push(pos);
                push_full(dim, &mut shape, &mut strides);
                dim += 1;
                pos += 1;
            }
        }
    }
    while dim < ndim {
        push_full(dim, &mut shape, &mut strides);
        dim += 1;
    }
    if shape.len() > MAX_DIMS {
        return Err(IndexError::Value(format!(
            "number of dimensions must be within [0, {MAX_DIMS}]"
        )));
    }
    let adjacent = adv_positions.windows(2).all(|w| w[1] == w[0] + 1);
    Ok(Basic {
        view: View {
            base: view.base,
            dtype: view.dtype,
            offset,
            shape: shape.into_iter().collect(),
            strides: strides.into_iter().collect(),
        },
        arrays,
        adjacent,
    })
}

/// Broadcasts index-array shapes, as NumPy does for advanced indices.
pub fn broadcast_all(shapes: &[&[usize]]) -> Result<Vec<usize>, IndexError> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; n];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[n - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let txt: Vec<String> = shapes.iter().map(|s| hassium_core_fmt(s)).collect();
                return Err(IndexError::OutOfBounds(format!(
                    "shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                    txt.join(" ")
                )));
            }
        }
    }
    Ok(out)
}

fn hassium_core_fmt(shape: &[usize]) -> String {
    match shape {
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

/// Checks index values against the extent of the dimension they index and makes them
/// non-negative, raising NumPy's message for the first offender.
pub fn normalize_indices(a: &mut IndexArray, axis: usize, n: usize) -> Result<(), IndexError> {
    let n = n as i64;
    for v in a.data.iter_mut() {
        let j = if *v < 0 { *v + n } else { *v };
        if j < 0 || j >= n {
            return Err(IndexError::OutOfBounds(format!(
                "index {v} is out of bounds for axis {axis} with size {n}"
            )));
        }
        *v = j;
    }
    Ok(())
}

/// The element offsets (into the base) that advanced indexing of `basic` addresses, in
/// row-major order of the result, and the result's shape. Index values must already be
/// normalised (non-negative and in range).
pub fn advanced_offsets(
    basic: &Basic,
    arrays: &[IndexArray],
) -> Result<(Vec<usize>, Vec<i64>), IndexError> {
    let v = &basic.view;
    let shapes: Vec<&[usize]> = basic
        .arrays
        .iter()
        .map(|&(_, k)| arrays[k].shape.as_slice())
        .collect();
    let b = broadcast_all(&shapes)?;
    let adv_dims: Vec<usize> = basic.arrays.iter().map(|&(d, _)| d).collect();
    let rest: Vec<usize> = (0..v.ndim()).filter(|d| !adv_dims.contains(d)).collect();
    let insert_at = if basic.adjacent {
        rest.iter().filter(|&&d| d < adv_dims[0]).count()
    } else {
        0
    };
    // Each result dimension is either a dimension of the broadcast index shape or a
    // remaining dimension of the view.
    enum Dim {
        Index(usize),
        Rest(usize),
    }
    let mut dims: Vec<Dim> = rest[..insert_at].iter().map(|&d| Dim::Rest(d)).collect();
    dims.extend((0..b.len()).map(Dim::Index));
    dims.extend(rest[insert_at..].iter().map(|&d| Dim::Rest(d)));
    let shape: Vec<usize> = dims
        .iter()
        .map(|d| match *d {
            Dim::Index(i) => b[i],
            Dim::Rest(r) => v.shape[r],
        })
        .collect();
    if shape.len() > MAX_DIMS {
        return Err(IndexError::Value(format!(
            "number of dimensions must be within [0, {MAX_DIMS}]"
        )));
    }
    // Per index array: its element stride along each broadcast dimension (0 where it is
    // broadcast).
    let bstrides: Vec<Vec<usize>> = basic
        .arrays
        .iter()
        .map(|&(_, k)| {
            let s = &arrays[k].shape;
            let pad = b.len() - s.len();
            let mut st = vec![0usize; b.len()];
            let mut acc = 1usize;
            for i in (0..s.len()).rev() {
                if s[i] != 1 {
                    st[pad + i] = acc;
                }
                acc *= s[i];
            }
            st
        })
        .collect();
    let total: usize = shape.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut idx = vec![0usize; shape.len()];
    let narr = basic.arrays.len();
    let mut apos = vec![0usize; narr];
    let mut mem = v.offset as i64;
    for k in 0..total {
        if k > 0 {
            // Odometer step: advance the last dimension, carrying leftwards.
            let mut d = shape.len();
            while d > 0 {
                d -= 1;
                idx[d] += 1;
                let carry = idx[d] == shape[d];
                let steps = if carry { -(shape[d] as i64 - 1) } else { 1 };
                match dims[d] {
                    Dim::Rest(r) => mem += steps * v.strides[r] as i64,
                    Dim::Index(i) => {
                        for (a, p) in apos.iter_mut().enumerate() {
                            *p = (*p as i64 + steps * bstrides[a][i] as i64) as usize;
                        }
                    }
                }
                if !carry {
                    break;
                }
                idx[d] = 0;
            }
        }
        let mut off = mem;
        for (a, &(dim, arr)) in basic.arrays.iter().enumerate() {
            off += arrays[arr].data[apos[a]] * v.strides[dim] as i64;
        }
        out.push(off);
    }
    Ok((shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::{BaseId, DType};

    fn v(shape: &[usize]) -> View {
        View::contiguous(BaseId(1), DType::Float64, shape)
    }

    #[test]
    fn slice_indices_match_python() {
        assert_eq!(slice_indices(None, None, Some(-1), 5).unwrap(), (4, -1, -1));
        assert_eq!(slice_indices(Some(-2), None, None, 5).unwrap(), (3, 5, 1));
        assert_eq!(
            slice_indices(Some(10), Some(-10), Some(-2), 5).unwrap(),
            (4, -1, -2)
        );
        assert!(slice_indices(None, None, Some(0), 5).is_err());
        // Bounds and steps at the ends of isize (Python clamps bigger ints to these).
        assert_eq!(
            slice_indices(Some(isize::MAX), None, None, 5).unwrap(),
            (5, 5, 1)
        );
        assert_eq!(
            slice_indices(Some(isize::MIN), Some(isize::MIN), Some(isize::MIN), 5).unwrap(),
            (-1, -1, -isize::MAX)
        );
    }

    #[test]
    fn basic_indexing_makes_views_with_ellipsis_and_newaxis() {
        let b = apply_basic(
            &v(&[3, 4, 5]),
            &[Item::Ellipsis, Item::Int(-1), Item::NewAxis],
        )
        .unwrap();
        assert_eq!(b.view.shape.as_slice(), &[3, 4, 1]);
        assert_eq!(b.view.strides.as_slice(), &[20, 5, 0]);
        assert_eq!(b.view.offset, 4);
        let r = apply_basic(&v(&[5]), &[Item::Slice(None, None, Some(-2))]).unwrap();
        assert_eq!(r.view.offsets().collect::<Vec<_>>(), vec![4, 2, 0]);
    }

    #[test]
    fn too_many_indices_and_out_of_bounds_are_index_errors() {
        assert!(matches!(
            apply_basic(&v(&[3]), &[Item::Int(0), Item::Int(0)]),
            Err(IndexError::OutOfBounds(_))
        ));
        let e =
            apply_basic(&v(&[3, 2]), &[Item::Slice(None, None, None), Item::Int(2)]).unwrap_err();
        assert_eq!(
            e,
            IndexError::OutOfBounds("index 2 is out of bounds for axis 1 with size 2".into())
        );
    }

    #[test]
    fn advanced_offsets_follow_numpy_placement() {
        // a[:, [2, 0]] on a (2, 3) array: index dims replace axis 1.
        let a = v(&[2, 3]);
        let b = apply_basic(&a, &[Item::Slice(None, None, None), Item::Array(0)]).unwrap();
        let idx = [IndexArray {
            data: vec![2, 0],
            shape: vec![2],
        }];
        let (shape, off) = advanced_offsets(&b, &idx).unwrap();
        assert_eq!(shape, vec![2, 2]);
        assert_eq!(off, vec![2, 0, 5, 3]);
        // a[[1], :, [0]] style (non-adjacent): index dims go first.
        let a = v(&[2, 3, 4]);
        let b = apply_basic(
            &a,
            &[
                Item::Array(0),
                Item::Slice(None, None, None),
                Item::Array(1),
            ],
        )
        .unwrap();
        assert!(!b.adjacent);
        let idx = [
            IndexArray {
                data: vec![1],
                shape: vec![1],
            },
            IndexArray {
                data: vec![0, 3],
                shape: vec![2],
            },
        ];
        let (shape, off) = advanced_offsets(&b, &idx).unwrap();
        assert_eq!(shape, vec![2, 3]);
        assert_eq!(off, vec![12, 16, 20, 15, 19, 23]);
    }

    #[test]
    fn out_of_range_index_arrays_name_the_axis() {
        let mut a = IndexArray {
            data: vec![0, -4],
            shape: vec![2],
        };
        assert!(normalize_indices(&mut a, 1, 3).is_err());
        let mut a = IndexArray {
            data: vec![0, -3],
            shape: vec![2],
        };
        normalize_indices(&mut a, 1, 3).unwrap();
        assert_eq!(a.data, vec![0, 0]);
    }
}
