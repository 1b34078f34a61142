//! The text a kernel is rendered into: lines at the current indentation, and the
//! C spelling of a lowered size or stride.

use crate::lower::Num;

pub(super) struct Out {
    pub(super) text: String,
    pub(super) depth: usize,
}

impl Out {
    pub(super) fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.text.push_str("  ");
        }
        self.text.push_str(s.as_ref());
        self.text.push('\n');
    }
    pub(super) fn open(&mut self, s: impl AsRef<str>) {
        self.line(format!("{} {{", s.as_ref()));
        self.depth += 1;
    }
    pub(super) fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }
}

pub(super) fn num(n: Num) -> String {
    match n {
        Num::Lit(v) => v.to_string(),
        Num::Meta(i) => format!("m{i}"),
    }
}
