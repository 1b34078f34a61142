//! Which simd loops of each compiled kernel the compiler vectorised, read from GCC's own
//! report (`-fopt-info-vec-loop-all=<file>`): a kernel whose loop silently stayed
//! scalar runs several times slower than one that did not (issue 42), and nothing else
//! would say so.
//!
//! Codegen marks every loop it expects to vectorise with `#pragma omp simd` on the line
//! before it; GCC reports a vectorised loop at a line within it (its `for`, or the first
//! statement of its body), or at the line of an inlined helper that statement calls, and
//! counts each function's vectorised loops at the function's line. A kernel's simd loops
//! are the pragmas between its function's first line and the next function's (its `_fin`
//! is a function of its own and counted with it).

use std::collections::{HashMap, HashSet};

/// What GCC's report says, by line (1-based).
#[derive(Default)]
struct Report {
    /// Lines where a loop was vectorised.
    vectorised: HashSet<usize>,
    /// Lines where a loop was replaced by library calls (`memset`, `memcpy`), which run
    /// vectorised code: "Loop 2 distributed: split to 0 loops and 1 library calls".
    replaced: HashSet<usize>,
    /// Function line → loops vectorised in it ("vectorized 2 loops in function."),
    /// however their lines were reported.
    per_function: HashMap<usize, u32>,
}

fn parse(report: &str) -> Report {
    let mut r = Report::default();
    for l in report.lines() {
        let Some((place, what)) = l
            .split_once(": optimized: ")
            .or_else(|| l.split_once(": note: "))
        else {
            continue;
        };
        // `<file>:<line>:<column>`; the file name never holds a colon here.
        let mut parts = place.rsplit(':');
        let (Some(_column), Some(Ok(line))) = (parts.next(), parts.next().map(str::parse)) else {
            continue;
        };
        if what.starts_with("loop vectorized") {
            r.vectorised.insert(line);
        } else if what.starts_with("Loop ") && what.contains("split to 0 loops") {
            r.replaced.insert(line);
        } else if let Some(n) = what
            .strip_prefix("vectorized ")
            .and_then(|w| w.strip_suffix(" loops in function."))
            .and_then(|n| n.parse().ok())
        {
            r.per_function.insert(line, n);
        }
    }
    r
}

/// `(vectorised, total)` simd loops of the kernel whose entry point is `symbol` (and of
/// its `<symbol>_fin`) in the translation unit `source`, by `report`.
///
/// A loop whose first statement is an inlined prelude helper (`hs_i64_f64`, say) is
/// reported at the helper's line, outside every kernel: such loops are the difference
/// between a function's count of vectorised loops and the ones reported inside it, and
/// are credited to its simd loops that have no report of their own.
pub fn simd_loops(source: &str, report: &str, symbol: &str) -> (u32, u32) {
    let r = parse(report);
    let lines: Vec<&str> = source.lines().collect();
    let main = format!(" {symbol}(");
    let fin = format!(" {symbol}_fin(");
    let heads: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("HS_KERNEL "))
        .collect();
    let (mut vectorised, mut total) = (0, 0);
    for (h, &start) in heads.iter().enumerate() {
        if !(lines[start].contains(&main) || lines[start].contains(&fin)) {
            continue;
        }
        let end = heads.get(h + 1).copied().unwrap_or(lines.len());
        // Each simd loop as 1-based lines: from its `for` to the brace that closes it,
        // at the `for`'s indentation.
        let mut loops = Vec::new();
        for i in start..end {
            if lines[i].trim() != "#pragma omp simd" {
                continue;
            }
            let Some(head) = lines.get(i + 1) else {
                continue;
            };
            let close = format!("{}}}", " ".repeat(head.len() - head.trim_start().len()));
            let last = (i + 1..end).find(|&j| lines[j] == close).unwrap_or(end - 1);
            loops.push((i + 2, last + 1));
        }
        let inside = |line: usize| loops.iter().any(|&(a, b)| (a..=b).contains(&line));
        let reported = loops
            .iter()
            .filter(|&&(a, b)| {
                (a..=b).any(|l| r.vectorised.contains(&l) || r.replaced.contains(&l))
            })
            .count() as u32;
        let others = (r.vectorised.iter())
            .filter(|&&l| l > start + 1 && l <= end && !inside(l))
            .count() as u32;
        let counted = r.per_function.get(&(start + 1)).copied();
        let elsewhere = counted.map_or(0, |n| n.saturating_sub(reported + others));
        let simd = loops.len() as u32;
        total += simd;
        vectorised += simd.min(reported + elsewhere);
    }
    (vectorised, total)
}

#[cfg(test)]
mod tests {
    use super::simd_loops;

    const SOURCE: &str = "\
HS_KERNEL int32_t hs_a(int64_t begin) {
  #pragma omp simd
  for (int64_t i = 0; i < 8; i++) {
  }
  #pragma omp simd
  for (int64_t i = 0; i < 8; i++) {
  }
}
HS_KERNEL int32_t hs_a_fin(int64_t begin) {
  #pragma omp simd
  for (int64_t i = 0; i < 8; i++) {
    x;
  }
  for (int64_t i = 0; i < 8; i++) {
  }
}
HS_KERNEL int32_t hs_b(int64_t begin) {
  #pragma omp simd
  for (int64_t i = 0; i < 8; i++) {
  }
  for (int64_t i = 0; i < 8; i++) {
  }
}
";

    #[test]
    fn loops_count_per_kernel_with_its_fin_by_the_reported_lines() {
        // hs_a's first loop (line 3) vectorised and its fin's (line 12, the body) became
        // a library call, its second not; hs_b's simd loop not, though the plain loop
        // after it did (line 21).
        let report = "\
/tmp/x/k.c:3:23: optimized: loop vectorized using 64 byte vectors
/tmp/x/k.c:3:23: optimized: loop vectorized using 32 byte vectors
/tmp/x/k.c:12:5: optimized: Loop 3 distributed: split to 0 loops and 1 library calls.
/tmp/x/k.c:16:5: optimized: basic block part vectorized using 32 byte vectors
/tmp/x/k.c:21:5: optimized: loop vectorized using 64 byte vectors
";
        assert_eq!(simd_loops(SOURCE, report, "hs_a"), (2, 3));
        assert_eq!(simd_loops(SOURCE, report, "hs_b"), (0, 1));
        assert_eq!(simd_loops(SOURCE, "", "hs_c"), (0, 0));
        // hs_b's loop reported at a helper's line outside every kernel: its function's
        // count (2 vectorised, one of them the plain loop reported at line 21) says so.
        let helper = format!(
            "{report}/tmp/x/k.c:1:40: optimized: loop vectorized using 64 byte vectors\n\
             /tmp/x/k.c:17:19: note: vectorized 2 loops in function.\n"
        );
        assert_eq!(simd_loops(SOURCE, &helper, "hs_b"), (1, 1));
        // With the count at 1, the plain loop was the one.
        let one = helper.replace("vectorized 2 loops", "vectorized 1 loops");
        assert_eq!(simd_loops(SOURCE, &one, "hs_b"), (0, 1));
    }
}
