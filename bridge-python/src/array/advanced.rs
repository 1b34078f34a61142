//! Advanced indexing planned on the host: integer and boolean index arrays (and 0-d
//! booleans beside them) turned into the int64 offsets a gather or scatter reads.

use super::{indexing::index_err, indexing::Adv, wrap};
use crate::convert::host_int64;
use crate::index::{self, IndexArray, Item};
use crate::ops::{self};
use crate::py::{self};
use crate::rt::{with_rt, Arr, OrPy};
use hassium_core::{BaseId, DType, View};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The value of a 0-d boolean index (`True`, `np.bool_(False)`, a 0-d mask array), or
/// `None` for any other advanced index.
fn scalar_truth(adv: &Adv) -> PyResult<Option<bool>> {
    Ok(match adv {
        Adv::Mask(v, s) if s.is_empty() => Some(v[0]),
        Adv::Lazy(x) if x.dtype().is_bool() && x.view.ndim() == 0 => {
            Some(ops::read_scalar(x)?.as_f64() != 0.0)
        }
        _ => None,
    })
}

/// A key whose only advanced index is one 0-d boolean (`a[True]`, `a[..., mask0d]`)
/// rewritten as basic indexing: NumPy gives that index a new dimension of length 1 when
/// true and 0 when false. Returns the view it selects (a copy is the caller's business:
/// NumPy copies, as for any advanced index), or `None` when the key is not of that form
/// (several 0-d booleans, or one beside index arrays, go through [`expand_scalar_bools`]).
pub(super) fn scalar_bool_key(a: &Arr, items: &[Item], advs: &[Adv]) -> PyResult<Option<View>> {
    let [adv] = advs else {
        return Ok(None);
    };
    let Some(t) = scalar_truth(adv)? else {
        return Ok(None);
    };
    // The new dimension's position in the result: the dimensions the items before it make.
    let consumed = items
        .iter()
        .filter(|i| matches!(i, Item::Int(_) | Item::Slice(..)))
        .count();
    let mut at = 0usize;
    let mut rewritten = Vec::with_capacity(items.len());
    let mut seen = false;
    for item in items {
        match item {
            // The lone advanced item (`advs` has one entry, index 0).
            Item::Array(0) => {
                seen = true;
                rewritten.push(Item::NewAxis);
                continue;
            }
            _ if seen => {}
            Item::Slice(..) | Item::NewAxis => at += 1,
            Item::Ellipsis => at += a.view.ndim().saturating_sub(consumed),
            Item::Int(_) | Item::Array(_) => {}
        }
        rewritten.push(item.clone());
    }
    let mut v = index::apply_basic(&a.view, &rewritten)
        .map_err(index_err)?
        .view;
    // Beside an advanced index, integers are advanced too; when they and the boolean are
    // not adjacent in the key, the new dimension goes first, as for index arrays.
    let group: Vec<usize> = (items.iter().enumerate())
        .filter(|(_, i)| matches!(i, Item::Int(_) | Item::Array(_)))
        .map(|(n, _)| n)
        .collect();
    if group.windows(2).any(|w| w[1] != w[0] + 1) && at > 0 {
        let mut perm: Vec<usize> = (0..v.ndim()).collect();
        perm.remove(at);
        perm.insert(0, at);
        v = v.transpose(&perm).py()?;
        at = 0;
    }
    Ok(Some(if t { v } else { v.slice(at, 0, 0, 1).py()? }))
}

/// The dimensions of the indexed array a key item consumes (a mask its rank, a 0-d
/// boolean none); an Ellipsis counts none here and takes the rest.
fn width(item: &Item, advs: &[Adv]) -> usize {
    match item {
        Item::Int(_) | Item::Slice(..) => 1,
        Item::Array(k) => match &advs[*k] {
            Adv::Mask(_, s) => s.len(),
            Adv::Lazy(x) if x.dtype().is_bool() => x.view.ndim(),
            _ => 1,
        },
        Item::NewAxis | Item::Ellipsis => 0,
    }
}

/// How NumPy reads 0-d booleans beside other advanced indices: each is a new axis of
/// length 1 where it stands in the key, indexed by `[0]` when true and by `[]` when
/// false, so it broadcasts with the other index arrays (`a[True, [0, 1]]` picks two
/// rows, `a[False, [0, 1]]` is a shape mismatch, `a[False, [[0], [1]]]` is empty).
/// Returns `a` with those axes inserted and the booleans replaced by such index arrays.
fn expand_scalar_bools(a: &Arr, items: &[Item], advs: Vec<Adv>) -> PyResult<(Arr, Vec<Adv>)> {
    let truths = advs
        .iter()
        .map(scalar_truth)
        .collect::<PyResult<Vec<_>>>()?;
    if truths.iter().all(Option::is_none) {
        return Ok((a.clone(), advs));
    }
    let rest = a
        .view
        .ndim()
        .saturating_sub(items.iter().map(|i| width(i, &advs)).sum::<usize>());
    let all = Item::Slice(None, None, None);
    let mut insert = Vec::new();
    for item in items {
        match item {
            Item::Array(k) if truths[*k].is_some() => insert.push(Item::NewAxis),
            Item::Ellipsis => insert.extend(std::iter::repeat_n(all.clone(), rest)),
            _ => insert.extend(std::iter::repeat_n(all.clone(), width(item, &advs))),
        }
    }
    let view = index::apply_basic(&a.view, &insert)
        .map_err(index_err)?
        .view;
    let advs = advs
        .into_iter()
        .zip(truths)
        .map(|(adv, t)| match t {
            Some(t) => Adv::Host(IndexArray {
                data: if t { vec![0] } else { vec![] },
                shape: vec![usize::from(t)],
            }),
            None => adv,
        })
        .collect();
    Ok((a.with_view(view), advs))
}

