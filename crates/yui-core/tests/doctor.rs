//! Finding local servers (discover.rs), the first-run greeting (firstrun.rs) and `yui doctor`'s
//! verdicts (doctor.rs), against scripted servers on 127.0.0.1 on ports the tests choose.

use crate::turn_support;
use crate::turn_support::backends;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use turn_support::*;
use yui_core::backend::{self, Transport};
use yui_core::discover::{self, Candidate};
use yui_core::doctor::{self, Options};
use yui_core::turn::{Backend, Timeouts};

fn port_of(base_url: &str) -> u16 {
    base_url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1")
        .parse()
        .unwrap()
}

/// A port nothing listens on.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn models(ids: &[&str], owned_by: &str) -> Reply {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "owned_by": owned_by}))
        .collect();
    Reply::Status(200, json!({"object": "list", "data": data}).to_string())
}

async fn find(candidates: &[Candidate]) -> Vec<discover::Found> {
    let http = reqwest::Client::new();
    discover::discover(&http, candidates, Duration::from_millis(500)).await
}

// ------------------------------------------------------------------ discovery

#[tokio::test]
async fn discovery_finds_the_one_server_that_answers() {
    let srv = ScriptServer::start(vec![models(&["qwen2.5:0.5b", "llama3.2"], "library")]).await;
    let p = port_of(&srv.base_url);
    let found = find(&[
        Candidate::new("Ollama", p),
        Candidate::new("LM Studio", dead_port()),
    ])
    .await;
    assert_eq!(
        serde_json::to_value(&found).unwrap(),
        json!([{"name": "Ollama", "base_url": format!("http://127.0.0.1:{p}/v1"), "port": p,
                "models": ["qwen2.5:0.5b", "llama3.2"], "needs_key": false}])
    );
    assert_eq!(srv.seen()[0].path, "/v1/models");
}

