//! The harness: the table of live and freed handles, and each call run and checked.

use crate::checks::{check_failure, check_status, last_error, meta, reset_error};
use crate::input::{count, dtype_size, too_large, work, Call, Opnd, ShapeArg, H, HUGE};
use crate::{MAX_ELEMS, MAX_LIVE, MAX_WORK};
use hassium::*;
use std::ptr::{null, null_mut};

pub(crate) struct Harness {
    live: Vec<*mut hs_array>,
    freed: Vec<*mut hs_array>,
    /// Unrelated memory whose address serves as a foreign "handle".
    foreign: Box<[u64; 4]>,
}

impl Harness {
    pub(crate) fn new() -> Harness {
        Harness {
            live: Vec::new(),
            freed: Vec::new(),
            foreign: Box::new([0; 4]),
        }
    }

    fn handle(&self, h: H) -> *mut hs_array {
        match h {
            H::Live(i) if !self.live.is_empty() => self.live[i as usize % self.live.len()],
            H::Stale(i) if !self.freed.is_empty() => self.freed[i as usize % self.freed.len()],
            H::Live(_) | H::Stale(_) | H::Null => null_mut(),
            H::MadeUp(v) => v as usize as *mut hs_array,
            H::Foreign => self.foreign.as_ptr() as *mut hs_array,
        }
    }

    fn operand(&self, o: Opnd) -> hs_operand {
        match o {
            Opnd::Arr(h) => hs_arr(self.handle(h)),
            Opnd::Int(v) => hs_int(v),
            Opnd::SmallInt(v) => hs_int(v.into()),
            Opnd::Float(v) => hs_float(v),
            Opnd::Complex(r, i) => hs_complex(r, i),
            Opnd::BadKind(k, h) => {
                let mut op = hs_arr(self.handle(h));
                op.kind = hs_operand_kind(4 + k % 1000);
                op
            }
        }
    }

    /// The [`work`] of a live array's shape (0 for anything else).
    fn elems(&self, a: *const hs_array) -> usize {
        self.shape_of(a).map_or(0, |s| work(&s))
    }

    fn shape_of(&self, a: *const hs_array) -> Option<Vec<usize>> {
        if self.live.contains(&(a as *mut _)) {
            meta(a).map(|m| m.shape)
        } else {
            None
        }
    }

    /// True when an operation over these operands (and output) would touch more than
    /// [`MAX_WORK`] elements: the broadcast of their shapes, and each of them.
    fn too_much_work(&self, ops: &[hs_operand], out: Option<*const hs_array>) -> bool {
        let mut shapes: Vec<Vec<usize>> = ops
            .iter()
            .filter(|o| o.kind == HS_OPERAND_ARRAY)
            .filter_map(|o| self.shape_of(o.array))
            .collect();
        shapes.extend(out.and_then(|o| self.shape_of(o)));
        let nd = shapes.iter().map(Vec::len).max().unwrap_or(0);
        let mut total = 1usize;
        for k in 0..nd {
            let ext = shapes
                .iter()
                .filter(|s| k < s.len())
                .map(|s| s[s.len() - 1 - k])
                .max()
                .unwrap_or(1);
            total = total.saturating_mul(ext.max(1));
        }
        total > MAX_WORK || shapes.iter().any(|s| work(s) > MAX_WORK)
    }

    /// Checks a new handle (or the failure NULL stands for) and keeps it.
    fn took(&mut self, name: &str, a: *mut hs_array) -> Option<*mut hs_array> {
        if a.is_null() {
            check_failure(name, hs_last_status());
            return None;
        }
        assert!(
            meta(a).is_some(),
            "{name} returned a handle that is not live: {}",
            last_error()
        );
        if self.live.len() >= MAX_LIVE {
            self.free(a);
            return None;
        }
        self.live.push(a);
        Some(a)
    }

    fn free(&mut self, a: *mut hs_array) {
        reset_error();
        let st = hs_free(a);
        if a.is_null() {
            assert_eq!(st, hs_status::HS_OK, "hs_free(NULL) must do nothing");
            return;
        }
        if check_status("hs_free", st) {
            if let Some(k) = self.live.iter().position(|&h| h == a) {
                self.live.swap_remove(k);
            }
            if self.freed.len() < 64 {
                self.freed.push(a);
            }
        } else if let Some(k) = self.live.iter().position(|&h| h == a) {
            // A live handle that will not free: only a made-up number that happened to
            // equal it can have freed it before.
            assert_eq!(st, hs_status::HS_ERR_FREED, "{}", last_error());
            self.live.swap_remove(k);
        }
    }

