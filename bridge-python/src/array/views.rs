//! Methods and functions that give a new view of the same base: reshape, ravel,
//! transpose, squeeze, view, broadcast_to, diagonal (`flatten` copies, in ravel's order).

use super::{arr_of, reductions::parse_axes, wrap, wrap_read_only_view, wrap_view, PyNdArray};
use crate::ops::{self};
use crate::py::{self, UnsupportedError};
use crate::rt::{Arr, OrPy};
use hassium_core::View;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// The order a reshape, ravel or flatten reads elements in.
enum Order {
    C,
    /// C order over the axes taken in this order.
    Perm(Vec<usize>),
}

/// NumPy's `order` argument for reading `v`: "C"; "F" (the axes reversed); "A" (F when
/// `v` is Fortran- and not C-contiguous); and, where `k_allowed`, "K" (memory order: the
/// axes by decreasing stride magnitude).
fn order_perm(v: &View, order: &str, k_allowed: bool) -> PyResult<Order> {
    let nd = v.ndim();
    let reversed = || Order::Perm((0..nd).rev().collect());
    Ok(match order {
        "C" => Order::C,
        "F" => reversed(),
        "A" if v.reversed_axes().is_contiguous() && !v.is_contiguous() => reversed(),
        "A" => Order::C,
        "K" if k_allowed => {
            let mut p: Vec<usize> = (0..nd).collect();
            p.sort_by_key(|&i| std::cmp::Reverse(v.strides[i].unsigned_abs()));
            Order::Perm(p)
        }
        "K" => {
            return Err(PyValueError::new_err(
                "order 'K' is not permitted for reshaping",
            ))
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "order must be one of 'C', 'F', 'A', or 'K' (got '{order}')"
            )))
        }
    })
}

/// `a` with its axes permuted so that a C-order read visits its elements in `order`
/// (ravel's and flatten's orders, "K" included).
fn in_read_order(a: &Arr, order: &str) -> PyResult<Arr> {
    Ok(match order_perm(&a.view, order, true)? {
        Order::C => a.clone(),
        Order::Perm(p) => a.with_view(a.view.transpose(&p).py()?),
    })
}

/// `np.broadcast_to(a, shape)` once the shapes are checked: a read-only view of `a`
/// with a stride of 0 along each broadcast axis, as NumPy's.
pub fn broadcast_to(a: &Bound<'_, PyNdArray>, shape: &[usize]) -> PyResult<PyObject> {
    let view = a.borrow().arr()?.view.broadcast_to(shape).py()?;
    wrap_read_only_view(a, view)
}

/// NumPy's `a.diagonal(offset, axis1, axis2)`: a read-only view, so later writes into
/// `a` show through it, with the other axes first and the diagonal last. The axes are
/// normalised and distinct (the package checks them with NumPy's errors).
pub fn diagonal(
    a: &Bound<'_, PyNdArray>,
    offset: isize,
    axis1: usize,
    axis2: usize,
) -> PyResult<PyObject> {
    let v = a.borrow().arr()?.view.clone();
    if axis1 >= v.ndim() || axis2 >= v.ndim() || axis1 == axis2 {
        return Err(PyValueError::new_err(format!(
            "diagonal: axes {axis1} and {axis2} are not two distinct axes of a \
             {}-dimensional array",
            v.ndim()
        )));
    }
    let (rows, cols) = (v.shape[axis1] as isize, v.shape[axis2] as isize);
    let (s1, s2) = (v.strides[axis1], v.strides[axis2]);
    let n = (rows - (-offset).max(0)).min(cols - offset.max(0)).max(0);
    let mut d = v.clone();
    d.shape.clear();
    d.strides.clear();
    for k in (0..v.ndim()).filter(|&k| k != axis1 && k != axis2) {
        d.shape.push(v.shape[k]);
        d.strides.push(v.strides[k]);
    }
    d.shape.push(n as usize);
    d.strides.push(s1 + s2);
    if n > 0 {
        d.offset += if offset >= 0 {
            offset * s2
        } else {
            -offset * s1
        };
    }
    wrap_read_only_view(a, d)
}

