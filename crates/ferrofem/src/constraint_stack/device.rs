//! The non-smooth Newton solve on the GPU (`[simulation] device = "gpu"`
//! under local-global, zeng2025 §5.2–5.4): [`crate::solver::newton`]'s method run
//! by `ferrofem_gpu::DeviceNewton`, with `W` resident for the step and
//! `δ_free = δ(q) − W λᵏ` formed on the device from the gaps.

use ferrofem_gpu::{DeviceNewton, Gpu, GroupLaw, NewtonParams, Offset};

use super::space::ConstraintSpace;
use crate::solver::newton::Complementarity;
use crate::solver::{
    complementarity_scale, gaps_violation, ConstraintGroup, ConstraintSolve, NewtonSettings, SolverMethod,
};
use crate::Model;

/// The device solver and its host-side scratch.
#[derive(Debug)]
pub struct DeviceConstraintSolver {
    newton: DeviceNewton,
    laws: Vec<GroupLaw>,
    delta: Vec<f64>,
}

impl DeviceConstraintSolver {
    /// Compiles the kernels on the process's device.
    pub fn new() -> Result<Self, String> {
        let gpu = Gpu::shared().map_err(|e| e.to_string())?;
        let newton = DeviceNewton::new(gpu).map_err(|e| e.to_string())?;
        Ok(DeviceConstraintSolver { newton, laws: Vec::new(), delta: Vec::new() })
    }

    /// Uploads the step's `W` (`space.delassus.assembled`), once per step.
    pub fn load(&mut self, space: &ConstraintSpace) -> Result<(), String> {
        self.newton.load(&space.delassus.assembled).map_err(|e| e.to_string())
    }

    /// Solves `δ = δ_free + W λ` with `space.problem.free_gaps` holding `δ(q)` at
    /// the warm start `space.problem.impulses` (which receives λ); sets
    /// `space.outcome.solve` and `space.outcome.violation` as [`super::solve_in_space`].
    pub fn solve(
        &mut self,
        space: &mut ConstraintSpace,
        model: &Model,
        settings: &NewtonSettings,
    ) -> Result<(), String> {
        space.workspace.laws.clear();
        space.workspace.laws.extend(space.problem.groups.iter().map(|g| g.law));
        self.laws.clear();
        self.laws.extend(space.workspace.laws.iter().map(|l| match *l {
            ConstraintGroup::Contact { mu } => GroupLaw::Contact(mu),
            ConstraintGroup::Attachment => GroupLaw::Attachment,
        }));
        let c = space.problem.free_gaps.len();
        let w = &space.delassus.assembled;
        complementarity_scale(
            &space.problem.groups,
            |j| w[j * c + j],
            model,
            settings.preconditioner,
            &mut space.workspace.scale,
        );
        self.delta.clear();
        self.delta.resize(space.problem.impulses.len(), 0.0);
        let offset = Offset::Gaps(&space.problem.free_gaps);
        let out = self
            .newton
            .solve(
                &params(settings),
                offset,
                &self.laws,
                &space.workspace.scale,
                &mut space.problem.impulses,
                &mut self.delta,
            )
            .map_err(|e| e.to_string())?;
        space.outcome.violation = gaps_violation(&space.workspace.laws, &self.delta);
        space.outcome.solve = ConstraintSolve {
            method: SolverMethod::NonSmoothNewton,
            iterations: out.iterations,
            error: out.error,
            linear_iterations: out.linear_iterations,
            residual: out.residual,
        };
        Ok(())
    }
}

