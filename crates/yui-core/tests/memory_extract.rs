//! Extraction against a scripted backend speaking the exact non-streaming Chat Completions wire
//! (docs/memory.md): the request's shape, applying add/update/delete and the summary, a changed
//! fact updated rather than duplicated, a failed or cut answer changing nothing, cut lines never
//! shown, an exchange between characters, the pause switch, and the scheduler.

use crate::turn_support::backends;
use crate::turn_support::{Harness, Reply, ScriptServer};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::longterm::{self, extract, schedule::Scheduler, Kind};
use yui_core::transcript::{self, Role};
use yui_core::turn::Backend;
use yui_testkit::sse::chat_json;

fn backend(base: &str) -> Backend {
    Backend {
        model: "mem-model".into(),
        api_key: Some("sk-test".into()),
        ..backends::backend(Transport::ChatCompletions, base)
    }
}

async fn extract_now(
    h: &Harness,
    server: &ScriptServer,
    preset: &str,
) -> yui_core::error::Result<extract::Report> {
    let http = reqwest::Client::new();
    let clock = h.clock.clone();
    extract::run(
        &h.store,
        move || clock.now(),
        &http,
        &backend(&server.base_url),
        preset,
        &CancellationToken::new(),
    )
    .await
}

fn say(h: &Harness, preset: &str, role: Role, text: &str) -> i64 {
    transcript::append(&h.store, preset, role, text, None, h.clock.now()).unwrap()
}

fn texts(h: &Harness, preset: &str) -> Vec<String> {
    longterm::list(&h.store, preset)
        .unwrap()
        .into_iter()
        .map(|m| format!("{}: {}", m.kind.as_str(), m.text))
        .collect()
}

fn cursor(h: &Harness, preset: &str) -> i64 {
    h.store
        .read(|c| {
            Ok(c.query_row(
                "SELECT extracted_to FROM memory_state WHERE preset_id = ?1",
                [preset],
                |r| r.get(0),
            )
            .unwrap_or(0))
        })
        .unwrap()
}

#[tokio::test]
async fn the_request_has_the_exact_shape_and_its_answer_is_applied() {
    let h = Harness::new();
    let l1 = say(&h, "yui", Role::User, "My cat is called Mochi.");
    let l2 = say(&h, "yui", Role::Assistant, "Mochi is a lovely name!");
    transcript::append_marked(
        &h.store,
        "yui",
        Role::Assistant,
        "I was saying someth",
        None,
        h.clock.now(),
        true,
    )
    .unwrap();
    let answer = json!({
        "add": [{"kind": "fact", "text": "The user's cat is named Mochi.", "importance": 4, "lines": [l1, 99999]}],
        "update": [], "delete": [],
        "summary": "The user told Yui about their cat Mochi."
    });
    let server =
        ScriptServer::start(vec![chat_json(&format!("```json\n{answer}\n```"), "stop")]).await;
    let r = extract_now(&h, &server, "yui").await.unwrap();
    assert_eq!((r.added.len(), r.summary, r.lines), (1, true, 2));

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(seen[0].auth.as_deref(), Some("Bearer sk-test"));
    let body = &seen[0].body;
    let want_user = format!(
        "Character: Yui\n\nExisting memories:\n(none)\n\nCurrent summary: (none)\n\nNew lines:\n[line {l1}] user: My cat is called Mochi.\n[line {l2}] you: Mochi is a lovely name!\n"
    );
    assert_eq!(
        body,
        &json!({
            "model": "mem-model",
            "messages": [
                {"role": "system", "content": extract::PROMPT},
                {"role": "user", "content": want_user},
            ],
            "stream": false,
            "temperature": 0,
        })
    );
    assert!(
        !seen[0].text.contains("someth"),
        "a cut line is never shown"
    );

    let mems = longterm::list(&h.store, "yui").unwrap();
    let fact = mems.iter().find(|m| m.kind == Kind::Fact).unwrap();
    assert_eq!(fact.text, "The user's cat is named Mochi.");
    assert_eq!((fact.importance, fact.sources.clone()), (4, vec![l1]));
    assert!(mems.iter().any(|m| m.kind == Kind::Summary));
    // Nothing new: no request.
    let again = extract_now(&h, &server, "yui").await.unwrap();
    assert_eq!(again.skipped.as_deref(), Some("nothing new was said"));
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn a_changed_fact_is_updated_not_duplicated() {
    let h = Harness::new();
    say(&h, "yui", Role::User, "I live in Osaka.");
    let server = ScriptServer::start(vec![chat_json(
        r#"{"add":[{"kind":"fact","text":"The user lives in Osaka."}],"update":[],"delete":[],"summary":"Lives in Osaka."}"#,
        "stop",
    )])
    .await;
    extract_now(&h, &server, "yui").await.unwrap();
    let id = longterm::list(&h.store, "yui")
        .unwrap()
        .into_iter()
        .find(|m| m.kind == Kind::Fact)
        .unwrap()
        .id;

    say(&h, "yui", Role::User, "I moved! I live in Kyoto now.");
    // The backend updates the memory it was shown, and (wrongly) re-adds the old text too.
    server.push(chat_json(
        &json!({"add":[{"kind":"fact","text":"the user lives in osaka."}],
                "update":[{"id": id, "text":"The user lives in Kyoto (moved from Osaka)."}],
                "delete":[], "summary":"Moved from Osaka to Kyoto."})
        .to_string(),
        "stop",
    ));
    let r = extract_now(&h, &server, "yui").await.unwrap();
    assert_eq!((r.updated.clone(), r.added.len()), (vec![id], 0));
    // The memory was shown as a candidate, with its id.
    let shown = server.seen()[1].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        shown.contains(&format!("{id}: fact: The user lives in Osaka.")),
        "{shown}"
    );
    let mut now = texts(&h, "yui");
    now.sort();
    assert_eq!(
        now,
        vec![
            "fact: The user lives in Kyoto (moved from Osaka).".to_string(),
            "summary: Moved from Osaka to Kyoto.".to_string()
        ]
    );
    // A delete retires a memory; ids it was not shown, and pinned ones, are left alone.
    let pinned = longterm::add(
        &h.store,
        h.clock.now(),
        "yui",
        &longterm::NewMemory {
            pinned: true,
            ..longterm::NewMemory::new(Kind::Fact, "The user's name is Aki.")
        },
    )
    .unwrap()
    .id;
    let kai = longterm::add(
        &h.store,
        h.clock.now(),
        "kai",
        &longterm::NewMemory::new(Kind::Fact, "Kai's secret."),
    )
    .unwrap()
    .id;
    say(
        &h,
        "yui",
        Role::User,
        "Forget where I live, and my name is not Aki.",
    );
    server.push(chat_json(
        &json!({"add":[],"update":[{"id": pinned, "text": "changed"}],"delete":[{"id": id},{"id": pinned},{"id": kai}]}).to_string(),
        "stop",
    ));
    let r = extract_now(&h, &server, "yui").await.unwrap();
    assert_eq!(r.deleted, vec![id]);
    assert!(longterm::get(&h.store, pinned).unwrap().text == "The user's name is Aki.");
    assert!(longterm::get(&h.store, kai).is_ok());
}

