//! The Lamé pair every elastic model takes.

/// Lamé parameters (Pa). Membranes use the same pair as a 2D continuum
/// (as zeng2025 and most graphics codes do), not the plane-stress
/// reduction `λ̄ = 2λμ/(λ + 2μ)`, so that `λ` governs area preservation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Lame {
    /// First Lamé parameter λ.
    pub lambda: f64,
    /// Shear modulus μ.
    pub mu: f64,
}
