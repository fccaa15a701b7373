//! The local step (zeng2025 eq. 5, in parallel over terms, allocation-free)
//! and the right-hand side `b = M q̃ + h² Σ wᵢ Gᵢᵀ pᵢ` it feeds the global
//! step (eq. 6), per vertex so that it is parallel and deterministic: the
//! tets' shares summed where the local step makes them (`shares.rs`), the
//! membranes' and stencils' gathered.

use nalgebra::{Matrix3, Matrix3x2, SMatrix, Vector3};
use rayon::iter::Either;
use rayon::prelude::*;

use super::shares::TetShares;
use super::terms::Pin;
use crate::body::Body;
use crate::device::{DeviceTerms, RhsMap};
use crate::element::hyperelastic::Gradient;
use crate::element::lanes::LANES;
use crate::element::tet_lanes::tet_local_step;
use crate::element::tri_lanes::tri_local_step;
use crate::element::Constitutive;
use crate::element::{Element, TetElement, TriElement};

/// Vertex → (term, local index) incidence, CSR.
#[derive(Debug, Clone, Default)]
pub(crate) struct Incidence {
    ptr: Vec<usize>,
    entries: Vec<(u32, u32)>,
}

impl Incidence {
    pub(crate) fn new<'a>(n: usize, terms: impl Iterator<Item = &'a [usize]> + Clone) -> Incidence {
        let mut ptr = vec![0usize; n + 1];
        terms.clone().flatten().for_each(|&v| ptr[v + 1] += 1);
        (0..n).for_each(|i| ptr[i + 1] += ptr[i]);
        let mut fill = ptr.clone();
        let mut entries = vec![(0, 0); ptr[n]];
        for (t, vs) in terms.enumerate() {
            for (a, &v) in vs.iter().enumerate() {
                entries[fill[v]] = (t as u32, a as u32);
                fill[v] += 1;
            }
        }
        Incidence { ptr, entries }
    }

    pub(crate) fn of(&self, v: usize) -> &[(u32, u32)] {
        &self.entries[self.ptr[v]..self.ptr[v + 1]]
    }
}

/// Per-term results of the local step and the ADMM duals.
#[derive(Debug, Clone, Default)]
pub struct Projections {
    /// `p − u` per tet (what `F` is pulled towards), kept only for a global
    /// step that reads it ([`Self::keep_tet_targets`]; the CPU's sums the
    /// shares as they are made): 144 bytes per tet and iteration not moved
    /// otherwise. Not written for ARAP, whose target is its rotation
    /// ([`Self::tet_targets`]).
    tets: Vec<Matrix3<f64>>,
    /// Whether the tets are ARAP.
    arap: bool,
    /// `p − u` per membrane triangle.
    pub triangles: Vec<Matrix3x2<f64>>,
    /// Projection per bending stencil.
    pub bending: Vec<Vector3<f64>>,
    tet_duals: Vec<Matrix3<f64>>,
    /// Each tet's last rotation (warm start of its polar iteration).
    tet_rotations: Vec<Matrix3<f64>>,
    /// Each tet's `w (p − u) gₐ` at its four vertices, summed per vertex.
    shares: TetShares,
    tri_duals: Vec<Matrix3x2<f64>>,
    tri_incidence: Incidence,
    bending_incidence: Incidence,
}

impl Projections {
    /// Storage and incidences for a body.
    pub fn new(body: &Body) -> Projections {
        let n = body.vertex_count();
        Projections {
            tets: Vec::new(),
            arap: body.constitutive == Constitutive::Arap,
            triangles: vec![Matrix3x2::zeros(); body.triangles.len()],
            bending: vec![Vector3::zeros(); body.bending.len()],
            tet_duals: vec![Matrix3::zeros(); body.tets.len()],
            tet_rotations: vec![Matrix3::zeros(); body.tets.len()],
            shares: TetShares::new(n, body.tets.iter().map(|e| e.vertices)),
            tri_duals: vec![Matrix3x2::zeros(); body.triangles.len()],
            tri_incidence: Incidence::new(n, body.triangles.iter().map(|e| e.vertices.as_slice())),
            bending_incidence: Incidence::new(n, body.bending.iter().map(|s| s.vertices.as_slice())),
        }
    }