#[tokio::test]
async fn a_failed_or_cut_extraction_changes_nothing_and_is_retried() {
    let h = Harness::new();
    say(&h, "yui", Role::User, "My favourite colour is green.");
    let good = r#"{"add":[{"kind":"preference","text":"The user's favourite colour is green."}],"update":[],"delete":[],"summary":"Likes green."}"#;
    let server = ScriptServer::start(vec![
        Reply::Status(500, r#"{"error":{"message":"boom"}}"#.into()),
        chat_json(&good[..40], "length"),
        chat_json("Sure! Here are the memories: {\"add\": [", "stop"),
        Reply::Close,
        Reply::Status(200, good[..30].to_string()),
        chat_json(good, "stop"),
    ])
    .await;
    for n in 0..5 {
        let e = extract_now(&h, &server, "yui").await.unwrap_err();
        assert!(
            e.message.starts_with("extraction") || e.message.contains("extraction answer"),
            "{n}: {}",
            e.message
        );
        assert!(texts(&h, "yui").is_empty(), "{n}: nothing changed");
        assert_eq!(cursor(&h, "yui"), 0, "{n}: the same lines are read again");
    }
    let failures: i64 = h
        .store
        .read(|c| {
            Ok(c.query_row(
                "SELECT failures FROM memory_state WHERE preset_id='yui'",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(failures, 5);
    let r = extract_now(&h, &server, "yui").await.unwrap();
    assert_eq!(r.added.len(), 1);
    // The retry sent the same lines.
    let bodies = server.bodies();
    assert_eq!(bodies[0], bodies[5]);
    assert!(cursor(&h, "yui") > 0);
}

#[tokio::test]
async fn each_character_remembers_what_was_said_to_it() {
    let h = Harness::new();
    say(&h, "yui", Role::User, "Yui, I got a new job at the bakery.");
    say(
        &h,
        "yui",
        Role::Assistant,
        "Kai, did you hear? The user works at a bakery now!",
    );
    let kai_line = transcript::append_from(
        &h.store,
        "kai",
        "Yui",
        "Kai, did you hear? The user works at a bakery now!",
        None,
        h.clock.now(),
    )
    .unwrap();
    say(&h, "kai", Role::Assistant, "Bread every day, then.");
    let server = ScriptServer::start(vec![
        chat_json(r#"{"add":[],"update":[],"delete":[]}"#, "stop"),
        chat_json(r#"{"add":[],"update":[],"delete":[]}"#, "stop"),
    ])
    .await;
    extract_now(&h, &server, "kai").await.unwrap();
    extract_now(&h, &server, "yui").await.unwrap();
    let kai = server.bodies()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let yui = server.bodies()[1]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(kai.starts_with("Character: Kai\n"), "{kai}");
    assert!(
        kai.contains(&format!(
            "[line {kai_line}] Yui (character): Kai, did you hear?"
        )),
        "{kai}"
    );
    assert!(
        !kai.contains("new job"),
        "Kai never heard the user say it: {kai}"
    );
    assert!(
        yui.contains("user: Yui, I got a new job at the bakery."),
        "{yui}"
    );
    assert!(!yui.contains("Bread every day"), "{yui}");
}

#[tokio::test]
async fn the_switches_stop_extraction() {
    let h = Harness::new();
    say(&h, "yui", Role::User, "I play the cello.");
    let server = ScriptServer::start(vec![]).await;
    longterm::config::set_paused(&h.store, "yui", true).unwrap();
    let r = extract_now(&h, &server, "yui").await.unwrap();
    assert!(r.skipped.unwrap().contains("paused"));
    longterm::config::set_paused(&h.store, "yui", false).unwrap();
    yui_core::settings::set(&h.store, "yui.memory", &json!({"enabled": false})).unwrap();
    let r = extract_now(&h, &server, "yui").await.unwrap();
    assert!(r.skipped.unwrap().contains("off"));
    assert!(server.seen().is_empty());
    assert!(yui_core::settings::set(&h.store, "yui.memory", &json!({"pause_minutes": 0})).is_err());
    assert!(yui_core::settings::set(&h.store, "yui.memory", &json!({"bogus": 1})).is_err());
}

#[tokio::test]
async fn the_scheduler_extracts_after_a_pause_and_never_during_a_turn() {
    let h = Harness::new();
    say(&h, "yui", Role::User, "My dog is Pochi.");
    let server = ScriptServer::builder()
        .responder(|_| chat_json(r#"{"add":[{"kind":"fact","text":"The user's dog is Pochi."}],"update":[],"delete":[]}"#, "stop"))
        .start()
        .await;
    let b = backend(&server.base_url);
    let s = Scheduler::with_pause(
        h.store.clone(),
        h.clock.clone(),
        reqwest::Client::new(),
        Arc::new(move |_: &str| Ok(b.clone())),
        Duration::from_millis(300),
    );
    s.turn_ended("yui");
    // A turn starting within the pause stops the pending extraction.
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.turn_started("yui");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(server.seen().is_empty(), "nothing during a turn");
    s.turn_ended("yui");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.seen().is_empty(), "not before the pause");
    for _ in 0..50 {
        if !texts(&h, "yui").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        texts(&h, "yui"),
        vec!["fact: The user's dog is Pochi.".to_string()]
    );
    assert_eq!(server.seen().len(), 1);
    let _ = Value::Null;
}

#[tokio::test]
async fn embeddings_are_fetched_stored_and_fused() {
    let h = Harness::new();
    let near = longterm::add(
        &h.store,
        h.clock.now(),
        "yui",
        &longterm::NewMemory::new(Kind::Fact, "alpha"),
    )
    .unwrap()
    .id;
    let far = longterm::add(
        &h.store,
        h.clock.now(),
        "yui",
        &longterm::NewMemory::new(Kind::Fact, "beta"),
    )
    .unwrap()
    .id;
    // A scripted OpenAI-compatible /embeddings: "alpha" → x axis, anything else → y axis.
    let server = ScriptServer::builder()
        .responder(|s| {
            let data: Vec<Value> = s.body["input"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let v = if t == "alpha" { [3.0, 0.0] } else { [0.0, 2.0] };
                    json!({"object": "embedding", "index": i, "embedding": v})
                })
                .collect();
            Reply::Status(
                200,
                json!({"object": "list", "data": data, "model": s.body["model"]}).to_string(),
            )
        })
        .start()
        .await;
    let http = reqwest::Client::new();
    let n = longterm::embed::backfill(&h.store, &http, &server.base_url, Some("k"), "emb")
        .await
        .unwrap();
    assert_eq!(n, 2);
    let seen = server.seen();
    assert_eq!(
        (seen[0].path.as_str(), seen[0].body["model"].clone()),
        ("/v1/embeddings", json!("emb"))
    );
    assert_eq!(seen[0].body["input"], json!(["alpha", "beta"]));
    // Nothing left to embed; a model change embeds everything again.
    assert_eq!(
        longterm::embed::backfill(&h.store, &http, &server.base_url, None, "emb")
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        longterm::embed::missing(&h.store, "emb-2", 10)
            .unwrap()
            .len(),
        2
    );
    // A query with no word in common finds the nearest vector first.
    let q = [1.0f32, 0.0];
    let found = h
        .store
        .read(|c| longterm::search::memories(c, "yui", "zzz", Some(("emb", &q)), 5))
        .unwrap();
    assert_eq!(
        found.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![near, far]
    );
    // Forget takes the vector with it.
    longterm::forget(&h.store, near).unwrap();
    let vectors: i64 = h
        .store
        .read(|c| Ok(c.query_row("SELECT count(*) FROM memory_vectors", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(vectors, 1);
}
