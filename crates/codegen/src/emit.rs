//! A small indented-code writer with fresh temporary names.

use crate::literals::Literals;
use gpusql_common::{Error, Result};

#[derive(Default)]
pub struct Emitter {
    pub code: String,
    pub indent: usize,
    pub next_tmp: usize,
    /// The query constants the code reads as kernel parameters (`literals.rs`): only the
    /// row loop's body, where expressions are generated, has them (None elsewhere, so an
    /// expression generated anywhere else is an error rather than a parameter that the
    /// kernel never declares).
    pub literals: Option<Literals>,
    /// Some expression makes strings: the kernel needs its string arena (`strings.rs`).
    pub uses_arena: bool,
}

impl Emitter {
    pub fn line(&mut self, s: impl AsRef<str>) {
        for l in s.as_ref().lines() {
            self.code.push_str(&"    ".repeat(self.indent));
            self.code.push_str(l);
            self.code.push('\n');
        }
    }
    pub fn open(&mut self, s: impl AsRef<str>) {
        self.line(format!("{} {{", s.as_ref()));
        self.indent += 1;
    }
    pub fn close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }
    pub fn close_with(&mut self, s: impl AsRef<str>) {
        self.indent -= 1;
        self.line(format!("}} {} {{", s.as_ref()));
        self.indent += 1;
    }
    /// An empty emitter `deeper` levels inside this one's indentation: code generated
    /// apart (while this one is borrowed) and appended later. It takes no expressions
    /// (no constants: see `literals`).
    pub fn fork(&self, deeper: usize) -> Emitter {
        Emitter { indent: self.indent + deeper, ..Default::default() }
    }
    /// The constants registry of the row loop's body (an error elsewhere).
    pub fn literals(&mut self) -> Result<&mut Literals> {
        self.literals
            .as_mut()
            .ok_or_else(|| Error::plan("an expression with constants was generated outside the kernel's row loop"))
    }
    pub fn append(&mut self, other: Emitter) {
        self.code.push_str(&other.code);
    }
    /// A fresh temporary name; the `_` keeps it apart from column variables (c0, p0_1).
    pub fn tmp(&mut self, prefix: &str) -> String {
        self.next_tmp += 1;
        format!("{prefix}_{}", self.next_tmp)
    }
}
