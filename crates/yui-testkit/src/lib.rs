//! The test kit: scripted backends that speak the exact wire formats, bound to 127.0.0.1.
//!
//! - [`sse`]: an OpenAI-compatible HTTP/SSE server (Chat Completions and Responses) run from a
//!   script of replies, with builders for the events real servers send;
//! - [`ws`]: a WebSocket server for the push transport that hands each connection to the test,
//!   which reads the client's frames and writes the server's.
//!
//! Dev-only: no product crate depends on it outside `[dev-dependencies]`.

pub mod sse;
pub mod ws;
