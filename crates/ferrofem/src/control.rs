//! Control between steps: what a controller loop, a binding or an
//! interactive viewer changes in a running world. Kinematic vertices get
//! new targets, obstacles new poses, bodies new velocities, and
//! attachments (grabs) come and go. Every change is validated and refused
//! with a [`SimError::Input`] naming what is wrong; none reassembles or
//! refactorizes anything, so both integrators take it on the next step.

use nalgebra::{Rotation3, Vector3};

use crate::body::Kinematic;
use crate::constraint::Partner;
use crate::integrator::Integrator;
use crate::{SimError, World};

fn input(message: String) -> SimError {
    SimError::Input(message)
}

fn check_finite(what: &str, values: &[f64]) -> Result<(), SimError> {
    match values.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(input(format!("{what}: value {i} is {}, not a finite number", values[i]))),
    }
}

/// Index of `name` among `names` (of `kind`s), or an error listing them.
fn named<'a>(
    kind: &str,
    names: impl Iterator<Item = &'a str> + Clone,
    name: &str,
) -> Result<usize, SimError> {
    names.clone().position(|n| n == name).ok_or_else(|| {
        let all: Vec<String> = names.map(|n| format!("`{n}`")).collect();
        input(format!("no {kind} named `{name}` ({kind}s: {})", all.join(", ")))
    })
}

/// The last step's constraint groups as points, one per group of points
/// (a cable, a row over many points, is left out): what
/// `contacts_<frame>.vtp` holds and what a binding hands its user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConstraintPoints {
    /// The group's first point `Σ wᵢ xᵢ` at the end-of-step positions (m).
    pub points: Vec<[f64; 3]>,
    /// Its first row direction: the contact normal (x for an attachment).
    pub normals: Vec<[f64; 3]>,
    /// Its force `Σ_r λ_r d_r` (N, world axes) on the first point's body.
    pub forces: Vec<[f64; 3]>,
    /// The body the first point belongs to.
    pub bodies: Vec<usize>,
    /// Whether the group is an attachment (else a contact).
    pub attachment: Vec<bool>,
}

impl World {
    /// The last step's constraint groups as points ([`ConstraintPoints`]).
    pub fn constraint_points(&self) -> ConstraintPoints {
        let space = self.constraints();
        let mut c = ConstraintPoints::default();
        for (k, g) in space.problem.groups.iter().enumerate().filter(|(_, g)| g.path().is_empty()) {
            let (b, pts) = &g.parts()[0];
            let x = &self.state.bodies[*b].positions;
            c.points.push(pts.iter().fold([0.0; 3], |p, &(v, w)| [0, 1, 2].map(|d| p[d] + w * x[3 * v + d])));
            c.normals.push(g.frame[0]);
            let l = space.problem.impulses.get(3 * k..3 * k + 3).unwrap_or(&[0.0; 3]);
            c.forces.push([0, 1, 2].map(|d| (0..3).map(|r| l[r] * g.frame[r][d]).sum::<f64>()));
            c.bodies.push(*b);
            c.attachment.push(matches!(g.law, crate::constraint::ConstraintGroup::Attachment));
        }
        c
    }

    /// Index of the body named `name`.
    pub fn body_index(&self, name: &str) -> Result<usize, SimError> {
        named("body", self.model.bodies.iter().map(|b| b.name.as_str()), name)
    }

    /// Index of the obstacle named `name`.
    pub fn obstacle_index(&self, name: &str) -> Result<usize, SimError> {
        named("obstacle", self.model.obstacles.iter().map(|o| o.name.as_str()), name)
    }

    /// Checks that body `b` has a vertex `v`.
    fn check_vertex(&self, b: usize, v: usize) -> Result<(), SimError> {
        let body = &self.model.bodies[b];
        if v >= body.vertex_count() {
            return Err(input(format!(
                "body `{}` has {} vertices: vertex {v} does not exist",
                body.name,
                body.vertex_count()
            )));
        }
        Ok(())
    }

    /// Checks that `b` is a body of the world.
    pub fn check_body(&self, b: usize) -> Result<(), SimError> {
        let n = self.model.bodies.len();
        (b < n).then_some(()).ok_or_else(|| input(format!("body index {b} out of range ({n} bodies)")))
    }

    /// Sets the velocities (m/s, flat `3·vertex + axis`) of body `b`'s
    /// free vertices; kinematic vertices keep following their targets.
    pub fn set_velocities(&mut self, b: usize, velocities: &[f64]) -> Result<(), SimError> {
        self.check_body(b)?;
        let body = &self.model.bodies[b];
        if velocities.len() != body.dofs() {
            return Err(input(format!(
                "body `{}`: {} velocity values given, {} expected (3 per vertex)",
                body.name,
                velocities.len(),
                body.dofs()
            )));
        }
        check_finite(&format!("body `{}`: velocities", body.name), velocities)?;
        let state = &mut self.state.bodies[b];
        for v in (0..body.vertex_count()).filter(|&v| !body.is_kinematic[v]) {
            state.velocities[3 * v..3 * v + 3].copy_from_slice(&velocities[3 * v..3 * v + 3]);
        }
        Ok(())
    }

