//! The test kit: scripted backends that speak the exact wire formats, bound to 127.0.0.1.
//!
//! - [`sse`]: an OpenAI-compatible HTTP server (SSE streams for Chat Completions and Responses,
//!   plain JSON for errors and `/v1/models`) run from a script of replies and/or a responder that
//!   computes each reply from the request, keeping every request; with builders for the events
//!   real servers send. It runs on the test's runtime or, for plain `#[test]`s that block on a
//!   child process, on a thread of its own;
//! - [`ws`]: a WebSocket server for the push transport that hands each connection to the test,
//!   which reads the client's frames and writes the server's;
//! - [`realtime`]: a realtime (OpenAI Realtime protocol) server over [`ws`]: each connection's
//!   session set up, every client event recorded, scripted responses (text, transcript with
//!   base64 pcm16 audio, function calls) played by the test or automatically on `response.create`;
//! - [`speech`]: an OpenAI-compatible speech server (`/audio/transcriptions` multipart in, JSON
//!   out; `/audio/speech` JSON in, WAV or PCM out) with scripted faults;
//! - [`files`]: a file server (GET with `Range`) for model downloads, with the faults a real
//!   one has: a connection cut halfway, `Range` ignored, a wrong size, a server that is down.
//!
//! - [`dbus`]: a D-Bus session bus of the test's own, for MPRIS and portal doubles.
//! - [`pulse`]: a PulseAudio daemon of the test's own (a null sink looped to the default
//!   source, and any modules a test adds).
//! - [`vrm`]: small humanoid VRM 1.0 and 0.x models with any expression presets.
//! - [`xserver`]: an Xvfb (or two Xinerama heads) with openbox, on a display of its own.
//!
//! Used by the core's tests, the CLI tests (crates/yui-cli/tests) and the end-to-end tests
//! (tests/e2e). Dev-only: no product crate depends on it outside `[dev-dependencies]`.

pub mod dbus;
pub mod files;
pub mod pulse;
pub mod realtime;
pub mod speech;
pub mod sse;
pub mod vrm;
pub mod ws;
pub mod xserver;
