//! A needle inserted into a body (zeng2022 §6.2.5, Fig. 16, after
//! Adagolodjo et al. 2019): a rigid straight needle on a prescribed path.
//! Its tip presses on the surface as a frictional contact until the
//! contact's force reaches the puncture force; from then on, the tissue it
//! has passed through is held on its shaft, one material point every
//! `spacing`, by the shaft law of the constraint stack (bilateral across
//! the shaft, friction of a fixed bound `friction × spacing` along it;
//! [`crate::constraint::needle_groups`]). The points are made where the
//! tip is as it advances and dropped when the shaft leaves them; a needle
//! drawn out of the tissue can puncture it again.

mod geometry;

use nalgebra::Vector3;

use crate::element::TetElement;
use crate::obstacle::ObstacleMotion;

pub use geometry::{locate_in_tets, surface_hit, MaterialPoint};

/// A needle: its pose, path and the tissue's response.
#[derive(Debug, Clone, PartialEq)]
pub struct Needle {
    /// Name used in messages and stats.
    pub name: String,
    /// The body it is inserted into (model order).
    pub body: usize,
    /// Tip position at t = 0 (m).
    pub tip: Vector3<f64>,
    /// Unit direction of insertion (from the needle's back to its tip).
    pub axis: Vector3<f64>,
    /// Length of the shaft behind the tip (m).
    pub length: f64,
    /// Translation of the needle (no rotation: the axis stays).
    pub motion: ObstacleMotion,
    /// Normal force of the tip on the surface at which the surface gives (N).
    pub puncture_force: f64,
    /// Friction along the shaft per length of tissue it passes through (N/m).
    pub friction: f64,
    /// Distance between the shaft's points of tissue (m).
    pub spacing: f64,
    /// Coulomb coefficient of the tip on the surface before puncture.
    pub tip_friction: f64,
}

/// A point of tissue on a needle's shaft: its material point (in a tet,
/// or on the surface triangle where the needle entered) and its friction
/// bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShaftPoint {
    /// Identity of the point while it exists (its warm start's key).
    pub id: usize,
    /// Where it is in the body.
    pub point: MaterialPoint,
    /// Largest friction force along the shaft (N).
    pub bound: f64,
}

/// What a needle has done so far: part of the simulation [`crate::State`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NeedleState {
    /// Whether the tip is through the surface.
    pub punctured: bool,
    /// The tissue points on the shaft, in the order the tip made them.
    pub points: Vec<ShaftPoint>,
    /// The id the next point takes.
    pub next_id: usize,
    /// Force of the tissue on the needle against the insertion over the last
    /// step (N): the tip's contact force, then the shaft's friction.
    pub force: f64,
    /// Normal force of the tip on the surface in the last step (N; zero
    /// once punctured).
    pub tip_force: f64,
}

/// The tissue's forces on a needle over a step, from its constraint groups.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NeedleReaction {
    /// The tip's contact, when it had one: the surface point and its normal force (N).
    pub tip: Option<(MaterialPoint, f64)>,
    /// The shaft's friction along it, summed over its points (N).
    pub shaft: f64,
}

impl Needle {
    /// Tip position at time `t` (m).
    pub fn tip_at(&self, t: f64) -> Vector3<f64> {
        self.tip + self.motion.offset(t).0
    }

    /// The shaft at time `t`: its back end, then its tip (m).
    pub fn segment(&self, t: f64) -> [Vector3<f64>; 2] {
        let tip = self.tip_at(t);
        [tip - self.axis * self.length, tip]
    }

    /// The shaft's pose at time `t`: the rotation taking the local z axis
    /// onto the axis, and the shaft's midpoint (a cylinder of its length
    /// along local z, centred at the origin, drawn there is the needle).
    pub fn pose(&self, t: f64) -> (nalgebra::Rotation3<f64>, Vector3<f64>) {
        let [back, tip] = self.segment(t);
        shaft_pose(&back, &tip)
    }

    /// How far (m) the tip is behind the surface of `surface` (at
    /// positions `x`) along the axis at time `t`, and the surface point
    /// the needle's line enters through (`None`: it meets no surface facing
    /// it within its length and `reach` ahead of the tip).
    pub fn surface_ahead(
        &self,
        surface: &ferrofem_mesh::BoundarySurface,
        x: &[f64],
        t: f64,
        reach: f64,
    ) -> Option<(f64, MaterialPoint)> {
        let [back, _] = self.segment(t);
        let (s, point) = surface_hit(surface, x, &back, &self.axis, self.length + reach)?;
        Some((s - self.length, point))
    }

    /// After a step ending at `t` with the body at `x`, given the tissue's
    /// `reaction`: the needle's force, the puncture, then the points the
    /// shaft left dropped and those the tip reached made.
    pub fn advance(
        &self,
        state: &mut NeedleState,
        tets: &[TetElement],
        x: &[f64],
        t: f64,
        reaction: NeedleReaction,
    ) {
        state.tip_force = reaction.tip.map_or(0.0, |(_, f)| f);
        state.force = state.tip_force + reaction.shaft;
        if let Some((point, _)) = reaction.tip.filter(|&(_, f)| f >= self.puncture_force) {
            state.punctured = true;
            state.points.clear();
            self.add_point(state, point);
        }
        let tip = self.tip_at(t);
        let along = |p: &ShaftPoint| (p.point.position(x) - tip).dot(&self.axis);
        state.points.retain(|p| (-self.length..=0.0).contains(&along(p)));
        let Some(last) = state.points.last().map(along) else {
            state.punctured = false;
            return;
        };
        let mut depth = last + self.spacing;
        while depth <= 0.0 {
            if let Some(point) = locate_in_tets(tets, x, &(tip + self.axis * depth)) {
                self.add_point(state, point);
            }
            depth += self.spacing;
        }
    }

    fn add_point(&self, state: &mut NeedleState, point: MaterialPoint) {
        state.points.push(ShaftPoint { id: state.next_id, point, bound: self.friction * self.spacing });
        state.next_id += 1;
    }
}

/// The pose of a shaft from `back` to `tip`: the rotation taking the
/// local z axis onto `tip − back`, and the midpoint (what [`Needle::pose`]
/// gives, and what a replay makes of a needle's segment in `needles.pvd`).
pub fn shaft_pose(back: &Vector3<f64>, tip: &Vector3<f64>) -> (nalgebra::Rotation3<f64>, Vector3<f64>) {
    let r = nalgebra::Rotation3::rotation_between(&Vector3::z(), &(tip - back))
        .unwrap_or_else(|| nalgebra::Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI));
    (r, 0.5 * (back + tip))
}

#[cfg(test)]
pub(crate) mod tests;
