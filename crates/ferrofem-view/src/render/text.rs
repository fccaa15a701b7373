//! Words on a picture: the caption and the field's legend (a colour bar
//! with its range), in the font shipped with the workspace (ab_glyph).

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

use ferrofem::fields::viridis;

const FONT: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSansMono.ttf");

/// An 8-bit RGB picture being annotated.
pub struct Picture<'a> {
    /// `3 × width × height` bytes, rows top to bottom.
    pub rgb: &'a mut [u8],
    /// Pixels.
    pub width: usize,
    /// Pixels.
    pub height: usize,
}

/// A number as a legend shows it: three significant digits, scientific
/// outside `[0.01, 10⁴)`.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (1e-2..1e4).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.2e}")
    }
}

impl Picture<'_> {
    /// The text size for this picture (pixels).
    pub fn text_size(&self) -> f32 {
        (self.height as f32 / 32.0).clamp(10.0, 32.0)
    }

    /// The width of `text` at size `px` (pixels).
    pub fn text_width(px: f32, text: &str) -> f32 {
        let Ok(font) = FontRef::try_from_slice(FONT) else { return 0.0 };
        let scaled = font.as_scaled(PxScale::from(px));
        text.chars().map(|c| scaled.h_advance(scaled.glyph_id(c))).sum()
    }

    /// `text` with its top-left corner at `(x, y)`, blended over the picture.
    pub fn text(&mut self, x: f32, y: f32, px: f32, text: &str, colour: [u8; 3]) {
        let Ok(font) = FontRef::try_from_slice(FONT) else { return };
        let scaled = font.as_scaled(PxScale::from(px));
        let mut caret = x;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            let glyph = id.with_scale_and_position(px, point(caret, y + scaled.ascent()));
            caret += scaled.h_advance(id);
            let Some(outline) = font.outline_glyph(glyph) else { continue };
            let b = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                self.blend(b.min.x as i64 + gx as i64, b.min.y as i64 + gy as i64, colour, coverage)
            });
        }
    }

    fn blend(&mut self, x: i64, y: i64, colour: [u8; 3], alpha: f32) {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let at = 3 * (y as usize * self.width + x as usize);
        for d in 0..3 {
            let old = self.rgb[at + d] as f32;
            self.rgb[at + d] = (old + alpha.clamp(0.0, 1.0) * (colour[d] as f32 - old)).round() as u8;
        }
    }

    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, colour: [u8; 3]) {
        for yy in y..(y + h).min(self.height) {
            for xx in x..(x + w).min(self.width) {
                let at = 3 * (yy * self.width + xx);
                self.rgb[at..at + 3].copy_from_slice(&colour);
            }
        }
    }

    /// The legend at the right edge: the field's name and unit over a
    /// vertical viridis bar from `lo` (bottom) to `hi` (top), labelled.
    pub fn legend(&mut self, name: &str, unit: &str, lo: f64, hi: f64) {
        let px = self.text_size();
        let margin = (self.width / 40).max(6);
        let bar_w = (self.width / 60).max(8);
        let bar_h = (0.4 * self.height as f64) as usize;
        let x = self.width.saturating_sub(margin + bar_w);
        let y = margin + (1.6 * px) as usize;
        for k in 0..bar_h {
            let c = viridis(1.0 - k as f32 / (bar_h.max(2) - 1) as f32).map(|v| (255.0 * v).round() as u8);
            self.rect(x, y + k, bar_w, 1, c);
        }
        let white = [235, 238, 242];
        let title = format!("{} ({unit})", name.replace('_', " "));
        let right = (self.width - margin) as f32;
        self.text(right - Self::text_width(px, &title), margin as f32, px, &title, white);
        for (value, top) in [(hi, y as f32 - 0.5 * px), (lo, (y + bar_h) as f32 - 0.5 * px)] {
            let label = number(value);
            let at = x as f32 - 0.4 * px - Self::text_width(px, &label);
            self.text(at, top, px, &label, white);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_significant_digits() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.0123456), "0.0123");
        assert_eq!(number(12.345), "12.3");
        assert_eq!(number(1234.5), "1234");
        assert_eq!(number(2.5e-4), "2.50e-4");
        assert_eq!(number(-3.0e6), "-3.00e6");
    }

    /// Text changes pixels inside its box and none outside it.
    #[test]
    fn text_is_drawn_where_it_is_placed() {
        let (w, h) = (120, 40);
        let mut rgb = vec![0u8; 3 * w * h];
        let mut p = Picture { rgb: &mut rgb, width: w, height: h };
        p.text(10.0, 10.0, 16.0, "t = 1 s", [255, 255, 255]);
        let width = Picture::text_width(16.0, "t = 1 s");
        assert!(width > 40.0 && width < 100.0);
        let lit: Vec<(usize, usize)> =
            (0..w * h).filter(|i| rgb[3 * i] > 0).map(|i| (i % w, i / w)).collect();
        assert!(lit.len() > 30);
        assert!(lit
            .iter()
            .all(|&(x, y)| (9..=10 + width as usize + 1).contains(&x) && (9..=30).contains(&y)));
    }
}
