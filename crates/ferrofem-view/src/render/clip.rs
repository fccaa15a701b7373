//! The frames a picture or clip is drawn from: a scene run here (every
//! field, contact arrows), or a folder that `ferrofem run` wrote.

use std::ops::Range;
use std::path::Path;

use ferrofem::fields::Field;
use ferrofem::scene::{RenderSettings, Scene};

use super::camera::fitted;
use super::draw::Look;
use crate::error::ViewError;
use crate::frame::{bounds_of, Frame, SceneView};
use crate::replay::Replay;
use crate::scene_view::scene_view;
use crate::session::{Command, Live};

/// A scene's geometry and a sequence of its frames.
pub struct Clip {
    /// Bodies' surfaces and obstacles' shapes.
    pub view: SceneView,
    /// The frames, in time order.
    pub frames: Vec<Frame>,
}

impl Clip {
    /// `scene` run for `steps` steps with a frame at the start and after
    /// every `every` steps, coloured by `field`; `progress(step)` after
    /// each step. A step that fails ends it with the step's error.
    pub fn of_scene(
        scene: Scene,
        field: Field,
        steps: usize,
        every: usize,
        mut progress: impl FnMut(usize),
    ) -> Result<Clip, ViewError> {
        let mut live = Live::new(scene, false)?;
        live.apply(Command::Field { name: field }).map_err(ViewError::Render)?;
        let view = scene_view(&live);
        let mut frames = vec![live.frame()];
        for step in 1..=steps {
            live.apply(Command::Step).map_err(ViewError::Render)?;
            if let Some(e) = live.error() {
                return Err(ViewError::Render(e.to_string()));
            }
            if step % every.max(1) == 0 {
                frames.push(live.frame());
            }
            progress(step);
        }
        Ok(Clip { view, frames })
    }

    /// The frames of a run's folder, coloured by `field`.
    pub fn of_run(dir: &Path, field: Field) -> Result<Clip, ViewError> {
        let replay = Replay::open(dir)?;
        let frames = (0..replay.frames()).map(|k| replay.frame_of(k, field)).collect::<Result<_, _>>()?;
        Ok(Clip { view: replay.scene_view(), frames })
    }

    /// The frame nearest time `t` (s).
    pub fn nearest(&self, t: f64) -> usize {
        let gap = |k: usize| (self.frames[k].figures.time - t).abs();
        (0..self.frames.len()).min_by(|&a, &b| gap(a).total_cmp(&gap(b))).unwrap_or(0)
    }

    /// How `frames` are drawn: `settings`' camera or one fitted to the
    /// bodies over those frames, and the field's range over them.
    pub fn look(&self, settings: &RenderSettings, frames: Range<usize>) -> Look {
        let frames = &self.frames[frames];
        let points = frames.iter().flat_map(|f| f.bodies.iter().flat_map(|(x, _)| x.chunks_exact(3)));
        let (extent, center) = bounds_of(points.map(|p| [p[0], p[1], p[2]].map(f64::from)));
        let low = frames.iter().map(|f| f.figures.field.2).fold(f64::INFINITY, f64::min);
        let high = frames.iter().map(|f| f.figures.field.3).fold(f64::NEG_INFINITY, f64::max);
        Look {
            camera: settings.camera.unwrap_or_else(|| fitted(center, extent)),
            size: settings.size.map(|s| s as usize),
            range: if low <= high { (low, high) } else { (0.0, 0.0) },
            arrows: settings.arrows,
            extent,
        }
    }
}