    /// A creation call with a shape: huge shapes go only to `hs_empty` (which allocates
    /// nothing) or must be refused.
    fn create(
        &mut self,
        name: &str,
        s: &ShapeArg,
        lazy: bool,
        f: impl FnOnce(usize, *const usize) -> *mut hs_array,
    ) {
        let ext = s.extents();
        let n = count(&ext);
        let must_fail = too_large(&ext) || ext.len() > 16;
        if !must_fail && !lazy && n.is_some_and(|n| n > MAX_ELEMS) {
            return;
        }
        let ptr = if s.null_ptr { null() } else { ext.as_ptr() };
        reset_error();
        let a = f(ext.len(), ptr);
        if must_fail || (s.null_ptr && !ext.is_empty()) {
            assert!(
                a.is_null(),
                "{name} accepted shape {ext:?} (null pointer: {})",
                s.null_ptr
            );
        }
        self.took(name, a);
    }

    /// Reads (and maybe writes) every element `hs_data` advertises.
    fn data(&mut self, a: *mut hs_array, write: Option<u8>) {
        let m = if self.live.contains(&a) {
            meta(a)
        } else {
            None
        };
        if m.as_ref().is_some_and(|m| m.size > MAX_WORK) {
            return;
        }
        reset_error();
        let p = hs_data(a);
        if p.is_null() {
            check_failure("hs_data", hs_last_status());
            return;
        }
        let m = m.unwrap_or_else(|| meta(a).expect("hs_data succeeded, so the handle is live"));
        let size = dtype_size(m.dtype);
        assert_eq!(p as usize % size, 0, "hs_data is misaligned for its dtype");
        let p = p as *mut u8;
        let mut idx = vec![0usize; m.shape.len()];
        let mut sum = 0u64;
        for _ in 0..m.size {
            let off: isize = idx
                .iter()
                .zip(&m.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum();
            // SAFETY: this is the claim under test: every element of the view lies in
            // memory hs_data's pointer reaches (ASan reports it otherwise).
            unsafe {
                let e = p.offset(off * size as isize);
                for b in 0..size {
                    sum = sum.wrapping_add(u64::from(std::ptr::read_volatile(e.add(b))));
                }
                if let Some(w) = write {
                    // Only valid values: a bool byte is 0 or 1, as C's _Bool is.
                    let v = if m.dtype == HS_BOOL { w & 1 } else { w };
                    std::ptr::write_bytes(e, v, size);
                }
            }
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < m.shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        std::hint::black_box(sum);
    }

    fn copy_to(&mut self, a: *mut hs_array, delta: i8, null_buf: bool) {
        let m = if self.live.contains(&a) {
            meta(a)
        } else {
            None
        };
        let want = m
            .as_ref()
            .map_or(8, |m| m.size.saturating_mul(dtype_size(m.dtype)));
        // A huge (broadcast) view: offer a small buffer, which must be refused.
        let huge = want > MAX_WORK * 16;
        let nbytes = if huge {
            delta.unsigned_abs().into()
        } else {
            want.saturating_add_signed(delta.into())
        };
        let mut buf = vec![0u8; nbytes];
        let ptr = if null_buf {
            null_mut()
        } else {
            buf.as_mut_ptr()
        };
        reset_error();
        // SAFETY: `buf` holds `nbytes` bytes (or the pointer is NULL, which is under test).
        let st = unsafe { hs_copy_to(a, ptr.cast(), nbytes) };
        if check_status("hs_copy_to", st) {
            let m = m.expect("hs_copy_to succeeded on a handle the table does not hold");
            assert!(!huge, "hs_copy_to copied a huge array into {nbytes} bytes");
            assert_eq!(
                nbytes,
                m.size * dtype_size(m.dtype),
                "hs_copy_to took a wrong length"
            );
            assert!(!null_buf || nbytes == 0, "hs_copy_to wrote through NULL");
        }
    }

    pub(crate) fn run(&mut self, call: &Call) {
        match call {
            Call::Empty(d, s) => {
                // SAFETY (all creations): `p` points to `n` extents or is the NULL under test.
                self.create("hs_empty", s, true, |n, p| unsafe {
                    hs_empty(d.get(), n, p)
                })
            }
            Call::Zeros(d, s) => self.create("hs_zeros", s, false, |n, p| unsafe {
                hs_zeros(d.get(), n, p)
            }),
            Call::Ones(d, s) => self.create("hs_ones", s, false, |n, p| unsafe {
                hs_ones(d.get(), n, p)
            }),
            Call::Full(d, s, v) => self.create("hs_full", s, false, |n, p| unsafe {
                hs_full(d.get(), n, p, *v)
            }),
            Call::FromBuffer(d, s, fill, null_data) => {
                let dt = d.get();
                let ext = s.extents();
                let n = count(&ext).unwrap_or(usize::MAX);
                let nbytes = n.saturating_mul(dtype_size(dt).max(1));
                if nbytes > MAX_ELEMS * 16 {
                    // Too large to back with a buffer: only the NULL data case is safe.
                    if !*null_data {
                        return;
                    }
                }
                let fill = if dt == HS_BOOL { fill & 1 } else { *fill };
                let data = vec![fill; if *null_data { 0 } else { nbytes }];
                let dp = if *null_data { null() } else { data.as_ptr() };
                self.create("hs_from_buffer", s, true, |n, p| unsafe {
                    hs_from_buffer(dt, n, p, dp.cast())
                });
            }
            Call::Range(d, start, step, n) => {
                let n = usize::from(*n) % (MAX_ELEMS + 1);
                reset_error();
                let a = hs_range(d.get(), *start, *step, n);
                self.took("hs_range", a);
            }
            Call::RangeHuge(d, k) => {
                let n = HUGE[*k as usize % 3];
                reset_error();
                let a = hs_range(d.get(), 0.0, 1.0, n);
                assert!(a.is_null(), "hs_range accepted {n} elements");
                check_failure("hs_range", hs_last_status());
            }
            Call::Random(seed, stream, s) => self.create("hs_random", s, false, |n, p| unsafe {
                hs_random(*seed, *stream, n, p)
            }),
            Call::Slice(h, ax, start, stop, step) => {
                let a = self.handle(*h);
                reset_error();
                let v = hs_slice(a, ax.get(), start.get(), stop.get(), step.get());
                self.took("hs_slice", v);
            }
            Call::Index(h, ax, i) => {
                let a = self.handle(*h);
                reset_error();
                let v = hs_index(a, ax.get(), i.get());
                self.took("hs_index", v);
            }
            Call::Transpose(h, perm) => {
                let a = self.handle(*h);
                let nd = if self.live.contains(&a) {
                    hs_ndim(a)
                } else {
                    0
                };
                // The contract: `perm` holds ndim values. Pad or cut what was decoded.
                let perm: Option<Vec<i64>> = perm.as_ref().map(|p| {
                    (0..nd)
                        .map(|k| p.get(k).map_or(k as i64, |&x| i64::from(x)))
                        .collect()
                });
                reset_error();
                // SAFETY: perm is NULL or holds ndim values.
                let v = unsafe { hs_transpose(a, perm.as_ref().map_or(null(), |p| p.as_ptr())) };
                self.took("hs_transpose", v);
            }
            Call::Reshape(h, shape, null_ptr) => {
                let a = self.handle(*h);
                if self.elems(a) > MAX_WORK {
                    return;
                }
                let req: Vec<i64> = shape.iter().take(20).map(|i| i.get()).collect();
                let p = if *null_ptr { null() } else { req.as_ptr() };
                reset_error();
                // SAFETY: p holds req.len() values or is the NULL under test.
                let v = unsafe { hs_reshape(a, req.len(), p) };
                self.took("hs_reshape", v);
            }
            Call::BroadcastTo(h, s) => {
                let a = self.handle(*h);
                let ext = s.extents();
                let p = if s.null_ptr { null() } else { ext.as_ptr() };
                reset_error();
                // SAFETY: p holds ext.len() extents or is the NULL under test.
                let v = unsafe { hs_broadcast_to(a, ext.len(), p) };
                self.took("hs_broadcast_to", v);
            }
            Call::Astype(h, d) => {
                let a = self.handle(*h);
                if self.elems(a) > MAX_WORK {
                    return;
                }
                reset_error();
                let v = hs_astype(a, d.get());
                self.took("hs_astype", v);
            }
            Call::Copy(h) => {
                let a = self.handle(*h);
                if self.elems(a) > MAX_WORK {
                    return;
                }
                reset_error();
                let v = hs_copy(a);
                self.took("hs_copy", v);
            }
            Call::Op(op, out, ins, ax, null_ins) => {
                let op = op.get();
                let out = self.handle(*out);
                let ins: Vec<hs_operand> = ins.iter().take(5).map(|&o| self.operand(o)).collect();
                if self.too_much_work(&ins, Some(out)) || self.matmul_heavy(op, &ins) {
                    return;
                }
                let p = if *null_ins { null() } else { ins.as_ptr() };
                reset_error();
                // SAFETY: p holds ins.len() operands or is the NULL under test.
                let st = unsafe { hs_op(op, out, p, ins.len(), ax.get()) };
                check_status("hs_op", st);
            }
            Call::OpNew(op, ins, ax, null_ins) => {
                let op = op.get();
                let ins: Vec<hs_operand> = ins.iter().take(5).map(|&o| self.operand(o)).collect();
                if self.too_much_work(&ins, None) || self.matmul_heavy(op, &ins) {
                    return;
                }
                let p = if *null_ins { null() } else { ins.as_ptr() };
                reset_error();
                // SAFETY: p holds ins.len() operands or is the NULL under test.
                let v = unsafe { hs_op_new(op, p, ins.len(), ax.get()) };
                self.took("hs_op_new", v);
            }
            Call::Assign(dst, src) => {
                let dst = self.handle(*dst);
                let src = self.operand(*src);
                if self.too_much_work(&[src], Some(dst)) {
                    return;
                }
                reset_error();
                let st = hs_assign(dst, src);
                check_status("hs_assign", st);
            }
            Call::Binary(w, x, y) => {
                let (x, y) = (self.operand(*x), self.operand(*y));
                if self.too_much_work(&[x, y], None) {
                    return;
                }
                type Bin = extern "C" fn(hs_operand, hs_operand) -> *mut hs_array;
                const BIN: [(&str, Bin); 15] = [
                    ("hs_add", hs_add),
                    ("hs_subtract", hs_subtract),
                    ("hs_multiply", hs_multiply),
                    ("hs_divide", hs_divide),
                    ("hs_floor_divide", hs_floor_divide),
                    ("hs_remainder", hs_remainder),
                    ("hs_power", hs_power),
                    ("hs_maximum", hs_maximum),
                    ("hs_minimum", hs_minimum),
                    ("hs_equal", hs_equal),
                    ("hs_not_equal", hs_not_equal),
                    ("hs_less", hs_less),
                    ("hs_less_equal", hs_less_equal),
                    ("hs_greater", hs_greater),
                    ("hs_greater_equal", hs_greater_equal),
                ];
                let (name, f) = BIN[w.0 as usize % BIN.len()];
                reset_error();
                let v = f(x, y);
                self.took(name, v);
            }
            Call::Unary(w, h) => {
                let a = self.handle(*h);
                if self.elems(a) > MAX_WORK {
                    return;
                }
                type Un = extern "C" fn(*const hs_array) -> *mut hs_array;
                const UN: [(&str, Un); 13] = [
                    ("hs_negative", hs_negative),
                    ("hs_abs", hs_abs),
                    ("hs_sqrt", hs_sqrt),
                    ("hs_square", hs_square),
                    ("hs_exp", hs_exp),
                    ("hs_log", hs_log),
                    ("hs_sin", hs_sin),
                    ("hs_cos", hs_cos),
                    ("hs_tanh", hs_tanh),
                    ("hs_floor", hs_floor),
                    ("hs_ceil", hs_ceil),
                    ("hs_copy", hs_copy),
                    ("hs_negative", hs_negative),
                ];
                let (name, f) = UN[w.0 as usize % UN.len()];
                reset_error();
                let v = f(a);
                self.took(name, v);
            }
            Call::Where(c, x, y) => {
                let ops = [self.operand(*c), self.operand(*x), self.operand(*y)];
                if self.too_much_work(&ops, None) {
                    return;
                }
                reset_error();
                let v = hs_where(ops[0], ops[1], ops[2]);
                self.took("hs_where", v);
            }
            Call::Matmul(x, y) => {
                let (x, y) = (self.handle(*x), self.handle(*y));
                if self.matmul_heavy(HS_OP_EXTENSION, &[hs_arr(x), hs_arr(y)]) {
                    return;
                }
                reset_error();
                let v = hs_matmul(x, y);
                self.took("hs_matmul", v);
            }
            Call::Reduce(w, h, ax) => {
                let a = self.handle(*h);
                if self.elems(a) > MAX_WORK {
                    return;
                }
                type Red = extern "C" fn(*const hs_array, i64) -> *mut hs_array;
                const RED: [(&str, Red); 8] = [
                    ("hs_sum", hs_sum),
                    ("hs_prod", hs_prod),
                    ("hs_min", hs_min),
                    ("hs_max", hs_max),
                    ("hs_argmin", hs_argmin),
                    ("hs_argmax", hs_argmax),
                    ("hs_cumsum", hs_cumsum),
                    ("hs_cumprod", hs_cumprod),
                ];
                let (name, f) = RED[w.0 as usize % RED.len()];
                reset_error();
                let v = f(a, ax.get());
                self.took(name, v);
            }
            Call::Sync(h) => {
                let a = self.handle(*h);
                reset_error();
                let st = hs_sync(a);
                check_status("hs_sync", st);
            }
            Call::Data(h, write) => {
                let a = self.handle(*h);
                self.data(a, *write);
            }
            Call::CopyTo(h, delta, null_buf) => {
                let a = self.handle(*h);
                self.copy_to(a, *delta, *null_buf);
            }
            Call::Item(h, null_value) => {
                let a = self.handle(*h);
                let mut x = 0.0f64;
                let p = if *null_value {
                    null_mut()
                } else {
                    &mut x as *mut f64
                };
                reset_error();
                // SAFETY: p is a writable double or the NULL under test.
                let st = unsafe { hs_item(a, p) };
                if check_status("hs_item", st) {
                    assert!(!null_value, "hs_item wrote through NULL");
                    assert_eq!(hs_size(a), 1, "hs_item of an array of several elements");
                }
            }
            Call::Meta(h) => {
                let a = self.handle(*h);
                let m = meta(a);
                if self.live.contains(&a) {
                    assert!(
                        m.is_some(),
                        "a live handle has no metadata: {}",
                        last_error()
                    );
                }
            }
            Call::Flush => {
                reset_error();
                let st = hs_flush();
                check_status("hs_flush", st);
            }
            Call::Free(h) => {
                let a = self.handle(*h);
                self.free(a);
            }
        }
    }

    /// True for a matmul (as an extension call) whose product would cost more than
    /// [`MAX_WORK`] multiply-adds times 16.
    fn matmul_heavy(&self, op: hs_opcode, ins: &[hs_operand]) -> bool {
        if op != HS_OP_EXTENSION || ins.len() < 2 {
            return false;
        }
        let s: Vec<Option<Vec<usize>>> = ins[..2]
            .iter()
            .map(|o| {
                (o.kind == HS_OPERAND_ARRAY)
                    .then(|| self.shape_of(o.array))
                    .flatten()
            })
            .collect();
        match (&s[0], &s[1]) {
            (Some(a), Some(b)) if a.len() == 2 && b.len() == 2 => {
                a[0].saturating_mul(a[1]).saturating_mul(b[1]) > MAX_WORK * 16
            }
            _ => false,
        }
    }

    /// Frees everything the sequence left, then checks that no handle is left behind and
    /// that the runtime still works.
    pub(crate) fn finish(mut self) {
        while let Some(&a) = self.live.last() {
            self.free(a);
        }
        reset_error();
        let st = hs_flush();
        check_status("hs_flush", st);
        assert_eq!(live_handles(), 0, "handles leaked by the C API");
    }
}
