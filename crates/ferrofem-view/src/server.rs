//! HTTP and WebSocket: the page and its assets from the binary,
//! `/api/state`, and `/ws`, one task per page.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;
use tokio::sync::{oneshot, watch};

use crate::error::ViewError;
use crate::frame::Frame;
use crate::guard::{self, Guard};
use crate::options::{ServeOptions, Source};
use crate::replay::Replay;
use crate::scene_view::scene_view;
use crate::session::{Command, Live};

/// What every request handler shares.
#[derive(Clone)]
struct App {
    /// The scene message (JSON), sent first on every WebSocket.
    scene: Arc<String>,
    /// Vertex counts per body and the obstacle count: command bounds.
    limits: Arc<(Vec<usize>, usize)>,
    commands: mpsc::Sender<(Command, crate::session::Reply)>,
    frames: watch::Receiver<Arc<Frame>>,
}

/// A running viewer: its address, and what stops it.
pub struct Server {
    /// The bound address.
    pub addr: SocketAddr,
    /// The token the data routes need (bound beyond loopback).
    token: Option<String>,
    shutdown: Option<oneshot::Sender<()>>,
    http: Option<JoinHandle<()>>,
}

impl Server {
    /// Builds the source's session on its own thread and serves it; returns
    /// once the port is bound.
    pub fn start(source: Source, options: ServeOptions) -> Result<Server, ViewError> {
        let (command_tx, command_rx) = mpsc::channel();
        let (frame_tx, frame_rx) = watch::channel(Arc::new(Frame::default()));
        let (scene, limits) = match source {
            Source::Scene(scene) => {
                let mut live = Live::new(*scene, options.realtime)?;
                if options.play {
                    let _ = live.apply(Command::Play);
                }
                let view = scene_view(&live);
                let limits = (view.bodies.iter().map(|b| b.vertices).collect(), view.obstacles.len());
                let json = serde_json::to_string(&view).map_err(|e| ViewError::Server(e.to_string()))?;
                std::thread::spawn(move || live.run(command_rx, frame_tx));
                (json, limits)
            }
            Source::Replay(dir) => {
                let replay = Replay::open(&dir)?;
                let view = replay.scene_view();
                let limits = (view.bodies.iter().map(|b| b.vertices).collect(), 0);
                let json = serde_json::to_string(&view).map_err(|e| ViewError::Server(e.to_string()))?;
                std::thread::spawn(move || replay.run(command_rx, frame_tx));
                (json, limits)
            }
        };
        let app =
            App { scene: Arc::new(scene), limits: Arc::new(limits), commands: command_tx, frames: frame_rx };
        let router = Router::new()
            .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
            .route("/viewer.js", get(|| async { asset(JS, VIEWER) }))
            .route("/three/three.module.js", get(|| async { asset(JS, THREE) }))
            .route("/three/three.core.js", get(|| async { asset(JS, THREE_CORE) }))
            .route("/three/OrbitControls.js", get(|| async { asset(JS, ORBIT) }))
            .route("/three/LICENSE", get(|| async { asset("text/plain; charset=utf-8", THREE_LICENSE) }))
            .route("/favicon.ico", get(|| async { axum::http::StatusCode::NO_CONTENT }))
            .route("/api/state", get(state))
            .route("/api/scene", get(|State(app): State<App>| async move { json(app.scene.to_string()) }))
            .route("/ws", get(upgrade))
            .with_state(app);
        let loopback = options.host.is_loopback();
        let token = (!loopback).then(guard::token);
        let guard = Guard { loopback, token: token.clone(), allowed: options.allow_origins.clone() };
        let router = router.layer(axum::middleware::from_fn_with_state(Arc::new(guard), guard::check));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| ViewError::Server(e.to_string()))?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(options.address()))
            .map_err(|e| ViewError::Server(format!("cannot listen on {}: {e}", options.address())))?;
        let addr = listener.local_addr().map_err(|e| ViewError::Server(e.to_string()))?;
        // Small commands (`ready`) must not wait for Nagle's algorithm.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let (shutdown, stop) = oneshot::channel::<()>();
        let http = std::thread::spawn(move || {
            runtime.block_on(async move {
                let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
                    let _ = stop.await;
                });
                if let Err(e) = serve.await {
                    eprintln!("viewer: {e}");
                }
            });
            runtime.shutdown_background();
        });
        Ok(Server { addr, token, shutdown: Some(shutdown), http: Some(http) })
    }

    /// The page's address, with the token when one is needed.
    pub fn url(&self) -> String {
        match &self.token {
            Some(t) => format!("http://{}/?token={t}", self.addr),
            None => format!("http://{}/", self.addr),
        }
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
    }

    /// Stops serving and frees the port; the simulation thread ends with
    /// its last connection.
    pub fn stop(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close();
    }
}

