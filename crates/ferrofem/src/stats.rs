//! Per-step statistics and their JSON form (documented in `docs/stats.md`).

use std::time::Instant;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// The named stages of a time step, in execution order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Proximity queries at the start-of-step positions (zeng2022 §3.2).
    DetectContacts,
    /// Co-rotations, `A = M + hB + h²K` and `b` (zeng2022 eq. 4).
    Assemble,
    /// Refresh of the LDLᵀ preconditioner (zeng2022 §3.4); ~0 for diagonal ones.
    Factorize,
    /// `A Δv = b` by PCG (zeng2022 eq. 13, dahl2019 §3.2).
    FreeMotion,
    /// Constraint groups from contacts and attachments, and each body's rows `H_b` (zeng2022 §3.2).
    AssembleConstraints,
    /// `W = h² H A⁻¹ Hᵀ` (zeng2022 eq. 12).
    BuildDelassus,
    /// `δ_free` and projected Gauss-Seidel (zeng2022 eq. 14–16).
    SolveConstraints,
    /// `Δv += h A⁻¹ Hᵀ λ` (zeng2022 eq. 17).
    Correct,
    /// Local-global: per-element projections and the right-hand side (zeng2025 eq. 5–6).
    LocalStep,
    /// Local-global: `q = A⁻¹ b` (zeng2025 eq. 6–8), or one Jacobi iteration.
    GlobalStep,
    /// Local-global: the fixed-point residual and, with acceleration, the
    /// extrapolated iterate (Peng et al. 2018).
    Accelerate,
    /// `v ← v + Δv`, `x ← x + h v`.
    Integrate,
}

impl Stage {
    /// All stages in execution order.
    pub const ALL: [Stage; 12] = [
        Stage::DetectContacts,
        Stage::Assemble,
        Stage::Factorize,
        Stage::FreeMotion,
        Stage::AssembleConstraints,
        Stage::BuildDelassus,
        Stage::SolveConstraints,
        Stage::Correct,
        Stage::LocalStep,
        Stage::GlobalStep,
        Stage::Accelerate,
        Stage::Integrate,
    ];

    /// The stage's name in stats and tables.
    pub fn name(self) -> &'static str {
        match self {
            Stage::DetectContacts => "detect_contacts",
            Stage::Assemble => "assemble",
            Stage::Factorize => "factorize",
            Stage::FreeMotion => "free_motion",
            Stage::AssembleConstraints => "assemble_constraints",
            Stage::BuildDelassus => "build_delassus",
            Stage::SolveConstraints => "solve_constraints",
            Stage::Correct => "correct",
            Stage::LocalStep => "local_step",
            Stage::GlobalStep => "global_step",
            Stage::Accelerate => "accelerate",
            Stage::Integrate => "integrate",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Milliseconds per stage; serialized as a map from stage name.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimes(pub [f64; Stage::ALL.len()]);

impl StageTimes {
    /// Runs `f`, adding its wall time to `stage`.
    pub fn time<T>(&mut self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.0[stage as usize] += t.elapsed().as_secs_f64() * 1e3;
        r
    }

    /// Time of one stage (ms).
    pub fn get(&self, stage: Stage) -> f64 {
        self.0[stage as usize]
    }

    /// Sum over stages (ms).
    pub fn total(&self) -> f64 {
        self.0.iter().sum()
    }
}

impl Serialize for StageTimes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(Stage::ALL.len()))?;
        for st in Stage::ALL {
            m.serialize_entry(st.name(), &self.get(st))?;
        }
        m.end()
    }
}

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
}

