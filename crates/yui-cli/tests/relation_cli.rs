//! `yui relation list|set` and `yui tool rate_relation` as real processes against a temp
//! `--data-dir`: each invocation is its own turn unless `--turn` is given, and the slider path.

use crate::support;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;
use support::{json_ok, yui_command};

fn yui(dir: &Path, args: &[&str]) -> Output {
    yui_command(dir).args(args).output().expect("spawn yui")
}

fn ok(dir: &Path, args: &[&str]) -> Value {
    json_ok(args, &yui(dir, args))
}

fn rate(dir: &Path, args: Value, turn: Option<&str>) -> Value {
    let a = args.to_string();
    let mut v = vec!["tool", "rate_relation", "--args", &a, "--preset", "yui"];
    if let Some(t) = turn {
        v.extend(["--turn", t]);
    }
    ok(dir, &v)
}

#[test]
fn tool_rate_relation_each_invocation_is_its_own_turn_unless_turn_is_given() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let up = json!({"toward": "user", "delta": 2, "why": "we laughed together"});
    assert_eq!(rate(d, up.clone(), None), json!("neutral"));
    assert_eq!(rate(d, up.clone(), None), json!("warm"));
    assert_eq!(rate(d, up.clone(), None), json!("clamped: warm"));
    let kai = json!({"toward": "Kai", "delta": -1, "why": "Kai teased me"});
    assert_eq!(rate(d, kai.clone(), Some("T1")), json!("neutral"));
    assert_eq!(
        rate(d, kai, Some("T1")),
        json!("ignored: already rated Kai this turn")
    );
    assert_eq!(
        rate(
            d,
            json!({"toward": "user", "delta": 1, "why": "set by the user"}),
            None
        ),
        json!("error: reserved reason")
    );
    let list = ok(d, &["relation", "list", "--preset", "yui"]);
    let log = list["log"].as_array().expect("log");
    assert_eq!(log.len(), 3, "{list}");
    assert_eq!(log[0]["reason"], json!("Kai teased me"));
    assert_eq!(log[0]["turn_id"], json!("T1"));
    assert_eq!(log[0]["source"], json!("model"));
    assert!(list["relations"].as_array().expect("rows").contains(
        &json!({"preset_id": "yui", "preset_name": "Yui", "target": {"kind": "user"},
            "target_name": "user", "value": 4, "band": "warm"})
    ));
}

#[test]
fn relation_set_is_the_slider_path() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let out = ok(
        d,
        &[
            "relation", "set", "--preset", "yui", "--toward", "kai", "--value", "-13",
        ],
    );
    assert_eq!(
        out,
        json!({"preset_id": "yui", "target": {"kind": "preset", "id": "kai"}, "value": -13,
            "band": "hostile", "delta": -13})
    );
    let list = ok(d, &["relation", "list"]);
    assert_eq!(list["log"][0]["reason"], json!("set by the user"));
    assert_eq!(list["log"][0]["source"], json!("user"));
    let bad = yui(
        d,
        &[
            "relation", "set", "--preset", "yui", "--toward", "user", "--value", "21",
        ],
    );
    assert!(!bad.status.success());
    let err: Value = serde_json::from_slice(&bad.stderr).expect("error JSON");
    assert_eq!(err["code"], json!("invalid_input"));
    let missing = yui(d, &["relation", "list", "--preset", "nobody"]);
    let err: Value = serde_json::from_slice(&missing.stderr).expect("error JSON");
    assert_eq!(err["code"], json!("not_found"));
}
