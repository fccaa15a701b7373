//! `ferrofem render`: a picture (PNG) or a clip (GIF, MP4) of a scene run
//! here or of a folder that `ferrofem run` wrote; `--gallery` pictures
//! every built-in scene (docs/gallery.md). See docs/cli.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use ferrofem::fields::Field;
use ferrofem::scene::{builtin, Camera, RenderSettings, Scene};
use ferrofem_view::render::{Clip, Container, Painter, Target};

use crate::CliError;

/// Arguments of `ferrofem render`.
#[derive(Debug, Clone, Args)]
pub struct RenderArgs {
    /// A scene file or built-in scene name (run here), or an output folder of `ferrofem run`.
    #[arg(required_unless_present = "gallery")]
    pub source: Option<String>,
    /// The file to write: `.png` (one picture), `.gif` or `.mp4` (a clip; MP4 needs ffmpeg).
    #[arg(long, required_unless_present = "gallery")]
    pub out: Option<PathBuf>,
    /// The field that colours the bodies (default: the scene's `[render] field`, else displacement).
    #[arg(long, value_parser = ["displacement", "velocity", "von_mises", "contact_force"])]
    pub field: Option<String>,
    /// Draw contact forces as arrows (or `[render] arrows = true`).
    #[arg(long)]
    pub arrows: bool,
    /// Picture size `WIDTHxHEIGHT` in pixels (default: the scene's `[render] size`, 800x600).
    #[arg(long)]
    pub size: Option<String>,
    /// The time (s) of a picture (default: the scene's `[render] time`, else the last frame).
    #[arg(long)]
    pub time: Option<f64>,
    /// Steps to run a scene (default: `simulation.steps`; a picture stops at its time).
    #[arg(long)]
    pub steps: Option<usize>,
    /// A clip's frame every this many steps (default: `simulation.output_every`).
    #[arg(long)]
    pub every: Option<usize>,
    /// A clip's frames per second (default: real time, at most 50).
    #[arg(long)]
    pub fps: Option<f64>,
    /// Camera position and target `PX,PY,PZ,TX,TY,TZ` (m), up +z, 40°
    /// (default: the scene's `[render] camera`, else fitted to the bodies).
    #[arg(long)]
    pub camera: Option<String>,
    /// Write a picture of every built-in scene into the folder beside this
    /// Markdown page (`docs/gallery.md` → `docs/gallery/`), and the page.
    #[arg(long, conflicts_with_all = ["source", "out", "time", "steps", "every", "fps", "camera"])]
    pub gallery: Option<PathBuf>,
}

/// Renders what `args` asks for.
pub fn render(args: RenderArgs) -> Result<(), CliError> {
    if let Some(page) = args.gallery.as_deref() {
        return gallery(&args, page);
    }
    let (Some(source), Some(out)) = (args.source.as_deref(), args.out.as_deref()) else {
        return Err(CliError::Other("render: give a SOURCE and --out FILE, or --gallery PAGE".into()));
    };
    let path = PathBuf::from(source);
    let target = Target::create(out).map_err(view)?;
    let still = target.container == Container::Png;
    let started = Instant::now();
    let (clip, settings) = if path.is_dir() {
        let settings = overridden(RenderSettings::default(), &args)?;
        (Clip::of_run(&path, settings.field).map_err(view)?, settings)
    } else {
        let scene = builtin::load(source)?;
        let settings = overridden(scene.spec.render.clone(), &args)?;
        (run_scene(scene, &settings, &args, still)?, settings)
    };
    if clip.frames.is_empty() {
        return Err(CliError::Other(format!("{source}: no frames to draw")));
    }
    // A picture shows one frame, with the camera fitted over the run up to it.
    let (first, fitted) = match still {
        true => {
            let k = settings.time.map_or(clip.frames.len() - 1, |t| clip.nearest(t));
            (k, 0..k + 1)
        }
        false => (0, 0..clip.frames.len()),
    };
    let look = clip.look(&settings, fitted.clone());
    let count = if still { 1 } else { fitted.len() };
    let painter = Painter::new(&clip.view);
    target
        .write(look.size, args.fps.unwrap_or_else(|| real_time_rate(&clip)), count, |k| {
            painter.draw(&clip.frames[first + k], &look)
        })
        .map_err(view)?;
    let [w, h] = look.size;
    eprintln!("wrote {} ({count} frames, {w}×{h}, {:.1} s)", out.display(), started.elapsed().as_secs_f64());
    Ok(())
}

fn view(e: ferrofem_view::ViewError) -> CliError {
    CliError::Other(e.to_string())
}