/// How a body's `W_b` was obtained in one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelassusRecord {
    /// The method used (`auto` resolved).
    pub method: &'static str,
    /// Constraint rows touching the body.
    pub rows: usize,
    /// DOFs those rows touch (isodofs).
    pub isodofs: usize,
    /// Isodofs whose solves were reused from earlier steps.
    pub reused_isodofs: usize,
    /// `reused_isodofs / isodofs` (0 when none).
    pub reuse_fraction: f64,
    /// The cost model's predictions (ms), when `auto` chose.
    pub predicted: Option<crate::delassus::DelassusCosts>,
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
    /// Per-body figures, in scene order.
    pub bodies: Vec<BodyStepStats>,
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

/// Summary over a run's steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Steps taken.
    pub steps: usize,
    /// Median step time (ms).
    pub step_ms_median: f64,
    /// 90th-percentile step time (ms).
    pub step_ms_p90: f64,
    /// Median per stage (ms).
    pub stage_ms_median: StageTimes,
    /// 90th percentile per stage (ms).
    pub stage_ms_p90: StageTimes,
    /// Mean PCG iterations per step.
    pub cg_iterations_mean: f64,
    /// Most PCG iterations in a step.
    pub cg_iterations_max: usize,
    /// Largest final relative residual seen.
    pub cg_rel_residual_max: f64,
    /// Most contacts in a step.
    pub contacts_max: usize,
    /// Median PGS sweeps per step.
    pub pgs_iterations_median: f64,
    /// Deepest penetration seen (m).
    pub max_penetration: f64,
    /// Most inverted elements in a step.
    pub inverted_elements_max: usize,
    /// Steps that were violations (see [`StepStats::violation`]).
    pub violations: usize,
    /// The first violation, with its step.
    pub first_violation: Option<String>,
    /// Kinetic energy after the last step (J).
    pub final_kinetic_energy: f64,
    /// Elastic energy at the last step (J).
    pub final_elastic_energy: f64,
}

impl Summary {
    /// Summarizes a run.
    pub fn of(steps: &[StepStats]) -> Summary {
        let mut s = Summary { steps: steps.len(), ..Default::default() };
        let col = |f: &dyn Fn(&StepStats) -> f64| median_p90(&mut steps.iter().map(f).collect::<Vec<_>>());
        (s.step_ms_median, s.step_ms_p90) = col(&|x| x.step_ms);
        for st in Stage::ALL {
            let (m, p) = col(&|x| x.stage_ms.get(st));
            s.stage_ms_median.0[st as usize] = m;
            s.stage_ms_p90.0[st as usize] = p;
        }
        if let Some(last) = steps.last() {
            s.final_kinetic_energy = last.kinetic_energy;
            s.final_elastic_energy = last.elastic_energy;
            s.cg_iterations_mean =
                steps.iter().map(|x| x.cg_iterations as f64).sum::<f64>() / steps.len() as f64;
            s.cg_iterations_max = steps.iter().map(|x| x.cg_iterations).max().unwrap_or(0);
            s.cg_rel_residual_max = steps.iter().map(|x| x.cg_rel_residual).fold(0.0, f64::max);
            s.contacts_max = steps.iter().map(|x| x.contacts).max().unwrap_or(0);
            s.pgs_iterations_median = col(&|x| x.pgs_iterations as f64).0;
            s.max_penetration = steps.iter().map(|x| x.max_penetration).fold(0.0, f64::max);
            s.inverted_elements_max = steps.iter().map(|x| x.inverted_elements).max().unwrap_or(0);
            s.violations = steps.iter().filter(|x| x.violation.is_some()).count();
            s.first_violation =
                steps.iter().find_map(|x| x.violation.as_ref().map(|v| format!("step {}: {v}", x.step)));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        assert_eq!(median_p90(&mut v), (5.0, 9.0));
        let json =
            serde_json::to_string(&StageTimes([0.5, 1.0, 2.0, 3.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0]))
                .unwrap();
        assert!(json.starts_with(
            r#"{"detect_contacts":0.5,"assemble":1.0,"factorize":2.0,"free_motion":3.0,"assemble_constraints":0.25,"build_delassus":0.0"#
        ));
    }
}
