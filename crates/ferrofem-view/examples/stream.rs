//! What the viewer delivers and what it costs the simulation: serves a
//! scene as fast as it steps, connects a page-like WebSocket client that
//! takes every frame it can (answering `ready` at once, as a page does
//! after drawing), and reports frames per second delivered, steps per
//! second, bytes per frame, and the simulation thread's time per frame
//! (fields, poses, f32 copies) against its step time.
//!
//! With `transport`, the simulation stays paused and every frame received
//! asks for a new one (a change of field): frames per second then measure
//! the pipeline alone (frame made, encoded, sent, received), whatever the
//! step costs.
//!
//! `cargo run --release -p ferrofem-view --example stream -- SCENE [SECONDS] [transport]`

use std::time::{Duration, Instant};

use ferrofem_view::{ServeOptions, Server, Source};
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let scene = args.next().unwrap_or_else(|| "benchmarks/scenes/drop-5k.toml".into());
    let seconds: f64 = args.next().map_or(10.0, |s| s.parse().expect("SECONDS is a number"));
    let transport = args.next().is_some_and(|a| a == "transport");
    let loaded = ferrofem::scene::builtin::load(&scene).expect("scene");
    let options = ServeOptions { port: 0, realtime: false, play: !transport, ..ServeOptions::default() };
    let server = Server::start(Source::Scene(Box::new(loaded)), options).expect("server");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (mut ws, _) =
            tokio_tungstenite::connect_async_with_config(format!("ws://{}/ws", server.addr), None, true)
                .await
                .unwrap();
        let (mut frames, mut bytes, mut steps) = (0usize, 0usize, (usize::MAX, 0usize));
        let (mut step_ms, mut publish_ms, mut vertices) = (Vec::new(), Vec::new(), 0);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs_f64(seconds) {
            let Some(Ok(m)) = ws.next().await else { break };
            match m {
                Message::Text(t) => {
                    let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
                    if v["type"] == "scene" {
                        vertices = v["bodies"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|b| b["vertices"].as_u64().unwrap())
                            .sum();
                    }
                }
                Message::Binary(b) => {
                    ws.send(Message::Text(r#"{"type":"ready"}"#.into())).await.unwrap();
                    if transport {
                        let field = if frames % 2 == 0 { "velocity" } else { "displacement" };
                        let command = format!(r#"{{"type":"field","name":"{field}"}}"#);
                        ws.send(Message::Text(command.into())).await.unwrap();
                    }
                    let len = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
                    let f: serde_json::Value = serde_json::from_slice(&b[16..16 + len]).unwrap();
                    let step = f["step"].as_u64().unwrap() as usize;
                    steps = (steps.0.min(step), step);
                    if step > 1 {
                        step_ms.push(f["step_ms"].as_f64().unwrap());
                        publish_ms.push(f["publish_ms"].as_f64().unwrap());
                    }
                    frames += 1;
                    bytes += b.len();
                }
                _ => {}
            }
        }
        let wall = start.elapsed().as_secs_f64();
        let (step, publish) = (median(step_ms), median(publish_ms));
        let mode = if transport { "transport (paused)" } else { "live" };
        println!(
            "| {scene} | {mode} | {vertices} | {:.1} | {:.1} | {} | {step:.2} | {publish:.3} | {:.2} % |",
            frames as f64 / wall,
            (steps.1 - steps.0) as f64 / wall,
            bytes / frames.max(1),
            100.0 * publish / step
        );
    });
    server.stop();
}