    /// Keeps each tet's `p − u` from the next local step on, for a global
    /// step that assembles its right-hand side from the projections
    /// ([`Self::flat`], the device's).
    pub fn keep_tet_targets(&mut self) {
        self.tets.resize(self.tet_duals.len(), Matrix3::zeros());
    }

    /// The projections as flat f64 (column-major per term): tets,
    /// triangles, bending stencils (the tets' `p − u` empty unless
    /// [`Self::keep_tet_targets`] was called, or ARAP's rotations).
    pub fn flat(&self) -> [&[f64]; 3] {
        [
            bytemuck::cast_slice(self.tet_targets()),
            bytemuck::cast_slice(&self.triangles),
            bytemuck::cast_slice(&self.bending),
        ]
    }

    /// `p − u` per tet, what the global step pulls `F` towards (ARAP: the
    /// rotation).
    pub fn tet_targets(&self) -> &[Matrix3<f64>] {
        match self.arap {
            true => &self.tet_rotations,
            false => &self.tets,
        }
    }

    /// Each tet's rotation at the last local step (zero before the first).
    pub fn tet_rotations(&self) -> &[Matrix3<f64>] {
        &self.tet_rotations
    }

    /// The rotations as flat f64, 9 per tet column-major (a device frame
    /// reads them back here).
    pub(crate) fn tet_rotations_flat_mut(&mut self) -> &mut [f64] {
        bytemuck::cast_slice_mut(&mut self.tet_rotations)
    }

    /// Entries of the ADMM duals (nine per tet, six per membrane triangle).
    pub fn dual_len(&self) -> usize {
        9 * self.tet_duals.len() + 6 * self.tri_duals.len()
    }

    /// Copies the duals into `out` (length [`Self::dual_len`]).
    pub fn write_duals(&self, out: &mut [f64]) {
        let values = self
            .tet_duals
            .iter()
            .flat_map(|u| u.as_slice())
            .chain(self.tri_duals.iter().flat_map(|u| u.as_slice()));
        out.iter_mut().zip(values).for_each(|(o, v)| *o = *v);
    }

    /// Sets the duals from `values` (length [`Self::dual_len`]).
    pub fn read_duals(&mut self, values: &[f64]) {
        let (tets, tris) = values.split_at(9 * self.tet_duals.len());
        self.tet_duals.iter_mut().zip(tets.chunks_exact(9)).for_each(|(u, v)| u.copy_from_slice(v));
        self.tri_duals.iter_mut().zip(tris.chunks_exact(6)).for_each(|(u, v)| u.copy_from_slice(v));
    }

    /// Zeroes the ADMM duals (at the start of a time step).
    pub fn reset_duals(&mut self) {
        self.tet_duals.iter_mut().for_each(|u| *u = Matrix3::zeros());
        self.tri_duals.iter_mut().for_each(|u| *u = Matrix3x2::zeros());
    }
}

/// Stage `local_step`: every element's proximal projection (with its dual
/// update) and every stencil's projection, at positions `x`; ARAP's tets
/// take at most `arap_sweeps` sweeps of their warm-started polar iteration.
pub fn local_step(body: &Body, x: &[f64], p: &mut Projections, arap_sweeps: usize) {
    let model = body.constitutive;
    project_tets(&body.tets, model, x, p, arap_sweeps);
    match model {
        Constitutive::NeoHookean => project_membranes(&body.triangles, x, &mut p.triangles, &mut p.tri_duals),
        _ => project(&body.triangles, model, x, &mut p.triangles, &mut p.tri_duals),
    }
    p.bending.par_iter_mut().zip(&body.bending).with_min_len(256).for_each(|(out, s)| *out = s.project(x));
}

