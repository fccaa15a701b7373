//! The constraints' move to a new factor over a few steps
//! ([`crate::integrator::Refresh::handover`]): a factor that comes in from
//! the background preconditions PCG at once, while `W` and the correction
//! keep the previous one (warped, its isodof columns reused: zeng2022 §5)
//! and the new factor's isodof columns are solved a share per step. The
//! step a factor comes in then costs a share of the rebuild of `W̄`
//! instead of all of it (at 20k vertices ≈ 0.7 s, at 60k ≈ 5 s).

use std::sync::Arc;

use ferrofem_linalg::Ldlt;
use nalgebra::Matrix3;

use crate::body::Body;
use crate::constraint::Warp;
use crate::delassus::Successor;
use crate::element::PolarMethod;

/// The previous factor, kept for the constraints during a handover.
#[derive(Debug)]
pub struct Handover {
    /// The factor `W` and the correction use until `until`.
    pub factor: Arc<Ldlt>,
    /// Element rotations of the step whose `A` it holds (empty without warping).
    pub rotations: Vec<Matrix3<f64>>,
    /// The first step whose constraints use the new factor.
    pub until: usize,
}

impl Handover {
    /// What the Delassus build at `step` solves ahead for the new factor
    /// `next`: its columns, a share per step left.
    pub fn successor(&self, next: &Arc<Ldlt>, step: usize) -> Successor {
        Successor { factor: next.clone(), steps_left: self.until.saturating_sub(step).max(1) }
    }

    /// `G` from the kept factor's step to now, given the element rotations
    /// now (`None` without its rotations: the factor unwarped).
    pub fn warp(&self, body: &Body, now: &[Matrix3<f64>], polar: PolarMethod) -> Option<Warp> {
        (self.rotations.len() == now.len() && !now.is_empty())
            .then(|| Warp::since(body, now, &self.rotations, polar))
    }
}
