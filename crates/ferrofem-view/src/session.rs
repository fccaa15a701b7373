//! The simulation thread: it owns the world, takes the page's commands
//! between steps, steps in real time (or as fast as it can), and
//! publishes the latest frame. A grab is an attachment (the library's
//! bilateral constraint, under both integrators) whose target follows the
//! mouse at a bounded speed.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferrofem::fields::Field;
use ferrofem::scene::Scene;
use ferrofem::stats::{Stage, StepStats};
use ferrofem::World;
use nalgebra::{UnitQuaternion, Vector3};
use serde::Deserialize;
use tokio::sync::watch;

use crate::frame::{Figures, Frame, GrabView};

/// What the page asks for (JSON `{"type": …, …}`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Run (in real time, or as fast as the steps allow).
    Play,
    /// Stop stepping.
    Pause,
    /// One step (pauses).
    Step,
    /// Back to the scene's initial state (live), or to the first frame (replay).
    Reset,
    /// A new time step (s), within the scene's range (implicit Euler only).
    TimeStep {
        /// Seconds.
        value: f64,
    },
    /// Colour by this field.
    Field {
        /// The field.
        name: Field,
    },
    /// Start a grab of a body's vertex, pulled toward `target` (m).
    Grab {
        /// Body index.
        body: usize,
        /// Vertex index.
        vertex: usize,
        /// Target (m).
        target: [f64; 3],
    },
    /// Move the grab's target (m).
    Drag {
        /// Target (m).
        target: [f64; 3],
    },
    /// End the grab: its attachment is removed.
    Release,
    /// Move a draggable obstacle's origin to `translation` (m) over the next step.
    MoveObstacle {
        /// Obstacle index.
        obstacle: usize,
        /// Translation (m).
        translation: [f64; 3],
    },
    /// Show replay frame `frame` (pauses).
    Seek {
        /// Frame index.
        frame: usize,
    },
    /// The page drew the last frame and can take the next one (handled by
    /// the connection, not the simulation).
    Ready,
}

impl Command {
    /// Checks numbers: every coordinate finite.
    pub fn check(&self) -> Result<(), String> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        match self {
            Command::TimeStep { value } if !value.is_finite() || *value <= 0.0 => {
                Err(format!("time_step: {value} is not a positive number"))
            }
            Command::Grab { target, .. } | Command::Drag { target } if !finite(target) => {
                Err("target: coordinates must be finite numbers".into())
            }
            Command::MoveObstacle { translation, .. } if !finite(translation) => {
                Err("translation: coordinates must be finite numbers".into())
            }
            _ => Ok(()),
        }
    }
}

/// A grab in progress.
#[derive(Debug, Clone, Copy)]
struct Grab {
    body: usize,
    vertex: usize,
    /// Where the mouse wants the vertex.
    target: Vector3<f64>,
    /// Where the attachment holds it this step: `target`, approached at
    /// most `max_speed · h` per step so that a flick of the mouse does not
    /// tear the mesh.
    holding: Vector3<f64>,
}

/// Steps per second and simulated seconds per wall second over the last second.
#[derive(Debug, Default)]
struct Rate {
    /// `(wall clock, step, simulated time)` of recent frames.
    samples: VecDeque<(Instant, usize, f64)>,
}

impl Rate {
    fn push(&mut self, step: usize, time: f64) -> (f64, f64) {
        let now = Instant::now();
        self.samples.push_back((now, step, time));
        while self.samples.len() > 2 && now.duration_since(self.samples[0].0) > Duration::from_secs(1) {
            self.samples.pop_front();
        }
        let (t0, k0, s0) = self.samples[0];
        let wall = now.duration_since(t0).as_secs_f64();
        if wall <= 0.0 || step < k0 {
            return (0.0, 0.0);
        }
        ((step - k0) as f64 / wall, (time - s0) / wall)
    }
}