/// The tets' projections in chunks ([`TetShares::chunk`]) side by side, [`LANES`]
/// per batch, each batch's right-hand-side shares summed as they are made
/// ([`TetShares`]); `p − u` into a batch's scratch unless kept
/// ([`Projections::keep_tet_targets`]).
fn project_tets(
    tets: &[TetElement],
    model: Constitutive,
    x: &[f64],
    p: &mut Projections,
    arap_sweeps: usize,
) {
    let chunk = p.shares.chunk();
    let targets = match p.tets.is_empty() {
        true => Either::Left((0..tets.len().div_ceil(chunk)).into_par_iter().map(|_| None)),
        false => Either::Right(p.tets.par_chunks_mut(chunk).map(Some)),
    };
    p.tet_duals
        .par_chunks_mut(chunk)
        .zip(p.tet_rotations.par_chunks_mut(chunk))
        .zip(tets.par_chunks(chunk))
        .zip(p.shares.chunks())
        .zip(targets)
        .for_each(|((((duals, rotations), tets), mut shares), mut targets)| {
            let (mut pulls, mut scratch) = ([[Vector3::zeros(); 4]; LANES], [Matrix3::zeros(); LANES]);
            for (k, e) in tets.chunks(LANES).enumerate() {
                let at = k * LANES..k * LANES + e.len();
                let o = match &mut targets {
                    Some(t) => &mut t[at.clone()],
                    None => &mut scratch[..e.len()],
                };
                let (u, r, w) = (&mut duals[at.clone()], &mut rotations[at.clone()], &mut pulls[..e.len()]);
                tet_local_step(e, model, x, u, o, r, w, arap_sweeps);
                shares.add(at.start, e.iter().map(|t| t.vertices), w, |_| Vector3::zeros());
            }
        });
}

fn project<const D: usize, const N: usize>(
    elements: &[Element<D, N>],
    model: Constitutive,
    x: &[f64],
    out: &mut [SMatrix<f64, 3, D>],
    duals: &mut [SMatrix<f64, 3, D>],
) where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    out.par_iter_mut()
        .zip(duals.par_iter_mut())
        .zip(elements.par_iter())
        .with_min_len(128)
        .for_each(|((o, u), e)| e.local_step(model, x, u, o));
}

/// Neo-Hookean membranes' projections, [`LANES`] triangles per batch
/// ([`tri_local_step`]).
fn project_membranes(
    tris: &[TriElement],
    x: &[f64],
    out: &mut [Matrix3x2<f64>],
    duals: &mut [Matrix3x2<f64>],
) {
    out.par_chunks_mut(LANES)
        .zip(duals.par_chunks_mut(LANES))
        .zip(tris.par_chunks(LANES))
        .with_min_len(8)
        .for_each(|((o, u), e)| tri_local_step(e, x, u, o));
}

/// `b = M q̃ + h² (Σ w Gᵀ p + Σ w_pin t)`, gathered per vertex; pin targets
/// at time `t_next`.
pub fn assemble_rhs(
    body: &Body,
    pins: &[Pin],
    p: &Projections,
    predicted: &[f64],
    h: f64,
    t_next: f64,
    b: &mut [f64],
) {
    let h2 = h * h;
    b.par_chunks_mut(3).enumerate().with_min_len(256).for_each(|(v, bv)| {
        let mut acc = p.shares.sum(v, Vector3::zeros());
        for &(e, a) in p.tri_incidence.of(v) {
            let el = &body.triangles[e as usize];
            acc += p.triangles[e as usize] * el.grads[a as usize] * el.weight;
        }
        for &(s, a) in p.bending_incidence.of(v) {
            let st = &body.bending[s as usize];
            acc += p.bending[s as usize] * (st.coeffs[a as usize] * st.weight);
        }
        let m = body.mass[v];
        (0..3).for_each(|d| bv[d] = m * predicted[3 * v + d] + h2 * acc[d]);
    });
    add_pin_targets(pins, h, t_next, b);
}

/// `b += h² w_pin t` of every pin, targets at time `t_next`.
fn add_pin_targets(pins: &[Pin], h: f64, t_next: f64, b: &mut [f64]) {
    for pin in pins {
        let t = pin.target(t_next);
        (0..3).for_each(|d| b[3 * pin.vertex + d] += h * h * pin.weight * t[d]);
    }
}

