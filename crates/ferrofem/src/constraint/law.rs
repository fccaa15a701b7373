//! The law of a constraint group (zeng2022 §3.3): Signorini–Coulomb
//! contact, a bilateral attachment, or a point of tissue on a needle's
//! shaft (zeng2022 §6.2.5), three rows each.

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
    /// A point of tissue on a needle's shaft: rows along the shaft, then
    /// two across it. Across, bilateral (the point stays on the shaft's
    /// line); along, friction of a fixed bound: `|λ₀| ≤ bound`, `δ₀ = 0`
    /// inside it (the tissue holds to the shaft), `δ₀` against `λ₀` on it
    /// (the shaft slides through).
    Shaft {
        /// The largest friction force along the shaft (N).
        bound: f64,
    },
}

impl ConstraintGroup {
    /// Rows of the group.
    pub fn rows(&self) -> usize {
        3
    }

    /// Whether every row holds an equality until a bound is reached
    /// (attachment, shaft): no unilateral row.
    pub fn is_bilateral(&self) -> bool {
        !matches!(self, ConstraintGroup::Contact { .. })
    }
}
