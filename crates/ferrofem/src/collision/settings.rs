//! `[contact]`: proximity distances, friction between bodies, what a
//! violation does, and how contacts are resolved (explicitly, or by the
//! recursive corrective motion of zeng-implicit).

use serde::{Deserialize, Serialize};

pub use crate::solver::{ImplicitResolution, Resolution, ResolutionKind, Update};

/// `[contact]`: proximity distances (m) and friction between bodies.
/// Solving is set apart, under `[constraint_solver]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ContactSpec")]
pub struct ContactSettings {
    /// Pairs closer than this become constraints.
    pub alarm_distance: f64,
    /// The gap counts from this distance (a skin thickness).
    pub contact_distance: f64,
    /// Coulomb coefficient between two soft bodies.
    pub body_friction: f64,
    /// Grow each vertex's search distance by how far it can move within
    /// the step (speculative contacts), so that fast impacts do not tunnel.
    pub speculative: bool,
    /// Also hold the bodies' surface edges against mesh obstacles' sharp
    /// edges where they pass each other (edge–edge contacts): thin blades
    /// and wires whose vertices lie farther apart than the body's.
    pub edge_edge: bool,
    /// Penetration (m) beyond which a step is a violation; also a step
    /// that inverts an element. `None`: the alarm distance.
    pub max_penetration: Option<f64>,
    /// What a violation does.
    pub on_violation: OnViolation,
    /// How the constraints are linearized within a step: once at its
    /// start (`explicit`, zeng2022) or re-linearized by recursive corrective
    /// motion (`implicit`, zeng-implicit §5–6).
    pub resolution: Resolution,
}

/// What a step that penetrates deeper than `max_penetration`, or inverts
/// an element, does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnViolation {
    /// Say so in the step's stats (and the run's warnings), and go on.
    #[default]
    Warn,
    /// Stop the run with an error naming the step, the body and the cause.
    Stop,
}

impl Default for ContactSettings {
    fn default() -> Self {
        ContactSettings {
            alarm_distance: 0.01,
            contact_distance: 0.0,
            body_friction: 0.3,
            speculative: true,
            edge_edge: false,
            max_penetration: None,
            on_violation: OnViolation::Warn,
            resolution: Resolution::Explicit,
        }
    }
}

impl ContactSettings {
    /// The penetration limit in force (m).
    pub fn penetration_limit(&self) -> f64 {
        self.max_penetration.unwrap_or(self.alarm_distance)
    }
}

/// The scene file's `[contact]`, with the keys that moved to
/// `[constraint_solver]` caught to say so.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("dependentSchemas" = {
    "newton_iterations": { "required": ["resolution"], "properties": { "resolution": { "const": "implicit" } } },
    "update": { "required": ["resolution"], "properties": { "resolution": { "const": "implicit" } } },
    "direction_tolerance": { "required": ["resolution"], "properties": { "resolution": { "const": "implicit" } } },
    "violation_tolerance": { "required": ["resolution"], "properties": { "resolution": { "const": "implicit" } } }
}))]
struct ContactSpec {
    /// Pairs closer than this become contacts (m).
    #[schemars(extend("default" = 0.01), range(min = 0.0))]
    alarm_distance: Option<f64>,
    /// Skin thickness subtracted from the gap (m).
    #[schemars(extend("default" = 0.0), range(min = 0.0))]
    contact_distance: Option<f64>,
    /// Coulomb coefficient μ between two soft bodies.
    #[schemars(extend("default" = 0.3), range(min = 0.0))]
    body_friction: Option<f64>,
    /// Grow each vertex's search by how far it can move in the step, so that fast impacts do not tunnel.
    #[schemars(extend("default" = true))]
    speculative: Option<bool>,
    /// Also hold surface edges against mesh obstacles' sharp edges (faces more than 30° apart) where they pass each other: blades and wires whose vertices lie farther apart than the body's.
    #[schemars(extend("default" = false))]
    edge_edge: Option<bool>,
    /// Penetration (m) beyond which a step is a violation (also an inverted tet); default: the alarm distance.
    #[schemars(range(min = 0.0))]
    max_penetration: Option<f64>,
    /// What a violation does: `warn` (flag the step) or `stop` (end the run).
    #[schemars(extend("default" = "warn"))]
    on_violation: Option<OnViolation>,
    /// `explicit`: linearize the contacts once per step (zeng2022); `implicit`: recursive corrective motion (zeng-implicit §5–6).
    #[schemars(extend("default" = "explicit"))]
    resolution: Option<ResolutionKind>,
    /// Implicit resolution: linearizations per step at most (≥ 1).
    #[schemars(extend("default" = 5), range(min = 1))]
    newton_iterations: Option<usize>,
    /// Implicit resolution: `fast` (W_H once per step, Algorithm 3) or `standard` (W_k each iteration, Algorithm 2).
    #[schemars(extend("default" = "fast"))]
    update: Option<Update>,
    /// Implicit resolution: stop once no contact normal turns by more than this (rad).
    #[schemars(extend("default" = 1e-3), range(min = 0.0))]
    direction_tolerance: Option<f64>,
    /// Implicit resolution: … and no contact penetrates, or separates while carrying force, by more than this (m).
    #[schemars(extend("default" = 1e-6), range(min = 0.0))]
    violation_tolerance: Option<f64>,
    /// Moved to `[constraint_solver]` (refused with a message; not offered).
    #[schemars(skip)]
    pgs: Option<serde::de::IgnoredAny>,
    /// Moved to `[constraint_solver]` (refused with a message; not offered).
    #[schemars(skip)]
    delassus: Option<serde::de::IgnoredAny>,
}