    /// Places kinematic vertices of body `b`: each `vertices[i]` reaches
    /// `targets[i]` (m) at the end of the next step and stays there until
    /// placed again. Only vertices the scene made kinematic (`fixed` or
    /// `prescribed`) can be placed: the local-global matrix holds them by
    /// pins, so which vertices are kinematic cannot change during a run.
    pub fn set_prescribed(
        &mut self,
        b: usize,
        vertices: &[usize],
        targets: &[[f64; 3]],
    ) -> Result<(), SimError> {
        self.check_body(b)?;
        let name = &self.model.bodies[b].name;
        if vertices.len() != targets.len() {
            let (n, m) = (vertices.len(), targets.len());
            return Err(input(format!("body `{name}`: {n} vertices but {m} targets")));
        }
        check_finite(&format!("body `{name}`: targets"), targets.as_flattened())?;
        for &v in vertices {
            self.check_vertex(b, v)?;
            if !self.model.bodies[b].is_kinematic[v] {
                return Err(input(format!(
                    "body `{name}`: vertex {v} is not kinematic; make it kinematic in the scene \
                     (`fixed` or `prescribed`), or hold it with an attachment"
                )));
            }
        }
        let body = &mut self.model.bodies[b];
        for (&v, p) in vertices.iter().zip(targets) {
            body.kinematic[v] = Some(Kinematic::Placed(*p));
        }
        if let Integrator::LocalGlobal(lg) = &mut self.integrator {
            lg.retarget(b, &body.kinematic);
        }
        Ok(())
    }

    /// Moves obstacle `o` from its current pose to `(rotation,
    /// translation)` over the next step and holds it there
    /// ([`crate::obstacle::Obstacle::steer`]).
    pub fn set_obstacle_pose(
        &mut self,
        o: usize,
        rotation: Rotation3<f64>,
        translation: Vector3<f64>,
    ) -> Result<(), SimError> {
        let n = self.model.obstacles.len();
        let obstacle = self
            .model
            .obstacles
            .get_mut(o)
            .ok_or_else(|| input(format!("obstacle index {o} out of range ({n} obstacles)")))?;
        let what = format!("obstacle `{}`: pose", obstacle.name);
        check_finite(&what, rotation.matrix().as_slice())?;
        check_finite(&what, translation.as_slice())?;
        obstacle.steer(self.state.time, self.model.time_step, rotation, translation);
        Ok(())
    }

    /// Attaches vertex `v` of body `b` to the point `target` (m) by a
    /// bilateral constraint (solved with the contacts, zeng2022 §3.3), reached at the end of the next
    /// step; an attachment the vertex already has is moved instead. A grab
    /// is an attachment moved every step.
    pub fn attach(&mut self, b: usize, v: usize, target: [f64; 3]) -> Result<(), SimError> {
        self.check_body(b)?;
        self.check_vertex(b, v)?;
        let body = &self.model.bodies[b];
        check_finite(&format!("body `{}`: attachment target", body.name), &target)?;
        if body.is_kinematic[v] {
            return Err(input(format!(
                "body `{}`: vertex {v} is kinematic; place it with set_prescribed instead",
                body.name
            )));
        }
        if let Some(reason) = self.local_global().and_then(|lg| lg.refuses_constraints()) {
            return Err(input(format!("body `{}`: cannot attach: {reason}", body.name)));
        }
        let attachments = &mut self.model.bodies[b].attachments;
        match attachments.iter_mut().find(|(u, _)| *u == v) {
            Some(a) => a.1 = Kinematic::Placed(target),
            None => attachments.push((v, Kinematic::Placed(target))),
        }
        Ok(())
    }

    /// Removes the attachments of vertex `v` of body `b` (those the scene
    /// made included); whether it had any.
    pub fn detach(&mut self, b: usize, v: usize) -> Result<bool, SimError> {
        self.check_body(b)?;
        self.check_vertex(b, v)?;
        let attachments = &mut self.model.bodies[b].attachments;
        let before = attachments.len();
        attachments.retain(|(u, _)| *u != v);
        Ok(attachments.len() < before)
    }

    /// The force (N, world axes) each attachment of body `b` applied on its
    /// vertex in the last step, `Hᵀλ` of its group (zeng2022 eq. 17), by vertex.
    pub fn attachment_forces(&self, b: usize) -> Vec<(usize, [f64; 3])> {
        let space = self.constraints();
        let attachments = space.problem.groups.iter().enumerate().filter_map(|(k, g)| match g.key {
            (body, v, Partner::Target) if body == b => Some((k, v)),
            _ => None,
        });
        attachments
            .filter_map(|(k, v)| {
                space.problem.impulses.get(3 * k..3 * k + 3).map(|l| (v, [l[0], l[1], l[2]]))
            })
            .collect()
    }
}
