//! The non-smooth Newton solve on the device against the CPU solver.

use ferrofem::constraint::ConstraintGroup;
use ferrofem::constraint_stack::device::params;
use ferrofem::device::{GroupLaw, Offset};
use ferrofem::solver::{Complementarity, NewtonScratch, NewtonSettings};
use ferrofem_gpu::DeviceNewton;

use super::gpu;

/// Coupled contacts and attachments on a random SPD `W`, some sticking,
/// some sliding, some separating: a few truncated Newton steps (so the
/// CR iterates are compared, not only the converged root) on the
/// device equal the CPU solver's to 1e-12 relative, for both NCP
/// functions, from `δ_free` and from the gaps.
#[test]
fn device_newton_equals_the_cpu_solver() {
    let Some(gpu) = gpu() else { return };
    let mut dev = DeviceNewton::new(gpu).unwrap();
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
    let glaws: Vec<GroupLaw> = laws.iter().map(|&l| GroupLaw::try_from(l).unwrap()).collect();
    dev.load(&w).unwrap();
    let mut w_warm = vec![0.0; c];
    ferrofem::solver::newton::delassus_times(&w, &warm, &mut w_warm);
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
        ferrofem::solver::newton::round_to_single(&w, &mut w32);
        let mut pair = ferrofem::solver::newton::DelassusPair { double: &w, single: &w32 };
        let expected = settings.solve(&mut pair, &free, &laws, &r, &mut cpu, &mut NewtonScratch::default());
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
            ferrofem::solver::newton::delassus_times(&w, &gpu, &mut wl);
            let d_err = (0..c).fold(0.0f64, |m, j| m.max((free[j] + wl[j] - delta[j]).abs()));
            assert!(d_err < 1e-10, "δ {d_err:e}");
        }
        // The solve did something: λ moved off the warm start.
        assert!(cpu.iter().zip(&warm).any(|(a, b)| (a - b).abs() > 1e-3));
    }
}
