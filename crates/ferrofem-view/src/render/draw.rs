//! One frame as a picture: obstacles and bodies lit as the page lights
//! them (a hemisphere light and a sun), bodies coloured by the field,
//! contact-force arrows, the caption and the legend.

use ferrofem::fields::viridis;
use ferrofem::scene::Camera;
use nalgebra::{UnitQuaternion, Vector3};

use super::camera::Projection;
use super::raster::{Canvas, Rgb};
use super::shapes::{surface, vertex_normals, Surface, FLOOR_CELLS};
use super::text::Picture;
use crate::frame::{Frame, SceneView, ShapeView};

/// Samples per pixel side (anti-aliasing).
const SUPERSAMPLE: usize = 2;

/// The page's background.
const BACKGROUND: u32 = 0x1d2126;

/// `a` over `b` at opacity `alpha`.
fn blend(a: Rgb, b: Rgb, alpha: f32) -> Rgb {
    [0, 1, 2].map(|d| alpha * a[d] + (1.0 - alpha) * b[d])
}

fn hex(c: u32) -> Rgb {
    [(c >> 16) & 255, (c >> 8) & 255, c & 255].map(|v| v as f32 / 255.0)
}

/// How a clip is drawn.
#[derive(Debug, Clone)]
pub struct Look {
    /// The camera.
    pub camera: Camera,
    /// Picture size `[width, height]` (pixels).
    pub size: [usize; 2],
    /// The field's range the colours span (the legend's).
    pub range: (f64, f64),
    /// Contact-force arrows, scaled so that the largest of the frame is
    /// `0.15 · extent` long.
    pub arrows: bool,
    /// The bodies' extent over the clip (m).
    pub extent: f64,
}

/// A scene's fixed geometry, ready to draw frames of.
pub struct Painter {
    name: String,
    /// Surface triangles per body.
    bodies: Vec<Vec<[u32; 3]>>,
    /// Per obstacle: its surface in its local frame, the vertex normals, its colour, whether a floor.
    obstacles: Vec<(Surface, Vec<Vector3<f64>>, Rgb, bool)>,
}

impl Painter {
    /// The geometry of `view`.
    pub fn new(view: &SceneView) -> Painter {
        let bodies = view
            .bodies
            .iter()
            .map(|b| b.triangles.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect())
            .collect();
        let obstacles = view
            .obstacles
            .iter()
            .map(|o| {
                let s = surface(&o.shape);
                let n = vertex_normals(&s.points, &s.triangles);
                let floor = matches!(o.shape, ShapeView::HalfSpace { .. });
                // The page draws a floor at 55 % opacity over its background.
                let colour = match (o.draggable, floor) {
                    (true, _) => hex(0xc9a55a),
                    (false, true) => blend(hex(0x8d99a6), hex(BACKGROUND), 0.55),
                    (false, false) => hex(0x8d99a6),
                };
                (s, n, colour, floor)
            })
            .collect();
        Painter { name: view.name.clone(), bodies, obstacles }
    }

