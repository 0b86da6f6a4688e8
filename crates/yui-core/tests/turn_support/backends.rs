//! The test kit's servers as backends, for the stage and turn tests and the benches (which
//! include this file with `#[path]`): one place for the `Backend` literal and the short waits.

#![allow(dead_code)] // each bench uses part of it

use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::stage::BackendSource;
use yui_core::turn::{Backend, Timeouts};

/// `transport` at `base_url`, model `m`, no key and every option the server's default.
pub fn backend(transport: Transport, base_url: &str) -> Backend {
    Backend {
        transport,
        base_url: base_url.into(),
        model: "m".into(),
        api_key: None,
        max_output_tokens: None,
        temperature: None,
        push_url: None,
        realtime_url: None,
    }
}

/// Waits short enough that a dead scripted server fails a test in seconds.
pub fn short_waits() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        headers: Duration::from_secs(5),
        stall: Duration::from_secs(5),
    }
}

/// The stage's backend fixed to `transport` at `base_url`, with [`short_waits`].
pub fn fixed(transport: Transport, base_url: &str) -> BackendSource {
    BackendSource::Fixed {
        backend: backend(transport, base_url),
        timeouts: short_waits(),
    }
}

/// The stage's backend fixed to the realtime transport at `url` (nothing listens at the base
/// URL: every request must go over the realtime URL), with [`short_waits`].
pub fn realtime_fixed(url: &str) -> BackendSource {
    BackendSource::Fixed {
        backend: Backend {
            realtime_url: Some(url.into()),
            ..backend(Transport::Realtime, "http://127.0.0.1:9/v1")
        },
        timeouts: short_waits(),
    }
}
