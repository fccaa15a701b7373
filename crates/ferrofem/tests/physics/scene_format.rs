//! The scene format (docs/scene-format.md): a table reads as its text, the
//! real-time preset fills only the keys a file leaves out, and the
//! builder's scene equals the file that says the same.

use crate::common;
use ferrofem::body::Motion;
use ferrofem::integrator::{InitialGuess, PreconditionerKind};
use ferrofem::obstacle::Shape;
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, Scene, SceneBuilder, SceneFile};
use ferrofem::solver::ConstraintSolver;

fn scene(extra: &str) -> Scene {
    let text = format!(
        "[simulation]\ntime_step = 0.01\nsteps = 1\npreset = \"real-time\"\n{extra}\n[[body]]\nname = \"b\"\n\
         mesh = {{ box = {{ size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }} }}\n\
         material = {{ young = 1e5, poisson = 0.3, density = 1000.0 }}\n"
    );
    Scene::from_toml(&text, ".".into(), "t").unwrap()
}

/// A scene given as a table (what the bindings pass) reads as its text
/// does, and a bad key is named by the same path, without a line.
#[test]
fn a_table_reads_as_its_text() {
    common::one_worker(|| {
        let text = "[simulation]\ntime_step = 0.01\nsteps = 1\n[[body]]\nname = \"b\"\n\
                mesh = { box = { size = [0.1, 0.1, 0.1], cells = [1, 1, 1] } }\n\
                material = { young = 1e5, poisson = 0.3, density = 1000.0 }\n";
        let table = |t: &str| t.parse::<toml::Table>().unwrap();
        let (file, dict) =
            (Scene::from_toml(text, ".".into(), "t"), Scene::from_table(table(text), ".".into(), "t"));
        assert_eq!(format!("{:?}", file.unwrap().spec), format!("{:?}", dict.unwrap().spec));
        let bad = text.replace("poisson", "poison");
        let file = Scene::from_toml(&bad, ".".into(), "t").unwrap_err().to_string();
        let dict = Scene::from_table(table(&bad), ".".into(), "t").unwrap_err().to_string();
        assert!(file.contains("body[0].material.poison") && file.contains("(line 7)"), "{file}");
        assert!(dict.contains("body[0].material.poison") && !dict.contains("(line"), "{dict}");
    })
}

/// The preset fills what the file leaves out; what the file writes wins.
#[test]
fn preset_fills_only_the_keys_left_out() {
    common::one_worker(|| {
        let s = scene("").spec;
        let ie = s.implicit_euler;
        assert_eq!(
            (ie.max_iterations, ie.rel_tolerance),
            (Some(ferrofem::scene::REAL_TIME_PCG_ITERATIONS), Some(1e-5))
        );
        assert_eq!(
            (ie.initial_guess, ie.preconditioner),
            (InitialGuess::PreviousChange, PreconditionerKind::Ldlt)
        );
        assert!(
            ie.refresh.asynchronous
                && ie.refresh.deterministic
                && ie.refresh.every == ferrofem::scene::REAL_TIME_REFRESH
                && ie.refresh.handover == ferrofem::scene::REAL_TIME_HANDOVER
        );
        assert_eq!(ie.preconditioner_precision, ferrofem_linalg::Precision::Bfloat16);
        assert!(ie.warp);
        assert!(ie.recycled_direction);
        assert_eq!(ie.residual_ceiling, Some(ferrofem::scene::REAL_TIME_RESIDUAL_CEILING));
        assert_eq!(ie.preconditioner_warp, ferrofem::integrator::PreconditionerWarp::Vertex);
        // PGS reads W in single precision unless the file says otherwise
        // (`delassus_precision` does not opt out of the preset's PGS).
        let pgs = |s: &ferrofem::scene::SceneFile| match s.constraint_solver.solver {
            Some(ConstraintSolver::Pgs(p)) => (p.max_iterations, p.precision),
            _ => panic!("PGS"),
        };
        assert_eq!(pgs(&s), (50, ferrofem_linalg::Precision::Single));
        let s = scene("[constraint_solver]\ndelassus_precision = \"double\"").spec;
        assert_eq!(pgs(&s), (50, ferrofem_linalg::Precision::Double));
        let s = scene("[constraint_solver]\ndelassus_precision = \"bfloat16\"").spec;
        assert_eq!(pgs(&s), (50, ferrofem_linalg::Precision::Bfloat16));
        let s = scene("[implicit_euler]\nmax_iterations = 7\ninitial_guess = \"zero\"\npreconditioner_precision = \"double\"\nrecycled_direction = false\npreconditioner_warp = \"body\"\nresidual_ceiling = 0.5\n[constraint_solver]\ntolerance = 1e-9").spec;
        let ie = s.implicit_euler;
        assert_eq!(ie.residual_ceiling, Some(0.5));
        assert!(
            !ie.recycled_direction
                && ie.preconditioner_warp == ferrofem::integrator::PreconditionerWarp::Body
        );
        assert_eq!(s.implicit_euler.preconditioner_precision, ferrofem_linalg::Precision::Double);
        assert_eq!((s.implicit_euler.max_iterations, s.implicit_euler.rel_tolerance), (Some(7), Some(1e-5)));
        assert_eq!(s.implicit_euler.initial_guess, InitialGuess::Zero);
        assert!(s.constraint_solver.solver.is_none() && s.constraint_solver.tolerance == Some(1e-9));
        let e = Scene::from_toml(
            "[simulation]\ntime_step = 0.01\nsteps = 1\npreset = \"fast\"\n",
            ".".into(),
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("simulation.preset") && e.contains("real-time"), "{e}");
    })
}

