//! The law of a constraint group (zeng2022 §3.3): Signorini–Coulomb
//! contact, a bilateral attachment, a point of tissue on a needle's
//! shaft (zeng2022 §6.2.5) or a cable (zeng2025 §7, Fig. 11), three rows
//! each.

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
    /// A cable through a body (SoftRobots' `CableConstraint`, zeng2025
    /// Fig. 11): row 0 holds its length to its target (bilateral: it pulls
    /// and pushes, λ its tension); rows 1 and 2 are empty and their λ stays
    /// 0, so that every group keeps the solvers' 3×3 blocks.
    Cable,
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
