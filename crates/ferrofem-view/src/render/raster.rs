//! A z-buffered triangle rasterizer: triangles clipped at the near plane,
//! projected, filled with interpolated colours where they are nearest;
//! lines drawn over everything; the picture box-filtered down from a
//! supersampled canvas.

use super::camera::Projection;

/// A colour, linear RGB in `[0, 1]`.
pub type Rgb = [f32; 3];

/// A supersampled canvas: colours and `1 / depth` per sample.
pub struct Canvas {
    width: usize,
    height: usize,
    colour: Vec<Rgb>,
    inv_depth: Vec<f32>,
}

impl Canvas {
    /// A canvas of `background`.
    pub fn new(width: usize, height: usize, background: Rgb) -> Canvas {
        Canvas {
            width,
            height,
            colour: vec![background; width * height],
            inv_depth: vec![0.0; width * height],
        }
    }

    /// A triangle of view-space vertices `v` with colours `c`: the part in
    /// front of the near plane, where nothing nearer was drawn.
    pub fn triangle(&mut self, camera: &Projection, v: [[f64; 3]; 3], c: [Rgb; 3]) {
        let near = camera.near;
        if v.iter().all(|p| p[2] >= near) {
            self.fill(v.map(|p| camera.to_screen(p)), c);
            return;
        }
        // Sutherland–Hodgman against depth ≥ near: at most four corners.
        let mut poly: Vec<([f64; 3], Rgb)> = Vec::with_capacity(4);
        for i in 0..3 {
            let (a, b) = ((v[i], c[i]), (v[(i + 1) % 3], c[(i + 1) % 3]));
            if a.0[2] >= near {
                poly.push(a);
            }
            if (a.0[2] >= near) != (b.0[2] >= near) {
                let t = (near - a.0[2]) / (b.0[2] - a.0[2]);
                let p = [0, 1, 2].map(|d| a.0[d] + t * (b.0[d] - a.0[d]));
                let q = [0, 1, 2].map(|d| a.1[d] + t as f32 * (b.1[d] - a.1[d]));
                poly.push((p, q));
            }
        }
        for k in 1..poly.len().saturating_sub(1) {
            let corners = [poly[0], poly[k], poly[k + 1]];
            self.fill(corners.map(|(p, _)| camera.to_screen(p)), corners.map(|(_, q)| q));
        }
    }

    /// A projected triangle `(x, y, 1/depth)`: samples whose centres it
    /// covers, depth-tested, colours interpolated. The barycentric
    /// coordinates are affine in the sample's position: stepped, not
    /// recomputed, along a row.
    fn fill(&mut self, s: [[f64; 3]; 3], c: [Rgb; 3]) {
        let area = (s[1][0] - s[0][0]) * (s[2][1] - s[0][1]) - (s[1][1] - s[0][1]) * (s[2][0] - s[0][0]);
        if area == 0.0 || !area.is_finite() {
            return;
        }
        // Barycentric k at (x, y) = a[k]·x + b[k]·y + e[k] (edge opposite corner k over the area).
        let (mut a, mut b, mut e) = ([0.0; 3], [0.0; 3], [0.0; 3]);
        for k in 0..3 {
            let (p, q) = (s[(k + 1) % 3], s[(k + 2) % 3]);
            a[k] = (p[1] - q[1]) / area;
            b[k] = (q[0] - p[0]) / area;
            e[k] = (p[0] * q[1] - q[0] * p[1]) / area;
        }
        let z = s.map(|p| p[2]);
        let lo = |d: usize| s.iter().map(|p| p[d]).fold(f64::INFINITY, f64::min).floor().max(0.0) as usize;
        let hi = |d: usize, n: usize| {
            s.iter().map(|p| p[d]).fold(f64::NEG_INFINITY, f64::max).ceil().clamp(0.0, n as f64) as usize
        };
        let (x0, x1, y0, y1) = (lo(0), hi(0, self.width), lo(1), hi(1, self.height));
        for y in y0..y1 {
            let py = y as f64 + 0.5;
            let mut w = [0, 1, 2].map(|k| a[k] * (x0 as f64 + 0.5) + b[k] * py + e[k]);
            for x in x0..x1 {
                if w[0] >= 0.0 && w[1] >= 0.0 && w[2] >= 0.0 {
                    let depth = (w[0] * z[0] + w[1] * z[1] + w[2] * z[2]) as f32;
                    let at = y * self.width + x;
                    if depth > self.inv_depth[at] {
                        self.inv_depth[at] = depth;
                        let (u, v, t) = (w[0] as f32, w[1] as f32, w[2] as f32);
                        let mix = |d: usize| u * c[0][d] + v * c[1][d] + t * c[2][d];
                        self.colour[at] = [mix(0), mix(1), mix(2)];
                    }
                }
                w = [w[0] + a[0], w[1] + a[1], w[2] + a[2]];
            }
        }
    }

