//! The proximity space of a step and the re-linearization of its contact
//! groups (zeng-implicit §5–6): the vertices whose positions the groups'
//! points and directions read (`p = G(q)`, eq. 6), their positions at an
//! iterate, and each contact's direction, gap and obstacle motion there.
//! The groups' points stay the material points found by `detect_contacts`
//! (so `H` is constant within the step, as §6 assumes); their directions
//! `C_k` and gaps follow the iterate.

use std::collections::HashMap;

use nalgebra::Vector3;

use super::jacobian::{clear_rows, path_terms, push_path, push_point};
use super::ConstraintGroup;
use super::{ConstraintJacobian, Group, Partner};
use crate::collision::{closest_between_segments, tangents};
use crate::Model;

/// World axes: the rows of a proximity vertex.
const AXES: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// The vertices the step's groups read and their positions (m, three per
/// vertex): at the start of the step, after the free motion, and at the
/// current iterate of the corrective motion.
#[derive(Debug)]
pub struct Proximity {
    /// (body, vertex) of each proximity vertex, by body then vertex.
    pub vertices: Vec<(usize, usize)>,
    index: HashMap<(usize, usize), usize>,
    /// `x_t`.
    pub start: Vec<f64>,
    /// `x_free = x_t + h v_free`.
    pub free: Vec<f64>,
    /// The iterate `x_k`.
    pub current: Vec<f64>,
    /// Per body: three identity rows per proximity vertex of the body
    /// (the mapping Jacobian `H` of eq. 27 on the body's DOFs).
    pub body_rows: Vec<ferrofem_linalg::CsrMatrix>,
    /// `J_k = C_k Ĥ` on the proximity DOFs (`3 · index + axis`).
    pub jacobian: ferrofem_linalg::CsrMatrix,
}

impl Default for Proximity {
    fn default() -> Self {
        Proximity {
            vertices: Vec::new(),
            index: HashMap::new(),
            start: Vec::new(),
            free: Vec::new(),
            current: Vec::new(),
            body_rows: Vec::new(),
            jacobian: ConstraintJacobian::new(0).to_csr(),
        }
    }
}

impl Proximity {
    /// Gathers the vertices of `groups` and their positions: `start(b)` is
    /// body `b`'s start-of-step positions, `v_free(b, dof)` its free-motion
    /// velocity, `h` the time step. Storage is reused from step to step.
    pub fn gather<'x>(
        &mut self,
        groups: &[Group],
        start: impl Fn(usize) -> &'x [f64],
        v_free: impl Fn(usize, usize) -> f64,
        h: f64,
    ) {
        self.vertices.clear();
        self.vertices.extend(groups.iter().flat_map(Group::vertices));
        self.vertices.sort_unstable();
        self.vertices.dedup();
        self.index.clear();
        self.index.extend(self.vertices.iter().enumerate().map(|(i, &bv)| (bv, i)));
        let (start_x, free_x) = (&mut self.start, &mut self.free);
        start_x.clear();
        free_x.clear();
        for &(b, v) in &self.vertices {
            for d in 0..3 {
                let x = start(b)[3 * v + d];
                start_x.push(x);
                free_x.push(x + h * v_free(b, 3 * v + d));
            }
        }
        self.current.clone_from(&self.free);
    }

    /// The rows of each body's proximity vertices, in [`Self::body_rows`];
    /// `dofs[b]` is body `b`'s number of DOFs.
    pub fn assemble_body_rows(&mut self, dofs: impl ExactSizeIterator<Item = usize>) {
        self.body_rows.resize_with(dofs.len(), || ConstraintJacobian::new(0).to_csr());
        for (rows, n) in self.body_rows.iter_mut().zip(dofs) {
            clear_rows(rows);
            rows.pattern.ncols = n;
        }
        for &(b, v) in &self.vertices {
            push_point(&mut self.body_rows[b], &[(v, 1.0)], AXES);
        }
    }

    /// Index of (body, vertex) among the proximity vertices.
    pub fn index(&self, b: usize, v: usize) -> usize {
        self.index[&(b, v)]
    }

    /// Position of (body, vertex) in `x` (proximity layout).
    pub fn position(&self, x: &[f64], b: usize, v: usize) -> Vector3<f64> {
        let i = 3 * self.index(b, v);
        Vector3::new(x[i], x[i + 1], x[i + 2])
    }

    /// A group's point `p = Σ w x` (relative: weights are negative on the
    /// far side of a body–body contact) in `x`.
    pub fn point(&self, x: &[f64], g: &Group) -> Vector3<f64> {
        g.parts().iter().flat_map(|(b, w)| w.iter().map(move |&(v, wt)| self.position(x, *b, v) * wt)).sum()
    }

    /// `J = C Ĥ` (eq. 27) for `groups` on the proximity DOFs, in
    /// `self.jacobian`: each group's rows along its frame.
    pub fn assemble_jacobian(&mut self, groups: &[Group]) {
        let (index, j) = (&self.index, &mut self.jacobian);
        clear_rows(j);
        j.pattern.ncols = 3 * self.vertices.len();
        let mut weights = Vec::with_capacity(6);
        for g in groups {
            weights.clear();
            let points = g.parts().iter().flat_map(|(b, w)| w.iter().map(move |&(v, wt)| ((*b, v), wt)));
            weights.extend(points.map(|(bv, wt)| (index[&bv], wt)));
            match g.path() {
                [] => push_point(j, &weights, g.frame),
                path => push_path(j, path_terms(path, &|v| index[&(g.parts()[0].0, v)])),
            }
        }
    }
}

