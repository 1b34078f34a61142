//! No memory read in generated C is conditional, unless its address is (a gather's or a
//! scatter's checked index). A read written inside `c ? x : y` or an `if` in a loop body
//! is one the compiler may if-convert into a masked load, and GCC 12.2 miscompiled such a
//! load with 512-bit vectors (campaign seed 636543). Every elementwise opcode in every
//! dtype it takes, every reduction and scan, gathers and scatters are rendered for the cpu
//! engine's dialect and the rule is checked on the text.

use hassium_codegen::{lower, render, Specialize, C99};
use hassium_core::{Batch, DType, Instr, Kernel, Opcode, Operand, View};

mod common;
use common::base;

/// Prefixes of the arrays generated C reads elements of: buffers, reduction buffers and
/// accumulators, a lagged kernel's ring rows.
const ARRAYS: [&str; 6] = ["b", "t", "acc", "lv", "lh", "src"];

/// The memory reads in `s`, as (byte position, text): `b3[i0 * 2 + i1]`, `acc1[l]`, and
/// the partials a `_fin` reads through `part`.
fn reads(s: &str) -> Vec<(usize, String)> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if (i == 0 || !word(bytes[i - 1])) && bytes[i].is_ascii_alphabetic() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            let prefix = &s[start..i];
            let digits = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let named = ARRAYS.contains(&prefix) && i > digits;
            if named && i < bytes.len() && bytes[i] == b'[' {
                let end = closing(s, i, b'[', b']');
                out.push((start, s[start..=end].to_string()));
                i = start + 1;
            } else if prefix == "part" && s[i..].starts_with(" +") && start > 0 {
                let open = start - 1;
                let end = closing(s, open, b'(', b')');
                out.push((open, s[open..=end].to_string()));
            }
            continue;
        }
        i += 1;
    }
    out
}