const JS: &str = "text/javascript; charset=utf-8";
const INDEX: &str = include_str!("../assets/index.html");
const VIEWER: &str = include_str!("../assets/viewer.js");
const THREE: &str = include_str!("../vendor/three/three.module.js");
const THREE_CORE: &str = include_str!("../vendor/three/three.core.js");
const ORBIT: &str = include_str!("../vendor/three/OrbitControls.js");
const THREE_LICENSE: &str = include_str!("../vendor/three/LICENSE");

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

fn json(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `/api/state`: the latest frame's figures and sequence number (what a
/// script or a test reads of the simulation without a WebSocket).
async fn state(State(app): State<App>) -> Response {
    let frame = app.frames.borrow().clone();
    let figures = serde_json::to_value(&frame.figures).unwrap_or_default();
    json(serde_json::json!({ "seq": frame.seq, "figures": figures }).to_string())
}

async fn upgrade(ws: WebSocketUpgrade, State(app): State<App>) -> Response {
    ws.on_upgrade(move |socket| page(socket, app))
}

/// An error message for the page.
fn error(message: &str) -> Message {
    Message::Text(serde_json::json!({ "type": "error", "message": message }).to_string().into())
}

/// Checks a command's numbers and its indices against the scene.
fn in_bounds(command: &Command, limits: &(Vec<usize>, usize)) -> Result<(), String> {
    command.check()?;
    match *command {
        Command::Grab { body, vertex, .. } => match limits.0.get(body) {
            None => Err(format!("grab: no body {body} ({} bodies)", limits.0.len())),
            Some(&n) if vertex >= n => {
                Err(format!("grab: body {body} has {n} vertices, not vertex {vertex}"))
            }
            Some(_) => Ok(()),
        },
        Command::MoveObstacle { obstacle, .. } if obstacle >= limits.1 => {
            Err(format!("move_obstacle: no obstacle {obstacle} ({} obstacles)", limits.1))
        }
        _ => Ok(()),
    }
}

/// One page: the scene message, then commands in and frames out. A frame
/// goes when the page has said `ready` and a newer one exists, so the page
/// gets at most one per display refresh. A malformed message is answered
/// with an error and the connection goes on; a closed one ends the task
/// and nothing else.
async fn page(mut socket: WebSocket, app: App) {
    if socket.send(Message::Text(app.scene.to_string().into())).await.is_err() {
        return;
    }
    let mut frames = app.frames.clone();
    frames.mark_changed();
    let mut ready = true;
    loop {
        tokio::select! {
            incoming = socket.recv() => {
                let text = match incoming {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Binary(_))) => {
                        if socket.send(error("commands are JSON text messages")).await.is_err() { return; }
                        continue;
                    }
                    Some(Ok(_)) => continue,
                };
                let reply = match serde_json::from_str::<Command>(text.as_str()) {
                    Err(e) => Err(format!("malformed message: {e}")),
                    Ok(Command::Ready) => { ready = true; Ok(()) }
                    Ok(command) => match in_bounds(&command, &app.limits) {
                        Err(e) => Err(e),
                        Ok(()) => forward(&app, command).await,
                    },
                };
                if let Err(message) = reply {
                    if socket.send(error(&message)).await.is_err() { return; }
                }
            }
            changed = frames.changed(), if ready => {
                if changed.is_err() { return; }
                let frame = frames.borrow_and_update().clone();
                if socket.send(Message::Binary(frame.encode().into())).await.is_err() { return; }
                ready = false;
            }
        }
    }
}

/// Sends a command to the simulation thread and waits for its outcome.
async fn forward(app: &App, command: Command) -> Result<(), String> {
    let (tx, rx) = oneshot::channel();
    app.commands.send((command, tx)).map_err(|_| "the simulation has stopped".to_string())?;
    rx.await.map_err(|_| "the simulation has stopped".to_string())?
}