/// The live simulation of a scene.
pub struct Live {
    scene: Scene,
    world: World,
    playing: bool,
    field: Field,
    grab: Option<Grab>,
    /// The scene's time step (s): the slider's upper end.
    base_h: f64,
    /// A grab's speed limit (m/s): five body extents per second.
    max_grab_speed: f64,
    /// Run no faster than real time.
    realtime: bool,
    last: Option<StepStats>,
    error: Option<String>,
    rate: Rate,
    seq: u64,
    /// Wall clock and simulated time when the pace was last set.
    anchor: (Instant, f64),
    values: Vec<f64>,
}

/// The bodies' bounding-box diagonal and centre (m).
pub fn extent(world: &World) -> (f64, [f64; 3]) {
    crate::frame::bounds(world.state.bodies.iter().map(|s| s.positions.as_slice()))
}

impl Live {
    /// A paused simulation of `scene`, built.
    pub fn new(scene: Scene, realtime: bool) -> Result<Live, ferrofem::SimError> {
        let world = scene.build_on(ferrofem_gpu::backend())?;
        let (size, _) = extent(&world);
        Ok(Live {
            base_h: world.model.time_step,
            max_grab_speed: 5.0 * size,
            world,
            scene,
            playing: false,
            field: Field::Displacement,
            grab: None,
            realtime,
            last: None,
            error: None,
            rate: Rate::default(),
            seq: 0,
            anchor: (Instant::now(), 0.0),
            values: Vec::new(),
        })
    }

    /// The world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The error that stopped the simulation, if one did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The time-step slider's range (s): `[h/10, h]` under implicit Euler,
    /// none under local-global (its matrix is factorized for one `h`).
    pub fn time_step_range(&self) -> Option<[f64; 2]> {
        self.world.implicit_euler().map(|_| [0.1 * self.base_h, self.base_h])
    }

    /// Applies a command; an error is what the page is told.
    pub fn apply(&mut self, command: Command) -> Result<(), String> {
        command.check()?;
        match command {
            Command::Play => {
                self.playing = true;
                self.anchor = (Instant::now(), self.world.state.time);
            }
            Command::Pause => self.playing = false,
            Command::Step => {
                self.playing = false;
                self.advance();
            }
            Command::Reset => {
                self.world = self.scene.build_on(ferrofem_gpu::backend()).map_err(|e| e.to_string())?;
                self.grab = None;
                self.last = None;
                self.error = None;
                self.anchor = (Instant::now(), 0.0);
            }
            Command::TimeStep { value } => {
                let [lo, hi] = self.time_step_range().ok_or(
                    "the local-global integrator's time step is fixed (its matrix is factorized for it)",
                )?;
                if !(lo * (1.0 - 1e-12)..=hi * (1.0 + 1e-12)).contains(&value) {
                    return Err(format!("time_step: {value} s is outside [{lo}, {hi}] s"));
                }
                self.world.model.time_step = value;
                self.anchor = (Instant::now(), self.world.state.time);
            }
            Command::Field { name } => self.field = name,
            Command::Grab { body, vertex, target } => self.start_grab(body, vertex, target)?,
            Command::Drag { target } => {
                let grab = self.grab.as_mut().ok_or("drag without a grab")?;
                grab.target = Vector3::from(target);
            }
            Command::Release => {
                if let Some(g) = self.grab.take() {
                    self.world.detach(g.body, g.vertex).map_err(|e| e.to_string())?;
                }
            }
            Command::MoveObstacle { obstacle, translation } => {
                let spec = self.scene.spec.obstacles.get(obstacle).ok_or("no such obstacle")?;
                if !spec.draggable {
                    return Err(format!(
                        "obstacle `{}` is not draggable (draggable = true in the scene)",
                        spec.name
                    ));
                }
                let rotation = self.world.model.obstacles[obstacle].pose(self.world.state.time).0;
                self.world
                    .set_obstacle_pose(obstacle, rotation, Vector3::from(translation))
                    .map_err(|e| e.to_string())?;
            }
            Command::Seek { .. } => return Err("seek: this is a live simulation, not a replay".into()),
            Command::Ready => {}
        }
        Ok(())
    }

