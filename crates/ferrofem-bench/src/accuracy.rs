//! What a speed setting costs in accuracy: a scene run beside its
//! reference, the same scene with tight tolerances (`bench step
//! --reference`). Every speed figure in `docs/benchmarks.md` can then stand
//! beside the error it costs.

use serde::Serialize;

use ferrofem::integrator::{PreconditionerKind, Refresh};
use ferrofem::scene::{IntegratorKind, Scene};
use ferrofem::solver::{ConstraintSolver, PgsSettings};
use ferrofem::World;

use crate::BenchError;

/// A run against its tight-tolerance reference after the same simulated time.
#[derive(Debug, Clone, Serialize)]
pub struct Accuracy {
    /// The reference's settings, in words.
    pub reference: String,
    /// Simulated time compared (s).
    pub simulated_s: f64,
    /// Steps of each run.
    pub steps: usize,
    /// Diagonal of the bodies' rest bounding box (m): the size errors are a percentage of.
    pub body_size_m: f64,
    /// Largest vertex distance between the run and the reference at the end (m).
    pub position_error_max_m: f64,
    /// Root mean square of the vertex distances at the end (m).
    pub position_error_rms_m: f64,
    /// `position_error_max_m` in % of `body_size_m`.
    pub position_error_max_pct: f64,
    /// `position_error_rms_m` in % of `body_size_m`.
    pub position_error_rms_pct: f64,
    /// Deepest penetration over the run's steps (m).
    pub max_penetration_m: f64,
    /// Deepest penetration over the reference's steps (m).
    pub reference_max_penetration_m: f64,
    /// Mechanical energy (kinetic + elastic + gravitational) at the end of the run (J).
    pub energy_j: f64,
    /// The same for the reference (J).
    pub reference_energy_j: f64,
    /// `energy_j − reference_energy_j` in % of the reference's largest
    /// kinetic + elastic energy over the run: the energy the speed setting
    /// gained (+) or dissipated (−) beyond the reference's.
    pub energy_drift_pct: f64,
}

/// Tolerances of the reference: PCG to 1e-12 with an LDLᵀ preconditioner
/// refreshed every step and read in double precision; PGS to 1e-12 (up to 10,000 sweeps) or the
/// non-smooth Newton to 1e-12; local-global to a 1e-10 relative residual
/// (up to 1,000 iterations).
pub const REFERENCE: &str = "implicit Euler: LDLT-PCG to 1e-12 refreshed every step, f64; PGS to 1e-12 \
                             (10,000 sweeps) or non-smooth Newton to 1e-12; local-global to 1e-10 \
                             (1,000 iterations)";

/// `scene` with the tolerances of [`REFERENCE`], everything else equal.
pub fn reference_scene(scene: &Scene) -> Scene {
    let mut r = scene.clone();
    let spec = &mut r.spec;
    let ie = &mut spec.implicit_euler;
    ie.preconditioner = PreconditionerKind::Ldlt;
    ie.refresh = Refresh::default();
    ie.preconditioner_precision = ferrofem_linalg::Precision::Double;
    ie.max_iterations = Some(10_000);
    ie.rel_tolerance = Some(1e-12);
    let cs = &mut spec.constraint_solver;
    cs.tolerance = Some(1e-12);
    cs.solver = match cs.solver {
        Some(ConstraintSolver::Pgs(_)) => Some(ConstraintSolver::Pgs(PgsSettings::new(10_000, 1e-12))),
        Some(ConstraintSolver::NonSmoothNewton(mut n)) => {
            n.tolerance = 1e-12;
            n.iterations = n.iterations.max(100);
            Some(ConstraintSolver::NonSmoothNewton(n))
        }
        None if spec.simulation.integrator == IntegratorKind::ImplicitEuler => {
            Some(ConstraintSolver::Pgs(PgsSettings::new(10_000, 1e-12)))
        }
        None => None,
    };
    let lg = &mut spec.local_global;
    lg.iterations = lg.iterations.max(1_000);
    lg.tolerance = Some(1e-10);
    r
}

