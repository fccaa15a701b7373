//! The implicit-Euler energy the local-global iterations minimize
//! (zeng2025 eq. 1): `ε(q) = 1/(2h²) ‖M^½(q − q̃)‖² + Σ ψᵢ(q)`, with the
//! elastic, bending and pin terms of a body, and its gradient.

use nalgebra::{Matrix3, SMatrix, Vector3};
use rayon::prelude::*;

use super::shares::TetShares;
use super::terms::Pin;
use crate::body::Body;
use crate::element::hyperelastic::{energy_and_stress, Gradient};
use crate::element::lanes::{LANES, POLAR_SWEEPS};
use crate::element::tet_lanes::energy_and_stress_dispatch;
use crate::element::Constitutive;
use crate::element::{Element, TetElement};

/// Where the energy is evaluated: the prediction `q̃` and the step's end time.
#[derive(Debug, Clone, Copy)]
pub struct StepTarget<'a> {
    /// `q̃ = q + h v + h² g`.
    pub predicted: &'a [f64],
    /// Time step h (s).
    pub h: f64,
    /// End of the step (pin targets are taken there).
    pub t_next: f64,
    /// The body's pins.
    pub pins: &'a [Pin],
}

/// `ε(q)` (J); `None` where an element's energy is infinite (an inverted
/// Neo-Hookean element).
pub fn energy(body: &Body, x: &[f64], at: StepTarget) -> Option<f64> {
    gradient_inner(body, x, at, None, None)
}

/// `ε(q)` and `∇ε(q)` into `grad`.
pub fn energy_gradient(body: &Body, x: &[f64], at: StepTarget, grad: &mut [f64]) -> Option<f64> {
    gradient_inner(body, x, at, Some(grad), None)
}

/// What [`energy_gradient_warm`] keeps between evaluations: each tet's
/// last rotation (the warm start of its polar iteration), the tets'
/// `measure · ψ`, their shares of the gradient `measure · P gₐ` summed per
/// vertex where they are made ([`TetShares`]), and the bound on ARAP's
/// polar sweeps per evaluation.
#[derive(Debug, Clone)]
pub struct StressCache {
    rotations: Vec<Matrix3<f64>>,
    energies: Vec<f64>,
    shares: TetShares,
    arap_sweeps: usize,
}

impl StressCache {
    /// Each tet's rotation at the last evaluation.
    pub fn rotations(&self) -> &[Matrix3<f64>] {
        &self.rotations
    }

    /// An empty cache for `body`, ARAP's polar iteration bounded to
    /// `arap_sweeps` warm sweeps per evaluation (the first evaluation of
    /// a tet takes the SVD's rotation). With a bound below convergence an
    /// evaluation returns the local-global energy `E(q, R)` at the swept
    /// `R` (Bouaziz et al. 2014; `min_R E = ε`) and its gradient in `q`
    /// at fixed `R`: each evaluation lowers `E` over `R` (every sweep
    /// raises `tr RᵀF`), so a line search on it descends `E` jointly in
    /// `(q, R)` and stops where `R` is the polar rotation and `∇ε = 0`.
    pub fn new(body: &Body, arap_sweeps: usize) -> StressCache {
        StressCache {
            rotations: vec![Matrix3::zeros(); body.tets.len()],
            energies: vec![0.0; body.tets.len()],
            shares: TetShares::new(body.vertex_count(), body.tets.iter().map(|e| e.vertices)),
            arap_sweeps,
        }
    }
}

/// [`energy_gradient`] (`grad` optional) with the tets' stresses
/// [`LANES`] at a time, their polar iterations warm-started from the
/// cache's rotations, and the inertia and tet terms of `∇ε` gathered per
/// vertex in parallel; equal to it to 1e-12.
pub fn energy_gradient_warm(
    body: &Body,
    x: &[f64],
    at: StepTarget,
    grad: Option<&mut [f64]>,
    cache: &mut StressCache,
) -> Option<f64> {
    gradient_inner(body, x, at, grad, Some(cache))
}

/// `(ψ, P)` per unit volume of up to [`LANES`] tets `e` at positions `x`
/// (`None`: an infinite energy), their polar iterations warm-started from
/// `r` (one rotation per tet), which takes the new rotations, ARAP's
/// bounded to `arap_sweeps`. Lanes past `e`'s end repeat its last tet.
fn lane_terms(
    e: &[TetElement],
    model: Constitutive,
    x: &[f64],
    r: &mut [Matrix3<f64>],
    arap_sweeps: usize,
) -> [Option<(f64, Matrix3<f64>)>; LANES] {
    lane_terms_of(e, model, &lane_gradients(e, x), r, arap_sweeps)
}

/// `F` of up to [`LANES`] tets `e` at `x`; lanes past `e`'s end repeat its last tet.
fn lane_gradients(e: &[TetElement], x: &[f64]) -> [Matrix3<f64>; LANES] {
    std::array::from_fn(|l| e[l.min(e.len() - 1)].gradient(x))
}