    /// Starts a grab of a free vertex that no attachment of the scene holds.
    fn start_grab(&mut self, body: usize, vertex: usize, target: [f64; 3]) -> Result<(), String> {
        if let Some(g) = self.grab.take() {
            self.world.detach(g.body, g.vertex).map_err(|e| e.to_string())?;
        }
        let b = self.world.model.bodies.get(body).ok_or_else(|| format!("no body {body}"))?;
        if vertex >= b.vertex_count() {
            return Err(format!("body `{}` has no vertex {vertex}", b.name));
        }
        if b.attachments.iter().any(|(v, _)| *v == vertex) {
            return Err(format!("vertex {vertex} of `{}` is attached by the scene", b.name));
        }
        let x = &self.world.state.bodies[body].positions;
        let at = Vector3::new(x[3 * vertex], x[3 * vertex + 1], x[3 * vertex + 2]);
        self.world.attach(body, vertex, at.into()).map_err(|e| e.to_string())?;
        self.grab = Some(Grab { body, vertex, target: Vector3::from(target), holding: at });
        Ok(())
    }

    /// One step: the grab's attachment moved toward its target, then the
    /// world's step; an error pauses the simulation and is shown.
    fn advance(&mut self) {
        let h = self.world.model.time_step;
        if let Some(g) = self.grab.as_mut() {
            let gap = g.target - g.holding;
            let reach = self.max_grab_speed * h;
            g.holding += if gap.norm() > reach { gap * (reach / gap.norm()) } else { gap };
            if let Err(e) = self.world.attach(g.body, g.vertex, g.holding.into()) {
                self.error = Some(e.to_string());
            }
        }
        match self.world.step() {
            Ok(stats) => self.last = Some(stats),
            Err(e) => {
                self.error = Some(e.to_string());
                self.playing = false;
            }
        }
    }

    /// The current frame.
    pub fn frame(&mut self) -> Frame {
        let started = Instant::now();
        let world = &self.world;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut bodies = Vec::with_capacity(world.model.bodies.len());
        for (b, (body, s)) in world.model.bodies.iter().zip(&world.state.bodies).enumerate() {
            self.field.values(body, s, &world.constraints().problem.bodies[b].forces, &mut self.values);
            self.values.iter().for_each(|&v| {
                lo = lo.min(v);
                hi = hi.max(v);
            });
            let x: Vec<f32> = s.positions.iter().map(|&v| v as f32).collect();
            bodies.push((x, self.values.iter().map(|&v| v as f32).collect()));
        }
        let t = world.state.time;
        let needles = world.model.needles.iter().map(|n| pose(n.pose(t)));
        let poses = world.model.obstacles.iter().map(|o| pose(o.pose(t))).chain(needles).collect();
        let c = world.constraint_points();
        let arrows = (0..c.points.len())
            .filter(|&k| !c.attachment[k])
            .map(|k| {
                let (p, f) = (c.points[k], c.forces[k]);
                [p[0], p[1], p[2], f[0], f[1], f[2]].map(|v| v as f32)
            })
            .collect();
        let (steps_per_second, realtime_factor) = self.rate.push(world.state.step, t);
        let stats = self.last.as_ref();
        let stage_ms = stats.map_or_else(Vec::new, |s| {
            Stage::ALL.iter().map(|&st| (st.name(), s.stage_ms.get(st))).filter(|(_, ms)| *ms > 0.0).collect()
        });
        let grab = self.grab.map(|g| {
            let x = &world.state.bodies[g.body].positions[3 * g.vertex..3 * g.vertex + 3];
            let force = world.attachment_forces(g.body).into_iter().find(|(v, _)| *v == g.vertex);
            GrabView {
                body: g.body,
                vertex: g.vertex,
                target: g.target.into(),
                holding: g.holding.into(),
                position: [x[0], x[1], x[2]],
                force: force.map_or([0.0; 3], |(_, f)| f),
            }
        });
        self.seq += 1;
        let mut frame = Frame {
            seq: self.seq,
            figures: Figures {
                time: t,
                step: world.state.step,
                playing: self.playing,
                time_step: world.model.time_step,
                step_ms: stats.map_or(0.0, |s| s.step_ms),
                stage_ms,
                steps_per_second,
                realtime_factor,
                contacts: stats.map_or(0, |s| s.contacts),
                field: (self.field.name(), self.field.unit(), lo.min(hi), hi.max(lo)),
                grab,
                attachments: world.model.bodies.iter().map(|b| b.attachments.len()).sum(),
                publish_ms: 0.0,
                error: self.error.clone(),
            },
            bodies,
            poses,
            arrows,
        };
        frame.figures.publish_ms = started.elapsed().as_secs_f64() * 1e3;
        frame
    }

