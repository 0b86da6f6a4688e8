//! The registry a turn declares (lists per window, schema shapes, byte-identical across switch
//! states, start-up check), address_character, the placeholders, and the client context.

use crate::turn_support;
use crate::turn_support::backends;

use serde_json::{json, Value};
use std::sync::Arc;
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::context::ClientContext;
use yui_core::settings;
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::{ToolContext, ToolOutput};
use yui_core::turn::CancellationToken;
use yui_core::turn::{self, Backend, TurnStatus};
use yui_core::WindowKind;

fn names(h: &Harness, kind: WindowKind) -> Vec<String> {
    let env = RegistryEnv::load(&h.store, "yui", kind).unwrap();
    ToolRegistry::for_window(&env)
        .unwrap()
        .names()
        .into_iter()
        .map(String::from)
        .collect()
}

#[test]
fn registry_lists_per_window_are_the_contracts() {
    let h = Harness::new();
    assert_eq!(
        names(&h, WindowKind::Main),
        [
            "generate_express",
            "rate_relation",
            "address_character",
            "browser",
            "body_action",
            "look",
            // YUI's own, after the contract's: the proactive switch is on by default.
            "remind"
        ]
    );
    assert_eq!(
        names(&h, WindowKind::Pet),
        [
            "generate_express",
            "rate_relation",
            "address_character",
            "browser",
            "remind"
        ]
    );
    assert_eq!(
        names(&h, WindowKind::BrowserBuild),
        ["generate_express", "rate_relation", "address_character"]
    );
    assert_eq!(names(&h, WindowKind::Phone), ["generate_express"]);
    yui_core::tools::registry::startup_check(&h.store, "yui").unwrap();
}

#[test]
fn registry_schema_shapes_per_transport() {
    let h = Harness::new();
    let env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    let reg = ToolRegistry::for_window(&env).unwrap();
    let chat = reg.chat_tools().unwrap();
    let resp = reg.responses_tools().unwrap();
    for (c, r) in chat
        .as_array()
        .unwrap()
        .iter()
        .zip(resp.as_array().unwrap())
    {
        let f = &c["function"];
        assert_eq!(
            c,
            &json!({"type":"function","function":{"name":f["name"],"description":f["description"],"parameters":f["parameters"]}})
        );
        assert_eq!(
            r,
            &json!({"type":"function","name":f["name"],"description":f["description"],"parameters":f["parameters"],"strict":false})
        );
    }
    // An empty registry declares nothing (the request carries no tools key).
    let empty = registry(vec![]);
    assert_eq!(empty.chat_tools(), None);
    assert_eq!(empty.responses_tools(), None);
}

/// The declared set is byte-identical in every switch state (browser, relations, screen).
#[test]
fn registry_declared_set_is_byte_identical_in_every_switch_state() {
    let h = Harness::new();
    for kind in [
        WindowKind::Main,
        WindowKind::Pet,
        WindowKind::BrowserBuild,
        WindowKind::Phone,
    ] {
        let mut seen: Option<(String, String)> = None;
        for combo in 0..8u8 {
            for (bit, key) in [settings::BROWSER, settings::RELATIONS, settings::SCREEN]
                .iter()
                .enumerate()
            {
                settings::set(&h.store, key, &json!({"enabled": combo & (1 << bit) != 0})).unwrap();
            }
            let env = RegistryEnv::load(&h.store, "yui", kind).unwrap();
            let reg = ToolRegistry::for_window(&env).unwrap();
            let now = (
                serde_json::to_string(&reg.chat_tools()).unwrap(),
                serde_json::to_string(&reg.responses_tools()).unwrap(),
            );
            match &seen {
                None => seen = Some(now),
                Some(first) => assert_eq!(first, &now, "{kind:?} switch combo {combo:03b}"),
            }
        }
    }
}

#[test]
fn startup_check_fails_loudly() {
    let h = Harness::new();
    let dup = ToolRegistry::from_tools(
        vec![
            Arc::new(Answer::new("lookup", "1")),
            Arc::new(Answer::new("lookup", "2")),
        ],
        Arc::default(),
    )
    .unwrap_err();
    assert_eq!(dup.message, "tool registry: duplicate tool name lookup");
    let collide = ToolRegistry::from_tools(
        vec![
            Arc::new(Answer::new("lookup", "1")),
            Arc::new(Answer::new("generate_express", "2")),
        ],
        Arc::default(),
    )
    .unwrap_err();
    assert_eq!(
        collide.message,
        "tool registry: generate_express collides with generate_express"
    );
    let suffix = ToolRegistry::from_tools(
        vec![Arc::new(Answer::new("my_generate_express", "1"))],
        Arc::default(),
    )
    .unwrap_err();
    assert_eq!(
        suffix.message,
        "tool registry: my_generate_express collides with generate_express"
    );
    let env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    let missing = ToolRegistry::build(
        &env,
        &["address_character", "mystery"],
        yui_core::tools::registry::executor,
    )
    .unwrap_err();
    assert_eq!(
        missing.message,
        "tool registry: mystery is declared for the Main window but has no executor"
    );
}