    /// Frame `frame` as 8-bit RGB, `look.size` pixels.
    pub fn draw(&self, frame: &Frame, look: &Look) -> Vec<u8> {
        let [w, h] = look.size;
        let camera = Projection::new(&look.camera, SUPERSAMPLE * w, SUPERSAMPLE * h);
        let mut canvas = Canvas::new(SUPERSAMPLE * w, SUPERSAMPLE * h, hex(BACKGROUND));
        for (i, (s, normals, colour, floor)) in self.obstacles.iter().enumerate() {
            let (rotation, shift) =
                frame.poses.get(i).map_or((UnitQuaternion::identity(), Vector3::zeros()), |p| {
                    let q = nalgebra::Quaternion::new(p[6], p[3], p[4], p[5]).cast::<f64>();
                    (UnitQuaternion::from_quaternion(q), Vector3::new(p[0], p[1], p[2]).cast())
                });
            let points: Vec<Vector3<f64>> = s.points.iter().map(|p| rotation * p + shift).collect();
            let normals: Vec<Vector3<f64>> = normals.iter().map(|n| rotation * n).collect();
            for (t, tri) in s.triangles.iter().enumerate() {
                let cell = t / 2;
                let dark = *floor && (cell % FLOOR_CELLS + cell / FLOOR_CELLS) % 2 == 1;
                let albedo = if dark { colour.map(|c| 0.8 * c) } else { *colour };
                lit_triangle(&mut canvas, &camera, tri, &points, &normals, |_| albedo);
            }
        }
        let span = if look.range.1 > look.range.0 { look.range.1 - look.range.0 } else { 1.0 };
        for (triangles, (x, values)) in self.bodies.iter().zip(&frame.bodies) {
            let points: Vec<Vector3<f64>> =
                x.chunks_exact(3).map(|p| Vector3::new(p[0], p[1], p[2]).cast()).collect();
            let normals = vertex_normals(&points, triangles);
            let colour = |v: usize| viridis(((values[v] as f64 - look.range.0) / span) as f32);
            for tri in triangles {
                lit_triangle(&mut canvas, &camera, tri, &points, &normals, colour);
            }
        }
        if look.arrows {
            arrows(&mut canvas, &camera, &frame.arrows, look.extent);
        }
        let mut rgb = canvas.downsample(SUPERSAMPLE);
        let mut picture = Picture { rgb: &mut rgb, width: w, height: h };
        let px = picture.text_size();
        let caption = format!("{}   t = {:.3} s", self.name, frame.figures.time);
        picture.text(0.6 * px, 0.5 * px, px, &caption, [235, 238, 242]);
        let (name, unit, ..) = frame.figures.field;
        picture.legend(name, unit, look.range.0, look.range.1);
        rgb
    }
}

/// One lit triangle of a surface.
fn lit_triangle(
    canvas: &mut Canvas,
    camera: &Projection,
    tri: &[u32; 3],
    points: &[Vector3<f64>],
    normals: &[Vector3<f64>],
    albedo: impl Fn(usize) -> Rgb,
) {
    let v = tri.map(|i| i as usize);
    let colours = v.map(|i| lit(albedo(i), normals[i], points[i], camera.eye));
    canvas.triangle(camera, v.map(|i| camera.to_view(points[i].into())), colours);
}

/// `albedo` under the page's lights: a sky–ground hemisphere and a sun
/// from `(1, −2, 3)`, both sides of a surface lit alike.
fn lit(albedo: Rgb, n: Vector3<f64>, p: Vector3<f64>, eye: Vector3<f64>) -> Rgb {
    let n = if n.dot(&(eye - p)) < 0.0 { -n } else { n };
    let sun = Vector3::new(1.0, -2.0, 3.0).normalize();
    let up = (0.5 * (n.z + 1.0)) as f32;
    let (sky, ground) = ([1.0, 1.0, 1.0], hex(0x404850));
    let diffuse = n.dot(&sun).max(0.0) as f32;
    [0, 1, 2].map(|d| (albedo[d] * (0.55 * (ground[d] + up * (sky[d] - ground[d])) + 0.7 * diffuse)).min(1.0))
}

/// Contact forces as arrows from their points, over everything.
fn arrows(canvas: &mut Canvas, camera: &Projection, arrows: &[[f32; 6]], extent: f64) {
    let largest = arrows.iter().map(|a| Vector3::new(a[3], a[4], a[5]).norm()).fold(0.0f32, f32::max);
    if largest <= 0.0 {
        return;
    }
    let scale = 0.15 * extent / largest as f64;
    let colour = hex(0xff7043);
    let r = 0.75 * SUPERSAMPLE as f64;
    for a in arrows {
        let p = Vector3::new(a[0], a[1], a[2]).cast::<f64>();
        let q = p + scale * Vector3::new(a[3], a[4], a[5]).cast::<f64>();
        let (vp, vq) = (camera.to_view(p.into()), camera.to_view(q.into()));
        if vp[2] < camera.near || vq[2] < camera.near {
            continue;
        }
        let (sp, sq) = (camera.to_screen(vp), camera.to_screen(vq));
        canvas.line([sp[0], sp[1]], [sq[0], sq[1]], r, colour);
        // The head: two strokes back from the tip at ±25°, a quarter of the length.
        let (dx, dy) = (sp[0] - sq[0], sp[1] - sq[1]);
        for angle in [25f64.to_radians(), -25f64.to_radians()] {
            let (s, c) = angle.sin_cos();
            let end = [sq[0] + 0.25 * (c * dx - s * dy), sq[1] + 0.25 * (s * dx + c * dy)];
            canvas.line([sq[0], sq[1]], end, r, colour);
        }
    }
}
