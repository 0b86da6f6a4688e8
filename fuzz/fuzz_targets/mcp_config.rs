//! MCP: the input as `mcp.json` text (`config::parse`), as a server's tool list (names, schemas:
//! `listing::build`), as a `tools/call` result (`result::parts`, and the answer when it holds no
//! image), and as SSE bytes through the event-size limit of our streamable HTTP client
//! (`http::SseLimit`), which must count the same whatever the chunking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;
use yui_core::tools::mcp::{config, http::SseLimit, listing, result};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = config::parse(text, None);
    }
    let mut whole = SseLimit::new((), 64);
    let all_at_once = whole.observe(data);
    let mut parts = SseLimit::new((), 64);
    let mut chunked = true;
    for c in data.chunks(7) {
        if !parts.observe(c) {
            chunked = false;
            break;
        }
    }
    assert_eq!(all_at_once, chunked);
    if let Ok(tools) = serde_json::from_slice::<Vec<rmcp::model::Tool>>(data) {
        let l = listing::build("s", &tools, &HashSet::new());
        for t in &l.tools {
            assert!(t.name.len() <= listing::MAX_NAME && t.name.starts_with("mcp__s__"));
        }
    }
    if let Ok(r) = serde_json::from_slice::<rmcp::model::CallToolResult>(data) {
        let p = result::parts(&r);
        if p.images.is_empty() {
            let _ = result::answer(p);
        }
    }
});
