//! Per-step statistics and their JSON form (documented in `docs/stats.md`).

use serde::Serialize;

pub use crate::delassus::DelassusRecord;
pub use crate::stage::{Stage, StageTimes};
pub use crate::summary::{Quantiles, Summary, SummaryBuilder};

/// One body's figures for one step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct BodyStepStats {
    /// PCG iterations of the free-motion solve.
    pub cg_iterations: usize,
    /// Final relative residual `‖b − AΔv‖/‖b‖`.
    pub cg_rel_residual: f64,
    /// `½ vᵀ M v` after the step (J).
    pub kinetic_energy: f64,
    /// Co-rotated elastic energy at the start of the step (J).
    pub elastic_energy: f64,
    /// With the LDLᵀ preconditioner: steps since the `A` its factor was computed from.
    pub factor_age: Option<usize>,
    /// With the LDLᵀ preconditioner: factorizations completed so far.
    pub factorizations: usize,
    /// Contacts (groups of 3 constraint rows).
    pub contacts: usize,
    /// PGS sweeps.
    pub pgs_iterations: usize,
    /// Final relative change of λ in PGS.
    pub pgs_error: f64,
    /// Sum of normal contact forces λₙ (N).
    pub total_normal_force: f64,
    /// Deepest penetration of any free vertex (surface or interior) into an
    /// obstacle or, at the detected pairs, into another body at the end of
    /// the step (m, ≥ 0).
    pub max_penetration: f64,
    /// Where that deepest penetration is, if any.
    pub deepest: Option<crate::collision::Penetration>,
    /// Tets with a non-positive volume at the end of the step.
    pub inverted_elements: usize,
    /// How this body's part of `W` was obtained, if it had constraints.
    pub delassus: Option<DelassusRecord>,
    /// Local-global iterations this body took in the step (0 unless its
    /// residual is tracked).
    pub local_global_iterations: usize,
    /// This body's relative fixed-point residual after its last local-global
    /// iteration (`null` unless tracked, as [`StepStats::local_global_residual`]).
    pub local_global_residual: Option<f64>,
}

/// One step's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepStats {
    /// Step number, 1-based.
    pub step: usize,
    /// Simulated time at the end of the step (s).
    pub time: f64,
    /// Wall time of the whole step (ms).
    pub step_ms: f64,
    /// Wall time per stage (ms).
    pub stage_ms: StageTimes,
    /// PCG iterations summed over bodies.
    pub cg_iterations: usize,
    /// Largest final relative residual over bodies.
    pub cg_rel_residual: f64,
    /// Kinetic energy summed over bodies (J).
    pub kinetic_energy: f64,
    /// Elastic energy summed over bodies (J).
    pub elastic_energy: f64,
    /// Contacts over bodies.
    pub contacts: usize,
    /// Most PGS sweeps over bodies.
    pub pgs_iterations: usize,
    /// The constraint solver that ran (`pgs`, `non-smooth-newton`; empty without constraints).
    pub constraint_solver: &'static str,
    /// Non-smooth Newton steps of the step, all local-global iterations together.
    pub newton_iterations: usize,
    /// Conjugate-residual iterations of those Newton steps.
    pub cr_iterations: usize,
    /// `‖Φ‖∞` of the NCP functions at the start of the last Newton step (m).
    pub ncp_residual: f64,
    /// Sum of normal contact forces over bodies (N).
    pub total_normal_force: f64,
    /// Deepest penetration over bodies (m): any free vertex, surface or
    /// interior, into an obstacle or another body.
    pub max_penetration: f64,
    /// Inverted tets over bodies at the end of the step.
    pub inverted_elements: usize,
    /// Why the step is a violation (penetration beyond `[contact]
    /// max_penetration`, or inverted elements), when it is one.
    pub violation: Option<String>,
    /// Largest constraint violation after PGS (m): attachment miss or contact penetration at the end of the step.
    pub constraint_violation: f64,
    /// Penetration plus separation at contacts that carry force (m),
    /// measured with the contact geometry at the end of the step (the
    /// obstacles' end pose, the bodies' end positions): what a single
    /// linearization at the start of the step misses when directions turn.
    pub end_violation: f64,
    /// The recursive corrective motion of the step (`[contact] resolution
    /// = "implicit"`): iterations, direction change, violation before and
    /// after, time of its parts; `null` under explicit resolution.
    pub corrective: Option<crate::solver::corrective::CorrectiveRecord>,
    /// Isodofs over bodies.
    pub isodofs: usize,
    /// Reused isodofs over bodies.
    pub reused_isodofs: usize,
    /// Local-global iterations of the step (0 under implicit Euler).
    pub local_global_iterations: usize,
    /// Relative fixed-point residual `‖G(s) − s‖_D / ‖G(s⁰) − s⁰‖_D` of
    /// the step's last local-global iteration; `null` unless
    /// `local_global.acceleration` or `local_global.tolerance` is set.
    pub local_global_residual: Option<f64>,
    /// Whether the step's local-global iterations met `local_global.tolerance`
    /// (`null` without a tolerance; `false`: they stopped at `iterations`).
    pub local_global_converged: Option<bool>,
    /// Whether the step's constraint solve met its tolerance (`null`
    /// without constraint rows; `false`: it stopped at its iteration cap,
    /// as the real-time presets and zeng2025's fixed Newton schedules do by
    /// design).
    pub constraint_converged: Option<bool>,
    /// Per-body figures, in scene order.
    pub bodies: Vec<BodyStepStats>,
    /// Per-needle figures, in scene order (absent without needles).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needles: Vec<NeedleStepStats>,
    /// Per-cable figures, in scene order (absent without cables).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cables: Vec<CableStepStats>,
    /// Under `device = "gpu"`: what the step did on the device (absent on
    /// the CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceStepStats>,
}