/// Host index arrays for every advanced index (masks become one array per dimension).
/// Returns the rewritten key.
fn materialize(
    py: Python<'_>,
    a: &Arr,
    items: &[Item],
    advs: Vec<Adv>,
) -> PyResult<(Vec<Item>, Vec<IndexArray>)> {
    let mut out_items = Vec::new();
    let mut arrays = Vec::new();
    let ndim = a.view.ndim();
    let consumed: usize = items.iter().map(|i| width(i, &advs)).sum();
    let mut dim = 0usize;
    let mut advs: Vec<Option<Adv>> = advs.into_iter().map(Some).collect();
    for item in items {
        match item {
            Item::Array(k) => {
                let adv = advs[*k].take().expect("each index array is used once");
                let adv = match adv {
                    Adv::Lazy(x) => {
                        let host =
                            py::numpy(py)?.call_method1("asarray", (wrap(py, x.clone())?,))?;
                        if x.dtype().is_bool() {
                            let (vals, _) = host_int64(&host)?;
                            Adv::Mask(
                                vals.into_iter().map(|v| v != 0).collect(),
                                x.shape().to_vec(),
                            )
                        } else {
                            let (data, shape) = host_int64(&host)?;
                            Adv::Host(IndexArray { data, shape })
                        }
                    }
                    other => other,
                };
                match adv {
                    Adv::Host(ia) => {
                        arrays.push(ia);
                        out_items.push(Item::Array(arrays.len() - 1));
                        dim += 1;
                    }
                    Adv::Mask(_, shape) if shape.is_empty() => {
                        // `expand_scalar_bools` turns 0-d masks into index arrays first.
                        return Err(PyRuntimeError::new_err(
                            "hassium: internal error: a 0-d boolean index was not expanded",
                        ));
                    }
                    Adv::Mask(vals, shape) => {
                        for (j, &n) in shape.iter().enumerate() {
                            let have = a.view.shape.get(dim + j).copied();
                            if have != Some(n) {
                                return Err(PyIndexError::new_err(format!(
                                    "boolean index did not match indexed array along axis {}; size of axis is {} but size of corresponding boolean axis is {n}",
                                    dim + j,
                                    have.unwrap_or(0)
                                )));
                            }
                        }
                        // np.nonzero in row-major order: one coordinate array per dimension.
                        let strides =
                            hassium_core::View::contiguous(BaseId(0), DType::Bool, &shape).strides;
                        let hits: Vec<usize> = vals
                            .iter()
                            .enumerate()
                            .filter(|(_, &v)| v)
                            .map(|(i, _)| i)
                            .collect();
                        for j in 0..shape.len() {
                            let data = hits
                                .iter()
                                .map(|&i| ((i as isize / strides[j]) as usize % shape[j]) as i64)
                                .collect();
                            arrays.push(IndexArray {
                                data,
                                shape: vec![hits.len()],
                            });
                            out_items.push(Item::Array(arrays.len() - 1));
                        }
                        dim += shape.len();
                    }
                    Adv::Lazy(_) => unreachable!("lazy indices were brought to the host above"),
                }
            }
            Item::Ellipsis => {
                dim += ndim.saturating_sub(consumed);
                out_items.push(item.clone());
            }
            Item::Int(_) | Item::Slice(..) => {
                dim += 1;
                out_items.push(item.clone());
            }
            Item::NewAxis => out_items.push(item.clone()),
        }
    }
    Ok((out_items, arrays))
}

/// The int64 offsets (as a fresh array) and the full-base view that advanced indexing
/// of `a` by `key` addresses.
pub(super) fn advanced(
    py: Python<'_>,
    a: &Arr,
    items: &[Item],
    advs: Vec<Adv>,
) -> PyResult<(Arr, View)> {
    let (a, advs) = expand_scalar_bools(a, items, advs)?;
    let a = &a;
    let (items, mut arrays) = materialize(py, a, items, advs)?;
    let basic = index::apply_basic(&a.view, &items).map_err(index_err)?;
    // NumPy checks the index values it visits: when the index arrays broadcast to nothing
    // (`a[[5], []]`), none is visited and none is out of bounds. A 0-d index is an integer
    // to NumPy, checked always.
    let shapes: Vec<&[usize]> = arrays.iter().map(|x| x.shape.as_slice()).collect();
    let visited = index::broadcast_all(&shapes).map_err(index_err)?;
    let none_visited = visited.iter().product::<usize>() == 0;
    for &(dim, k) in &basic.arrays {
        if !none_visited || arrays[k].shape.is_empty() {
            index::normalize_indices(&mut arrays[k], dim, basic.view.shape[dim])
                .map_err(index_err)?;
        }
    }
    let (shape, offsets) = index::advanced_offsets(&basic, &arrays).map_err(index_err)?;
    let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    let idx = ops::from_bytes(&bytes, DType::Int64, &shape)?;
    let nelem = with_rt(|rt| {
        rt.base(a.view.base)
            .map(|b| b.nelem)
            .ok_or_else(|| PyValueError::new_err("array's base was freed"))
    })?;
    Ok((idx, View::contiguous(a.view.base, a.dtype(), &[nelem])))
}