/// A scene file's `[contact]` has the schema of its form ([`ContactSpec`]).
impl schemars::JsonSchema for ContactSettings {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ContactSettings".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ContactSpec::json_schema(generator)
    }
}

impl TryFrom<ContactSpec> for ContactSettings {
    type Error = String;

    fn try_from(s: ContactSpec) -> Result<Self, String> {
        if s.pgs.is_some() {
            return Err(
                "`pgs` moved: write `max_iterations` and `tolerance` under [constraint_solver]".into()
            );
        }
        if s.delassus.is_some() {
            return Err("`delassus` moved: write it under [constraint_solver]".into());
        }
        if let Some(m) = s.max_penetration.filter(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(format!("max_penetration = {m} must be finite and positive (m)"));
        }
        let d = ContactSettings::default();
        let resolution = resolution(&s)?;
        Ok(ContactSettings {
            alarm_distance: s.alarm_distance.unwrap_or(d.alarm_distance),
            contact_distance: s.contact_distance.unwrap_or(d.contact_distance),
            body_friction: s.body_friction.unwrap_or(d.body_friction),
            speculative: s.speculative.unwrap_or(d.speculative),
            edge_edge: s.edge_edge.unwrap_or(d.edge_edge),
            max_penetration: s.max_penetration,
            on_violation: s.on_violation.unwrap_or(d.on_violation),
            resolution,
        })
    }
}

/// `resolution` and the keys of the implicit one, checked: those keys
/// need `resolution = "implicit"`, and their values must be usable.
fn resolution(s: &ContactSpec) -> Result<Resolution, String> {
    let keys = [
        s.newton_iterations.map(|_| "newton_iterations"),
        s.update.map(|_| "update"),
        s.direction_tolerance.map(|_| "direction_tolerance"),
        s.violation_tolerance.map(|_| "violation_tolerance"),
    ];
    if s.resolution != Some(ResolutionKind::Implicit) {
        return match keys.iter().flatten().next() {
            Some(k) => Err(format!("`{k}` belongs to resolution = \"implicit\"")),
            None => Ok(Resolution::Explicit),
        };
    }
    if s.newton_iterations == Some(0) {
        return Err("newton_iterations must be at least 1".into());
    }
    crate::solver::non_negative(&[
        ("direction_tolerance", s.direction_tolerance),
        ("violation_tolerance", s.violation_tolerance),
    ])?;
    let d = ImplicitResolution::default();
    Ok(Resolution::Implicit(ImplicitResolution {
        newton_iterations: s.newton_iterations.unwrap_or(d.newton_iterations),
        update: s.update.unwrap_or(d.update),
        direction_tolerance: s.direction_tolerance.unwrap_or(d.direction_tolerance),
        violation_tolerance: s.violation_tolerance.unwrap_or(d.violation_tolerance),
    }))
}
