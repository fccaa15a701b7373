//! One figure of a paper's table beside ours, and where ours came from.

use serde::{Deserialize, Serialize};

/// A paper's figure and ours for one quantity of one row of one table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PaperRow {
    /// `zeng2022`, `zeng2025`, `zeng-implicit` or `dahl2019`.
    pub paper: String,
    /// The table, as the paper numbers it (`Table 3`).
    pub table: String,
    /// The paper's row (example and size or method).
    pub row: String,
    /// What is compared, with its unit (`Build W (ms)`).
    pub quantity: String,
    /// The paper's figure.
    pub paper_value: Option<f64>,
    /// Ours (`None`: not run; `note` says why).
    pub ours: Option<f64>,
    /// Ours over the paper's.
    pub ratio: Option<f64>,
    /// The paper's problem: vertices or DOFs, constraints or contacts.
    pub paper_size: String,
    /// Ours, in the same terms.
    pub our_size: String,
    /// The paper's hardware for this figure.
    pub paper_hardware: String,
    /// What differs from the paper's setup, or why there is no figure of ours.
    pub note: Option<String>,
    /// Build, machine and date of our figure.
    pub provenance: Option<Provenance>,
}

/// The build and machine a figure came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// Commit of the build (`git describe`), `+dirty` when the tree had changes.
    pub build: String,
    /// CPU model and logical CPUs.
    pub machine: String,
    /// Worker threads.
    pub threads: usize,
    /// When the paper's rows were finished (RFC 3339, UTC).
    pub date: String,
    /// Load average (1 min) then.
    pub load: Option<f64>,
    /// Whether it was a `--quick` run.
    pub quick: bool,
}

impl Provenance {
    /// This process's build and machine, now.
    pub fn now(quick: bool) -> Provenance {
        let c = crate::sysinfo::Context::now();
        Provenance {
            build: crate::sysinfo::BUILD.to_string(),
            machine: format!("{} ({} logical CPUs)", crate::sysinfo::cpu_model(), c.cpus),
            threads: c.threads,
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            load: c.load_average.map(|l| l[0]),
            quick,
        }
    }
}

/// A table of a paper: makes its rows.
pub(crate) struct Table {
    pub paper: &'static str,
    pub table: &'static str,
    pub hardware: &'static str,
}

impl Table {
    /// A row with the paper's figure and size; ours is set by [`PaperRow::ours`].
    pub fn row(
        &self,
        row: impl Into<String>,
        quantity: &str,
        paper: Option<f64>,
        size: impl Into<String>,
    ) -> PaperRow {
        PaperRow {
            paper: self.paper.into(),
            table: self.table.into(),
            row: row.into(),
            quantity: quantity.into(),
            paper_value: paper,
            ours: None,
            ratio: None,
            paper_size: size.into(),
            our_size: String::new(),
            paper_hardware: self.hardware.into(),
            note: None,
            provenance: None,
        }
    }
}

impl PaperRow {
    /// Sets our figure and size (and the ratio, where both figures exist).
    pub fn ours(mut self, value: f64, size: impl Into<String>) -> Self {
        self.ours = Some(value).filter(|v| v.is_finite());
        self.ratio = self.ours.zip(self.paper_value).filter(|(_, p)| *p != 0.0).map(|(o, p)| o / p);
        self.our_size = size.into();
        self
    }

    /// Adds a note (a difference from the paper, or why ours is missing).
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// `12345` → `12,345`.
pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_is_ours_over_the_papers_and_absent_without_both() {
        let t = Table { paper: "p", table: "Table 1", hardware: "h" };
        let r = t.row("a", "W (ms)", Some(4.0), "10 DOFs").ours(2.0, "12 DOFs");
        assert_eq!(r.ratio, Some(0.5));
        assert_eq!(t.row("a", "W", None, "").ours(2.0, "").ratio, None);
        assert_eq!(t.row("a", "W", Some(1.0), "").ours(f64::NAN, "").ours, None);
        assert_eq!(thousands(59529), "59,529");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