    /// A line from `a` to `b` (pixels) of half-width `r`, over everything.
    pub fn line(&mut self, a: [f64; 2], b: [f64; 2], r: f64, colour: Rgb) {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let length2 = dx * dx + dy * dy;
        let lo = |d: usize, n: usize| (a[d].min(b[d]) - r).floor().clamp(0.0, n as f64) as usize;
        let hi = |d: usize, n: usize| (a[d].max(b[d]) + r).ceil().clamp(0.0, n as f64) as usize;
        for y in lo(1, self.height)..hi(1, self.height) {
            for x in lo(0, self.width)..hi(0, self.width) {
                let (px, py) = (x as f64 + 0.5 - a[0], y as f64 + 0.5 - a[1]);
                let t = if length2 > 0.0 { ((px * dx + py * dy) / length2).clamp(0.0, 1.0) } else { 0.0 };
                if (px - t * dx).powi(2) + (py - t * dy).powi(2) <= r * r {
                    self.colour[y * self.width + x] = colour;
                }
            }
        }
    }

    /// The picture: `factor × factor` samples averaged per pixel, 8-bit RGB.
    pub fn downsample(&self, factor: usize) -> Vec<u8> {
        let (w, h) = (self.width / factor, self.height / factor);
        let mut out = vec![0u8; 3 * w * h];
        let scale = 255.0 / (factor * factor) as f32;
        for (y, row) in out.chunks_exact_mut(3 * w).enumerate() {
            for (x, pixel) in row.chunks_exact_mut(3).enumerate() {
                let mut sum = [0.0f32; 3];
                for sy in 0..factor {
                    let at = (y * factor + sy) * self.width + x * factor;
                    for c in &self.colour[at..at + factor] {
                        sum[0] += c[0];
                        sum[1] += c[1];
                        sum[2] += c[2];
                    }
                }
                for d in 0..3 {
                    pixel[d] = (sum[d] * scale + 0.5).clamp(0.0, 255.0) as u8;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem::scene::Camera;

    fn camera() -> Projection {
        let c = Camera { position: [0.0, 0.0, 1.0], target: [0.0; 3], up: [0.0, 1.0, 0.0], fov: 90.0 };
        Projection::new(&c, 20, 20)
    }

    /// The nearer of two overlapping triangles shows, whatever the order drawn.
    #[test]
    fn the_nearest_triangle_wins_in_either_order() {
        let p = camera();
        let big = |z: f64| [[-1.0, -1.0, z], [1.0, -1.0, z], [0.0, 1.0, z]].map(|q| p.to_view(q));
        let (red, blue) = ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]);
        for order in [[0.5, 0.0], [0.0, 0.5]] {
            let mut c = Canvas::new(20, 20, [0.0; 3]);
            for z in order {
                c.triangle(&p, big(z), [if z > 0.0 { red } else { blue }; 3]);
            }
            let rgb = c.downsample(1);
            let centre = 3 * (10 * 20 + 10);
            assert_eq!(&rgb[centre..centre + 3], &[255, 0, 0], "order {order:?}");
            assert_eq!(&rgb[0..3], &[0, 0, 0], "a corner stays background");
        }
    }

    /// A triangle through the near plane is clipped, not dropped: its part
    /// in front still covers pixels.
    #[test]
    fn a_triangle_through_the_near_plane_is_clipped() {
        let p = camera();
        let v = [[-1.0, -0.2, 0.0], [1.0, -0.2, 0.0], [0.0, -0.2, 5.0]].map(|q| p.to_view(q));
        let mut c = Canvas::new(20, 20, [0.0; 3]);
        c.triangle(&p, v, [[1.0; 3]; 3]);
        assert!(c.downsample(1).contains(&255));
    }
}