/// [`lane_terms`] with the tets' `F` given.
fn lane_terms_of(
    e: &[TetElement],
    model: Constitutive,
    f: &[Matrix3<f64>; LANES],
    r: &mut [Matrix3<f64>],
    arap_sweeps: usize,
) -> [Option<(f64, Matrix3<f64>)>; LANES] {
    let n = e.len();
    let lame = std::array::from_fn(|l| e[l.min(n - 1)].lame);
    let mut rot: [Matrix3<f64>; LANES] = std::array::from_fn(|l| r[l.min(n - 1)]);
    let got = energy_and_stress_dispatch(model, &lame, f, &mut rot, arap_sweeps);
    r.copy_from_slice(&rot[..n]);
    got
}

/// The tets' `measure · ψ` into `cache.energies` and, `with_gradient`,
/// their shares `measure · P gₐ` of the gradient summed per vertex from
/// `start(vertex)`, by lanes in the chunks of the cache's shares; `false`
/// where an energy is infinite.
fn tet_terms_lanes(
    tets: &[TetElement],
    model: Constitutive,
    x: &[f64],
    cache: &mut StressCache,
    start: &(impl Fn(usize) -> Vector3<f64> + Sync),
    with_gradient: bool,
) -> bool {
    let (sweeps, chunk) = (cache.arap_sweeps, cache.shares.chunk());
    cache
        .energies
        .par_chunks_mut(chunk)
        .zip(tets.par_chunks(chunk))
        .zip(cache.rotations.par_chunks_mut(chunk))
        .zip(cache.shares.chunks())
        .all(|(((energies, tets), rotations), mut shares)| {
            let mut out = [[Vector3::zeros(); 4]; LANES];
            for (k, e) in tets.chunks(LANES).enumerate() {
                let at = k * LANES..k * LANES + e.len();
                let got = lane_terms(e, model, x, &mut rotations[at.clone()], sweeps);
                for (l, (g, t)) in got.iter().zip(e).enumerate() {
                    let Some((psi, p)) = g else { return false };
                    energies[at.start + l] = psi * t.measure;
                    let p = p * t.measure;
                    out[l] = std::array::from_fn(|a| p * t.grads[a]);
                }
                if with_gradient {
                    shares.add(at.start, e.iter().map(|t| t.vertices), &out[..e.len()], start);
                }
            }
            true
        })
}

/// `Σ measure · ψ` of the tets by lanes (infinite where one is), their
/// polar iterations warm-started from copies of `rotations` (each tet's
/// last rotation, left as it is), summed in tet order; and the tets whose
/// `F` has a non-positive determinant.
fn tet_energy_lanes(
    tets: &[TetElement],
    model: Constitutive,
    x: &[f64],
    rotations: &[Matrix3<f64>],
) -> TetFigures {
    tets.par_chunks(LANES)
        .zip(rotations.par_chunks(LANES))
        .with_min_len(16)
        .map(|(e, warm)| {
            let f = lane_gradients(e, x);
            let inverted = f[..e.len()].iter().filter(|f| f.determinant() <= 0.0).count();
            let mut r: [Matrix3<f64>; LANES] = std::array::from_fn(|l| warm[l.min(warm.len() - 1)]);
            let got = lane_terms_of(e, model, &f, &mut r[..e.len()], POLAR_SWEEPS);
            let energy = got.iter().zip(e).map(|(g, e)| g.map_or(f64::INFINITY, |(psi, _)| psi * e.measure));
            TetFigures { energy: energy.sum(), inverted }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(TetFigures::default(), |a, b| TetFigures {
            energy: a.energy + b.energy,
            inverted: a.inverted + b.inverted,
        })
}

/// `ε`'s inertia and tet terms (the tets' in `cache` already), and with
/// `grad` their gradient per vertex (parallel, in a fixed order), whose
/// tet shares start from the inertia term `inertia_gradient`.
fn inertia_and_tets(
    body: &Body,
    x: &[f64],
    at: StepTarget,
    grad: Option<&mut [f64]>,
    cache: &StressCache,
    inertia_gradient: impl Fn(usize) -> Vector3<f64> + Sync,
) -> f64 {
    let inv_h2 = 1.0 / (at.h * at.h);
    let d = |v: usize| Vector3::from_fn(|i, _| x[3 * v + i] - at.predicted[3 * v + i]);
    let inertia: f64 =
        body.mass.iter().enumerate().map(|(v, m)| 0.5 * inv_h2 * m * d(v).norm_squared()).sum();
    let elastic: f64 = cache.energies.iter().sum();
    if let Some(g) = grad {
        g.par_chunks_mut(3).enumerate().with_min_len(256).for_each(|(v, gv)| {
            gv.copy_from_slice(cache.shares.sum(v, inertia_gradient(v)).as_slice());
        });
    }
    inertia + elastic
}

/// A body's element figures at the end of a step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TetFigures {
    /// Elastic and bending energy alone (J), without inertia and pins.
    pub energy: f64,
    /// Tets whose `F` has a non-positive determinant (a non-positive
    /// signed volume: the rest shapes are positive).
    pub inverted: usize,
}

/// Elastic and bending energy alone (J), without inertia and pins, and
/// the inverted tets, in one pass; the tets by lanes (no SVD for ARAP and
/// co-rotational), their polar iterations warm-started from `rotations`
/// (each tet's last rotation, or anything else where there is none: such
/// tets take the SVD's).
pub fn elastic_energy(body: &Body, x: &[f64], rotations: &[Matrix3<f64>]) -> TetFigures {
    let model = body.constitutive;
    let tets = tet_energy_lanes(&body.tets, model, x, rotations);
    let triangles =
        element_terms(&body.triangles, model, x).map_or(f64::INFINITY, |t| t.iter().map(|t| t.0).sum());
    let bending: f64 =
        body.bending.iter().map(|s| 0.5 * s.weight * (s.apply(x) - s.project(x)).norm_squared()).sum();
    TetFigures { energy: tets.energy + triangles + bending, ..tets }
}

type Terms<const D: usize> = Vec<(f64, SMatrix<f64, 3, D>)>;

/// Per element `(measure · ψ, measure · P)`, in element order.
fn element_terms<const D: usize, const N: usize>(
    elements: &[Element<D, N>],
    model: Constitutive,
    x: &[f64],
) -> Option<Terms<D>>
where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    elements
        .par_iter()
        .with_min_len(256)
        .map(|e| {
            energy_and_stress(model, e.lame, &e.gradient(x)).map(|(psi, p)| (psi * e.measure, p * e.measure))
        })
        .collect()
}