/// Runs `scene` and its reference side by side for `seconds` of simulated
/// time (at least one step) and compares them.
pub fn accuracy(scene: &Scene, seconds: f64) -> Result<Accuracy, BenchError> {
    let mut run = scene.build_on(ferrofem_gpu::backend())?;
    let mut reference = reference_scene(scene).build_on(ferrofem_gpu::backend())?;
    let steps = ((seconds / run.model.time_step).round() as usize).max(1);
    let (mut deepest, mut reference_deepest, mut scale) = (0.0f64, 0.0f64, 0.0f64);
    let (mut elastic, mut reference_elastic) = (0.0, 0.0);
    for _ in 0..steps {
        let s = run.step()?;
        let r = reference.step()?;
        deepest = deepest.max(s.max_penetration);
        reference_deepest = reference_deepest.max(r.max_penetration);
        scale = scale.max(r.kinetic_energy + r.elastic_energy);
        (elastic, reference_elastic) = (s.elastic_energy, r.elastic_energy);
    }
    let (max, rms) = position_errors(&run, &reference);
    let size = body_size(&run);
    let energy = mechanical_energy(&run, elastic);
    let reference_energy = mechanical_energy(&reference, reference_elastic);
    Ok(Accuracy {
        reference: REFERENCE.into(),
        simulated_s: steps as f64 * run.model.time_step,
        steps,
        body_size_m: size,
        position_error_max_m: max,
        position_error_rms_m: rms,
        position_error_max_pct: 100.0 * max / size,
        position_error_rms_pct: 100.0 * rms / size,
        max_penetration_m: deepest,
        reference_max_penetration_m: reference_deepest,
        energy_j: energy,
        reference_energy_j: reference_energy,
        energy_drift_pct: 100.0 * (energy - reference_energy) / scale.max(f64::MIN_POSITIVE),
    })
}

/// Largest and root-mean-square vertex distance between two worlds of the same scene (m).
pub(crate) fn position_errors(a: &World, b: &World) -> (f64, f64) {
    let (mut max, mut sum, mut n) = (0.0f64, 0.0, 0usize);
    for (sa, sb) in a.state.bodies.iter().zip(&b.state.bodies) {
        for (p, q) in sa.positions.chunks_exact(3).zip(sb.positions.chunks_exact(3)) {
            let d2: f64 = (0..3).map(|k| (p[k] - q[k]).powi(2)).sum();
            max = max.max(d2.sqrt());
            sum += d2;
            n += 1;
        }
    }
    (max, (sum / n.max(1) as f64).sqrt())
}

/// Diagonal of the bounding box of every body's rest vertices (m).
pub(crate) fn body_size(w: &World) -> f64 {
    let points: Vec<[f64; 3]> =
        w.model.bodies.iter().flat_map(|b| b.rest_vertices().iter().copied()).collect();
    ferrofem_mesh::Aabb::of_points(&points)
        .map_or(0.0, |b| (0..3).map(|k| (b.max[k] - b.min[k]).powi(2)).sum::<f64>().sqrt())
}

/// `½ vᵀMv + elastic − Σ mᵢ g·xᵢ` over the bodies (J).
fn mechanical_energy(w: &World, elastic: f64) -> f64 {
    let g = w.model.gravity;
    let potential: f64 = w
        .model
        .bodies
        .iter()
        .zip(&w.state.bodies)
        .map(|(b, s)| {
            b.mass
                .iter()
                .zip(s.positions.chunks_exact(3))
                .map(|(m, x)| -m * (0..3).map(|k| g[k] * x[k]).sum::<f64>())
                .sum::<f64>()
        })
        .sum();
    let kinetic: f64 = w.model.bodies.iter().zip(&w.state.bodies).map(|(b, s)| s.kinetic_energy(b)).sum();
    kinetic + elastic + potential
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick bench beam (2.5k vertices, exactly 10 Jacobi-PCG
    /// iterations per step) drifts from its reference by a measurable
    /// amount; 200 iterations per step bring it an order of magnitude
    /// closer; the reference against itself is exact.
    #[test]
    fn early_termination_error_shrinks_with_more_iterations() {
        let mut scene = crate::scenes::template("bench-beam").unwrap();
        scene.spec.simulation.time_step = 0.01;
        let coarse = accuracy(&scene, 0.2).unwrap();
        scene.spec.implicit_euler.max_iterations = Some(200);
        let fine = accuracy(&scene, 0.2).unwrap();
        assert!(coarse.position_error_max_m > 1e-4, "{coarse:?}");
        assert!(fine.position_error_max_m < 0.1 * coarse.position_error_max_m, "{fine:?} vs {coarse:?}");
        let exact = accuracy(&reference_scene(&scene), 0.05).unwrap();
        assert!(exact.position_error_max_m == 0.0 && exact.energy_drift_pct == 0.0, "{exact:?}");
    }
}