/// Runs `scene` (a picture: to its time) with a frame every `every`
/// steps, with a progress bar.
fn run_scene(
    scene: Scene,
    settings: &RenderSettings,
    args: &RenderArgs,
    still: bool,
) -> Result<Clip, CliError> {
    let h = scene.spec.simulation.time_step;
    let mut steps = args.steps.unwrap_or(scene.spec.simulation.steps);
    if let (true, Some(t)) = (still, settings.time) {
        steps = steps.min((t / h).round() as usize);
    }
    let every = args.every.unwrap_or(scene.spec.simulation.output_every).max(1);
    if still && !steps.is_multiple_of(every) {
        steps += every - steps % every;
    }
    let bar = crate::run::progress_bar(steps);
    let clip = Clip::of_scene(scene, settings.field, steps, every, |_| bar.inc(1)).map_err(view);
    bar.finish_and_clear();
    clip
}

/// A clip's real-time rate: one frame per interval between its first two
/// frames (at most 50 frames per second, what GIF players show).
fn real_time_rate(clip: &Clip) -> f64 {
    let t = |k: usize| clip.frames.get(k).map_or(0.0, |f| f.figures.time);
    let dt = t(1) - t(0);
    if dt > 0.0 {
        (1.0 / dt).min(50.0)
    } else {
        25.0
    }
}

/// `settings` with the command line's choices over them, checked.
fn overridden(mut settings: RenderSettings, args: &RenderArgs) -> Result<RenderSettings, CliError> {
    if let Some(name) = args.field.as_deref() {
        settings.field = Field::ALL.into_iter().find(|f| f.name() == name).unwrap_or_default();
    }
    settings.arrows |= args.arrows;
    if let Some(size) = args.size.as_deref() {
        let parsed = size
            .split_once(['x', 'X'])
            .and_then(|(w, h)| Some([w.trim().parse().ok()?, h.trim().parse().ok()?]));
        settings.size = parsed
            .ok_or_else(|| CliError::Other(format!("--size {size}: give WIDTHxHEIGHT, e.g. 800x600")))?;
    }
    if let Some(t) = args.time {
        settings.time = Some(t);
    }
    if let Some(text) = args.camera.as_deref() {
        let v: Vec<f64> = text.split(',').filter_map(|x| x.trim().parse().ok()).collect();
        let [px, py, pz, tx, ty, tz] = v[..] else {
            return Err(CliError::Other(format!("--camera {text}: give six numbers PX,PY,PZ,TX,TY,TZ (m)")));
        };
        settings.camera =
            Some(Camera { position: [px, py, pz], target: [tx, ty, tz], up: [0.0, 0.0, 1.0], fov: 40.0 });
    }
    settings.validate().map_err(|e| CliError::Other(format!("{}: {}", e.key, e.message)))?;
    Ok(settings)
}

/// A picture of every built-in scene (`[render]` of each, at 480×360
/// unless `--size`), and the Markdown page that shows them.
fn gallery(args: &RenderArgs, page: &Path) -> Result<(), CliError> {
    let stem = page.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "gallery".into());
    let dir = page.parent().unwrap_or(Path::new(".")).join(&stem);
    std::fs::create_dir_all(&dir).map_err(|e| CliError::Io(dir.clone(), e))?;
    let mut text = String::from(
        "# Gallery\n\nEvery built-in scene, drawn by `ferrofem render` at the time its `[render]` table names (else at \
         its end), coloured by its field. Regenerate the pictures and this page with\n\n```sh\n",
    );
    let _ = writeln!(text, "cargo run --release -- render --gallery {}\n```\n", page.display());
    let picture = |source: &str, name: &str| {
        let out = dir.join(format!("{name}.png"));
        let mut scene_args =
            RenderArgs { source: Some(source.into()), out: Some(out), gallery: None, ..args.clone() };
        scene_args.size = scene_args.size.or_else(|| Some("480x360".into()));
        eprintln!("{name}:");
        render(scene_args)
    };
    for (name, about) in builtin::list() {
        picture(name, name)?;
        let _ = writeln!(text, "## {name}\n\n{about}\n\n![{name}]({stem}/{name}.png)\n");
    }
    // The scenes of `scenes/external/` (run from the repository root) whose
    // meshes `../shared/meshes` holds.
    let mut external: Vec<PathBuf> = std::fs::read_dir("scenes/external")
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    external.sort();
    for path in external {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if Scene::from_file(&path).and_then(|s| s.build()).is_err() {
            eprintln!("{name}: skipped (its meshes are not in ../shared/meshes)");
            continue;
        }
        picture(&path.display().to_string(), &name)?;
        let about = builtin::first_sentence(&std::fs::read_to_string(&path).unwrap_or_default());
        let _ = writeln!(text, "## {name} (`scenes/external/`)\n\n{about}\n\n![{name}]({stem}/{name}.png)\n");
    }
    std::fs::write(page, text).map_err(|e| CliError::Io(page.to_path_buf(), e))?;
    eprintln!("wrote {}", page.display());
    Ok(())
}