/// The index of the bracket closing the one at `open`.
fn closing(s: &str, open: usize, l: u8, r: u8) -> usize {
    let mut depth = 0;
    for (k, &c) in s.as_bytes().iter().enumerate().skip(open) {
        if c == l {
            depth += 1;
        } else if c == r {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    panic!("unbalanced {} in {s}", l as char)
}

/// Whether `line` assigns to `read` (the read is its target, not a read at all).
fn is_target(line: &str, read: &str) -> bool {
    let t = line.trim_start();
    t.strip_prefix(read)
        .is_some_and(|rest| rest.starts_with(" = ") || rest.starts_with(" += "))
}

/// Every conditional read in `text`: a read after a `?` that its condition does not make
/// anyway, or a read (other than a store's target) in an `if`'s statement or in an `if`
/// block that holds no loop (a block with a loop is loop control: `if (begin < end)`).
fn conditional_reads(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut bad = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        for (q, _) in line.match_indices(" ? ") {
            for (at, r) in reads(line) {
                if at > q && !line[..q].contains(&r) {
                    bad.push(format!("{r} read in an arm of `?`: {}", line.trim()));
                }
            }
        }
        let t = line.trim_start();
        let Some(cond_at) = ["if (", "else if ("]
            .iter()
            .find_map(|p| t.starts_with(p).then(|| t.find('(').unwrap()))
        else {
            continue;
        };
        let cond_end = closing(t, cond_at, b'(', b')');
        let stmt = t[cond_end + 1..].trim();
        if stmt == "{" {
            let mut depth = 1;
            let mut body = Vec::new();
            for l in &lines[n + 1..] {
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                if depth <= 0 {
                    break;
                }
                body.push(*l);
            }
            if body.iter().any(|l| l.contains("for (")) {
                continue;
            }
            for l in body {
                for (_, r) in reads(l) {
                    if !is_target(l, &r) {
                        bad.push(format!("{r} read in `{}`'s block: {}", t, l.trim()));
                    }
                }
            }
        } else {
            for (_, r) in reads(stmt) {
                if !is_target(stmt, &r) {
                    bad.push(format!("{r} read in `{}`", t));
                }
            }
        }
    }
    bad
}

/// The C of one kernel holding all of `b`'s instructions, in both specialisations; `None`
/// where the dialect does not render it (the kernel runs interpreted).
fn rendered(b: &Batch) -> Option<Vec<String>> {
    let k: Kernel =
        hassium_fuser::finish_kernel(b, (0..b.instrs.len()).collect::<Vec<_>>(), |_| false);
    let mut out = Vec::new();
    for spec in [Specialize::Fixed, Specialize::Dynamic] {
        let Ok(l) = lower(b, &k, spec) else {
            return None;
        };
        out.push(render(&C99, &l, "hs_k").ok()?);
    }
    Some(out)
}

/// Checks every kernel of `corpus`; returns how many rendered.
fn check_all(corpus: impl IntoIterator<Item = (String, Batch)>) -> usize {
    let mut count = 0;
    let mut bad = Vec::new();
    for (what, b) in corpus {
        for text in rendered(&b).into_iter().flatten() {
            count += 1;
            for e in conditional_reads(&text) {
                bad.push(format!("{what}: {e}"));
            }
        }
    }
    assert!(bad.is_empty(), "conditional reads:\n{}", bad.join("\n"));
    count
}

/// `out = op(inputs)` over `shape`, plus (when `reduce_rows`) a row sum of another
/// array of the same shape fused beside it: the pattern of seed 636543, a short row
/// reduction whose nest vectorises across rows.
fn elementwise(op: Opcode, t: DType, shape: &[usize], reduce_rows: bool) -> Option<Batch> {
    let ot = op.out_dtype(t)?;
    let n: usize = shape.iter().product();
    let mut b = Batch::default();
    let mut ins = Vec::new();
    for k in 0..op.nin() {
        let dt = if op == Opcode::Where && k == 0 {
            DType::Bool
        } else {
            t
        };
        let id = base(&mut b, 10 + k as u64, dt, n);
        ins.push(Operand::View(View::contiguous(id, dt, shape)));
    }
    let o = base(&mut b, 1, ot, n);
    b.instrs
        .push(Instr::new(op, View::contiguous(o, ot, shape), ins));
    if reduce_rows {
        let (x, s) = (base(&mut b, 2, t, n), base(&mut b, 3, t, shape[0]));
        let sum = Opcode::AddReduce;
        let st = sum.out_dtype(t)?;
        b.instrs.push(
            Instr::new(
                sum,
                View::contiguous(s, st, &shape[..1]),
                [View::contiguous(x, t, shape).into()],
            )
            .with_axis(1),
        );
    }
    Some(b)
}

#[test]
fn the_checker_finds_reads_in_conditionals() {
    let select = "    const double r0 = (b0[i0] ? b1[i0 * 2] : b2[i0]);";
    assert_eq!(conditional_reads(select).len(), 2);
    let scatter =
        "    if (b3[i0]) {\n      int64_t j0 = ix0;\n      b2[j0] = (double)b1[i0];\n    }";
    assert_eq!(conditional_reads(scatter).len(), 1, "{scatter}");
    let max = "    acc1[l] = (acc1[l] >= t1[k] ? acc1[l] : t1[k]);";
    assert!(conditional_reads(max).is_empty());
    let part = "    acc0 = (x ? acc0 : *(const double *)(part + (c * 1 + 0) * 16));";
    assert_eq!(conditional_reads(part).len(), 1);
    let control = "  if (begin < end) {\n    for (int64_t i0 = begin; i0 < end; i0++) {\n      b0[i0] = b1[i0];\n    }\n  }";
    assert!(conditional_reads(control).is_empty());
}

#[test]
fn no_elementwise_opcode_reads_memory_conditionally() {
    let mut corpus = Vec::new();
    for &op in Opcode::ALL {
        if !op.is_elementwise() {
            continue;
        }
        for t in op.info().types.iter() {
            for (shape, reduce_rows) in [(&[1000][..], false), (&[64, 2][..], true)] {
                if let Some(b) = elementwise(op, t, shape, reduce_rows) {
                    corpus.push((format!("{} {} {shape:?}", op.name(), t.name()), b));
                }
            }
        }
    }
    let n = check_all(corpus);
    // Each of the ~100 elementwise opcodes renders in at least one dtype, both ways.
    assert!(n > 1000, "only {n} kernels rendered");
}

#[test]
fn no_reduction_or_scan_reads_memory_conditionally() {
    let mut corpus = Vec::new();
    for &op in Opcode::ALL {
        if !(op.is_reduction() || op.is_scan()) {
            continue;
        }
        for t in op.info().types.iter() {
            let Some(ot) = op.out_dtype(t) else { continue };
            for (shape, axis) in [(&[20000][..], 0), (&[100, 64][..], 1), (&[64, 2][..], 1)] {
                let mut b = Batch::default();
                let n: usize = shape.iter().product();
                let x = base(&mut b, 1, t, n);
                let out_shape = if op.is_scan() {
                    shape.to_vec()
                } else {
                    shape[..axis].to_vec()
                };
                let o = base(&mut b, 2, ot, out_shape.iter().product());
                b.instrs.push(
                    Instr::new(
                        op,
                        View::contiguous(o, ot, &out_shape),
                        [View::contiguous(x, t, shape).into()],
                    )
                    .with_axis(axis),
                );
                corpus.push((format!("{} {} {shape:?}", op.name(), t.name()), b));
            }
        }
    }
    let n = check_all(corpus);
    assert!(n > 100, "only {n} kernels rendered");
}

#[test]
fn no_gather_or_scatter_reads_memory_conditionally() {
    let mut corpus = Vec::new();
    for t in [DType::Float64, DType::Int32, DType::Bool, DType::Float16] {
        for op in [
            Opcode::Gather,
            Opcode::Scatter,
            Opcode::CondScatter,
            Opcode::ScatterAdd,
        ] {
            let mut b = Batch::default();
            let (src, idx, val, m) = (
                base(&mut b, 1, t, 50),
                base(&mut b, 2, DType::Int64, 1000),
                base(&mut b, 3, t, 1000),
                base(&mut b, 4, DType::Bool, 1000),
            );
            let v = |id, dt| View::contiguous(id, dt, &[1000]);
            let target = View::contiguous(src, t, &[50]);
            let instr = match op {
                Opcode::Gather => {
                    Instr::new(op, v(val, t), [target.into(), v(idx, DType::Int64).into()])
                }
                Opcode::CondScatter => Instr::new(
                    op,
                    target,
                    [
                        v(idx, DType::Int64).into(),
                        v(val, t).into(),
                        v(m, DType::Bool).into(),
                    ],
                ),
                _ => Instr::new(op, target, [v(idx, DType::Int64).into(), v(val, t).into()]),
            };
            b.instrs.push(instr);
            corpus.push((format!("{} {}", op.name(), t.name()), b));
        }
    }
    let n = check_all(corpus);
    assert!(n >= 24, "only {n} kernels rendered");
}
