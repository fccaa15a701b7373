//! `ferrofem render`: pictures read back and checked where the ball is,
//! clips' frame counts, a run's folder, and the refusals.

use std::path::Path;

use super::{ferrofem, tmp};

/// A PNG's size and RGB bytes.
fn read_png(path: &Path) -> (usize, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width as usize, info.height as usize, buf)
}

/// Frames and size of a GIF.
fn gif_frames(path: &Path) -> (usize, u16, u16) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(std::fs::File::open(path).unwrap()).unwrap();
    let (w, h) = (decoder.width(), decoder.height());
    let mut frames = 0;
    while decoder.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    (frames, w, h)
}

fn render(args: &[&str]) -> std::process::Output {
    ferrofem().arg("render").args(args).output().unwrap()
}

fn ok(out: &std::process::Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The drop's ball, seen by a camera aimed at where it starts: at t = 0
/// the picture's centre is the ball (viridis' purple: zero displacement),
/// not the background nor the grey floor; once the ball has fallen and
/// rolled, that pixel is floor or background again.
#[test]
fn a_picture_shows_the_ball_where_it_is() {
    let dir = tmp("render-png");
    let camera = "0,-1.2,0.5,0,0,0.3";
    let pixel = |time: &str| {
        let out = dir.join(format!("drop-{time}.png"));
        ok(&render(&[
            "drop",
            "--time",
            time,
            "--size",
            "160x120",
            "--camera",
            camera,
            "--out",
            out.to_str().unwrap(),
        ]));
        let (w, h, rgb) = read_png(&out);
        assert_eq!((w, h), (160, 120));
        let at = |x: usize, y: usize| [0, 1, 2].map(|d| rgb[3 * (y * w + x) + d] as i32);
        (at(80, 60), at(0, 0), at(2, 118))
    };
    let (ball, background, floor) = pixel("0");
    assert_eq!(background, [0x1d, 0x21, 0x26], "the corner is the page's background");
    assert_ne!(ball, background);
    assert!(ball[2] > ball[1] + 20 && ball[0] > ball[1], "purple ball at the centre: {ball:?}");
    assert!((floor[0] - floor[2]).abs() < 40 && floor != background, "grey floor below: {floor:?}");
    let (later, _, _) = pixel("1.5");
    assert!(!(later[2] > later[1] + 20 && later[0] > later[1]), "the ball left the centre: {later:?}");
}

/// A clip has a frame at the start and one every `--every` steps; a run's
/// folder renders with its own frames, by any field it holds.
#[test]
fn clips_have_one_frame_per_output_step() {
    let dir = tmp("render-gif");
    let gif = dir.join("drop.gif");
    ok(&render(&[
        "drop",
        "--steps",
        "10",
        "--every",
        "2",
        "--size",
        "64x48",
        "--out",
        gif.to_str().unwrap(),
    ]));
    assert_eq!(gif_frames(&gif), (6, 64, 48));
    let run = dir.join("run");
    let out =
        ferrofem().args(["run", "drop", "--steps", "6", "--out", run.to_str().unwrap()]).output().unwrap();
    ok(&out);
    let replay = dir.join("replay.gif");
    for field in ["displacement", "velocity", "contact_force"] {
        let args = [
            run.to_str().unwrap(),
            "--field",
            field,
            "--arrows",
            "--size",
            "64x48",
            "--out",
            replay.to_str().unwrap(),
        ];
        ok(&render(&args));
        assert_eq!(gif_frames(&replay).0, 4, "{field}: frames 0, 2, 4, 6");
    }
}

/// Unknown fields and containers, paths that cannot be written, bad sizes
/// and cameras, a field a folder lacks, an MP4 without ffmpeg: refused
/// with a message that names the cause.
#[test]
fn render_refuses_what_it_cannot_do() {
    let dir = tmp("render-refusals");
    let png = dir.join("a.png");
    let png = png.to_str().unwrap();
    let run = dir.join("run");
    ok(&ferrofem().args(["run", "drop", "--steps", "2", "--out", run.to_str().unwrap()]).output().unwrap());
    let missing = dir.join("no/such/folder/a.png");
    let cases: [(Vec<&str>, &str); 7] = [
        (vec!["drop", "--field", "pressure", "--out", png], "possible values"),
        (vec!["drop", "--out", missing.to_str().unwrap()], "cannot be written"),
        (vec!["drop", "--out", "picture.bmp"], "give a .png"),
        (vec!["drop", "--size", "4x4000", "--out", png], "render.size"),
        (vec!["drop", "--camera", "0,0,1,0,0,1", "--out", png], "render.camera.target"),
        (vec![run.to_str().unwrap(), "--field", "von_mises", "--out", png], "not in a run's folder"),
        (vec!["no-such-scene", "--out", png], "no-such-scene"),
    ];
    for (args, says) in cases {
        let out = render(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let mp4 = dir.join("a.mp4");
    let out =
        ferrofem().env("PATH", "").args(["render", "drop", "--out", mp4.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("ffmpeg") && err.contains(".gif"), "{err}");
}

/// An MP4 through `ffmpeg`: H.264 with one frame per output step, odd
/// sides padded to even. Skipped where `ffmpeg` is absent, unless
/// `FERROFEM_FFMPEG_TESTS=required` (CI installs it).
#[test]
fn clips_encode_to_mp4_through_ffmpeg() {
    let found = |tool: &str| std::process::Command::new(tool).arg("-version").output().is_ok();
    if !(found("ffmpeg") && found("ffprobe")) {
        assert!(std::env::var("FERROFEM_FFMPEG_TESTS").as_deref() != Ok("required"), "ffmpeg is required");
        eprintln!("skipping: no ffmpeg/ffprobe on PATH");
        return;
    }
    let dir = tmp("render-mp4");
    let mp4 = dir.join("drop.mp4");
    ok(&render(&["drop", "--steps", "20", "--size", "161x121", "--out", mp4.to_str().unwrap()]));
    let probe = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0"])
        .arg(&mp4)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "h264,162,122,11");
}
