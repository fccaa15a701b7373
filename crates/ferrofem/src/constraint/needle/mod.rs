//! A needle's constraint groups (zeng2022 §6.2.5): the tip's contact with
//! the surface before the puncture, then one [`ConstraintGroup::Shaft`]
//! group per point of tissue on the shaft, in the frame (along the
//! shaft, across it ×2); and the tissue's reaction on the needle read back
//! from the step's forces.

use nalgebra::Vector3;

use super::key::Partner;
use super::{ConstraintGroup, Group};
use crate::collision::{tangents, Weights};
use crate::needle::{MaterialPoint, Needle, NeedleReaction};
use crate::{Model, State};

/// The needles' groups at the start of a step `t → t + h` (the state's time).
pub fn needle_groups(model: &Model, state: &State, groups: &mut Vec<Group>) {
    let (t, h, alarm) = (state.time, model.time_step, model.contact.alarm_distance);
    for (n, (needle, s)) in model.needles.iter().zip(&state.needles).enumerate() {
        let (b, x) = (needle.body, state.bodies[needle.body].positions.as_slice());
        let (tip, frame) = (needle.tip_at(t), frame(needle));
        let shift = needle.tip_at(t + h) - tip;
        let obstacle_shift = frame.map(|d| shift.dot(&Vector3::from(d)));
        let group = |law, offset, point: &MaterialPoint, (id, partner)| {
            Group::on_body(law, frame, offset, (b, weights(point)), obstacle_shift, (b, id, partner))
        };
        if !s.punctured {
            // The tip's contact along the axis, once within the alarm distance.
            let surface =
                needle.surface_ahead(&model.bodies[b].surface, x, t, alarm).filter(|(g, _)| *g < alarm);
            if let Some((gap, point)) = surface {
                let law = ConstraintGroup::Contact { mu: needle.tip_friction };
                groups.push(group(law, [gap, 0.0, 0.0], &point, (usize::MAX, Partner::NeedleTip(n))));
            }
            continue;
        }
        for p in &s.points {
            let at = p.point.position(x) - tip;
            let across = [1, 2].map(|k| at.dot(&Vector3::from(frame[k])));
            let (law, key) = (ConstraintGroup::Shaft { bound: p.bound }, (p.id, Partner::NeedleShaft(n)));
            groups.push(group(law, [0.0, across[0], across[1]], &p.point, key));
        }
    }
}

/// The tissue's reaction on needle `n` over the step whose groups and
/// forces (N per row) are given: the tip's contact force and the shaft's
/// friction, each against the insertion.
pub fn needle_reaction(n: usize, groups: &[Group], lambda: &[f64]) -> NeedleReaction {
    let mut r = NeedleReaction::default();
    for (k, g) in groups.iter().enumerate() {
        match g.key.2 {
            Partner::NeedleTip(m) if m == n => {
                let mut point = MaterialPoint::default();
                point.pairs[..g.parts()[0].1.len()].copy_from_slice(&g.parts()[0].1);
                r.tip = Some((point, lambda[3 * k]));
            }
            Partner::NeedleShaft(m) if m == n => r.shaft += lambda[3 * k],
            _ => {}
        }
    }
    r
}

/// The rows' frame of a needle: along the shaft, then two directions across it.
fn frame(needle: &Needle) -> [[f64; 3]; 3] {
    let (t1, t2) = tangents(&needle.axis);
    [needle.axis, t1, t2].map(|d| [d.x, d.y, d.z])
}

/// A material point's pairs of non-zero weight.
fn weights(p: &MaterialPoint) -> Weights {
    let mut pairs = [(0, 0.0); 4];
    let mut len = 0;
    for &(v, w) in p.pairs.iter().filter(|(_, w)| *w != 0.0) {
        pairs[len] = (v, w);
        len += 1;
    }
    Weights::new(&pairs[..len])
}

#[cfg(test)]
mod tests;