fn ctx(h: &Harness) -> ToolContext {
    ToolContext {
        store: h.store.clone(),
        clock: h.clock.clone(),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "t1".into(),
        call: Default::default(),
    }
}

#[tokio::test]
async fn avatar_tools_without_an_avatar_answer_unsupported() {
    let h = Harness::new();
    let env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    let reg = ToolRegistry::for_window(&env).unwrap();
    for (name, args, answer) in [
        ("body_action", json!({"action": "stand"}), "unsupported"),
        ("look", json!({"at": "body"}), "error: unsupported"),
    ] {
        let tool = reg.get(name).unwrap();
        let out = tool
            .call(args, &ctx(&h), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::text(answer), "{name}");
    }
}

#[tokio::test]
async fn address_character_enum_results_and_one_per_reply() {
    let h = Harness::new();
    let env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    let reg = ToolRegistry::for_window(&env).unwrap();
    let tool = reg.get("address_character").unwrap();
    assert_eq!(
        tool.parameters(),
        json!({"type":"object","properties":{"to":{"type":"string","enum":["Kai"]}},"required":["to"],"additionalProperties":false})
    );
    let call = |args: Value| {
        let (t, c) = (tool.clone(), ctx(&h));
        async move { t.call(args, &c, CancellationToken::new()).await.unwrap() }
    };
    assert_eq!(
        call(json!({"to":"user"})).await,
        ToolOutput::text("error: unknown target")
    );
    assert_eq!(
        call(json!({"to":"Yui"})).await,
        ToolOutput::text("error: unknown target")
    );
    assert_eq!(
        call(json!({})).await,
        ToolOutput::text("error: unknown target")
    );
    assert_eq!(call(json!({"to":"Kai"})).await, ToolOutput::text("ok"));
    assert_eq!(
        call(json!({"to":"Kai"})).await,
        ToolOutput::text("ignored: already addressed Kai")
    );
    let rec = reg.state().addressed.lock().unwrap().clone().unwrap();
    assert_eq!((rec.preset_id.as_str(), rec.name.as_str()), ("kai", "Kai"));
}

/// The recipient recorded by address_character rides on turn_end.
#[tokio::test]
async fn address_character_recipient_is_on_turn_end() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_text("Kai, look!"),
            c_call(0, "c1", "address_character", r#"{"to":"Kai"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Done."),
    ])
    .await;
    let h = Harness::new();
    let env = RegistryEnv::load(&h.store, "yui", WindowKind::Pet).unwrap();
    let reg = ToolRegistry::for_window(&env).unwrap();
    let (events, out) = h
        .run(
            &h.request(&srv.base_url, Transport::ChatCompletions, "hi"),
            &reg,
        )
        .await;
    assert_eq!(out.status, TurnStatus::Ok);
    // address_character answers a question: its result goes back.
    assert_eq!(srv.bodies().len(), 2);
    assert_eq!(
        of_type(&events, "turn_end"),
        vec![
            json!({"type":"turn_end","status":"ok","text":"Kai, look! Done.","addressed":{"preset_id":"kai","name":"Kai"}})
        ]
    );
}

#[test]
fn client_context_block_and_switches_line() {
    let h = Harness::new();
    settings::set(&h.store, settings::BROWSER, &json!({"enabled": true})).unwrap();
    let block = |kind| {
        let env = RegistryEnv::load(&h.store, "yui", kind).unwrap();
        let reg = ToolRegistry::for_window(&env).unwrap();
        ClientContext::build(h.clock.as_ref(), &h.store, "yui", &reg).render()
    };
    // ManualClock: 2026-11-30T10:00Z at UTC+01:00.
    assert_eq!(
        block(WindowKind::Main),
        "[client context]\nlocal time: Monday 2026-11-30 11:00 (UTC+01:00)\ntool switches: relations on, browser on, screen off\nrelation: user: neutral; Kai: neutral\n[/client context]"
    );
    assert_eq!(
        block(WindowKind::Pet),
        "[client context]\nlocal time: Monday 2026-11-30 11:00 (UTC+01:00)\ntool switches: relations on, browser on\nrelation: user: neutral; Kai: neutral\n[/client context]"
    );
    // Relations off: the switch says so and the relation: line is gone.
    settings::set(&h.store, settings::RELATIONS, &json!({"enabled": false})).unwrap();
    assert_eq!(
        block(WindowKind::Pet),
        "[client context]\nlocal time: Monday 2026-11-30 11:00 (UTC+01:00)\ntool switches: relations off, browser on\n[/client context]"
    );
    assert_eq!(
        block(WindowKind::Phone),
        "[client context]\nlocal time: Monday 2026-11-30 11:00 (UTC+01:00)\n[/client context]"
    );
    let mut c = ClientContext::build(h.clock.as_ref(), &h.store, "yui", &registry(vec![]));
    c.relation = Some("relation: user: warm".into());
    c.addressed = vec!["addressed: Kai spoke to you".into()];
    assert_eq!(
        c.wrap("hello"),
        "[client context]\nlocal time: Monday 2026-11-30 11:00 (UTC+01:00)\nrelation: user: warm\naddressed: Kai spoke to you\n[/client context]\n\nhello"
    );
}

