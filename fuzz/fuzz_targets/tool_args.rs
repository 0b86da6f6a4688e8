//! A tool call's `arguments` text, parsed the way a turn parses it, then given to every client
//! tool of the main window (generate_express, body_action, look, browser, rate_relation,
//! address_character): their real `call` (no avatar, browser switch off, a real store) and their
//! pure argument checks.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use yui_core::relations::{Target, TowardEntry};
use yui_core::tools::{avatar, browser, relation, CallScope, ToolContext};
use yui_core::turn::call::parse_call_arguments;
use yui_core::turn::CancellationToken;
use yui_core::WindowKind;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(args) = parse_call_arguments(&text) else {
        return;
    };
    let _ = avatar::parse_action(&args);
    let _ = browser::parse(&args);
    let entries = [
        TowardEntry {
            label: "user".into(),
            target: Target::User,
        },
        TowardEntry {
            label: "Ren".into(),
            target: Target::Preset("ren".into()),
        },
    ];
    let _ = relation::parse_args(&args, &entries);

    let e = yui_fuzz::env();
    let registry = yui_fuzz::registry(&e.store);
    let ctx = ToolContext {
        store: e.store.clone(),
        clock: e.deps_clock(),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "fuzz-args".into(),
        call: CallScope::default(),
    };
    e.rt.block_on(async {
        for tool in registry.tools() {
            let tool = Arc::clone(tool);
            let out = tool
                .call(args.clone(), &ctx, CancellationToken::new())
                .await;
            if let Ok(out) = out {
                let _ = tool.failed(&out);
            }
        }
    });
});
