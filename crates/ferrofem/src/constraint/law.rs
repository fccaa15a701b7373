//! The law of a constraint group (zeng2022 §3.3): Signorini–Coulomb
//! contact or a bilateral attachment, three rows each.

/// One group of consecutive constraint rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstraintGroup {
    /// Frictional contact: rows normal, t1, t2; Coulomb coefficient μ.
    Contact {
        /// Friction coefficient.
        mu: f64,
    },
    /// Bilateral point attachment: three equality rows (`δ = 0`, λ free).
    Attachment,
}

impl ConstraintGroup {
    /// Rows of the group.
    pub fn rows(&self) -> usize {
        3
    }
}
