//! MCP: the input as `mcp.json` text (`config::parse`), as a server's tool list (names, schemas:
//! `listing::build`), as a `tools/call` result (`result::parts`, and the answer when it holds no
//! image), and as SSE bytes through the event-size limit of our streamable HTTP client
//! (`http::SseLimit`), which must count the same whatever the chunking.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::mcp_config(data));