/// The part of `b` the projections leave out, `c = M q̃ + h² Σ w_pin t`
/// (the GPU global step adds `h² Σ w Gᵀ p` on the device).
pub fn constant_rhs(body: &Body, pins: &[Pin], predicted: &[f64], h: f64, t_next: f64, c: &mut [f64]) {
    c.par_chunks_mut(3).zip(predicted.par_chunks(3)).zip(&body.mass).for_each(|((c, q), m)| {
        (0..3).for_each(|d| c[d] = m * q[d]);
    });
    add_pin_targets(pins, h, t_next, c);
}

/// The fixed map `p ↦ h² Σ w Gᵀ p` of [`assemble_rhs`] as entries per
/// vertex (`coef = h² w gₐ[c]` times the three values of column `c` of a
/// projection), for the projections laid end to end as
/// [`Projections::flat`] gives them: tets, triangles, stencils.
pub fn rhs_map(body: &Body, p: &Projections, h: f64) -> RhsMap {
    let h2 = h * h;
    let tets = p.tet_duals.len();
    let (tris, bending) = (9 * tets, 9 * tets + 6 * p.triangles.len());
    let mut map =
        RhsMap { vertex_ptr: vec![0], projections: bending + 3 * p.bending.len(), ..Default::default() };
    let n = body.vertex_count();
    let tet_incidence = Incidence::new(n, body.tets.iter().map(|e| e.vertices.as_slice()));
    for v in 0..n {
        for &(e, a) in tet_incidence.of(v) {
            let el = &body.tets[e as usize];
            for c in 0..3 {
                map.base.push((9 * e as usize + 3 * c) as u32);
                map.coef.push(h2 * el.weight * el.grads[a as usize][c]);
            }
        }
        for &(e, a) in p.tri_incidence.of(v) {
            let el = &body.triangles[e as usize];
            for c in 0..2 {
                map.base.push((tris + 6 * e as usize + 3 * c) as u32);
                map.coef.push(h2 * el.weight * el.grads[a as usize][c]);
            }
        }
        for &(st, a) in p.bending_incidence.of(v) {
            let stencil = &body.bending[st as usize];
            map.base.push((bending + 3 * st as usize) as u32);
            map.coef.push(h2 * stencil.weight * stencil.coeffs[a as usize]);
        }
        map.vertex_ptr.push(map.base.len() as u32);
    }
    map
}

/// The body's terms for a device whose frames run the local step too
/// ([`crate::device::DeviceGlobalStep::frame`]): a body of ARAP,
/// co-rotational, Neo-Hookean or stable Neo-Hookean elements (tets,
/// membranes and their bending).
pub fn device_terms(body: &Body, arap_sweeps: usize) -> DeviceTerms {
    let model = body.constitutive;
    let index = |v: &usize| *v as u32;
    let mut t = DeviceTerms {
        model,
        arap_sweeps: arap_sweeps.min(u32::MAX as usize) as u32,
        stencil_ptr: vec![0],
        ..Default::default()
    };
    for e in &body.tets {
        t.tet_vertices.extend(e.vertices.iter().map(index));
        t.tet_coefficients.extend(e.grads.iter().flat_map(|g| [g[0], g[1], g[2]]));
        t.tet_coefficients.extend([e.lame.mu, e.lame.lambda, e.weight / e.measure]);
    }
    for e in &body.triangles {
        t.triangle_vertices.extend(e.vertices.iter().map(index));
        t.triangle_coefficients.extend(e.grads.iter().flat_map(|g| [g[0], g[1]]));
        t.triangle_coefficients.extend([e.lame.mu, e.lame.lambda, e.weight / e.measure]);
    }
    for s in &body.bending {
        t.stencil_vertices.extend(s.vertices.iter().map(index));
        t.stencil_coefficients.extend(&s.coeffs);
        t.stencil_ptr.push(t.stencil_vertices.len() as u32);
        t.stencil_rest.push(s.rest_length);
    }
    t
}
