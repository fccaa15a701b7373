//! The viewer's server from the outside, over real sockets: malformed
//! WebSocket messages get an error and the connection goes on; a page
//! that disconnects mid-stream leaves the simulation running; the port is
//! free again once the server stops; replay serves a run's folder.

use std::net::TcpListener;
use std::time::Duration;

use ferrofem::scene::builtin;
use ferrofem_view::{ServeOptions, Server, Source};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn options() -> ServeOptions {
    ServeOptions { port: 0, realtime: false, ..ServeOptions::default() }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn connect(server: &Server) -> (Socket, serde_json::Value) {
    let (mut ws, _) =
        tokio_tungstenite::connect_async_with_config(format!("ws://{}/ws", server.addr), None, true)
            .await
            .unwrap();
    let scene = next_text(&mut ws).await;
    (ws, scene)
}

/// The next text message as JSON (frames in between are skipped, and
/// answered `ready` as a page does).
async fn next_text(ws: &mut Socket) -> serde_json::Value {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(20), ws.next()).await.unwrap().unwrap().unwrap();
        match m {
            Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            Message::Binary(_) => ws.send(Message::Text(r#"{"type":"ready"}"#.into())).await.unwrap(),
            _ => {}
        }
    }
}

/// The figures of the next binary frame; the page then says it is ready.
async fn next_frame(ws: &mut Socket) -> serde_json::Value {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(20), ws.next()).await.unwrap().unwrap().unwrap();
        if let Message::Binary(b) = m {
            assert_eq!(&b[..4], b"FFV1");
            let len = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
            ws.send(Message::Text(r#"{"type":"ready"}"#.into())).await.unwrap();
            return serde_json::from_slice(&b[16..16 + len]).unwrap();
        }
    }
}

/// `GET /api/state` over a plain socket.
async fn api_state(server: &Server) -> serde_json::Value {
    let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let request = format!("GET /api/state HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", server.addr);
    s.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).await.unwrap();
    let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
    serde_json::from_str(body).unwrap()
}

