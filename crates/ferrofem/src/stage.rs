//! The named stages of a time step and the clock that times them.

use std::time::Instant;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
    /// The step's figures ([`crate::StepStats`]): energies, inverted
    /// elements, the deepest penetration.
    Figures,
}

impl Stage {
    /// All stages in execution order.
    pub const ALL: [Stage; 13] = [
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
        Stage::Figures,
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
            Stage::Figures => "figures",
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

impl<'de> Deserialize<'de> for StageTimes {
    /// Reads the map [`Serialize`] writes; a stage left out is 0, a name
    /// that is no stage is refused.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = std::collections::HashMap::<String, f64>::deserialize(d)?;
        let mut t = StageTimes::default();
        for (name, ms) in map {
            let st = Stage::ALL
                .into_iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| serde::de::Error::custom(format!("no stage `{name}`")))?;
            t.0[st as usize] = ms;
        }
        Ok(t)
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
