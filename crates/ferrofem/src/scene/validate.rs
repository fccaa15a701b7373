//! The value checks of a scene file's structures: every key a scene can
//! get wrong is refused with its path ([`Invalid`]) before a world is built.

use crate::body::Motion;
use crate::delassus::DelassusMethod;
use crate::element::{Constitutive, PolarMethod};
use crate::error::Invalid;
use crate::integrator::local_global::{Acceleration, GlobalStepMethod};
use crate::obstacle::Shape;
use crate::solver::ConstraintSolver;

use super::spec::*;

pub(super) fn finite(key: String, v: &[f64]) -> Result<(), Invalid> {
    match v.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(Invalid::new(key, format!("{x} is not a finite number"))),
        None => Ok(()),
    }
}

fn one_selection(key: &str, a: bool, b: bool, names: &str) -> Result<(), Invalid> {
    if a == b {
        return Err(Invalid::new(key.to_string(), format!("give exactly one of {names}")));
    }
    Ok(())
}

impl SceneFile {
    /// Value checks serde cannot express; errors carry the key path.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.validate_simulation()?;
        self.validate_implicit_euler()?;
        if self.bodies.is_empty() {
            return Err(Invalid::new("body".into(), "the scene has no body".into()));
        }
        match self.simulation.integrator {
            IntegratorKind::LocalGlobal => self.validate_local_global()?,
            IntegratorKind::ImplicitEuler => self.validate_implicit_euler_bodies()?,
        }
        for (i, o) in self.obstacles.iter().enumerate() {
            o.validate(&format!("obstacle[{i}]"))?;
        }
        self.validate_needles_and_cables()?;
        self.validate_constraint_solver()?;
        self.validate_contact()?;
        self.render.validate()?;
        self.validate_bodies()
    }

    /// `[simulation]`: a finite positive time step, finite gravity, output every ≥ 1 steps.
    fn validate_simulation(&self) -> Result<(), Invalid> {
        let s = &self.simulation;
        if !(s.time_step.is_finite() && s.time_step > 0.0) {
            return Err(Invalid::new(
                "simulation.time_step".into(),
                format!("{} must be finite and positive (s)", s.time_step),
            ));
        }
        finite("simulation.gravity".into(), &s.gravity)?;
        if s.output_every == 0 {
            return Err(Invalid::new("simulation.output_every".into(), "must be at least 1".into()));
        }
        Ok(())
    }

    /// `[implicit_euler]`: a stopping rule for PCG and a sound Jacobi polar iteration.
    fn validate_implicit_euler(&self) -> Result<(), Invalid> {
        let ie = &self.implicit_euler;
        if ie.max_iterations.is_none() && ie.rel_tolerance.is_none() {
            return Err(Invalid::new(
                "implicit_euler".into(),
                "give max_iterations and/or rel_tolerance".into(),
            ));
        }
        if ie.max_iterations == Some(0) {
            return Err(Invalid::new(
                "implicit_euler.max_iterations".into(),
                "must be at least 1 (0 PCG iterations would leave every body at its initial guess)".into(),
            ));
        }
        if let Some(t) = ie.rel_tolerance {
            if !(t.is_finite() && t >= 0.0) {
                return Err(Invalid::new(
                    "implicit_euler.rel_tolerance".into(),
                    format!("{t} must be finite and non-negative"),
                ));
            }
        }
        if let Some(c) = ie.residual_ceiling {
            if !(c.is_finite() && c > 0.0) {
                return Err(Invalid::new(
                    "implicit_euler.residual_ceiling".into(),
                    format!("{c} must be finite and positive (a relative residual PCG goes on above)"),
                ));
            }
        }
        let real_time = self.simulation.preset == Some(Preset::RealTime)
            && self.simulation.integrator == IntegratorKind::ImplicitEuler;
        if real_time && ie.preconditioner != crate::integrator::PreconditionerKind::Ldlt {
            return Err(Invalid::new(
                "implicit_euler.preconditioner".into(),
                format!(
                    "preset = \"real-time\" stops PCG after {REAL_TIME_PCG_ITERATIONS} iteration(s), \
                     which converge only on the \"ldlt\" preconditioner it sets (on a Jacobi one they leave \
                     a relative residual above 1): drop the preset or this key"
                ),
            ));
        }
        let turns = ie.warp && ie.preconditioner == crate::integrator::PreconditionerKind::Ldlt;
        if ie.preconditioner_warp == crate::integrator::PreconditionerWarp::Vertex && !turns {
            return Err(Invalid::new(
                "implicit_euler.preconditioner_warp".into(),
                "\"vertex\" turns an outdated LDLᵀ factor per vertex: it needs preconditioner = \"ldlt\" \
                 and warp = true (as preset = \"real-time\" sets them)"
                    .into(),
            ));
        }
        let r = ie.refresh;
        if r.handover > 0 && !(r.asynchronous && r.handover < r.every) {
            return Err(Invalid::new(
                "implicit_euler.refresh.handover".into(),
                format!(
                    "{} steps: a handover needs asynchronous = true and fewer steps than every = {} \
                     (it ends before the next factor comes in)",
                    r.handover, r.every
                ),
            ));
        }
        if let PolarMethod::Jacobi { max_sweeps, tolerance } = ie.polar {
            if max_sweeps == 0 || !(tolerance.is_finite() && tolerance >= 0.0) {
                return Err(Invalid::new(
                    "implicit_euler.polar.jacobi".into(),
                    "max_sweeps ≥ 1 and a finite tolerance ≥ 0".into(),
                ));
            }
        }
        Ok(())
    }

    /// Bodies implicit Euler can run: co-rotational or stable Neo-Hookean volumes, no membranes.
    fn validate_implicit_euler_bodies(&self) -> Result<(), Invalid> {
        for (i, b) in self.bodies.iter().enumerate() {
            let key = format!("body[{i}]");
            if matches!(b.mesh, MeshSpec::Sheet { .. }) || b.bending.is_some() || b.thickness.is_some() {
                return Err(Invalid::new(
                    key,
                    "membranes (sheet, thickness, bending) need simulation.integrator = \"local-global\""
                        .into(),
                ));
            }
            if b.constitutive
                .is_some_and(|c| !matches!(c, Constitutive::Corotational | Constitutive::StableNeoHookean))
            {
                return Err(Invalid::new(
                    format!("{key}.constitutive"),
                    "implicit Euler runs \"corotational\" and \"stable-neo-hookean\"; other models need simulation.integrator = \"local-global\""
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// `[constraint_solver]` against the integrator: what each Delassus method and solver needs.
    fn validate_constraint_solver(&self) -> Result<(), Invalid> {
        let s = &self.simulation;
        let cs = &self.constraint_solver;
        let local_global = s.integrator == IntegratorKind::LocalGlobal;
        let newton = matches!(cs.solver(local_global), ConstraintSolver::NonSmoothNewton(_));
        let stored_s = local_global && self.local_global.global_step.may_store_s();
        if cs.delassus == DelassusMethod::SparseInverse && !stored_s {
            return Err(Invalid::new(
                "constraint_solver.delassus".into(),
                "\"sparse-inverse\" reads W from the stored S: it needs integrator = \"local-global\" with \
                 global_step = \"sparse-inverse\" or \"auto\""
                    .into(),
            ));
        }
        if !local_global && cs.newton_schedule.is_some() {
            return Err(Invalid::new(
                "constraint_solver.newton_schedule".into(),
                "Newton steps per local-global iteration: implicit Euler solves the constraints once per step, \
                 with up to newton_iterations"
                    .into(),
            ));
        }
        if newton && cs.delassus == DelassusMethod::Unbuilt {
            return Err(Invalid::new(
                "constraint_solver.delassus".into(),
                "the non-smooth Newton needs W assembled: \"unbuilt\" goes with method = \"pgs\"".into(),
            ));
        }
        Ok(())
    }

    /// `[contact]`: `0 ≤ contact_distance ≤ alarm_distance`, finite.
    fn validate_contact(&self) -> Result<(), Invalid> {
        let c = &self.contact;
        if !(c.contact_distance.is_finite() && c.contact_distance >= 0.0 && c.alarm_distance.is_finite())
            || c.alarm_distance < c.contact_distance
        {
            return Err(Invalid::new(
                "contact".into(),
                "need 0 ≤ contact_distance ≤ alarm_distance, finite".into(),
            ));
        }
        Ok(())
    }

    /// `[[needle]]` and `[[cable]]`: each in a body of the scene, on the
    /// CPU (their laws have no device path).
    fn validate_needles_and_cables(&self) -> Result<(), Invalid> {
        let bodies: Vec<&str> = self.bodies.iter().map(|b| b.name.as_str()).collect();
        for (i, n) in self.needles.iter().enumerate() {
            n.validate(&format!("needle[{i}]"), &bodies)?;
        }
        for (i, c) in self.cables.iter().enumerate() {
            c.validate(&format!("cable[{i}]"), &bodies)?;
        }
        let cpu_only = [(self.needles.is_empty(), "a needle's shaft"), (self.cables.is_empty(), "a cable")];
        match cpu_only.iter().find(|(none, _)| !none) {
            Some((_, what)) if self.simulation.device == crate::Device::Gpu => Err(Invalid::new(
                "simulation.device".into(),
                format!("{what} is solved by the CPU's constraint solvers: device = \"cpu\""),
            )),
            _ => Ok(()),
        }
    }

    /// Each body, under a name no other body has.
    fn validate_bodies(&self) -> Result<(), Invalid> {
        let mut names = std::collections::HashSet::new();
        for (i, b) in self.bodies.iter().enumerate() {
            if !names.insert(&b.name) {
                return Err(Invalid::new(
                    format!("body[{i}].name"),
                    format!("duplicate body name {:?}", b.name),
                ));
            }
            b.validate(&format!("body[{i}]"))?;
        }
        Ok(())
    }
}

impl SceneFile {
    /// What the local-global integrator does not support yet is refused by
    /// name rather than silently ignored.
    fn validate_local_global(&self) -> Result<(), Invalid> {
        self.local_global.check()?;
        if self.simulation.device == crate::Device::Gpu && !self.local_global.global_step.may_store_s() {
            return Err(Invalid::new(
                "local_global.global_step".into(),
                "simulation.device = \"gpu\" runs the \"sparse-inverse\" global step (two SpMVs by S)".into(),
            ));
        }
        let needs_s = crate::integrator::local_global::global::reads_s(
            self.simulation.device,
            self.constraint_solver.delassus,
        );
        if let Err(why) = self.local_global.global_step.settle(needs_s, self.local_global.precision) {
            return Err(Invalid::new("local_global.precision".into(), why.into()));
        }
        let constrained = !self.obstacles.is_empty()
            || !self.needles.is_empty()
            || !self.cables.is_empty()
            || self.bodies.len() > 1
            || self.bodies.iter().any(|b| !b.attach.is_empty() || b.self_collision);
        if constrained && self.local_global.global_step == GlobalStepMethod::Jacobi {
            return Err(Invalid::new(
                "local_global.global_step".into(),
                "contact and attachments need a complete global step (\"sparse-inverse\" or \"triangular\"): \
                 the Jacobi baseline has no A⁻¹ to build W from"
                    .into(),
            ));
        }
        if self.contact.resolution != crate::collision::Resolution::Explicit {
            return Err(Invalid::new(
                "contact.resolution".into(),
                "\"implicit\" re-linearizes the constraints of implicit Euler's single solve; the \
                 local-global integrator solves them in every iteration already: write \"explicit\""
                    .into(),
            ));
        }
        if constrained && self.local_global.acceleration == Acceleration::Lbfgs {
            return Err(Invalid::new(
                "local_global.acceleration".into(),
                "\"lbfgs\" minimizes the unconstrained step energy: scenes with contact or attachments \
                 take \"anderson\" or \"none\""
                    .into(),
            ));
        }
        for (i, b) in self.bodies.iter().enumerate() {
            let key = format!("body[{i}]");
            if b.damping != crate::body::Rayleigh::default() {
                return Err(Invalid::new(
                    format!("{key}.damping"),
                    "not supported by the local-global integrator yet".into(),
                ));
            }
            let sheet = matches!(b.mesh, MeshSpec::Sheet { .. });
            if !sheet && (b.thickness.is_some() || b.bending.is_some()) {
                return Err(Invalid::new(key, "thickness and bending apply to a sheet mesh only".into()));
            }
            if let Some(t) = b.thickness {
                if !(t.is_finite() && t > 0.0) {
                    return Err(Invalid::new(
                        format!("{key}.thickness"),
                        format!("{t} must be finite and positive (m)"),
                    ));
                }
            }
            if let Some(bd) = b.bending {
                if !(bd.stiffness.is_finite() && bd.stiffness >= 0.0) {
                    return Err(Invalid::new(
                        format!("{key}.bending.stiffness"),
                        "must be finite and ≥ 0 (N·m)".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl ObstacleSpec {
    fn validate(&self, key: &str) -> Result<(), Invalid> {
        if !(self.friction.is_finite() && self.friction >= 0.0) {
            return Err(Invalid::new(
                format!("{key}.friction"),
                format!("{} must be finite and ≥ 0", self.friction),
            ));
        }
        let t = self.transform;
        match (self.shape, &self.mesh) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(Invalid::new(key.into(), "give exactly one of `shape` or `mesh`".into()));
            }
            (None, Some(MeshSpec::Sheet { .. })) => {
                return Err(Invalid::new(
                    format!("{key}.mesh"),
                    "a sheet is open: a mesh obstacle must be closed".into(),
                ));
            }
            (None, Some(MeshSpec::File { tetrahedralize: Some(_), .. })) => {
                return Err(Invalid::new(
                    format!("{key}.mesh.file.tetrahedralize"),
                    "an obstacle is its surface: `tetrahedralize` fills a body's".into(),
                ));
            }
            (None, Some(_)) => positive_scale(key, t.scale)?,
            (Some(shape), None) => {
                if shape_dims(shape).iter().any(|d| !(d.is_finite() && *d > 0.0)) {
                    return Err(Invalid::new(
                        format!("{key}.shape"),
                        "dimensions must be finite and positive".into(),
                    ));
                }
                if t.scale != 1.0 {
                    return Err(Invalid::new(
                        format!("{key}.transform.scale"),
                        "analytic obstacles are not scaled: give the shape's size".into(),
                    ));
                }
            }
        }
        finite(format!("{key}.transform"), &[t.rotation_deg, t.translation].concat())?;
        let m = &self.motion;
        finite(format!("{key}.motion"), &[m.velocity, m.angular_velocity].concat())?;
        finite(format!("{key}.motion.path"), &m.path.concat())?;
        finite(format!("{key}.motion.pivot"), &m.pivot.unwrap_or_default())?;
        if m.path.windows(2).any(|w| w[1][0] <= w[0][0]) {
            return Err(Invalid::new(format!("{key}.motion.path"), "keyframe times must increase".into()));
        }
        Ok(())
    }
}

/// `transform.scale` of the item at `key` must be finite and positive.
fn positive_scale(key: &str, scale: f64) -> Result<(), Invalid> {
    if scale.is_finite() && scale > 0.0 {
        Ok(())
    } else {
        Err(Invalid::new(format!("{key}.transform.scale"), format!("{scale} must be finite and positive")))
    }
}

/// Sizes of an analytic shape that must be positive.
fn shape_dims(shape: Shape) -> Vec<f64> {
    match shape {
        Shape::HalfSpace => vec![],
        Shape::Sphere { radius } => vec![radius],
        Shape::Box { size } => size.to_vec(),
        Shape::Capsule { radius, length } => vec![radius, length + radius],
        Shape::Cylinder { radius, length } => vec![radius, length],
        Shape::Torus { major_radius, minor_radius } => vec![minor_radius, major_radius - minor_radius],
    }
}

impl BodySpec {
    fn validate(&self, key: &str) -> Result<(), Invalid> {
        if let MeshSpec::File { tetrahedralize: Some(t), .. } = &self.mesh {
            let key = format!("{key}.mesh.file.tetrahedralize");
            one_selection(&key, t.cell.is_some(), t.resolution.is_some(), "`cell` and `resolution`")?;
            if t.cell.is_some_and(|h| !(h.is_finite() && h > 0.0)) || t.resolution == Some(0) {
                return Err(Invalid::new(
                    key,
                    "the cell must be a finite length > 0, the resolution ≥ 1".into(),
                ));
            }
        }
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_alphanumeric() || "-_".contains(c)) {
            return Err(Invalid::new(format!("{key}.name"), "use letters, digits, '-' and '_' only".into()));
        }
        self.material.check().map_err(|m| Invalid::new(format!("{key}.material"), m))?;
        let d = self.damping;
        if !(d.mass.is_finite() && d.mass >= 0.0 && d.stiffness.is_finite() && d.stiffness >= 0.0) {
            return Err(Invalid::new(
                format!("{key}.damping"),
                "coefficients must be finite and non-negative".into(),
            ));
        }
        let t = self.transform;
        positive_scale(key, t.scale)?;
        finite(format!("{key}.transform"), &[t.rotation_deg, t.translation].concat())?;
        finite(format!("{key}.initial_velocity"), &self.initial_velocity)?;
        if self.contact_spacing.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
            return Err(Invalid::new(
                format!("{key}.contact_spacing"),
                "must be finite and positive (m)".into(),
            ));
        }
        for (r, reg) in self.regions.iter().enumerate() {
            let k = format!("{key}.region[{r}]");
            reg.material.check().map_err(|m| Invalid::new(format!("{k}.material"), m))?;
            one_selection(&k, reg.bbox.is_some(), reg.elements.is_some(), "`box` or `elements`")?;
        }
        for (r, f) in self.fixed.iter().enumerate() {
            one_selection(
                &format!("{key}.fixed[{r}]"),
                f.bbox.is_some(),
                f.vertices.is_some(),
                "`box` or `vertices`",
            )?;
        }
        for (r, a) in self.attach.iter().enumerate() {
            let k = format!("{key}.attach[{r}]");
            one_selection(&k, a.bbox.is_some(), a.vertices.is_some(), "`box` or `vertices`")?;
            if let Some(m) = &a.motion {
                motion_ok(m).map_err(|msg| Invalid::new(format!("{k}.motion"), msg))?;
            }
        }
        for (r, p) in self.prescribed.iter().enumerate() {
            let k = format!("{key}.prescribed[{r}]");
            one_selection(&k, p.bbox.is_some(), p.vertices.is_some(), "`box` or `vertices`")?;
            motion_ok(&p.motion).map_err(|msg| Invalid::new(format!("{k}.motion"), msg))?;
        }
        Ok(())
    }
}

fn motion_ok(m: &Motion) -> Result<(), String> {
    let ok = match m {
        Motion::Velocity(v) => v.iter().all(|x| x.is_finite()),
        Motion::Rotation { axis, center, angular_velocity } => {
            axis.iter().chain(center).all(|x| x.is_finite())
                && angular_velocity.is_finite()
                && axis.iter().any(|x| *x != 0.0)
        }
        Motion::Path(path) => {
            if path.is_empty() || path.windows(2).any(|w| w[1][0] <= w[0][0]) {
                return Err("a path needs keyframes at increasing times".into());
            }
            path.iter().flatten().all(|x| x.is_finite())
        }
    };
    if ok {
        Ok(())
    } else {
        Err("values must be finite and the axis non-zero".into())
    }
}
