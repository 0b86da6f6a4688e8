//! The `yui` binary, run as a real process against a temp `--data-dir`: each subcommand's JSON
//! output, and errors as `{"code","message"}` on stderr with a non-zero exit.

use crate::support;

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::{json_ok, yui_command};

const BIN: &str = env!("CARGO_BIN_EXE_yui");

fn yui(dir: &Path, args: &[&str]) -> Output {
    yui_stdin(dir, args, None)
}

fn yui_stdin(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = yui_command(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn yui");
    {
        let mut sin = child.stdin.take().expect("stdin");
        if let Some(text) = stdin {
            sin.write_all(text.as_bytes()).expect("write stdin");
        }
    }
    child.wait_with_output().expect("wait yui")
}

/// Run, expect success, parse stdout as JSON.
fn ok(dir: &Path, args: &[&str]) -> Value {
    json_ok(args, &yui(dir, args))
}

/// Run, expect failure with exit `code`, parse stderr as `{code, message}`.
fn err(dir: &Path, args: &[&str], exit: i32) -> Value {
    let out = yui(dir, args);
    assert_eq!(out.status.code(), Some(exit), "yui {args:?}");
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|e| {
        panic!(
            "yui {args:?}: stderr is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    v
}

#[test]
fn settings_get_set_list() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    assert_eq!(
        ok(dir, &["settings", "get", "yui.browser"]),
        json!({"enabled": false})
    );
    assert_eq!(
        ok(dir, &["settings", "get", "yui.relations"]),
        json!({"enabled": true})
    );
    assert_eq!(
        ok(dir, &["settings", "get", "yui.screen"]),
        json!({"enabled": false})
    );
    let e = err(dir, &["settings", "get", "no.such.key"], 1);
    assert_eq!(e["code"], "invalid_input");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("unknown setting key \"no.such.key\"; known keys: yui.browser"),
        "{e}"
    );
    assert_eq!(
        ok(
            dir,
            &["settings", "set", "yui.browser", r#"{"enabled":true}"#]
        ),
        json!({"enabled": true})
    );
    // Persisted: a new process reads it back.
    assert_eq!(
        ok(dir, &["settings", "get", "yui.browser"]),
        json!({"enabled": true})
    );
    let all = ok(dir, &["settings", "list"]);
    assert_eq!(all["yui.browser"], json!({"enabled": true}));
    assert_eq!(all["yui.relations"], json!({"enabled": true}));
    assert_eq!(all["yui.screen"], json!({"enabled": false}));
    assert_eq!(all["yui.backend"]["base_url"], "http://127.0.0.1:11434/v1");

    let e = err(dir, &["settings", "set", "yui.screen", "not json"], 1);
    assert_eq!(e["code"], "invalid_input");
    let e = err(
        dir,
        &["settings", "set", "yui.screen", r#"{"enabled":1}"#],
        1,
    );
    assert_eq!(
        e,
        json!({"code": "invalid_input", "message": "yui.screen must be {\"enabled\": true|false}"})
    );
    assert_eq!(
        ok(dir, &["settings", "get", "yui.screen"]),
        json!({"enabled": false})
    );
}

#[test]
fn preset_list_add_open_close() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let list = ok(dir, &["preset", "list"]);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["yui", "kai"]);
    assert_eq!(list[0]["is_main"], true);
    assert_eq!(list[0]["is_open"], true);
    assert_eq!(list[1]["is_open"], true);

    let added = ok(dir, &["preset", "add", "Mio"]);
    assert_eq!(added["id"], "mio");
    assert_eq!(added["name"], "Mio");
    assert_eq!(added["is_open"], false);
    assert_eq!(ok(dir, &["preset", "add", "Mio!"])["id"], "mio-2");
    assert_eq!(ok(dir, &["preset", "open", "mio"])["is_open"], true);
    assert_eq!(ok(dir, &["preset", "close", "kai"])["is_open"], false);

    let list = ok(dir, &["preset", "list"]);
    let open: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["is_open"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(open, ["yui", "mio"]);

    let e = err(dir, &["preset", "open", "nobody"], 1);
    assert_eq!(
        e,
        json!({"code": "not_found", "message": "no preset with id \"nobody\""})
    );
    assert_eq!(
        err(dir, &["preset", "close", "yui"], 1)["code"],
        "invalid_input"
    );
    assert_eq!(
        err(dir, &["preset", "add", " "], 1)["code"],
        "invalid_input"
    );
}

#[test]
fn backend_show_set_and_key() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    assert_eq!(
        ok(dir, &["backend", "show"]),
        json!({
            "base_url": "http://127.0.0.1:11434/v1",
            "model": "llama3.2",
            "transport": "chat_completions",
            "push_url": null,
            "max_output_tokens": 512,
            "temperature": null,
            "has_api_key": false,
            "api_key_storage": "none"
        })
    );
    let v = ok(
        dir,
        &[
            "backend",
            "set",
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--model",
            "qwen",
            "--transport",
            "responses",
        ],
    );
    assert_eq!(v["base_url"], "http://127.0.0.1:8000/v1");
    assert_eq!(v["model"], "qwen");
    assert_eq!(v["transport"], "responses");
    assert_eq!(ok(dir, &["backend", "show"])["model"], "qwen");

    let e = err(dir, &["backend", "set", "--transport", "push"], 1);
    assert_eq!(
        e,
        json!({"code": "invalid_input", "message": "the push transport needs a push_url"})
    );
    // A bad transport name is a usage error (exit 2), still JSON on stderr.
    assert_eq!(
        err(dir, &["backend", "set", "--transport", "smoke"], 2)["code"],
        "invalid_input"
    );

    let key = "sk-cli-test-5b1d9e77c0a4";
    let out = yui_stdin(dir, &["backend", "set-key"], Some(&format!("{key}\n")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({"has_api_key": true, "api_key_storage": "file-fallback (no OS keyring)"})
    );
    let shown = yui(dir, &["backend", "show"]);
    let text = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(!text.contains(key));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["has_api_key"], true);
    assert_eq!(v["api_key_storage"], "file-fallback (no OS keyring)");
    // Not in the database, the fallback file, or the logs.
    for path in walk(dir) {
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
            "the key is in {}",
            path.display()
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("secrets.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let out = yui_stdin(dir, &["backend", "set-key"], Some(""));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stderr).unwrap(),
        json!({"code": "invalid_input", "message": "the API key is empty"})
    );
    assert_eq!(
        ok(dir, &["backend", "clear-key"]),
        json!({"has_api_key": false, "api_key_storage": "none"})
    );
    assert_eq!(ok(dir, &["backend", "show"])["has_api_key"], false);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn data_dir_from_env() {
    let d = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["preset", "add", "Envy"])
        .env("YUI_DATA_DIR", d.path())
        .env("YUI_KEYRING", "off")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(d.path().join("yui.sqlite3").exists());
    // The daily rolling log file is there and has the migration lines.
    let logs: Vec<_> = std::fs::read_dir(d.path().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let name = logs[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(name.starts_with("yui.log."), "{name}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    assert!(text.contains("migrated"), "{text}");
    let list = ok(d.path(), &["preset", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 3);
}

#[test]
fn usage_and_store_errors() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    assert_eq!(err(dir, &["nonsense"], 2)["code"], "invalid_input");
    assert_eq!(err(dir, &["settings", "get"], 2)["code"], "invalid_input");

    // A damaged database: reported, exit 1, file untouched.
    let garbage = vec![0xA5u8; 4096];
    std::fs::write(dir.join("yui.sqlite3"), &garbage).unwrap();
    let e = err(dir, &["preset", "list"], 1);
    assert_eq!(e["code"], "store_corrupt");
    assert!(
        std::fs::read(dir.join("yui.sqlite3")).unwrap() == garbage,
        "the damaged file was changed"
    );
}

#[test]
fn newer_database_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(dir, &["preset", "list"]);
    // Pretend a far newer YUI wrote it.
    let db = dir.join("yui.sqlite3");
    let mut bytes = std::fs::read(&db).unwrap();
    // user_version is the big-endian u32 at offset 60 of the header.
    bytes[60..64].copy_from_slice(&9999u32.to_be_bytes());
    std::fs::write(&db, &bytes).unwrap();
    let e = err(dir, &["settings", "list"], 1);
    assert_eq!(e["code"], "store_too_new");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("this database was written by a newer YUI (schema version 9999,"),
        "{e}"
    );
    assert!(
        std::fs::read(&db).unwrap() == bytes,
        "the refused file was changed"
    );
}

#[test]
fn keyring_lookup_does_not_hang_without_yui_keyring_off() {
    // The real keyring path: on a headless machine there is no Secret Service and the lookup
    // must fall back promptly; where a keyring exists this only reads (an absent entry).
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(d.path())
        .args(["backend", "show"])
        .env_remove("YUI_KEYRING")
        .env_remove("YUI_DATA_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("yui backend show hung on the keyring");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["has_api_key"], false);
    assert_eq!(v["api_key_storage"], "none");
}

#[test]
fn help_goes_to_stdout_with_success() {
    let d = tempfile::tempdir().unwrap();
    let out = yui(d.path(), &["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for group in ["settings", "preset", "backend"] {
        assert!(text.contains(group), "{text}");
    }
}

/// The OS keyring path end to end, against a real Secret Service (gnome-keyring) on a private
/// session bus. Needs `dbus-run-session` and `gnome-keyring-daemon`; run with
/// `cargo test -p yui-cli --test integration cli:: -- --ignored`.
#[test]
#[ignore = "needs dbus-run-session and gnome-keyring-daemon"]
fn api_key_goes_to_a_real_secret_service() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().display().to_string();
    let key = "sk-real-keyring-test-0b9d";
    let script = format!(
        r#"set -e
export $(printf 'pw' | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null | xargs)
sleep 1 # the daemon registers the Secret Service on the bus a moment after it forks
printf '%s\n' '{key}' | '{BIN}' --data-dir '{dir}' backend set-key
'{BIN}' --data-dir '{dir}' backend show
"#
    );
    let out = Command::new("dbus-run-session")
        .args(["--", "bash", "-c", &script])
        .env_remove("YUI_KEYRING")
        // A fresh keyring of our own, not the user's.
        .env("XDG_DATA_HOME", d.path().join("xdg-data"))
        .output()
        .expect("dbus-run-session");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches(r#""api_key_storage": "os-keyring""#).count(),
        2,
        "{text}"
    );
    assert!(!text.contains(key));
    assert!(!d.path().join("secrets.json").exists());
    for path in walk(d.path())
        .into_iter()
        .filter(|p| !p.starts_with(d.path().join("xdg-data")))
    {
        let bytes = std::fs::read(&path).unwrap();
        assert!(!bytes.windows(key.len()).any(|w| w == key.as_bytes()));
    }
}
