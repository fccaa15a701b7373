//! What the viewer serves and how: a live scene or a replay, the address,
//! real time, play on load.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use ferrofem::scene::Scene;

/// What the viewer shows.
#[derive(Debug)]
pub enum Source {
    /// A live simulation of a scene.
    Scene(Box<Scene>),
    /// A folder written by `ferrofem run`.
    Replay(PathBuf),
}

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to bind (127.0.0.1 unless given). Beyond loopback the data
    /// routes need a random token, printed in the viewer's URL.
    pub host: IpAddr,
    /// Port (0: any free one).
    pub port: u16,
    /// Run no faster than real time (else as fast as the steps allow).
    pub realtime: bool,
    /// Start playing at once.
    pub play: bool,
    /// Origins besides the viewer's own whose pages may use it
    /// (`--allow-origin`, e.g. `http://localhost:3000`).
    pub allow_origins: Vec<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            realtime: true,
            play: false,
            allow_origins: Vec::new(),
        }
    }
}

impl ServeOptions {
    /// The address to bind.
    pub fn address(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }
}
