//! The order of a Chat Completions request, for the built-in engine's prompt cache
//! (docs/built-in-model.md): what stays the same from turn to turn (the system prompt with the
//! character, the tool schemas, the history) comes first and byte for byte the same, and what
//! changes every turn (the client context: time, switches, memory recall) rides in the last user
//! message only. llama.cpp reuses the longest common prefix of the rendered prompt, so a memory
//! line in the system prompt would make every turn process the whole prompt again.

use crate::turn_support;

use chrono::{FixedOffset, TimeZone};
use serde_json::{json, Value};
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::context::ClientContext;

fn context(minute: u32, memory: &str) -> ClientContext {
    ClientContext {
        local: FixedOffset::east_opt(3600)
            .unwrap()
            .with_ymd_and_hms(2026, 12, 6, 18, minute, 0)
            .unwrap(),
        switches: vec![("relations", true)],
        relation: None,
        aware: Vec::new(),
        memory: vec![format!("memory: {memory}")],
        addressed: Vec::new(),
        proactive: Vec::new(),
    }
}

fn text(v: &Value) -> String {
    v.to_string()
}

#[tokio::test]
async fn the_unchanging_prefix_comes_first_and_the_per_turn_context_last() {
    let srv = ScriptServer::start(vec![chat_say("Hello!"), chat_say("Mochi, of course.")]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let mut req = h.request(&srv.base_url, Transport::ChatCompletions, "Hi!");
    req.instructions = Some("You are Yui, a cheerful desktop companion.".into());
    req.context = Some(context(1, "The user's cat is named Mochi."));
    h.run(&req, &reg).await;
    req.turn_id = "t2".into();
    req.message = "What is my cat called?".into();
    req.context = Some(context(2, "The user likes tea."));
    h.run(&req, &reg).await;

    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    let (one, two) = (&bodies[0], &bodies[1]);
    // The system prompt (the character) first, the same in both; the tools the same.
    let system = json!({"role": "system", "content": "You are Yui, a cheerful desktop companion."});
    assert_eq!(one["messages"][0], system);
    assert_eq!(two["messages"][0], system);
    assert_eq!(one["tools"], two["tools"]);
    assert!(one["tools"].as_array().is_some_and(|t| !t.is_empty()));
    // Turn 2: the system prompt, then the history as stored (no context in it), then the turn's
    // context and message, last.
    let msgs = two["messages"].as_array().unwrap();
    assert_eq!(
        msgs[1..msgs.len() - 1],
        [
            json!({"role": "user", "content": "Hi!"}),
            json!({"role": "assistant", "content": "Hello!"}),
        ]
    );
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"],
        context(2, "The user likes tea.").wrap("What is my cat called?")
    );
    // Nothing of either turn's context outside the last message.
    for (body, memory, time) in [(one, "Mochi", "18:01"), (two, "tea", "18:02")] {
        let msgs = body["messages"].as_array().unwrap();
        let before = text(&json!(msgs[..msgs.len() - 1]));
        for needle in ["[client context]", memory, time] {
            assert!(!before.contains(needle), "{needle} before the last message");
        }
        assert!(!text(&body["tools"]).contains(memory));
        assert!(msgs.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains(memory));
    }
}

/// Two turns prepared as the app prepares them (`turn::prepare`: the preset's persona, the
/// window's tools rebuilt each turn, the client context) send the same persona and the same
/// tool schemas, byte for byte: a changed order would end the cached prefix early.
#[test]
fn two_prepared_turns_send_the_same_persona_and_tool_schemas() {
    let h = Harness::new();
    let backend = || backends::backend(Transport::ChatCompletions, "http://127.0.0.1:9/v1");
    let prep = |msg: &str| {
        yui_core::turn::prepare(
            &h.store,
            &h.clock,
            "yui",
            yui_core::WindowKind::Main,
            msg,
            backend(),
        )
        .unwrap()
    };
    let (one, reg_one) = prep("Hi!");
    let (two, reg_two) = prep("And now?");
    assert_eq!(one.instructions, two.instructions);
    let (t1, t2) = (reg_one.chat_tools(), reg_two.chat_tools());
    assert!(t1.is_some());
    assert_eq!(t1.map(|t| t.to_string()), t2.map(|t| t.to_string()));
}
