//! Cantilever under its own weight against Euler–Bernoulli beam theory.

use crate::common;
use ferrofem::scene::{BodySpec, MeshSpec, SceneBuilder};

/// Tip deflection of a clamped beam `L × h × h` under gravity, settled by
/// quasi-static implicit Euler steps (h = 1 s, PCG converged to 1e-10,
/// preconditioned by the LDLᵀ of the first step's matrix: the same
/// deflection as with Jacobi, in a third of the time).
fn tip_deflection(cells: [usize; 3]) -> (f64, f64) {
    let (l, t, e, rho, g): (f64, f64, f64, f64, f64) = (1.0, 0.1, 5e7, 1000.0, 9.81);
    let beam = BodySpec::new("beam", MeshSpec::Box { size: [l, t, t], cells }, e, 0.0, rho)
        .at([l / 2.0, 0.0, 0.0])
        .fixed([-1e-9, -1.0, -1.0], [1e-9, 1.0, 1.0]);
    let scene = SceneBuilder::new(1.0)
        .steps(6)
        .gravity([0.0, 0.0, -g])
        .pcg(20000, 1e-10)
        .implicit_euler(|s| {
            (s.preconditioner, s.refresh.every) = (ferrofem::integrator::PreconditionerKind::Ldlt, 6)
        })
        .body(beam)
        .build()
        .unwrap();
    let mut world = scene.build().unwrap();
    for _ in 0..scene.spec.simulation.steps {
        world.step().unwrap();
    }
    let body = &world.model.bodies[0];
    let state = &world.state.bodies[0];
    // Mean vertical displacement of the free end face.
    let tip: Vec<usize> =
        (0..body.vertex_count()).filter(|&i| body.rest_vertices()[i][0] > l - 1e-9).collect();
    let sim = -tip.iter().map(|&i| state.positions[3 * i + 2] - body.rest_vertices()[i][2]).sum::<f64>()
        / tip.len() as f64;
    let q = rho * g * t * t;
    let inertia = t.powi(4) / 12.0;
    let beam = q * l.powi(4) / (8.0 * e * inertia);
    // Timoshenko shear correction for a rectangle (κ = 5/6, ν = 0: G = E/2).
    let shear = q * l * l / (2.0 * (5.0 / 6.0) * (e / 2.0) * t * t);
    (sim, beam + shear)
}

#[test]
fn cantilever_tip_deflection_matches_beam_theory_and_converges() {
    common::one_worker(|| {
        let (coarse, reference) = tip_deflection([60, 6, 6]);
        let (fine, _) = tip_deflection([120, 12, 12]);
        let (e_coarse, e_fine) = ((coarse / reference - 1.0).abs(), (fine / reference - 1.0).abs());
        eprintln!(
            "reference {reference:.6e} m; coarse {coarse:.6e} ({e_coarse:.3}), fine {fine:.6e} ({e_fine:.3})"
        );
        assert!(e_fine < 0.05, "fine mesh error {e_fine}");
        assert!(e_fine < e_coarse, "refinement did not reduce the error");
    })
}