/// A step's work on the device (`docs/gpu.md`, "Counters").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DeviceStepStats {
    /// Submissions, host waits, dispatches and bytes over the step.
    #[serde(flatten)]
    pub counters: crate::device::DeviceCounters,
    /// Whether the step's local-global iterations ran as resident frames
    /// (local and global steps on the device, one submission per body).
    pub resident_frame: bool,
    /// Tets whose projection the device left to its iteration where the
    /// CPU takes an SVD (an unconverged polar iteration, a warm start
    /// that is not a rotation), over the step's iterations and bodies.
    pub svd_fallbacks: u64,
}

/// One cable's figures at the end of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CableStepStats {
    /// The cable's name.
    pub name: String,
    /// Its length at the end of the step (m).
    pub length: f64,
    /// The length it is held to then: rest length less the displacement (m).
    pub target: f64,
    /// Its tension over the step (N; negative: it pushes).
    pub tension: f64,
}

/// One needle's figures at the end of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NeedleStepStats {
    /// The needle's name.
    pub name: String,
    /// Force of the tissue against the insertion (N): the tip's contact
    /// force before the puncture, the shaft's friction after.
    pub force: f64,
    /// Normal force of the tip on the surface (N; zero once punctured).
    pub tip_force: f64,
    /// Whether the tip is through the surface.
    pub punctured: bool,
    /// Points of tissue held on the shaft.
    pub shaft_points: usize,
}

/// Median and 90th percentile of a sample (nearest-rank).
pub fn median_p90(values: &mut [f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
    (at(0.5), at(0.9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        assert_eq!(median_p90(&mut v), (5.0, 9.0));
        let json = serde_json::to_string(&StageTimes([
            0.5, 1.0, 2.0, 3.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.5,
        ]))
        .unwrap();
        assert!(json.starts_with(
            r#"{"detect_contacts":0.5,"assemble":1.0,"factorize":2.0,"free_motion":3.0,"assemble_constraints":0.25,"build_delassus":0.0"#
        ) && json.ends_with(r#""integrate":4.0,"figures":0.5}"#));
    }
}
