//! Text and Graphviz renderings of batches and their kernels, for `HASSIUM_DUMP=dir`
//! (the fuser's tests compare kernels through them too). The files are written by the
//! `dump` filter (`batch-<n>.txt/.dot`) and, through `hassium_filters::write_kernels`, by
//! the runtime (`kernels-<n>.txt/.dot`) with the same `n` ([`dump_index`]).

use crate::{Batch, Instr, Kernel, Operand, View};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

static DUMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Claims the next dump number (the `dump` filter calls this once per batch).
pub fn next_dump_index() -> u64 {
    DUMP_COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// The number of the batch dumped last, so the runtime names its kernels to match.
pub fn dump_index() -> u64 {
    DUMP_COUNTER.load(Ordering::Relaxed).saturating_sub(1)
}

fn fmt_dims<T: std::fmt::Display>(d: &[T]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `b3:float64+5(4,6):(8,1)` — base, dtype, offset, shape, strides.
pub fn view_text(v: &View) -> String {
    format!(
        "b{}:{}+{}({}):({})",
        v.base.0,
        v.dtype.name(),
        v.offset,
        fmt_dims(&v.shape),
        fmt_dims(&v.strides)
    )
}

/// One instruction as a line: `multiply b3:… <- b1:…, 2.5f64 axis=1`.
pub fn instr_text(i: &Instr) -> String {
    let mut s = String::new();
    let name = i.method.as_deref().unwrap_or(i.op.name());
    let _ = write!(s, "{name} {}", view_text(&i.out));
    for (k, o) in i.ins.iter().enumerate() {
        s.push_str(if k == 0 { " <- " } else { ", " });
        match o {
            Operand::View(v) => s.push_str(&view_text(v)),
            Operand::Scalar(x) => {
                let _ = write!(s, "{x:?}");
            }
        }
    }
    if let Some(a) = i.axis {
        let _ = write!(s, " axis={a}");
    }
    s
}

/// The batch as text: its bases, instructions (numbered) and synced bases.
pub fn batch_text(batch: &Batch) -> String {
    let mut s = String::new();
    for b in batch.bases.values() {
        let _ = writeln!(s, "base b{}: {} x {}", b.id.0, b.dtype.name(), b.nelem);
    }
    for (k, i) in batch.instrs.iter().enumerate() {
        let _ = writeln!(s, "{k:5}: {}", instr_text(i));
    }
    let sync: Vec<String> = batch.sync.iter().map(|b| format!("b{}", b.0)).collect();
    let _ = writeln!(s, "sync: {}", sync.join(" "));
    s
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Data-flow edges: from the last instruction that wrote a base to each later reader.
fn flow_edges(batch: &Batch) -> Vec<(usize, usize, u64)> {
    let mut last: HashMap<u64, usize> = HashMap::new();
    let mut edges = Vec::new();
    for (k, i) in batch.instrs.iter().enumerate() {
        if i.op.is_system() {
            continue;
        }
        for v in i.input_views() {
            if let Some(&w) = last.get(&v.base.0) {
                edges.push((w, k, v.base.0));
            }
        }
        last.insert(i.out.base.0, k);
    }
    edges
}

/// The batch as a Graphviz digraph; with `kernels`, each kernel is a cluster.
fn dot(batch: &Batch, kernels: Option<&[Kernel]>) -> String {
    let mut s = String::from("digraph batch {\n  node [shape=box, fontname=monospace];\n");
    let node = |k: usize| {
        format!(
            "  i{k} [label=\"{k}: {}\"];\n",
            escape(&instr_text(&batch.instrs[k]))
        )
    };
    match kernels {
        Some(kernels) => {
            for (n, kern) in kernels.iter().enumerate() {
                let contracted: Vec<String> = kern
                    .contracted
                    .iter()
                    .map(|b| format!("b{}", b.0))
                    .collect();
                let _ = writeln!(
                    s,
                    "  subgraph cluster_{n} {{\n  label=\"kernel {n} shape ({}) contracted [{}]\";",
                    fmt_dims(&kern.shape),
                    contracted.join(" ")
                );
                for &k in &kern.instrs {
                    s.push_str(&node(k));
                }
                s.push_str("  }\n");
            }
        }
        None => {
            for (k, i) in batch.instrs.iter().enumerate() {
                if !i.op.is_system() {
                    s.push_str(&node(k));
                }
            }
        }
    }
    for (a, b, base) in flow_edges(batch) {
        let _ = writeln!(s, "  i{a} -> i{b} [label=\"b{base}\"];");
    }
    s.push_str("}\n");
    s
}

pub fn batch_dot(batch: &Batch) -> String {
    dot(batch, None)
}

/// The kernels as text: per kernel its shape, contracted/read/written bases, instructions.
pub fn kernels_text(batch: &Batch, kernels: &[Kernel]) -> String {
    let ids = |v: &[crate::BaseId]| {
        v.iter()
            .map(|b| format!("b{}", b.0))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = String::new();
    for (n, k) in kernels.iter().enumerate() {
        let _ = writeln!(
            s,
            "kernel {n}: shape ({}) contracted [{}] reads [{}] writes [{}]",
            fmt_dims(&k.shape),
            ids(&k.contracted),
            ids(&k.reads),
            ids(&k.writes)
        );
        for &i in &k.instrs {
            let _ = writeln!(s, "  {i:5}: {}", instr_text(&batch.instrs[i]));
        }
    }
    s
}

pub fn kernels_dot(batch: &Batch, kernels: &[Kernel]) -> String {
    dot(batch, Some(kernels))
}