#[pymethods]
impl PyNdArray {
    #[pyo3(signature = (*shape, order="C"))]
    fn reshape(
        slf: &Bound<'_, Self>,
        shape: &Bound<'_, PyTuple>,
        order: &str,
    ) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        let req = if shape.len() == 1 {
            py::dims_arg(&shape.get_item(0)?)?
        } else {
            py::dims_arg(shape)?
        };
        let s = ops::resolve_shape(a.view.nelem(), &req)?;
        // Fortran order reads and writes the last axis slowest: a C-order reshape of the
        // reversed axes to the reversed shape, reversed back.
        let fortran = match order_perm(&a.view, order, false)? {
            Order::C => false,
            Order::Perm(_) => true,
        };
        let r = if fortran {
            let rev: Vec<usize> = s.iter().rev().copied().collect();
            let r = ops::reshape(&a.with_view(a.view.reversed_axes()), &rev)?;
            let v = r.view.reversed_axes();
            r.with_view(v)
        } else {
            ops::reshape(&a, &s)?
        };
        if r.owner.id == a.owner.id {
            wrap_view(slf, r.view)
        } else {
            wrap(slf.py(), r)
        }
    }
    #[pyo3(signature = (order="C"))]
    fn ravel(slf: &Bound<'_, Self>, order: &str) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        let r = ops::reshape(&in_read_order(&a, order)?, &[a.view.nelem()])?;
        if r.owner.id == a.owner.id {
            wrap_view(slf, r.view)
        } else {
            wrap(slf.py(), r)
        }
    }
    #[pyo3(signature = (order="C"))]
    fn flatten(&self, py: Python<'_>, order: &str) -> PyResult<PyObject> {
        let a = self.arr()?;
        let c = ops::cast_copy(&in_read_order(a, order)?, a.dtype())?;
        wrap(py, ops::reshape(&c, &[a.view.nelem()])?)
    }
    #[pyo3(signature = (*axes))]
    fn transpose(slf: &Bound<'_, Self>, axes: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        let nd = a.view.ndim();
        let perm: Option<Vec<isize>> = match axes.len() {
            0 => None,
            1 if axes.get_item(0)?.is_none() => None,
            1 if axes.get_item(0)?.downcast::<PyTuple>().is_ok()
                || axes.get_item(0)?.downcast::<PyList>().is_ok() =>
            {
                Some(py::dims_arg(&axes.get_item(0)?)?)
            }
            // NumPy reads the axes as it reads a shape (an int beyond `intp` is its
            // "Maximum allowed dimension exceeded").
            _ => Some(py::dims_arg(axes)?),
        };
        let v = match perm {
            None => a.view.reversed_axes(),
            Some(p) => {
                if p.len() != nd {
                    return Err(PyValueError::new_err("axes don't match array"));
                }
                let mut q = Vec::with_capacity(nd);
                for x in p {
                    let y = if x < 0 { x + nd as isize } else { x };
                    if y < 0 || y >= nd as isize {
                        return Err(py::axis_error(&format!(
                            "axis {x} is out of bounds for array of dimension {nd}"
                        )));
                    }
                    q.push(y as usize);
                }
                a.view
                    .transpose(&q)
                    .map_err(|_| PyValueError::new_err("repeated axis in transpose"))?
            }
        };
        wrap_view(slf, v)
    }
    fn swapaxes(slf: &Bound<'_, Self>, axis1: isize, axis2: isize) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        let nd = a.view.ndim();
        let norm = |x: isize| -> PyResult<usize> {
            let y = if x < 0 { x + nd as isize } else { x };
            if y < 0 || y >= nd as isize {
                return Err(py::axis_error(&format!(
                    "axis {x} is out of bounds for array of dimension {nd}"
                )));
            }
            Ok(y as usize)
        };
        let (i, j) = (norm(axis1)?, norm(axis2)?);
        let mut perm: Vec<usize> = (0..nd).collect();
        perm.swap(i, j);
        wrap_view(slf, a.view.transpose(&perm).py()?)
    }
    #[pyo3(signature = (axis=None))]
    fn squeeze(slf: &Bound<'_, Self>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        // NumPy takes an integer axis 0 or -1 on a 0-d array (not a tuple naming one).
        if a.view.ndim() == 0 {
            if let Some(i) = axis.and_then(|x| x.extract::<i64>().ok()) {
                if i == 0 || i == -1 {
                    return wrap_view(slf, a.view.clone());
                }
            }
        }
        let v = match parse_axes(axis, a.view.ndim())? {
            None => a.view.squeeze(),
            Some(axes) => {
                if axes.iter().any(|&i| a.view.shape[i] != 1) {
                    return Err(PyValueError::new_err(
                        "cannot select an axis to squeeze out which has size not equal to one",
                    ));
                }
                let keep: Vec<usize> = (0..a.view.ndim()).filter(|i| !axes.contains(i)).collect();
                View {
                    shape: keep.iter().map(|&i| a.view.shape[i]).collect(),
                    strides: keep.iter().map(|&i| a.view.strides[i]).collect(),
                    ..a.view.clone()
                }
            }
        };
        wrap_view(slf, v)
    }
    #[pyo3(signature = (dtype=None, r#type=None))]
    fn view(
        slf: &Bound<'_, Self>,
        dtype: Option<&Bound<'_, PyAny>>,
        r#type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let _ = r#type;
        let a = arr_of(slf)?;
        match py::opt_dtype(dtype)? {
            None => wrap_view(slf, a.view.clone()),
            Some(d) if d == a.dtype() => wrap_view(slf, a.view.clone()),
            Some(_) => Err(UnsupportedError::new_err(
                "hassium cannot reinterpret a base as another dtype",
            )),
        }
    }
}
