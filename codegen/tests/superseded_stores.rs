//! A kernel that writes one array several times per element (an update loop fused
//! whole: `x = where(m, f(x), x)` once per iteration) stores it once, after its last
//! write: GCC does not vectorise a loop that stores one address several times per
//! iteration (mandelbrot's forty fused iterations ran scalar). Reads between the writes
//! take the register.

use hassium_codegen::{lower, render, Specialize, C99};
use hassium_core::{Batch, DType, Instr, Kernel, Opcode, Scalar, View};

mod common;
use common::base;

/// `x += 1; x *= 2; y = x - 3; x = where(m, y, x)` over `n` float64 elements.
fn chain(n: usize) -> Batch {
    let mut b = Batch::default();
    let x = base(&mut b, 1, DType::Float64, n);
    let y = base(&mut b, 2, DType::Float64, n);
    let m = base(&mut b, 3, DType::Bool, n);
    let xv = View::contiguous(x, DType::Float64, &[n]);
    let yv = View::contiguous(y, DType::Float64, &[n]);
    let mv = View::contiguous(m, DType::Bool, &[n]);
    let f = |v: f64| Scalar::Float64(v).into();
    b.instrs.push(Instr::new(
        Opcode::Add,
        xv.clone(),
        [xv.clone().into(), f(1.0)],
    ));
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        xv.clone(),
        [xv.clone().into(), f(2.0)],
    ));
    b.instrs.push(Instr::new(
        Opcode::Subtract,
        yv.clone(),
        [xv.clone().into(), f(3.0)],
    ));
    b.instrs.push(Instr::new(
        Opcode::Where,
        xv.clone(),
        [mv.into(), yv.into(), xv.into()],
    ));
    b
}

fn texts(b: &Batch) -> Vec<String> {
    let k: Kernel =
        hassium_fuser::finish_kernel(b, (0..b.instrs.len()).collect::<Vec<_>>(), |_| false);
    [Specialize::Fixed, Specialize::Dynamic]
        .into_iter()
        .map(|spec| render(&C99, &lower(b, &k, spec).expect("lowers"), "hs_k").expect("renders"))
        .collect()
}

#[test]
fn an_array_written_several_times_is_stored_once_after_its_last_write() {
    for text in texts(&chain(1000)) {
        let stores = |buf: &str| {
            text.lines()
                .filter(|l| l.trim_start().starts_with(&format!("{buf}[")) && l.contains("] = "))
                .count()
        };
        // Bases by first appearance: x is b0, y b1.
        assert_eq!(stores("b0"), 1, "x stored more than once:\n{text}");
        assert_eq!(stores("b1"), 1, "y not stored once:\n{text}");
        let last = text.rfind("b0[").expect("x is read or stored");
        let store = text.find("b0[i0] = ").expect("x is stored");
        assert!(
            store >= text[..last].rfind("b0[").unwrap_or(0),
            "the store is not x's last access:\n{text}"
        );
        // The where's values come from registers, not from memory written earlier.
        let body = &text[text.find("for (").expect("a loop")..];
        assert_eq!(
            body.matches("b0[i0]").count(),
            2,
            "x read more than once (its first value) besides its store:\n{text}"
        );
    }
}