/// A contact's linearization at an iterate (zeng-implicit eq. 14, 25).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linearization {
    /// Unit normal along which the body point moves away from what it touches.
    pub normal: Vector3<f64>,
    /// Signed distance less the contact distance (m, negative: penetration).
    pub gap: f64,
    /// Displacement over the step of the obstacle's material point the
    /// contact holds against (m; zero against a body).
    pub shift: Vector3<f64>,
}

/// Group `g`'s contact at the iterate `x` (proximity layout) at the end of
/// the step `t → t + h`; `None` for an attachment (its rows never turn).
/// The obstacle side is found again at the iterate: the closest point of
/// an analytic or mesh obstacle, or a mesh obstacle's vertex; the normal of
/// a body triangle is taken at the iterate, on the side of the last frame.
pub fn linearize(
    g: &Group,
    proximity: &Proximity,
    x: &[f64],
    model: &Model,
    t: f64,
) -> Option<Linearization> {
    let ConstraintGroup::Contact { .. } = g.law else { return None };
    let h = model.time_step;
    let p = proximity.point(x, g);
    let skin = model.contact.contact_distance;
    let previous = Vector3::from(g.frame[0]);
    Some(match g.key.2 {
        Partner::Obstacle(o) => {
            let obstacle = &model.obstacles[o];
            let (d, n) = obstacle.signed_distance(&p, t + h);
            let surface = p - n * d;
            Linearization { normal: n, gap: d - skin, shift: surface - obstacle.carry(&surface, t + h, t) }
        }
        Partner::ObstacleVertex(o) => {
            let obstacle = &model.obstacles[o];
            let s = obstacle.vertex_at(g.key.1, t + h);
            let n = facing(triangle_normal(g.parts()[0], proximity, x), &previous);
            Linearization {
                normal: n,
                gap: n.dot(&(p - s)) - skin,
                shift: s - obstacle.vertex_at(g.key.1, t),
            }
        }
        Partner::ObstacleEdge(o, k, _) => {
            // Along the offset from the edge's closest point to the held
            // point while it stays on the side it came from; across it,
            // the last normal (the gap then negative).
            let obstacle = &model.obstacles[o];
            let [a, b] = obstacle.sharp_edge_at(k, t + h)?;
            let (_, r) = closest_between_segments(&p, &p, &a, &b);
            let (q, n) = (a + (b - a) * r, previous);
            let n = if (p - q).dot(&n) > 0.0 { (p - q).try_normalize(1e-15).unwrap_or(n) } else { n };
            Linearization { normal: n, gap: n.dot(&(p - q)) - skin, shift: q - obstacle.carry(&q, t + h, t) }
        }
        Partner::Body(_) => {
            let n = facing(triangle_normal(g.parts()[1], proximity, x), &previous);
            Linearization { normal: n, gap: n.dot(&p) - skin, shift: Vector3::zeros() }
        }
        Partner::NeedleTip(n) => {
            let needle = &model.needles[n];
            let tip = needle.tip_at(t + h);
            Linearization {
                normal: needle.axis,
                gap: needle.axis.dot(&(p - tip)),
                shift: tip - needle.tip_at(t),
            }
        }
        Partner::Target | Partner::NeedleShaft(_) | Partner::Cable(_) => return None,
    })
}

