//! The cables' constraint groups (zeng2025 §7, Fig. 11): one
//! [`ConstraintGroup::Cable`] group per cable, its row `−∂ℓ/∂x` at the
//! start of the step aiming at the length's target at its end; and each
//! cable's tension read back from the step's forces.

use super::key::Partner;
use super::{ConstraintGroup, Group};
use crate::{Model, State};

/// The cables' groups at the start of a step `t → t + h` (the state's
/// time): `δ = L(t + h) − ℓ(x_t) + H Δx`, the pull point taken where it
/// is at `t + h`.
pub fn cable_groups(model: &Model, state: &State, groups: &mut Vec<Group>) {
    let t = state.time + model.time_step;
    for (c, cable) in model.cables.iter().enumerate() {
        let b = cable.body;
        let (row, length) = cable.row(&state.bodies[b].positions, t);
        groups.push(Group::cable(b, row, cable.target(t) - length, (b, usize::MAX, Partner::Cable(c))));
    }
}

/// Cable `c`'s tension over the step whose groups and forces (N per row)
/// are given (N; zero without its group).
pub fn cable_tension(c: usize, groups: &[Group], lambda: &[f64]) -> f64 {
    let k = groups.iter().position(|g| g.law == ConstraintGroup::Cable && g.key.2 == Partner::Cable(c));
    k.and_then(|k| lambda.get(3 * k)).copied().unwrap_or(0.0)
}
