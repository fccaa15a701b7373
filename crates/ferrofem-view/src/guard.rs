//! Who may drive the viewer (`docs/viewer.md`, "Security"). A page on any
//! web site could otherwise open a WebSocket to `localhost` and send
//! commands, or reach it by a DNS name that resolves to 127.0.0.1
//! (DNS rebinding). So: on a loopback address every request must name a
//! loopback host; a request from a browser (it sends `Origin`) must come
//! from the viewer's own origin or one allowed by `--allow-origin`; and on
//! any other address the data routes (`/ws`, `/api/…`) need the random
//! token printed in the viewer's URL.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The checks of one server.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Bound to a loopback address: the Host header must be loopback.
    pub loopback: bool,
    /// The token the data routes require (bound beyond loopback).
    pub token: Option<String>,
    /// Origins allowed besides the viewer's own.
    pub allowed: Vec<String>,
}

impl Guard {
    /// Why `request` is refused, if it is.
    fn refusal(&self, request: &Request) -> Option<&'static str> {
        let h = request.headers();
        let text = |name| h.get(name).and_then(|v| v.to_str().ok());
        let (host, origin) = (text(header::HOST), text(header::ORIGIN));
        if self.loopback && !host.is_some_and(is_loopback_host) {
            return Some("the Host header must name this machine (localhost, 127.0.0.1 or [::1])");
        }
        if let Some(origin) = origin {
            let own =
                host.is_some_and(|h| origin == format!("http://{h}") || origin == format!("https://{h}"));
            if !own && !self.allowed.iter().any(|a| a == origin) {
                return Some("cross-origin request: the viewer answers its own page (see --allow-origin)");
            }
        }
        let path = request.uri().path();
        let data = path == "/ws" || path.starts_with("/api/");
        if let Some(token) = self.token.as_ref().filter(|_| data) {
            let given =
                request.uri().query().is_some_and(|q| q.split('&').any(|kv| kv == format!("token={token}")));
            if !given {
                return Some("the viewer's token is missing: open the URL it printed at start");
            }
        }
        None
    }
}

/// `host[:port]` names this machine.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    matches!(name, "localhost" | "127.0.0.1" | "[::1]")
}

/// A random token of 128 bits in hex, from the operating system's
/// randomness (std's per-process hash keys).
pub fn token() -> String {
    let half = || RandomState::new().build_hasher().finish();
    format!("{:016x}{:016x}", half(), half())
}

/// The middleware: 403 with the reason for a refused request.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    match guard.refusal(&request) {
        Some(reason) => (StatusCode::FORBIDDEN, reason).into_response(),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_tokens() {
        assert!(
            is_loopback_host("localhost:8080")
                && is_loopback_host("127.0.0.1")
                && is_loopback_host("[::1]:80")
        );
        assert!(!is_loopback_host("evil.example") && !is_loopback_host("localhost.evil.example:8080"));
        let (a, b) = (token(), token());
        assert!(a.len() == 32 && a != b, "{a} {b}");
    }
}