/// The unit normal of a part's triangle `(x₁ − x₀) × (x₂ − x₀)` at `x`.
fn triangle_normal(
    (b, w): (usize, crate::collision::Weights),
    proximity: &Proximity,
    x: &[f64],
) -> Vector3<f64> {
    let c = [0, 1, 2].map(|k| proximity.position(x, b, w[k].0));
    (c[1] - c[0]).cross(&(c[2] - c[0])).normalize()
}

/// `n` or `−n`, whichever faces `previous`.
fn facing(n: Vector3<f64>, previous: &Vector3<f64>) -> Vector3<f64> {
    if n.dot(previous) < 0.0 {
        -n
    } else {
        n
    }
}

/// Re-linearizes group `g` at its point `p` (iterate) with `lin`, `p_start`
/// being the point at the start of the step: frame `C = [n, t₁, t₂]`, and
/// offsets such that [`crate::solver::row_gaps`] gives, for the point `p'`
/// of the next iterate, `δₙ = gap + n·(p' − p)` (the gap linearized at
/// `p`, eq. 14) and `δₜ = t·(p' − p_start − shift)` (the slip against the
/// obstacle's material point).
pub fn relinearize(g: &mut Group, lin: &Linearization, p: &Vector3<f64>, p_start: &Vector3<f64>) {
    let n = lin.normal;
    let (t1, t2) = tangents(&n);
    g.frame = [n.into(), t1.into(), t2.into()];
    g.offset = [lin.gap - n.dot(&(p - p_start)) + n.dot(&lin.shift), 0.0, 0.0];
    g.obstacle_shift = g.frame.map(|d| lin.shift.dot(&Vector3::from(d)));
}

/// The angle between the normals of a frame and of `lin` (rad).
pub fn turn(frame: &[[f64; 3]; 3], lin: &Linearization) -> f64 {
    let n = Vector3::from(frame[0]);
    n.cross(&lin.normal).norm().atan2(n.dot(&lin.normal))
}

/// A contact's violation at the end of the step (m): its penetration, or
/// its separation when it carries force (`λₙ > 0`).
pub fn violation(lin: &Linearization, normal_force: f64) -> f64 {
    if normal_force > 0.0 {
        lin.gap.abs()
    } else {
        (-lin.gap).max(0.0)
    }
}

/// Penetration plus separation at contacts that carry force (m), the
/// largest over `groups` with forces `impulses`, measured with the contact
/// geometry at the end of the step `t → t + h` at positions `x(b)`.
pub fn end_violation<'x>(
    groups: &[Group],
    impulses: &[f64],
    model: &Model,
    x: impl Fn(usize) -> &'x [f64],
    t: f64,
    scratch: &mut Proximity,
) -> f64 {
    if impulses.len() != 3 * groups.len() {
        return 0.0;
    }
    scratch.gather(groups, x, |_, _| 0.0, 0.0);
    let at = &scratch.start;
    let lin = |g| linearize(g, scratch, at, model, t);
    groups
        .iter()
        .enumerate()
        .filter_map(|(k, g)| Some(violation(&lin(g)?, impulses[3 * k])))
        .fold(0.0, f64::max)
}