#[test]
fn malformed_messages_are_answered_and_the_connection_goes_on() {
    let server = Server::start(Source::Scene(Box::new(builtin::load("drop").unwrap())), options()).unwrap();
    runtime().block_on(async {
        let (mut ws, scene) = connect(&server).await;
        assert_eq!(scene["type"], "scene");
        assert_eq!(scene["bodies"][0]["name"], "ball");
        for (bad, expect) in [
            ("not json", "malformed message"),
            (r#"{"type":"warp"}"#, "malformed message"),
            (r#"{"type":"grab","body":7,"vertex":0,"target":[0,0,0]}"#, "no body 7"),
            (r#"{"type":"grab","body":0,"vertex":99999999,"target":[0,0,0]}"#, "vertices, not vertex"),
            (r#"{"type":"time_step","value":-1}"#, "not a positive number"),
            (r#"{"type":"drag","target":[0,0,0]}"#, "drag without a grab"),
            (r#"{"type":"move_obstacle","obstacle":0,"translation":[0,0,0]}"#, "not draggable"),
        ] {
            ws.send(Message::Text(bad.into())).await.unwrap();
            let reply = next_text(&mut ws).await;
            assert_eq!(reply["type"], "error", "{bad}");
            assert!(reply["message"].as_str().unwrap().contains(expect), "{bad}: {reply}");
        }
        ws.send(Message::Binary(vec![1, 2, 3].into())).await.unwrap();
        assert!(next_text(&mut ws).await["message"].as_str().unwrap().contains("JSON text"));
        // Still served: a step comes back as a frame.
        ws.send(Message::Text(r#"{"type":"step"}"#.into())).await.unwrap();
        let mut figures = next_frame(&mut ws).await;
        while figures["step"] != 1 {
            figures = next_frame(&mut ws).await;
        }
    });
    server.stop();
}

#[test]
fn a_page_that_leaves_mid_stream_leaves_the_simulation_running_and_the_port_reusable() {
    let server = Server::start(Source::Scene(Box::new(builtin::load("drop").unwrap())), options()).unwrap();
    let addr = server.addr;
    runtime().block_on(async {
        let (mut ws, _) = connect(&server).await;
        ws.send(Message::Text(r#"{"type":"play"}"#.into())).await.unwrap();
        let first = next_frame(&mut ws).await["step"].as_u64().unwrap();
        next_frame(&mut ws).await;
        drop(ws); // no close handshake: the page just vanishes
        tokio::time::sleep(Duration::from_millis(300)).await;
        let a = api_state(&server).await["figures"]["step"].as_u64().unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let b = api_state(&server).await["figures"]["step"].as_u64().unwrap();
        assert!(b > a && a >= first, "the simulation stopped: steps {first}, {a}, {b}");
        // A new page joins the running simulation.
        let (mut again, _) = connect(&server).await;
        assert!(next_frame(&mut again).await["step"].as_u64().unwrap() >= b);
    });
    server.stop();
    TcpListener::bind(addr).expect("the port is free again after the server stops");
}

#[test]
fn replay_serves_a_run_folder() {
    let dir = std::env::temp_dir().join(format!("ferrofem-view-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut world = builtin::load("drop").unwrap().build().unwrap();
    let mut writer = ferrofem::output::FrameWriter::new(&dir, &world).unwrap();
    for _ in 0..3 {
        writer.write(&world).unwrap();
        world.step().unwrap();
    }
    let poses = std::fs::read_to_string(dir.join("obstacles.jsonl")).unwrap();
    assert_eq!(poses.lines().count(), 1 + 3, "the shapes, then a pose line per frame:\n{poses}");
    let server = Server::start(Source::Replay(dir.clone()), options()).unwrap();
    runtime().block_on(async {
        let (mut ws, scene) = connect(&server).await;
        assert_eq!(scene["mode"], "replay");
        assert_eq!(scene["times"].as_array().unwrap().len(), 3);
        // The floor is drawn in a replay too: the run wrote its shape and poses.
        assert_eq!(scene["obstacles"][0]["name"], "floor", "{scene}");
        assert!(scene["obstacles"][0]["shape"].to_string().contains("half"), "{scene}");
        ws.send(Message::Text(r#"{"type":"seek","frame":2}"#.into())).await.unwrap();
        let mut figures = next_frame(&mut ws).await;
        while figures["step"] != 2 {
            figures = next_frame(&mut ws).await;
        }
        assert!((figures["time"].as_f64().unwrap() - 2.0 * world.model.time_step).abs() < 1e-9);
        ws.send(Message::Text(r#"{"type":"seek","frame":9}"#.into())).await.unwrap();
        assert!(next_text(&mut ws).await["message"].as_str().unwrap().contains("frame 9 of 3"));
        ws.send(Message::Text(r#"{"type":"grab","body":0,"vertex":0,"target":[0,0,0]}"#.into()))
            .await
            .unwrap();
        assert_eq!(next_text(&mut ws).await["type"], "error");
    });
    server.stop();
    assert!(Server::start(Source::Replay(std::env::temp_dir().join("no-such-run")), options()).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// An HTTP request over a plain socket: the status line and the body (a
/// `101 Switching Protocols` answer is returned at its headers' end, the
/// socket left to close).
async fn request(addr: std::net::SocketAddr, head: &str) -> (String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("{head}Connection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).to_string();
        if text.starts_with("HTTP/1.1 101") && text.contains("\r\n\r\n") {
            break;
        }
        let n = tokio::time::timeout(Duration::from_secs(20), s.read(&mut chunk)).await.unwrap().unwrap();
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&bytes).to_string();
    let status = text.lines().next().unwrap_or("").to_string();
    let body = text.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string());
    (status, body)
}

/// The viewer obeys its own page only: a WebSocket from a foreign or
/// `null` Origin is refused (403), a request naming a foreign Host (DNS
/// rebinding) too; an allowed origin passes. Bound beyond loopback, the
/// data routes need the token of the printed URL.
#[test]
fn foreign_origins_hosts_and_missing_tokens_are_refused() {
    let scene = || Source::Scene(Box::new(builtin::load("drop").unwrap()));
    let allowed = ServeOptions { allow_origins: vec!["http://localhost:3000".into()], ..options() };
    let server = Server::start(scene(), allowed).unwrap();
    let addr = server.addr;
    runtime().block_on(async {
        let ws = |origin: &str| {
            format!(
                "GET /ws HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            )
        };
        for origin in ["http://evil.example", "null"] {
            let (status, body) = request(addr, &ws(origin)).await;
            assert!(status.contains("403") && body.contains("cross-origin"), "{origin}: {status} {body}");
        }
        let (status, _) = request(addr, &ws(&format!("http://{addr}"))).await;
        assert!(status.contains("101"), "own origin: {status}");
        let (status, _) = request(addr, &ws("http://localhost:3000")).await;
        assert!(status.contains("101"), "allowed origin: {status}");
        let (status, body) = request(addr, "GET /api/state HTTP/1.1\r\nHost: evil.example\r\n").await;
        assert!(status.contains("403") && body.contains("Host"), "{status} {body}");
        let (status, _) = request(addr, &format!("GET /api/state HTTP/1.1\r\nHost: localhost:{}\r\n", addr.port())).await;
        assert!(status.contains("200"), "{status}");
    });
    server.stop();
    let open = ServeOptions { host: "0.0.0.0".parse().unwrap(), ..options() };
    let server = Server::start(scene(), open).unwrap();
    let token = server.url().split_once("?token=").map(|(_, t)| t.to_string()).expect("a token in the URL");
    let port = server.addr.port();
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    runtime().block_on(async {
        let get = |path: String| format!("GET {path} HTTP/1.1\r\nHost: 192.168.1.5:{port}\r\n");
        let (status, body) = request(local, &get("/api/state".into())).await;
        assert!(status.contains("403") && body.contains("token"), "{status} {body}");
        let (status, _) = request(local, &get(format!("/api/state?token={token}"))).await;
        assert!(status.contains("200"), "{status}");
        let (status, _) = request(local, &get("/viewer.js".into())).await;
        assert!(status.contains("200"), "the page's code needs no token: {status}");
    });
    server.stop();
}

/// A replay draws a mesh obstacle too: the blade, turning about z, comes
/// back as a surface in its own frame whose pose at every frame puts it
/// where the run's own series of it says (to f32 rounding).
#[test]
fn replay_draws_mesh_obstacles_at_their_poses() {
    use ferrofem_view::frame::ShapeView;
    let dir = std::env::temp_dir().join(format!("ferrofem-view-replay-mesh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut scene = builtin::load("blade").unwrap();
    scene.spec.obstacles[0].motion.angular_velocity = [0.0, 0.0, 3.0];
    let mut world = scene.build().unwrap();
    let mut writer = ferrofem::output::FrameWriter::new(&dir, &world).unwrap();
    for _ in 0..4 {
        writer.write(&world).unwrap();
        world.step().unwrap();
    }
    let replay = ferrofem_view::replay::Replay::open(&dir).unwrap();
    let view = replay.scene_view();
    let names: Vec<&str> = view.obstacles.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["blade", "floor"]);
    let ShapeView::Mesh { vertices, .. } = &view.obstacles[0].shape else {
        panic!("the blade is not a mesh")
    };
    let frame = replay.frame_of(3, ferrofem::fields::Field::Displacement).unwrap();
    let p = frame.poses[0].map(|v| v as f64);
    let rotation =
        nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(p[6], p[3], p[4], p[5]));
    assert!(rotation.angle() > 0.05, "the blade turned {} rad", rotation.angle());
    let series = ferrofem_mesh::io::read_elements(&dir.join("obstacle-blade_00003.vtu")).unwrap();
    assert_eq!(series.vertices.len() * 3, vertices.len());
    for (x, local) in series.vertices.iter().zip(vertices.chunks_exact(3)) {
        let placed = rotation * nalgebra::Vector3::new(local[0], local[1], local[2]).cast::<f64>()
            + nalgebra::Vector3::new(p[0], p[1], p[2]);
        assert!((placed - nalgebra::Vector3::from(*x)).norm() < 1e-5, "{placed:?} against {x:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A replay draws the needles of `needles.pvd` as the live page does: a
/// cylinder of the needle's length, posed in every frame so that its ends
/// are the needle's back and tip at that frame's time (to f32 rounding);
/// the needles' series is not taken for a body. A malformed needles frame
/// is an error that names the file.
#[test]
fn replay_draws_needles_at_their_poses() {
    use ferrofem_view::frame::ShapeView;
    use nalgebra::{Quaternion, UnitQuaternion, Vector3};
    let dir = std::env::temp_dir().join(format!("ferrofem-view-replay-needle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut world = builtin::load("needle-insertion").unwrap().build().unwrap();
    let mut writer = ferrofem::output::FrameWriter::new(&dir, &world).unwrap();
    let mut ends = Vec::new();
    for _ in 0..4 {
        writer.write(&world).unwrap();
        ends.push(world.model.needles[0].segment(world.state.time));
        (0..10).for_each(|_| drop(world.step().unwrap()));
    }
    assert!((ends[3][1] - ends[0][1]).norm() > 1e-3, "the needle advances");
    let replay = ferrofem_view::replay::Replay::open(&dir).unwrap();
    let view = replay.scene_view();
    let bodies: Vec<&str> = view.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(bodies, ["tissue"]);
    let names: Vec<&str> = view.obstacles.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["needle 1"]);
    let ShapeView::Cylinder { length, .. } = view.obstacles[0].shape else {
        panic!("a needle is a cylinder")
    };
    assert!((length - world.model.needles[0].length).abs() < 1e-12, "length {length}");
    for (k, [back, tip]) in ends.iter().enumerate() {
        let p = replay.frame_of(k, ferrofem::fields::Field::Displacement).unwrap().poses[0].map(|v| v as f64);
        let rotation = UnitQuaternion::from_quaternion(Quaternion::new(p[6], p[3], p[4], p[5]));
        let (centre, half) =
            (Vector3::new(p[0], p[1], p[2]), rotation * Vector3::new(0.0, 0.0, 0.5 * length));
        assert!((centre + half - tip).norm() < 1e-5, "frame {k}: tip {:?} against {tip:?}", centre + half);
        assert!((centre - half - back).norm() < 1e-5, "frame {k}: back {:?} against {back:?}", centre - half);
    }
    // A needles frame with a stray point is refused by name.
    let three = [[0.0; 3], [0.0, 0.0, 0.1], [0.0, 0.1, 0.0]];
    ferrofem_mesh::io::write_vtp_lines(&dir.join("needles_00000.vtp"), &three, &[[0, 1]], &[]).unwrap();
    let err = ferrofem_view::replay::Replay::open(&dir).unwrap_err().to_string();
    assert!(err.contains("needles_00000.vtp") && err.contains("3 points, not two a needle"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