    /// Runs until `commands` closes: applies commands between steps, steps
    /// while playing (paced to real time unless `realtime` is off), and
    /// publishes a frame after every step or change. A command's error
    /// goes back on its reply channel.
    pub fn run(mut self, commands: Receiver<(Command, Reply)>, frames: watch::Sender<Arc<Frame>>) {
        frames.send_replace(Arc::new(self.frame()));
        loop {
            let wait = self.wait();
            let mut changed = false;
            let mut next = match commands.recv_timeout(wait) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            while let Some((command, reply)) = next {
                let result = self.apply(command);
                let _ = reply.send(result);
                changed = true;
                next = commands.try_recv().ok();
            }
            if self.playing && self.due() {
                self.advance();
                changed = true;
            }
            if changed {
                frames.send_replace(Arc::new(self.frame()));
            }
        }
    }

    /// How long to wait for a command before the next step is due.
    fn wait(&self) -> Duration {
        if !self.playing {
            return Duration::from_millis(200);
        }
        let ahead = self.world.state.time - self.anchor.1 - self.anchor.0.elapsed().as_secs_f64();
        if self.realtime && ahead > 0.0 {
            Duration::from_secs_f64(ahead)
        } else {
            Duration::ZERO
        }
    }

    /// Whether the next step is due (real time reached it, or no pacing).
    fn due(&self) -> bool {
        !self.realtime || self.world.state.time - self.anchor.1 <= self.anchor.0.elapsed().as_secs_f64()
    }
}

/// Where a command's outcome goes (the connection that sent it).
pub type Reply = tokio::sync::oneshot::Sender<Result<(), String>>;