/// `prepare` builds a turn from current state: persona as system prompt, the window's tools,
/// the context in front of the message (the transcript stores the message alone).
#[tokio::test]
async fn prepared_turn_carries_persona_tools_and_context() {
    let srv = ScriptServer::start(vec![chat_say("Hi!")]).await;
    let h = Harness::new();
    let backend = Backend {
        api_key: Some("sk-test".into()),
        ..backends::backend(Transport::ChatCompletions, &srv.base_url)
    };
    let (req, reg) = turn::prepare(
        &h.store,
        &h.clock,
        "yui",
        WindowKind::Main,
        "hello",
        backend,
    )
    .unwrap();
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.status, TurnStatus::Ok);
    let seen = &srv.seen()[0];
    assert_eq!(seen.auth.as_deref(), Some("Bearer sk-test"));
    let msgs = seen.body["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "system");
    assert!(msgs[0]["content"]
        .as_str()
        .unwrap()
        .starts_with("You are Yui"));
    let user = msgs.last().unwrap()["content"].as_str().unwrap();
    assert!(user.starts_with("[client context]\nlocal time: Monday 2026-11-30 11:00 (UTC+01:00)\ntool switches: relations on, browser off, screen off\n"), "{user}");
    assert!(user.ends_with("[/client context]\n\nhello"));
    assert_eq!(seen.body["tools"], reg.chat_tools().unwrap());
    assert_eq!(h.transcript()[0], ("user".into(), "hello".into()));
}

/// With no other character open, `to` carries no (empty) enum and every call is an unknown target.
#[tokio::test]
async fn address_character_with_nobody_else_open() {
    let h = Harness::new();
    yui_core::presets::close(&h.store, "kai").unwrap();
    let env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    let reg = ToolRegistry::for_window(&env).unwrap();
    let tool = reg.get("address_character").unwrap();
    assert_eq!(
        tool.parameters()["properties"]["to"],
        json!({"type":"string","description":"No other character is open now."})
    );
    let out = tool
        .call(json!({"to":"Kai"}), &ctx(&h), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out, ToolOutput::text("error: unknown target"));
}

/// `start_configured` runs a turn against the stored backend settings and API key: the app's path.
#[tokio::test]
async fn start_configured_uses_the_stored_backend_and_key() {
    std::env::set_var(yui_core::backend::KEYRING_ENV, "off");
    let srv = ScriptServer::start(vec![chat_say("Hi!")]).await;
    let h = Harness::new();
    let paths = yui_core::paths::Paths::resolve(Some(h.dir.path().to_path_buf()));
    let change = yui_core::backend::BackendChange {
        base_url: Some(srv.base_url.clone()),
        model: Some("stored-model".into()),
        transport: Some(Transport::ChatCompletions),
        push_url: None,
        ..Default::default()
    };
    yui_core::backend::update(&h.store, &change).unwrap();
    yui_core::backend::Secrets::new(&paths)
        .set_api_key("sk-stored")
        .unwrap();
    let mut handle =
        turn::start_configured(&h.store, &h.clock, &paths, "yui", WindowKind::Main, "hello")
            .unwrap();
    let mut last = None;
    while let Some(ev) = handle.events.recv().await {
        last = Some(ev);
    }
    assert!(
        matches!(
            last,
            Some(turn::TurnEvent::TurnEnd {
                status: TurnStatus::Ok,
                ..
            })
        ),
        "{last:?}"
    );
    let seen = &srv.seen()[0];
    assert_eq!(seen.auth.as_deref(), Some("Bearer sk-stored"));
    assert_eq!(seen.body["model"], "stored-model");
}
