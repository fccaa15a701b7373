//! `ferrofem view`: the browser viewer of a scene (live) or of a folder
//! that `ferrofem run` wrote (replay); see docs/viewer.md.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;
use ferrofem_view::{ServeOptions, Server, Source};

use crate::CliError;

/// Arguments of `ferrofem view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A scene file or built-in scene name (live), or an output folder of `ferrofem run` (replay).
    pub source: String,
    /// Port to serve on.
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind: 127.0.0.1 unless given. Any other address serves
    /// the viewer to the network, behind a random token in the printed URL.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Another origin whose pages may use the viewer (repeatable), e.g.
    /// `http://localhost:3000`; by default only the viewer's own page.
    #[arg(long = "allow-origin")]
    pub allow_origins: Vec<String>,
    /// Step as fast as possible instead of in real time.
    #[arg(long)]
    pub fast: bool,
    /// Open paused (a live scene plays from the start by default; a drag
    /// grabs only while it plays).
    #[arg(long, conflicts_with = "play")]
    pub paused: bool,
    /// Start playing at once: the default since the viewer plays on load
    /// (kept so that older command lines still run).
    #[arg(long, hide = true)]
    pub play: bool,
}

/// Serves until interrupted.
pub fn view(args: ViewArgs) -> Result<(), CliError> {
    let path = PathBuf::from(&args.source);
    let folder_like = args.source.ends_with('/') || (args.source.contains('/') && path.extension().is_none());
    if !path.exists() && folder_like {
        return Err(CliError::Other(format!(
            "{}: no such folder to replay (`ferrofem run SCENE --out {}` writes one), nor a scene file",
            args.source, args.source
        )));
    }
    let source = if path.is_dir() {
        Source::Replay(path)
    } else {
        Source::Scene(Box::new(ferrofem::scene::builtin::load(&args.source)?))
    };
    let options = ServeOptions {
        host: args.host,
        port: args.port,
        realtime: !args.fast,
        play: !args.paused,
        allow_origins: args.allow_origins,
    };
    let server = Server::start(source, options).map_err(|e| CliError::Other(e.to_string()))?;
    if !args.host.is_loopback() {
        eprintln!(
            "warning: --host {} serves the viewer to the network: whoever reaches this port with the \
             URL below (its token) can drive the simulation",
            args.host
        );
    }
    println!("ferrofem viewer: open {} (Ctrl-C stops it)", server.url());
    server.wait();
    Ok(())
}