#[tokio::test]
async fn discovery_finds_two_and_one_that_wants_a_key() {
    let a = ScriptServer::start(vec![models(&["gguf-model"], "llamacpp")]).await;
    let b = ScriptServer::start(vec![Reply::Status(401, r#"{"error":"key"}"#.into())]).await;
    let (pa, pb) = (port_of(&a.base_url), port_of(&b.base_url));
    let found = find(&[Candidate::new("llama.cpp", pa), Candidate::new("vLLM", pb)]).await;
    assert_eq!(found.len(), 2);
    assert_eq!(
        (found[0].name.as_str(), found[0].models.clone()),
        ("llama.cpp", vec!["gguf-model".to_string()])
    );
    assert_eq!((found[1].name.as_str(), found[1].needs_key), ("vLLM", true));
}

#[tokio::test]
async fn discovery_finds_none_among_dead_ports_stalls_and_web_pages() {
    let hang = ScriptServer::start(vec![Reply::Hang]).await;
    let web = ScriptServer::start(vec![Reply::Status(404, "<html>not here</html>".into())]).await;
    let t0 = Instant::now();
    let found = find(&[
        Candidate::new("Ollama", dead_port()),
        Candidate::new("Jan", port_of(&hang.base_url)),
        Candidate::new("vLLM", port_of(&web.base_url)),
    ])
    .await;
    assert_eq!(found, vec![]);
    // In parallel: one timeout in all, not one per port.
    assert!(
        t0.elapsed() < Duration::from_millis(1400),
        "{:?}",
        t0.elapsed()
    );
}

// ------------------------------------------------------------------ first run

#[tokio::test]
async fn first_run_with_one_server_uses_it_and_greets_once() {
    let srv = ScriptServer::start(vec![models(&["qwen2.5:0.5b"], "library")]).await;
    let h = Harness::new();
    let g = yui_core::firstrun::greet(
        &h.store,
        &paths_of(&h),
        &[Candidate::new("Ollama", port_of(&srv.base_url))],
    )
    .await
    .unwrap()
    .expect("first run greets");
    assert_eq!(
        g.text,
        "Hi, I'm Yui! I found Ollama on this computer and will talk through qwen2.5:0.5b. Click me to say something."
    );
    assert!(!g.open_backend);
    let cfg = backend::load(&h.store).unwrap();
    assert_eq!(
        (cfg.base_url.as_str(), cfg.model.as_str()),
        (srv.base_url.as_str(), "qwen2.5:0.5b")
    );
    assert_eq!(
        yui_core::firstrun::greet(&h.store, &paths_of(&h), &[])
            .await
            .unwrap(),
        None,
        "only once"
    );
}

fn paths_of(h: &Harness) -> yui_core::paths::Paths {
    yui_core::paths::Paths::resolve(Some(h.dir.path().to_path_buf()))
}

#[tokio::test]
async fn first_run_with_no_server_and_no_catalog_says_what_to_install() {
    let h = Harness::new();
    // A catalog that cannot be read and nothing installed: no built-in model to offer.
    yui_core::settings::set(
        &h.store,
        yui_core::model::CATALOG_FILE_KEY,
        &json!(h.dir.path().join("missing.json")),
    )
    .unwrap();
    let g = yui_core::firstrun::greet(
        &h.store,
        &paths_of(&h),
        &[Candidate::new("Ollama", dead_port())],
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        g.text,
        "Hi, I'm Yui! I can't find a model on this computer yet — install Ollama from ollama.com and run \"ollama pull llama3.2\", or tell me where your model server is in Settings → Backend."
    );
    assert!(g.open_backend);
    assert_eq!(g.offer, None);
}

#[tokio::test]
async fn first_run_with_two_servers_asks_and_a_set_up_backend_is_not_a_first_run() {
    let a = ScriptServer::start(vec![models(&["a"], "library")]).await;
    let b = ScriptServer::start(vec![models(&["b"], "organization_owner")]).await;
    let h = Harness::new();
    let g = yui_core::firstrun::greet(
        &h.store,
        &paths_of(&h),
        &[
            Candidate::new("Ollama", port_of(&a.base_url)),
            Candidate::new("LM Studio", port_of(&b.base_url)),
        ],
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(g.text, "Hi, I'm Yui! I found Ollama and LM Studio on this computer — choose the one I should use in Settings → Backend.");
    assert_eq!(g.found.len(), 2);
    assert_eq!(
        backend::load(&h.store).unwrap(),
        backend::BackendConfig::default()
    );

    let h = Harness::new();
    backend::update(
        &h.store,
        &backend::BackendChange {
            model: Some("mine".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        yui_core::firstrun::greet(&h.store, &paths_of(&h), &[])
            .await
            .unwrap(),
        None
    );
}

// ------------------------------------------------------------------ doctor

fn target(base_url: &str, transport: Transport, key: Option<&str>) -> Backend {
    Backend {
        api_key: key.map(str::to_string),
        max_output_tokens: Some(backend::BackendConfig::default().max_output_tokens),
        ..backends::backend(transport, base_url)
    }
}

fn quick() -> Options {
    Options {
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            headers: Duration::from_secs(3),
            stall: Duration::from_secs(3),
        },
        per_check: Duration::from_secs(5),
        total: Duration::from_secs(20),
    }
}

/// `(name, ok)` of every check, in order.
fn verdicts(r: &doctor::Report) -> Vec<(&str, bool)> {
    r.checks.iter().map(|c| (c.name.as_str(), c.ok)).collect()
}

fn detail<'r>(r: &'r doctor::Report, name: &str) -> &'r str {
    &r.check(name).unwrap().detail
}

const ORDER: [&str; 8] = [
    doctor::REACHABLE,
    doctor::AUTH,
    doctor::MODEL,
    doctor::CHAT_STREAM,
    doctor::RESPONSES_STREAM,
    doctor::CHAT_TOOL,
    doctor::RESPONSES_TOOL,
    doctor::ROUND_TRIP,
];

fn ping_fragments() -> Reply {
    Reply::Sse(vec![
        c_call(0, "call_1", "ping", ""),
        c_args(0, "{\"word\":"),
        c_args(0, "\"hello\"}"),
        c_finish("tool_calls"),
        done(),
    ])
}

fn responses_ping() -> Reply {
    let mut parts = vec![r_created("resp_t")];
    parts.extend(r_call(0, "fc_1", "call_r", "ping", r#"{"word":"hello"}"#));
    parts.push(r_completed("resp_t"));
    Reply::Sse(parts)
}

#[tokio::test]
async fn doctor_a_server_that_does_everything() {
    let srv = ScriptServer::start(vec![
        models(&["m", "other"], "llamacpp"),
        chat_say("OK"),
        responses_say("resp_1", "OK"),
        ping_fragments(),
        responses_ping(),
        chat_say("Got pong."),
    ])
    .await;
    let r = doctor::run(
        &target(&srv.base_url, Transport::ChatCompletions, Some("sk-t")),
        &quick(),
    )
    .await;
    assert_eq!(
        verdicts(&r),
        ORDER.iter().map(|n| (*n, true)).collect::<Vec<_>>(),
        "{}",
        r.text()
    );
    assert_eq!(r.transport, Some(Transport::ChatCompletions));
    assert!(r.cues);
    assert_eq!(
        detail(&r, doctor::CHAT_TOOL),
        "ping was called while streaming; its arguments came in 2 fragments"
    );
    assert_eq!(
        detail(&r, doctor::RESPONSES_TOOL),
        "ping was called while streaming; its arguments came in one piece"
    );
    assert_eq!(detail(&r, doctor::MODEL), "the server offers \"m\"");
    assert_eq!(
        r.summary,
        "use chat_completions; expression cues will work."
    );
    // What went out: the key, tool_choice, the reply cap, and request 2 with ping's result.
    let seen = srv.seen();
    assert!(seen
        .iter()
        .all(|s| s.auth.as_deref() == Some("Bearer sk-t")));
    assert_eq!(seen[1].body["max_tokens"], 512);
    assert_eq!(seen[2].body["max_output_tokens"], 512);
    assert_eq!(
        seen[3].body["tool_choice"],
        json!({"type":"function","function":{"name":"ping"}})
    );
    assert_eq!(
        seen[4].body["tool_choice"],
        json!({"type":"function","name":"ping"})
    );
    assert_eq!(
        seen[5].body["messages"][2],
        json!({"role":"tool","tool_call_id":"call_1","content":"pong"})
    );
    assert_eq!(
        seen[5].body["messages"][1]["tool_calls"][0]["function"],
        json!({"name":"ping","arguments":"{\"word\":\"hello\"}"})
    );
    // The JSON for scripts: exactly {checks:[{name, ok, detail}], transport, cues}.
    let v = serde_json::to_value(&r).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["checks", "cues", "transport"]);
    let ck: Vec<&String> = v["checks"][0].as_object().unwrap().keys().collect();
    assert_eq!(ck, ["detail", "name", "ok"]);
    assert_eq!(v["transport"], "chat_completions");
}

#[tokio::test]
async fn doctor_a_model_that_streams_text_but_never_calls_tools() {
    let srv = ScriptServer::start(vec![
        models(&["m"], "library"),
        chat_say("OK"),
        responses_say("resp_1", "OK"),
        chat_say("I would ping, but I can't."),
        Reply::Status(
            200,
            json!({"choices":[{"index":0,"message":{"role":"assistant","content":"No."}}]})
                .to_string(),
        ),
        responses_say("resp_2", "No tools here."),
        Reply::Status(
            200,
            json!({"output":[{"type":"message","content":[{"type":"output_text","text":"No."}]}]})
                .to_string(),
        ),
    ])
    .await;
    let r = doctor::run(&target(&srv.base_url, Transport::Responses, None), &quick()).await;
    assert_eq!(
        verdicts(&r),
        vec![
            (doctor::REACHABLE, true),
            (doctor::AUTH, true),
            (doctor::MODEL, true),
            (doctor::CHAT_STREAM, true),
            (doctor::RESPONSES_STREAM, true),
            (doctor::CHAT_TOOL, false),
            (doctor::RESPONSES_TOOL, false),
            (doctor::ROUND_TRIP, false),
        ],
        "{}",
        r.text()
    );
    assert_eq!(
        detail(&r, doctor::CHAT_TOOL),
        "the model answered in text (\"I would ping, but I can't.\") and did not call the ping tool: it does not call tools"
    );
    assert_eq!(
        r.transport,
        Some(Transport::Responses),
        "the configured one"
    );
    assert!(!r.cues);
    assert_eq!(
        r.summary,
        "use responses; expression cues will not work: this model does not call tools — choose a tool-capable model such as qwen2.5, llama3.1 or mistral-nemo in Settings → Backend."
    );
    assert_eq!(
        srv.seen()[4].body["stream"],
        false,
        "asked again unstreamed"
    );
}

#[tokio::test]
async fn doctor_a_server_that_calls_tools_only_unstreamed() {
    let srv = ScriptServer::start(vec![
        models(&["m"], "llamacpp"),
        chat_say("OK"),
        Reply::Status(404, "Not Found".into()),
        chat_say("Sure."),
        Reply::Status(
            200,
            json!({"choices":[{"index":0,"message":{"role":"assistant","content":null,
                "tool_calls":[{"id":"c1","type":"function","function":{"name":"ping","arguments":"{\"word\":\"hello\"}"}}]}}]})
            .to_string(),
        ),
        Reply::Status(404, "Not Found".into()),
    ])
    .await;
    let r = doctor::run(
        &target(&srv.base_url, Transport::ChatCompletions, None),
        &quick(),
    )
    .await;
    let port = port_of(&srv.base_url);
    assert_eq!(
        detail(&r, doctor::RESPONSES_STREAM),
        format!("The server at 127.0.0.1:{port} does not offer the Responses API — choose Chat Completions as the transport. Settings → Backend")
    );
    assert_eq!(
        detail(&r, doctor::CHAT_TOOL),
        "ping is called only without streaming; YUI streams, so expression cues would not arrive"
    );
    assert!(!r.check(doctor::CHAT_TOOL).unwrap().ok);
    assert_eq!(r.transport, Some(Transport::ChatCompletions));
    assert!(!r.cues);
    assert!(
        r.summary
            .contains("this server delivers tool calls only without streaming"),
        "{}",
        r.summary
    );
}

#[tokio::test]
async fn doctor_a_server_that_stalls_ends_in_time() {
    let srv = ScriptServer::start(vec![Reply::Hang, Reply::Hang, Reply::Hang, Reply::Hang]).await;
    let opts = Options {
        timeouts: Timeouts {
            connect: Duration::from_secs(1),
            headers: Duration::from_millis(400),
            stall: Duration::from_millis(400),
        },
        per_check: Duration::from_secs(1),
        total: Duration::from_secs(3),
    };
    let t0 = Instant::now();
    let r = doctor::run(
        &target(&srv.base_url, Transport::ChatCompletions, None),
        &opts,
    )
    .await;
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(
        detail(&r, doctor::REACHABLE),
        "The model stopped answering (nothing for 400 ms) — it may still be loading; try again, or pick a smaller model. Settings → Backend"
    );
    assert!(!r.check(doctor::CHAT_STREAM).unwrap().ok);
    assert_eq!(
        detail(&r, doctor::RESPONSES_STREAM),
        "not checked: the server stalled twice already"
    );
    assert_eq!(r.transport, None);
    assert!(!r.cues);
    assert_eq!(srv.seen().len(), 2, "no more requests after two stalls");
}

/// Found as a user would: `yui doctor` against a server that is not running ended its
/// "reachable" detail with "(Connection refused (os error 111))". Plain words only: the
/// technical chain goes to the log.
#[tokio::test]
async fn doctor_nothing_listening_says_so_in_plain_words_only() {
    let port = dead_port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let r = doctor::run(&target(&base, Transport::ChatCompletions, None), &quick()).await;
    assert_eq!(
        detail(&r, doctor::REACHABLE),
        format!("I can't reach the model at 127.0.0.1:{port} — is the model server running, and is the address right? Settings → Backend")
    );
    for c in &r.checks {
        assert!(
            !c.detail.contains("os error") && !c.detail.contains("error sending request"),
            "{}: {}",
            c.name,
            c.detail
        );
    }
    assert!(!r.summary.contains("os error"), "{}", r.summary);
}

#[tokio::test]
async fn doctor_a_server_that_refuses_the_key() {
    let srv = ScriptServer::start(vec![Reply::Status(
        401,
        r#"{"error":{"message":"Invalid API key"}}"#.into(),
    )])
    .await;
    let r = doctor::run(
        &target(&srv.base_url, Transport::ChatCompletions, Some("sk-wrong")),
        &quick(),
    )
    .await;
    let port = port_of(&srv.base_url);
    assert_eq!(
        verdicts(&r),
        vec![
            (doctor::REACHABLE, true),
            (doctor::AUTH, false),
            (doctor::MODEL, false),
            (doctor::CHAT_STREAM, false),
            (doctor::RESPONSES_STREAM, false),
            (doctor::CHAT_TOOL, false),
            (doctor::RESPONSES_TOOL, false),
            (doctor::ROUND_TRIP, false),
        ]
    );
    assert_eq!(
        detail(&r, doctor::AUTH),
        format!("The model server at 127.0.0.1:{port} did not accept the API key — store the right one. Settings → Backend")
    );
    assert_eq!(
        detail(&r, doctor::CHAT_STREAM),
        "not checked: the key was refused"
    );
    assert_eq!(r.transport, None);
    assert_eq!(
        r.summary,
        format!("no transport works with this server. The model server at 127.0.0.1:{port} did not accept the API key — store the right one. Settings → Backend")
    );
    assert_eq!(srv.seen().len(), 1);
}

#[tokio::test]
async fn doctor_a_model_the_server_does_not_have() {
    let srv = ScriptServer::start(vec![
        models(&["qwen2.5:0.5b", "llama3.1"], "library"),
        Reply::Status(
            404,
            r#"{"error":{"message":"model \"m\" not found, try pulling it first"}}"#.into(),
        ),
        Reply::Status(
            404,
            r#"{"error":{"message":"model \"m\" not found"}}"#.into(),
        ),
        Reply::Status(
            404,
            r#"{"error":{"message":"model \"m\" not found"}}"#.into(),
        ),
        Reply::Status(
            404,
            r#"{"error":{"message":"model \"m\" not found"}}"#.into(),
        ),
    ])
    .await;
    let r = doctor::run(
        &target(&srv.base_url, Transport::ChatCompletions, None),
        &quick(),
    )
    .await;
    assert_eq!(
        detail(&r, doctor::MODEL),
        "the server has no model \"m\"; it offers: qwen2.5:0.5b, llama3.1 — pick one in Settings → Backend"
    );
    assert!(detail(&r, doctor::CHAT_STREAM).starts_with(
        "The model server has no model \"m\" — pick one it offers. Settings → Backend"
    ));
    assert_eq!(r.transport, None);
}

// ------------------------------------------------------------------ reply cap and temperature

/// A turn sends the configured reply cap (`max_tokens` / `max_output_tokens`) and temperature.
#[tokio::test]
async fn turns_send_the_reply_cap_and_the_temperature_on_both_transports() {
    let srv = ScriptServer::start(vec![chat_say("Hi."), responses_say("resp_1", "Hi.")]).await;
    let h = Harness::new();
    let cfg = backend::update(
        &h.store,
        &backend::BackendChange {
            max_output_tokens: Some(300),
            temperature: Some(Some(0.4)),
            ..Default::default()
        },
    )
    .unwrap();
    let (reg, _, _) = express_and_lookup();
    for transport in [Transport::ChatCompletions, Transport::Responses] {
        let mut req = h.request(&srv.base_url, transport, "hi");
        req.backend.max_output_tokens = Some(cfg.max_output_tokens);
        req.backend.temperature = cfg.temperature;
        let (_, out) = h.run(&req, &reg).await;
        assert_eq!(out.error, None);
    }
    let bodies = srv.bodies();
    assert_eq!(bodies[0]["max_tokens"], 300);
    assert_eq!(bodies[0]["temperature"], 0.4);
    assert!(bodies[0].get("max_output_tokens").is_none());
    assert_eq!(bodies[1]["max_output_tokens"], 300);
    assert_eq!(bodies[1]["temperature"], 0.4);
    assert!(bodies[1].get("max_tokens").is_none());
}