/// The builder's scene equals the scene file that says the same (every
/// key, defaults included), and its validation names the key.
#[test]
fn a_built_scene_equals_its_scene_file() {
    common::one_worker(|| {
        let text = r#"
[simulation]
time_step = 0.01
steps = 1
[implicit_euler]
max_iterations = 500
rel_tolerance = 1e-10
[contact]
alarm_distance = 0.01
[constraint_solver]
max_iterations = 500
tolerance = 1e-10
[[body]]
name = "block"
mesh = { box = { size = [0.2, 0.2, 0.2], cells = [4, 4, 4] } }
transform = { translation = [0.0, 0.0, 0.1] }
material = { young = 1e5, poisson = 0.3, density = 1000.0 }
damping = { mass = 2.0, stiffness = 0.01 }
[[body.attach]]
box = { min = [-1.0, -1.0, -0.001], max = [1.0, 1.0, 0.001] }
motion = { velocity = [0.0, 0.0, -1.0] }
[[obstacle]]
name = "floor"
shape = "half_space"
friction = 0.5
"#;
        let file = Scene::from_toml(text, ".".into(), "block").unwrap();
        let block = BodySpec::new("block", MeshSpec::cube(0.2, 4), 1e5, 0.3, 1000.0)
            .at([0.0, 0.0, 0.1])
            .damping(2.0, 0.01)
            .attached([-1.0, -1.0, -0.001], [1.0, 1.0, 0.001], Some(Motion::Velocity([0.0, 0.0, -1.0])));
        let built = SceneBuilder::new(0.01)
            .pcg(500, 1e-10)
            .pgs(500, 1e-10)
            .contact(|c| c.alarm_distance = 0.01)
            .body(block)
            .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.5))
            .build()
            .unwrap();
        let json = |s: &SceneFile| serde_json::to_value(s).unwrap();
        assert_eq!(json(&built.spec), json(&file.spec));
        let err =
            SceneBuilder::new(0.01).body(BodySpec::new("b", MeshSpec::cube(0.1, 2), 1e5, 0.5, 1e3)).build();
        let err = err.unwrap_err().to_string();
        assert!(err.contains("body[0].material") && err.contains("poisson"), "{err}");
    })
}

/// A misspelt built-in name is refused with the closest name and where
/// the list is.
#[test]
fn a_misspelt_builtin_name_gets_a_suggestion() {
    common::one_worker(|| {
        let e = ferrofem::scene::builtin::load("dorp").unwrap_err().to_string();
        assert!(e.contains("did you mean the built-in `drop`") && e.contains("ferrofem scenes"), "{e}");
    })
}