/// The device's settings from the scene's.
fn params(s: &NewtonSettings) -> NewtonParams {
    NewtonParams {
        fischer_burmeister: s.complementarity == Complementarity::FischerBurmeister,
        iterations: s.iterations,
        linear_iterations: s.linear_iterations,
        tolerance: s.tolerance,
        ncp_tolerance: s.ncp_tolerance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::{Complementarity, NewtonScratch};

    /// The device, or `None` (test skipped) where none is required.
    fn device() -> Option<DeviceNewton> {
        match Gpu::shared().and_then(DeviceNewton::new) {
            Ok(d) => Some(d),
            Err(e) if std::env::var("FERROFEM_GPU_TESTS").as_deref() == Ok("required") => panic!("{e}"),
            Err(e) => {
                eprintln!("skipped: {e}");
                None
            }
        }
    }

    /// Coupled contacts and attachments on a random SPD `W`, some sticking,
    /// some sliding, some separating: a few truncated Newton steps (so the
    /// CR iterates are compared, not only the converged root) on the
    /// device equal the CPU solver's to 1e-12 relative, for both NCP
    /// functions, from `δ_free` and from the gaps.
    #[test]
    fn device_newton_equals_the_cpu_solver() {
        let Some(mut dev) = device() else { return };
        let n = 40;
        let c = 3 * n;
        let b: Vec<f64> = (0..c * c).map(|k| ((k * 7919) % 97) as f64 / 97.0 - 0.5).collect();
        let mut w = vec![0.0; c * c];
        for i in 0..c {
            for j in 0..c {
                let dot: f64 = (0..c).map(|k| b[i * c + k] * b[j * c + k]).sum();
                w[i * c + j] = 0.01 * dot + if i == j { 0.5 } else { 0.0 };
            }
        }
        let laws: Vec<ConstraintGroup> = (0..n)
            .map(|k| match k % 5 {
                0 => ConstraintGroup::Attachment,
                m => ConstraintGroup::Contact { mu: 0.2 * m as f64 },
            })
            .collect();
        let free: Vec<f64> = (0..c)
            .map(|i| match i % 3 {
                0 => 0.3 * ((i * 13 % 11) as f64 - 7.0),
                _ => 0.2 * ((i * 5 % 7) as f64 - 3.0),
            })
            .collect();
        let warm: Vec<f64> = (0..c).map(|i| if i % 3 == 0 { 0.1 * (i % 4) as f64 } else { 0.0 }).collect();
        let r: Vec<f64> = (0..c).map(|j| w[j * c + j]).collect();
        let glaws: Vec<GroupLaw> = laws
            .iter()
            .map(|l| match *l {
                ConstraintGroup::Contact { mu } => GroupLaw::Contact(mu),
                ConstraintGroup::Attachment => GroupLaw::Attachment,
            })
            .collect();
        dev.load(&w).unwrap();
        let mut w_warm = vec![0.0; c];
        crate::solver::newton::delassus_times(&w, &warm, &mut w_warm);
        let gaps: Vec<f64> = free.iter().zip(&w_warm).map(|(f, x)| f + x).collect();
        for complementarity in [Complementarity::FischerBurmeister, Complementarity::MinMap] {
            let settings = NewtonSettings {
                complementarity,
                iterations: 3,
                linear_iterations: 6,
                tolerance: 0.0,
                ncp_tolerance: 0.0,
                ..Default::default()
            };
            let mut cpu = warm.clone();
            let mut w32 = Vec::new();
            crate::solver::newton::round_to_single(&w, &mut w32);
            let mut pair = crate::solver::newton::DelassusPair { double: &w, single: &w32 };
            let expected =
                settings.solve(&mut pair, &free, &laws, &r, &mut cpu, &mut NewtonScratch::default());
            for offset in [Offset::Free(&free), Offset::Gaps(&gaps)] {
                let (mut gpu, mut delta) = (warm.clone(), vec![0.0; c]);
                let out = dev.solve(&params(&settings), offset, &glaws, &r, &mut gpu, &mut delta).unwrap();
                let size = cpu.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let err = cpu.iter().zip(&gpu).fold(0.0f64, |m, (a, b)| m.max((a - b).abs())) / size;
                assert!(err < 1e-12, "{complementarity:?} {offset:?}: {err:e}");
                assert_eq!(out.iterations, expected.iterations);
                assert_eq!(out.linear_iterations, expected.linear_iterations);
                let rel = (out.residual - expected.residual).abs() / expected.residual;
                assert!(rel < 1e-9, "residual {} vs {}", out.residual, expected.residual);
                // δ = δ_free + W λ at the result.
                let mut wl = vec![0.0; c];
                crate::solver::newton::delassus_times(&w, &gpu, &mut wl);
                let d_err = (0..c).fold(0.0f64, |m, j| m.max((free[j] + wl[j] - delta[j]).abs()));
                assert!(d_err < 1e-10, "δ {d_err:e}");
            }
            // The solve did something: λ moved off the warm start.
            assert!(cpu.iter().zip(&warm).any(|(a, b)| (a - b).abs() > 1e-3));
        }
    }
}
