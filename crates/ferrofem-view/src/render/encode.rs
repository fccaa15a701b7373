//! Pictures to files: a PNG (`png`), an animated GIF with one palette
//! fitted to the clip (`color_quant`'s NeuQuant, frames compressed in
//! parallel by `gif`), or an MP4 through an `ffmpeg` on `PATH`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rayon::prelude::*;

use crate::error::ViewError;

/// What a file name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// One picture.
    Png,
    /// An animated GIF.
    Gif,
    /// An H.264 MP4 (needs `ffmpeg`).
    Mp4,
}

/// An output file, checked and created before anything is simulated.
#[derive(Debug)]
pub struct Target {
    path: PathBuf,
    file: File,
    /// What its name asks for.
    pub container: Container,
}

fn render_error(path: &Path, what: impl std::fmt::Display) -> ViewError {
    ViewError::Render(format!("--out {}: {what}", path.display()))
}

impl Target {
    /// `path`'s container by its extension, and the file created (so that a
    /// path that cannot be written is refused at once).
    pub fn create(path: &Path) -> Result<Target, ViewError> {
        let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
        let container = match ext.as_str() {
            "png" => Container::Png,
            "gif" => Container::Gif,
            "mp4" => Container::Mp4,
            _ => return Err(render_error(path, "give a .png (a picture), .gif or .mp4 (a clip) file name")),
        };
        if container == Container::Mp4 && !ffmpeg_found() {
            return Err(render_error(
                path,
                "an MP4 is encoded by ffmpeg, which is not on PATH (install it, e.g. `apt install ffmpeg`), \
                 or write a .gif",
            ));
        }
        let file = File::create(path).map_err(|e| render_error(path, format!("cannot be written: {e}")))?;
        Ok(Target { path: path.to_path_buf(), file, container })
    }

    /// Writes `count` pictures of `width × height` (RGB bytes from
    /// `picture(k)`, made in parallel) at `fps` frames per second; a PNG
    /// holds `picture(0)`.
    pub fn write(
        self,
        [width, height]: [usize; 2],
        fps: f64,
        count: usize,
        picture: impl Fn(usize) -> Vec<u8> + Sync,
    ) -> Result<(), ViewError> {
        let path = self.path.clone();
        let err = |e: &dyn std::fmt::Display| render_error(&path, e);
        match self.container {
            Container::Png => {
                let mut encoder = png::Encoder::new(BufWriter::new(self.file), width as u32, height as u32);
                encoder.set_color(png::ColorType::Rgb);
                encoder.set_depth(png::BitDepth::Eight);
                let mut writer = encoder.write_header().map_err(|e| err(&e))?;
                writer.write_image_data(&picture(0)).map_err(|e| err(&e))?;
                writer.finish().map_err(|e| err(&e))
            }
            Container::Gif => {
                write_gif(self.file, [width, height], fps, count, &picture).map_err(|e| err(&e))
            }
            Container::Mp4 => write_mp4(&path, [width, height], fps, count, &picture).map_err(|e| err(&e)),
        }
    }
}

/// Frames made at once: enough for every thread, few enough to bound memory.
fn batch() -> usize {
    4 * rayon::current_num_threads()
}

/// An animated GIF that loops: one palette of 256 colours fitted by
/// NeuQuant to five frames across the clip, every pixel mapped through a
/// 32³ table of that palette, frames LZW-compressed in parallel.
fn write_gif(
    file: File,
    [width, height]: [usize; 2],
    fps: f64,
    count: usize,
    picture: &(dyn Fn(usize) -> Vec<u8> + Sync),
) -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (u16::try_from(width)?, u16::try_from(height)?);
    let mut samples: Vec<usize> = (0..5).map(|i| i * count.saturating_sub(1) / 4).collect();
    samples.dedup();
    let rgba: Vec<u8> = samples
        .par_iter()
        .map(|&k| picture(k))
        .collect::<Vec<_>>()
        .iter()
        .flat_map(|rgb| rgb.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]))
        .collect();
    let quant = color_quant::NeuQuant::new(10, 256, &rgba);
    let table: Vec<u8> = (0..32 * 32 * 32)
        .map(|i| {
            let c = [i >> 10, (i >> 5) & 31, i & 31].map(|v| (8 * v + 4) as u8);
            quant.index_of(&[c[0], c[1], c[2], 255]) as u8
        })
        .collect();
    let index =
        |p: &[u8]| table[((p[0] as usize >> 3) << 10) | ((p[1] as usize >> 3) << 5) | (p[2] as usize >> 3)];
    let mut encoder = gif::Encoder::new(BufWriter::new(file), w, h, &quant.color_map_rgb())?;
    encoder.set_repeat(gif::Repeat::Infinite)?;
    let delay = (100.0 / fps).round().clamp(2.0, 65535.0) as u16;
    for start in (0..count).step_by(batch()) {
        let frames: Vec<gif::Frame> = (start..(start + batch()).min(count))
            .into_par_iter()
            .map(|k| {
                let pixels: Vec<u8> = picture(k).chunks_exact(3).map(index).collect();
                let mut f = gif::Frame {
                    width: w,
                    height: h,
                    delay,
                    buffer: Cow::Owned(pixels),
                    ..Default::default()
                };
                f.make_lzw_pre_encoded();
                f
            })
            .collect();
        for f in &frames {
            encoder.write_lzw_pre_encoded_frame(f)?;
        }
    }
    Ok(())
}

/// Whether an `ffmpeg` runs.
fn ffmpeg_found() -> bool {
    Command::new("ffmpeg").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// An MP4 (H.264, yuv420p, even sides) by piping raw frames into `ffmpeg`.
fn write_mp4(
    path: &Path,
    [width, height]: [usize; 2],
    fps: f64,
    count: usize,
    picture: &(dyn Fn(usize) -> Vec<u8> + Sync),
) -> Result<(), Box<dyn std::error::Error>> {
    let mut child = Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24"])
        .args(["-s", &format!("{width}x{height}"), "-r", &format!("{fps}"), "-i", "-"])
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
        .args(["-movflags", "+faststart"])
        .arg(path)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("ffmpeg took no input")?;
    let mut fed = Ok(());
    for start in (0..count).step_by(batch()) {
        let frames: Vec<Vec<u8>> =
            (start..(start + batch()).min(count)).into_par_iter().map(picture).collect();
        fed = frames.iter().try_for_each(|f| stdin.write_all(f));
        if fed.is_err() {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(format!("ffmpeg failed: {}", String::from_utf8_lossy(&out.stderr).trim()).into());
    }
    Ok(fed?)
}