/// An obstacle's pose as translation and quaternion `(x, y, z, w)`.
pub fn pose((r, c): (nalgebra::Rotation3<f64>, Vector3<f64>)) -> [f32; 7] {
    let q = UnitQuaternion::from_rotation_matrix(&r);
    [c.x, c.y, c.z, q.i, q.j, q.k, q.w].map(|v| v as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem::obstacle::Shape;
    use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, SceneBuilder};

    fn cube() -> Live {
        let cube = BodySpec::new("cube", MeshSpec::cube(0.1, 3), 2e5, 0.3, 1000.0).damping(4.0, 0.005);
        Live::new(SceneBuilder::new(0.01).body(cube).build().unwrap(), false).unwrap()
    }

    /// Grabbed at a top vertex and held still, the cube hangs: averaged over
    /// the last second of three, the grab force is its weight within 2 %;
    /// released, the attachment is gone.
    #[test]
    fn grab_holds_the_weight_and_release_removes_it() {
        let mut live = cube();
        let x = live.world().state.bodies[0].positions.clone();
        let top = (0..x.len() / 3).max_by(|&a, &b| x[3 * a + 2].total_cmp(&x[3 * b + 2])).unwrap();
        let at = [x[3 * top], x[3 * top + 1], x[3 * top + 2]];
        live.apply(Command::Grab { body: 0, vertex: top, target: at }).unwrap();
        let weight = live.world().model.bodies[0].total_mass() * 9.81;
        let mut sum = 0.0;
        for k in 0..300 {
            live.apply(Command::Step).unwrap();
            if k >= 200 {
                sum += live.frame().figures.grab.unwrap().force[2];
            }
        }
        let mean = sum / 100.0;
        assert!((mean / weight - 1.0).abs() < 0.02, "grab force {mean} N, weight {weight} N");
        live.apply(Command::Release).unwrap();
        assert_eq!(live.frame().figures.attachments, 0);
        assert!(live.frame().figures.grab.is_none());
    }

    /// The grab's target is approached at the speed limit, then reached.
    #[test]
    fn a_far_target_is_approached_at_bounded_speed() {
        let mut live = cube();
        let x = live.world().state.bodies[0].positions.clone();
        let at = Vector3::new(x[0], x[1], x[2]);
        let far = at + Vector3::new(1.0, 0.0, 0.0);
        live.apply(Command::Grab { body: 0, vertex: 0, target: far.into() }).unwrap();
        live.apply(Command::Step).unwrap();
        let g = live.frame().figures.grab.unwrap();
        let moved = (Vector3::from(g.holding) - at).norm();
        assert!((moved - live.max_grab_speed * 0.01).abs() < 1e-12, "moved {moved}");
        assert!((Vector3::from(g.position) - Vector3::from(g.holding)).norm() < 1e-6);
    }

    /// A draggable obstacle moves to where the mouse puts it, in one step;
    /// under local-global a grab holds too, through the same attachment.
    #[test]
    fn draggable_obstacle_moves_and_local_global_grabs() {
        let cube = BodySpec::new("cube", MeshSpec::cube(0.1, 2), 2e5, 0.3, 1000.0).at([0.0, 0.0, 0.5]);
        let paddle =
            ObstacleSpec::new("paddle", Shape::Box { size: [0.2, 0.2, 0.02] }).with(|o| o.draggable = true);
        let scene = SceneBuilder::new(0.01).local_global().body(cube).obstacle(paddle).build().unwrap();
        let mut live = Live::new(scene, false).unwrap();
        live.apply(Command::MoveObstacle { obstacle: 0, translation: [0.1, 0.0, 0.05] }).unwrap();
        live.apply(Command::Step).unwrap();
        let p = live.frame().poses[0];
        assert!((p[0] - 0.1).abs() < 1e-6 && (p[2] - 0.05).abs() < 1e-6, "{p:?}");
        let x = live.world().state.bodies[0].positions.clone();
        let at = [x[0], x[1], x[2] + 0.01];
        live.apply(Command::Grab { body: 0, vertex: 0, target: at }).unwrap();
        for _ in 0..5 {
            live.apply(Command::Step).unwrap();
        }
        let g = live.frame().figures.grab.unwrap();
        let gap: f64 = (0..3).map(|d| (g.position[d] - at[d]).powi(2)).sum::<f64>().sqrt();
        assert!(gap < 1e-3, "the grabbed vertex is {gap} m from its target");
        assert!(live.time_step_range().is_none());
        assert!(live.apply(Command::TimeStep { value: 0.005 }).unwrap_err().contains("fixed"));
    }

    /// Bad commands are refused with a reason; the simulation goes on.
    #[test]
    fn bad_commands_are_refused() {
        let mut live = cube();
        assert!(live.apply(Command::TimeStep { value: 1.0 }).unwrap_err().contains("outside"));
        assert!(live.apply(Command::TimeStep { value: f64::NAN }).is_err());
        assert!(live.apply(Command::Grab { body: 3, vertex: 0, target: [0.0; 3] }).is_err());
        assert!(live.apply(Command::Grab { body: 0, vertex: 0, target: [f64::INFINITY, 0.0, 0.0] }).is_err());
        assert!(live.apply(Command::Drag { target: [0.0; 3] }).unwrap_err().contains("without a grab"));
        assert!(live.apply(Command::MoveObstacle { obstacle: 0, translation: [0.0; 3] }).is_err());
        live.apply(Command::TimeStep { value: 0.005 }).unwrap();
        live.apply(Command::Step).unwrap();
        assert_eq!(live.frame().figures.step, 1);
        assert!((live.world().state.time - 0.005).abs() < 1e-15);
    }
}