fn scatter<const D: usize, const N: usize>(elements: &[Element<D, N>], terms: &Terms<D>, grad: &mut [f64]) {
    for (e, (_, p)) in elements.iter().zip(terms) {
        for (&v, g) in e.vertices.iter().zip(&e.grads) {
            let f = p * g;
            (0..3).for_each(|d| grad[3 * v + d] += f[d]);
        }
    }
}

fn gradient_inner(
    body: &Body,
    x: &[f64],
    at: StepTarget,
    mut grad: Option<&mut [f64]>,
    cache: Option<&mut StressCache>,
) -> Option<f64> {
    let model = body.constitutive;
    let inv_h2 = 1.0 / (at.h * at.h);
    let mut e;
    match cache {
        Some(c) => {
            // ∂/∂x_v of the inertia term, where each vertex's gradient starts.
            let inertia = |v: usize| {
                Vector3::from_fn(|i, _| x[3 * v + i] - at.predicted[3 * v + i]) * (inv_h2 * body.mass[v])
            };
            if !tet_terms_lanes(&body.tets, model, x, c, &inertia, grad.is_some()) {
                return None;
            }
            e = inertia_and_tets(body, x, at, grad.as_deref_mut(), c, inertia);
        }
        None => {
            e = 0.0;
            if let Some(g) = grad.as_deref_mut() {
                g.iter_mut().for_each(|v| *v = 0.0);
            }
            for (v, m) in body.mass.iter().enumerate() {
                let d = Vector3::from_fn(|i, _| x[3 * v + i] - at.predicted[3 * v + i]);
                e += 0.5 * inv_h2 * m * d.norm_squared();
                if let Some(g) = grad.as_deref_mut() {
                    (0..3).for_each(|i| g[3 * v + i] += inv_h2 * m * d[i]);
                }
            }
            let tets = element_terms(&body.tets, model, x)?;
            e += tets.iter().map(|t| t.0).sum::<f64>();
            if let Some(g) = grad.as_deref_mut() {
                scatter(&body.tets, &tets, g);
            }
        }
    }
    let tris = element_terms(&body.triangles, model, x)?;
    e += tris.iter().map(|t| t.0).sum::<f64>();
    if let Some(g) = grad.as_deref_mut() {
        scatter(&body.triangles, &tris, g);
    }
    for s in &body.bending {
        // ½ w ‖y − p(y)‖², gradient w Gᵀ (y − p(y)).
        let r = s.apply(x) - s.project(x);
        e += 0.5 * s.weight * r.norm_squared();
        if let Some(g) = grad.as_deref_mut() {
            for (&v, c) in s.vertices.iter().zip(&s.coeffs) {
                (0..3).for_each(|i| g[3 * v + i] += s.weight * c * r[i]);
            }
        }
    }
    for p in at.pins {
        let t = p.target(at.t_next);
        let r = Vector3::from_fn(|i, _| x[3 * p.vertex + i] - t[i]);
        e += 0.5 * p.weight * r.norm_squared();
        if let Some(g) = grad.as_deref_mut() {
            (0..3).for_each(|i| g[3 * p.vertex + i] += p.weight * r[i]);
        }
    }
    Some(e)
}
