//! Isotropic linear-elastic materials (SI units).

use serde::{Deserialize, Serialize};

/// Young's modulus (Pa), Poisson ratio and density (kg/m³).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// Young's modulus E in pascals.
    pub young: f64,
    /// Poisson ratio ν, in (−1, 0.5).
    pub poisson: f64,
    /// Density ρ in kg/m³.
    pub density: f64,
}

impl Material {
    /// Lamé parameters `(λ, μ)`: `μ = E / (2(1+ν))`, `λ = Eν / ((1+ν)(1−2ν))`.
    pub fn lame(&self) -> (f64, f64) {
        let (e, nu) = (self.young, self.poisson);
        (e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), e / (2.0 * (1.0 + nu)))
    }

    /// Checks ranges; the error names the offending field.
    pub fn check(&self) -> Result<(), String> {
        if !(self.young.is_finite() && self.young > 0.0) {
            return Err(format!("young = {}: must be finite and positive (Pa)", self.young));
        }
        if !(self.poisson.is_finite() && self.poisson > -1.0 && self.poisson < 0.5) {
            return Err(format!("poisson = {}: must lie in (-1, 0.5)", self.poisson));
        }
        if !(self.density.is_finite() && self.density > 0.0) {
            return Err(format!("density = {}: must be finite and positive (kg/m³)", self.density));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lame_parameters() {
        let m = Material { young: 2.5, poisson: 0.25, density: 1.0 };
        let (l, mu) = m.lame();
        assert!((mu - 1.0).abs() < 1e-15 && (l - 1.0).abs() < 1e-15);
        assert!(Material { poisson: 0.5, ..m }.check().unwrap_err().contains("poisson"));
    }
}
