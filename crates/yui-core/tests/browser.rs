//! The browser tool against a fake `ego-browser` (tests/fixtures/ego-browser) run as a real
//! process: every result string of the contract and every rule (lock, deadline, backstop, wait,
//! turn stopped, cap, screenshots, cleanup, lookup), with short injected timings.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;
use yui_core::images as shots;
use yui_core::settings;
use yui_core::tools::browser::{
    self, lock, prelude, result::UNTRUSTED, BrowserConfig, BrowserTool, Timings,
};
use yui_core::tools::{ClientTool, ToolContext, ToolOutput};
use yui_core::{Store, SystemClock, WindowKind};

const UNKNOWN: &str =
    "unknown: the script may still be running in ego lite; inspect before retrying";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ego-browser")
}

/// A fake home whose `~/.local/bin/ego-browser` runs the fixture with the given knobs, a temp
/// root for screenshot folders, and a store with the browser switch on.
struct Env {
    dir: TempDir,
    store: Store,
}

impl Env {
    fn new(knobs: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let bin = dir.path().join("home/.local/bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        std::fs::create_dir_all(dir.path().join("tmp")).expect("tmp dir");
        write_wrapper(&bin.join("ego-browser"), knobs);
        let store = Store::open(dir.path().join("yui.db")).expect("store");
        settings::set(&store, settings::BROWSER, &json!({"enabled": true})).expect("switch on");
        Self { dir, store }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn temp_root(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn tool(&self, timings: Timings) -> BrowserTool {
        BrowserTool::with_config(BrowserConfig {
            timings,
            home: Some(self.home()),
            path: Some("".into()),
            temp_root: Some(self.temp_root()),
        })
    }
    /// Names left in the temp root (screenshot folders must be gone after every run).
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.temp_root())
            .expect("temp root")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect()
    }
}

fn write_wrapper(at: &Path, knobs: &[(&str, &str)]) {
    // The fake's own temp files go into the test's dir: a SIGKILLed fake cannot clean up.
    let fake_tmp = at
        .ancestors()
        .nth(4)
        .expect("wrapper inside the test dir")
        .join("fake-tmp");
    std::fs::create_dir_all(&fake_tmp).expect("fake tmp");
    let mut s = format!("#!/bin/sh\nexport TMPDIR='{}'\n", fake_tmp.display());
    for (k, v) in knobs {
        s.push_str(&format!("export {k}='{v}'\n"));
    }
    s.push_str(&format!("exec '{}' \"$@\"\n", fixture().display()));
    write_exec(at, &s);
}

fn write_exec(at: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(at, text).expect("write script");
    std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The product's own limits: a call that should succeed is not cut short on a loaded machine
/// (8 s was once too short for six screenshots with test binaries side by side). The tests of
/// the limits set the one they test.
fn roomy() -> Timings {
    Timings::default()
}

async fn run(tool: &BrowserTool, env: &Env, preset: &str, code: &str) -> ToolOutput {
    tool.execute(
        &env.store,
        preset,
        &json!({ "code": code }),
        CancellationToken::new(),
    )
    .await
    .expect("call")
}

async fn call(tool: &BrowserTool, env: &Env, args: Value) -> ToolOutput {
    tool.execute(&env.store, "p", &args, CancellationToken::new())
        .await
        .expect("call")
}

fn text(out: &ToolOutput) -> &str {
    out.as_text()
}

fn js(s: impl AsRef<str>) -> String {
    serde_json::to_string(s.as_ref()).expect("js string")
}

const SLEEP: &str = "const sleep = (ms) => new Promise((r) => setTimeout(r, ms));\n";

fn alive(pid: u32) -> bool {
    // A zombie (killed, not yet reaped by init in a container) counts as dead.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

async fn wait_dead(pid: u32) -> bool {
    for _ in 0..40 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// `start`/`end` stamps a script printed (ms since the epoch).
fn stamps(out: &ToolOutput) -> (u64, u64) {
    let get = |tag: &str| {
        text(out)
            .lines()
            .find_map(|l| l.strip_prefix(tag))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {tag} in {}", text(out)))
    };
    (get("start "), get("end "))
}

fn decode_jpeg(url: &str) -> (u32, u32) {
    use base64::Engine as _;
    let b64 = url
        .strip_prefix("data:image/jpeg;base64,")
        .expect("jpeg data URL");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    assert_eq!(
        image::guess_format(&bytes).expect("format"),
        image::ImageFormat::Jpeg
    );
    let img = image::load_from_memory(&bytes).expect("decodes");
    (img.width(), img.height())
}

// ---- switch and arguments ----------------------------------------------------------------

#[tokio::test]
async fn switch_off_answers_browser_is_off() {
    let env = Env::new(&[]);
    settings::set(&env.store, settings::BROWSER, &json!({"enabled": false})).expect("off");
    let tool = env.tool(roomy());
    let ctx = ToolContext {
        store: env.store.clone(),
        clock: Arc::new(SystemClock),
        preset_id: "switch-off".into(),
        window: WindowKind::Main,
        turn_id: "t1".into(),
        call: Default::default(),
    };
    let out = tool
        .call(
            json!({"code": "console.log(1)"}),
            &ctx,
            CancellationToken::new(),
        )
        .await
        .expect("call");
    assert_eq!(out, ToolOutput::Text("error: browser is off".into()));
    let out = tool
        .call(json!({"guide": true}), &ctx, CancellationToken::new())
        .await
        .expect("call");
    assert_eq!(text(&out), "error: browser is off");
    // Read when the call runs: switching on lets the next call through.
    settings::set(&env.store, settings::BROWSER, &json!({"enabled": true})).expect("on");
    let out = tool
        .call(
            json!({"code": "console.log(1)"}),
            &ctx,
            CancellationToken::new(),
        )
        .await
        .expect("call");
    assert_eq!(text(&out), format!("{UNTRUSTED}\n1\nexited with code 0"));
}

#[test]
fn tool_declares_switch_wait_and_schema() {
    let tool = BrowserTool::new();
    assert_eq!(tool.name(), "browser");
    let sw = tool.switch().expect("switch");
    assert_eq!((sw.id, sw.key), ("browser", "yui.browser"));
    // The contract's 32 s wait is the tool's own; the turn's guard sits just past it.
    assert_eq!(tool.wait(), Duration::from_secs(33));
    assert_eq!(browser::TURN_GUARD_SLACK, Duration::from_secs(1));
    assert_eq!(
        Timings::default(),
        Timings {
            deadline: Duration::from_secs(25),
            backstop: Duration::from_secs(28),
            wait: Duration::from_secs(32),
            drain: Duration::from_millis(200),
        }
    );
    let p = tool.parameters();
    assert_eq!(p["additionalProperties"], json!(false));
    assert_eq!(p["properties"]["code"]["type"], json!("string"));
    assert_eq!(p["properties"]["guide"]["type"], json!("boolean"));
    assert!(p.get("required").is_none());
}

#[tokio::test]
async fn missing_field_code() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    for args in [
        json!({}),
        json!({"code": ""}),
        json!({"guide": false}),
        json!({"guide": false, "code": ""}),
    ] {
        assert_eq!(
            text(&call(&tool, &env, args).await),
            "error: missing field code"
        );
    }
}

#[tokio::test]
async fn invalid_field_code() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let out = call(
        &tool,
        &env,
        json!({"guide": true, "code": "console.log(1)"}),
    )
    .await;
    assert_eq!(text(&out), "error: invalid field code");
}

// ---- prelude and results -------------------------------------------------------------------

#[tokio::test]
async fn prelude_is_exact_and_written_to_stdin() {
    let env = Env::new(&[]);
    let record = env.path("record.js");
    write_wrapper(
        &env.home().join(".local/bin/ego-browser"),
        &[("FAKE_EGO_RECORD", &record.to_string_lossy())],
    );
    let tool = env.tool(Timings::default());
    let code = "console.log(task.name);\nconsole.log(typeof screenshot);";
    let out = run(&tool, &env, "prelude-p", code).await;
    assert_eq!(
        text(&out),
        format!("{UNTRUSTED}\nyui-prelude-p\nfunction\nexited with code 0")
    );
    let script = std::fs::read_to_string(&record).expect("recorded script");
    let folder = script
        .split("path: `")
        .nth(1)
        .and_then(|s| s.split("/${").next())
        .expect("folder in prelude");
    let folder = Path::new(folder);
    assert!(folder.is_absolute());
    assert!(folder.starts_with(env.temp_root()));
    let name = folder
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let parts: Vec<&str> = name
        .strip_prefix("yui-browser-")
        .expect("prefix")
        .split('-')
        .collect();
    assert_eq!(parts.len(), 3, "{name}");
    assert_eq!(parts[0], std::process::id().to_string());
    assert!(parts[1].parse::<u128>().is_ok() && parts[2].parse::<u64>().is_ok());
    assert_eq!(script, prelude::build("yui-prelude-p", folder, 25000, code));
    assert!(
        script.contains("}, 25000);\ntry {\n  const task = await taskSpace(\"yui-prelude-p\");")
    );
    assert_eq!(script.lines().nth(5), Some("console.log(task.name);"));
    assert!(env.leftovers().is_empty(), "folder deleted");
}

#[tokio::test]
async fn script_failed_keeps_message_and_exit_line() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let out = run(
        &tool,
        &env,
        "fail-p",
        "console.log('before');\nthrow new Error('boom');",
    )
    .await;
    let t = text(&out);
    assert!(
        t.starts_with(&format!(
            "error: the script failed\n{UNTRUSTED}\nbefore\nError: boom\n"
        )),
        "{t}"
    );
    // Line 2 of code is line 7 of the script: the stated offset of 5.
    assert!(t.contains("script.mjs:7:"), "{t}");
    assert!(t.ends_with("\nexited with code 1"), "{t}");
}

#[tokio::test]
async fn syntax_error_is_a_script_failure() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    // `task` is reserved: redeclaring it is a syntax error before the try runs.
    let out = run(&tool, &env, "syntax-p", "let task = 1;").await;
    let t = text(&out);
    assert!(
        t.starts_with(&format!("error: the script failed\n{UNTRUSTED}\n")),
        "{t}"
    );
    assert!(t.contains("SyntaxError"), "{t}");
    assert!(t.ends_with("exited with code 1"), "{t}");
}

#[tokio::test]
async fn cli_failure_is_a_script_failure() {
    let env = Env::new(&[("FAKE_EGO_FAIL", "2")]);
    let tool = env.tool(roomy());
    let out = run(&tool, &env, "clifail-p", "console.log(1)").await;
    assert_eq!(
        out,
        ToolOutput::Text(format!(
            "error: the script failed\n{UNTRUSTED}\nfake ego: refused\nexited with code 2"
        ))
    );
    assert!(env.leftovers().is_empty());
}

#[tokio::test]
async fn deadline_stops_the_script_at_its_time_limit() {
    let env = Env::new(&[("FAKE_EGO_SHOT_SIZE", "300x200")]);
    let tool = env.tool(Timings {
        deadline: Duration::from_millis(700),
        ..roomy()
    });
    let start = Instant::now();
    let code =
        format!("{SLEEP}console.log('before');\nawait screenshot(page);\nawait sleep(20000);");
    let out = run(&tool, &env, "deadline-p", &code).await;
    assert!(start.elapsed() < Duration::from_secs(5));
    let ToolOutput::Images { text, images } = out else {
        panic!("screenshots collected after a deadline: {out:?}")
    };
    assert_eq!(
        text,
        format!("error: the script was stopped at its time limit\n{UNTRUSTED}\nbefore\n[yui] deadline\nexited with code 124")
    );
    assert_eq!(images.len(), 1);
    assert_eq!(decode_jpeg(&images[0]), (300, 200));
    assert!(env.leftovers().is_empty());
}

#[tokio::test]
async fn backstop_kills_the_process_group() {
    let env = Env::new(&[]);
    let pidfile = env.path("pids");
    write_wrapper(
        &env.home().join(".local/bin/ego-browser"),
        &[
            ("FAKE_EGO_IGNORE_TERM", "1"),
            ("FAKE_EGO_SHOT_SIZE", "300x200"),
            ("FAKE_EGO_PIDFILE", &pidfile.to_string_lossy()),
        ],
    );
    let tool = env.tool(Timings {
        deadline: Duration::from_secs(20),
        backstop: Duration::from_millis(2500),
        wait: Duration::from_secs(8),
        drain: Duration::from_millis(200),
    });
    let start = Instant::now();
    let code =
        format!("{SLEEP}console.log('started');\nawait screenshot(page);\nawait sleep(30000);");
    let out = run(&tool, &env, "backstop-p", &code).await;
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(2500) && took < Duration::from_secs(7),
        "{took:?}"
    );
    let ToolOutput::Images { text, images } = out else {
        panic!("screenshots collected after a backstop kill: {out:?}")
    };
    assert_eq!(text, format!("{UNKNOWN}\n{UNTRUSTED}\nstarted"));
    assert_eq!(images.len(), 1);
    let pids: Vec<(String, u32)> = std::fs::read_to_string(&pidfile)
        .expect("pids")
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.parse().expect("pid")))
        .collect();
    assert!(pids.iter().any(|(k, _)| k == "node"), "{pids:?}");
    for (what, pid) in pids {
        assert!(
            wait_dead(pid).await,
            "{what} {pid} still alive after the backstop"
        );
    }
    assert!(env.leftovers().is_empty());
    assert!(!lock::is_held("yui-backstop-p"));
}

#[tokio::test]
async fn wait_passing_answers_unknown() {
    let env = Env::new(&[]);
    let tool = env.tool(Timings {
        deadline: Duration::from_secs(3),
        backstop: Duration::from_secs(4),
        wait: Duration::from_millis(600),
        drain: Duration::from_millis(200),
    });
    let start = Instant::now();
    let out = run(
        &tool,
        &env,
        "wait-p",
        &format!("{SLEEP}await sleep(30000);"),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(out, ToolOutput::Text(UNKNOWN.into()));
    assert!(
        took >= Duration::from_millis(600) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    // The run goes on in the background and keeps its space until its CLI is gone.
    assert!(lock::is_held("yui-wait-p"));
}

#[tokio::test]
async fn wait_includes_the_lock_wait() {
    let env = Env::new(&[]);
    let long = env.tool(roomy());
    let short = env.tool(Timings {
        wait: Duration::from_millis(700),
        ..roomy()
    });
    let code = format!("{SLEEP}await sleep(2500); console.log('first done');");
    let (first, (second, took)) = tokio::join!(run(&long, &env, "lockwait-p", &code), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let start = Instant::now();
        let out = run(&short, &env, "lockwait-p", "console.log('second')").await;
        (out, start.elapsed())
    });
    assert_eq!(second, ToolOutput::Text(UNKNOWN.into()));
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_millis(1600),
        "{took:?}"
    );
    assert_eq!(
        text(&first),
        format!("{UNTRUSTED}\nfirst done\nexited with code 0")
    );
}

fn timed_code(ms: u64) -> String {
    format!("{SLEEP}console.log('start ' + Date.now());\nawait sleep({ms});\nconsole.log('end ' + Date.now());")
}

#[tokio::test]
async fn lock_runs_one_space_one_at_a_time() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let code = timed_code(800);
    let (a, b) = tokio::join!(
        run(&tool, &env, "serial-p", &code),
        run(&tool, &env, "serial-p", &code)
    );
    let ((a0, a1), (b0, b1)) = (stamps(&a), stamps(&b));
    assert!(
        a1 <= b0 || b1 <= a0,
        "runs overlapped: a {a0}..{a1}, b {b0}..{b1}"
    );
}

#[tokio::test]
async fn lock_lets_different_spaces_run_in_parallel() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let code = timed_code(2500);
    let (a, b) = tokio::join!(
        run(&tool, &env, "parallel-a", &code),
        run(&tool, &env, "parallel-b", &code)
    );
    let ((a0, a1), (b0, b1)) = (stamps(&a), stamps(&b));
    assert!(
        a0 < b1 && b0 < a1,
        "runs did not overlap: a {a0}..{a1}, b {b0}..{b1}"
    );
}

#[tokio::test]
async fn turn_stopped_answers_at_once_and_keeps_the_lock() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let marker = env.path("marker");
    let code = format!(
        "{SLEEP}const fs = await import('node:fs');\nawait sleep(1500);\nfs.writeFileSync({}, 'done');\nconsole.log('finished');",
        js(marker.to_string_lossy())
    );
    let cancel = CancellationToken::new();
    let args = json!({ "code": code });
    let (out, took) = tokio::join!(
        tool.execute(&env.store, "stop-p", &args, cancel.clone()),
        async {
            tokio::time::sleep(Duration::from_millis(400)).await;
            let at = Instant::now();
            cancel.cancel();
            at
        }
    );
    let answered = took.elapsed();
    assert_eq!(
        out.expect("call"),
        ToolOutput::Text("error: turn stopped".into())
    );
    assert!(
        answered < Duration::from_millis(300),
        "answered {answered:?} after the stop"
    );
    // Not killed, and the space stays locked until the CLI exits.
    assert!(lock::is_held("yui-stop-p"));
    assert!(!marker.exists());
    let check = format!(
        "const fs = await import('node:fs');\nconsole.log('marker ' + fs.existsSync({}));",
        js(marker.to_string_lossy())
    );
    let next = run(&tool, &env, "stop-p", &check).await;
    assert_eq!(
        text(&next),
        format!("{UNTRUSTED}\nmarker true\nexited with code 0")
    );
    assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "done");
}

#[tokio::test]
async fn turn_stopped_while_waiting_for_the_lock() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let cancel = CancellationToken::new();
    let code = format!("{SLEEP}await sleep(1200);");
    let (_, (out, took)) = tokio::join!(run(&tool, &env, "stopwait-p", &code), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c.cancel();
        });
        let start = Instant::now();
        let out = tool
            .execute(
                &env.store,
                "stopwait-p",
                &json!({"code": "console.log(1)"}),
                cancel.clone(),
            )
            .await
            .expect("call");
        (out, start.elapsed())
    });
    assert_eq!(text(&out), "error: turn stopped");
    assert!(took < Duration::from_millis(600), "{took:?}");
}

// ---- the 64 KiB cap ------------------------------------------------------------------------

#[tokio::test]
async fn output_capped_at_64_kib_with_truncated() {
    let env = Env::new(&[("FAKE_EGO_SHOT_SIZE", "200x100")]);
    let tool = env.tool(roomy());
    let code = "for (let i = 0; i < 6; i++) await screenshot(page);\n\
                console.log('日本語'.repeat(400000));\nthrow new Error('after the flood');";
    let out = run(&tool, &env, "cap-p", code).await;
    let ToolOutput::Images { text, images } = out else {
        panic!("images expected")
    };
    assert_eq!(images.len(), 4);
    assert!(text.len() <= 64 * 1024, "{}", text.len());
    assert!(text.len() > 60 * 1024, "{}", text.len());
    assert!(text.starts_with(&format!(
        "error: the script failed\n{UNTRUSTED}\n日本語日本語"
    )));
    assert!(
        text.ends_with(
            "日\n[truncated]\n[yui] 2 earlier screenshots dropped: only the last 4 are attached"
        ) || text.ends_with(
            "本\n[truncated]\n[yui] 2 earlier screenshots dropped: only the last 4 are attached"
        ) || text.ends_with(
            "語\n[truncated]\n[yui] 2 earlier screenshots dropped: only the last 4 are attached"
        ),
        "{}",
        &text[text.len() - 200..]
    );
}

#[tokio::test]
async fn megabytes_of_output_are_cut() {
    let env = Env::new(&[("FAKE_EGO_SPAM_BYTES", "5000000")]);
    let tool = env.tool(roomy());
    let out = run(&tool, &env, "spam-p", "console.log('never shown')").await;
    let t = text(&out);
    assert!(t.len() <= 64 * 1024);
    assert!(t.starts_with(&format!("{UNTRUSTED}\nxxxx")));
    assert!(t.ends_with("\n[truncated]"), "{}", &t[t.len() - 40..]);
}

// ---- screenshots ---------------------------------------------------------------------------

#[tokio::test]
async fn at_most_four_screenshots_resized_as_jpeg() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let code = "const sizes = [[640, 480], [640, 480], [1920, 1080], [1000, 2000], [800, 600], [3000, 500]];\n\
                for (const [w, h] of sizes) { page.width = w; page.height = h; await screenshot(page); }\n\
                console.log('shot ' + sizes.length);";
    let out = run(&tool, &env, "shots-p", code).await;
    let ToolOutput::Images { text, images } = out else {
        panic!("images expected: {out:?}")
    };
    assert_eq!(
        text,
        format!("{UNTRUSTED}\nshot 6\nexited with code 0\n[yui] 2 earlier screenshots dropped: only the last 4 are attached")
    );
    let dims: Vec<(u32, u32)> = images.iter().map(|u| decode_jpeg(u)).collect();
    assert_eq!(
        dims,
        vec![(1280, 720), (640, 1280), (800, 600), (1280, 213)]
    );
    assert!(env.leftovers().is_empty(), "folder deleted");
}

#[tokio::test]
async fn unreadable_screenshots_are_skipped_and_named() {
    let env = Env::new(&[("FAKE_EGO_SHOT_SIZE", "320x240"), ("FAKE_EGO_BROKEN", "1")]);
    let tool = env.tool(roomy());
    let code = "await screenshot(page);\npage.broken = true;\nawait screenshot(page);\npage.broken = false;\nawait screenshot(page);";
    let out = run(&tool, &env, "broken-p", code).await;
    let ToolOutput::Images { text, images } = out else {
        panic!("images expected: {out:?}")
    };
    assert_eq!(
        text,
        format!("{UNTRUSTED}\nexited with code 0\n[yui] unreadable screenshot skipped: 002.png, bad-001.png")
    );
    assert_eq!(images.len(), 2);
    assert!(images.iter().all(|u| decode_jpeg(u) == (320, 240)));
}

#[tokio::test]
async fn no_screenshots_gives_a_string() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let out = run(&tool, &env, "noshot-p", "console.log('plain')").await;
    assert_eq!(
        out,
        ToolOutput::Text(format!("{UNTRUSTED}\nplain\nexited with code 0"))
    );
    assert_eq!(
        serde_json::to_value(&out).expect("json"),
        json!(format!("{UNTRUSTED}\nplain\nexited with code 0"))
    );
}

#[tokio::test]
async fn screenshot_folder_failed() {
    let env = Env::new(&[]);
    let not_a_dir = env.path("file");
    std::fs::write(&not_a_dir, "x").expect("file");
    let tool = BrowserTool::with_config(BrowserConfig {
        temp_root: Some(not_a_dir),
        ..env.tool(roomy()).config().clone()
    });
    let out = run(&tool, &env, "folder-p", "console.log(1)").await;
    assert_eq!(
        text(&out),
        "error: screenshot folder failed: Not a directory (os error 20)"
    );
    assert!(!lock::is_held("yui-folder-p"));
}

#[test]
fn cleanup_at_start_deletes_leftover_folders() {
    let dir = tempfile::tempdir().expect("temp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("yui-browser-1-2-3")).expect("dir");
    std::fs::write(root.join("yui-browser-1-2-3/001.png"), "x").expect("file");
    std::fs::create_dir_all(root.join("yui-browser-9-9-9/deep")).expect("dir");
    std::fs::create_dir_all(root.join("other-yui-browser-1")).expect("dir");
    std::fs::write(root.join("yui-browser-not-a-folder"), "x").expect("file");
    assert_eq!(browser::cleanup_leftovers(root).expect("cleanup"), 2);
    let mut left: Vec<String> = std::fs::read_dir(root)
        .expect("read")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec!["other-yui-browser-1", "yui-browser-not-a-folder"]
    );
}

#[test]
fn data_url_pipeline_keeps_small_images_unscaled() {
    let img = image::RgbImage::from_pixel(100, 50, image::Rgb([10, 200, 30]));
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("png");
    let url = shots::encode_bytes(&png).expect("encodes");
    assert_eq!(decode_jpeg(&url), (100, 50));
    assert!(shots::encode_bytes(b"not an image").is_err());
}

// ---- lookup, start, guide ------------------------------------------------------------------

#[tokio::test]
async fn lookup_prefers_local_bin_over_path() {
    let env = Env::new(&[]);
    let path_dir = env.path("pathbin");
    std::fs::create_dir_all(&path_dir).expect("dir");
    write_exec(&path_dir.join("ego-browser"), "#!/bin/sh\necho from-path\n");
    write_exec(
        &env.home().join(".local/bin/ego-browser"),
        "#!/bin/sh\necho from-local-bin\n",
    );
    let config = BrowserConfig {
        path: Some(std::env::join_paths([env.path("empty"), path_dir.clone()]).expect("join")),
        ..env.tool(roomy()).config().clone()
    };
    let tool = BrowserTool::with_config(config.clone());
    assert_eq!(
        text(&call(&tool, &env, json!({"guide": true})).await),
        "from-local-bin\n"
    );
    std::fs::remove_file(env.home().join(".local/bin/ego-browser")).expect("rm");
    assert_eq!(
        text(&call(&tool, &env, json!({"guide": true})).await),
        "from-path\n"
    );
    // On PATH only an executable counts.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        path_dir.join("ego-browser"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    assert_eq!(
        text(&call(&tool, &env, json!({"guide": true})).await),
        "error: ego lite not found: install ego lite and run it once"
    );
}

#[tokio::test]
async fn not_found_when_in_neither_place() {
    let env = Env::new(&[]);
    std::fs::remove_file(env.home().join(".local/bin/ego-browser")).expect("rm");
    let tool = env.tool(roomy());
    let nf = "error: ego lite not found: install ego lite and run it once";
    assert_eq!(text(&run(&tool, &env, "nf-p", "console.log(1)").await), nf);
    assert_eq!(text(&call(&tool, &env, json!({"guide": true})).await), nf);
}

#[tokio::test]
async fn failed_to_start_names_the_reason() {
    let env = Env::new(&[]);
    let cli = env.home().join(".local/bin/ego-browser");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let tool = env.tool(roomy());
    let want = "error: ego-browser failed to start: Permission denied (os error 13)";
    assert_eq!(
        text(&run(&tool, &env, "start-p", "console.log(1)").await),
        want
    );
    assert_eq!(text(&call(&tool, &env, json!({"guide": true})).await), want);
    assert!(env.leftovers().is_empty(), "folder removed");
    assert!(!lock::is_held("yui-start-p"));
}

#[tokio::test]
async fn guide_returns_skill_stdout() {
    let env = Env::new(&[]);
    let tool = env.tool(roomy());
    let out = call(&tool, &env, json!({"guide": true, "code": ""})).await;
    assert_eq!(
        out,
        ToolOutput::Text(
            "# ego lite browser SDK (fake guide)\n\
             Call taskSpace(name) to get a task; task.page() returns its page.\n\
             page.goto(url), page.title(), page.screenshot({ path }).\n"
                .into()
        )
    );
}

#[tokio::test]
async fn guide_failed_carries_stderr() {
    let env = Env::new(&[("FAKE_EGO_SKILL_FAIL", "3")]);
    let tool = env.tool(roomy());
    let out = call(&tool, &env, json!({"guide": true})).await;
    assert_eq!(text(&out), "error: ego-browser skill failed: skill broke");
}

#[tokio::test]
async fn guide_timed_out_at_the_backstop() {
    let env = Env::new(&[("FAKE_EGO_SKILL_HANG", "1"), ("FAKE_EGO_IGNORE_TERM", "1")]);
    let tool = env.tool(Timings {
        backstop: Duration::from_millis(500),
        ..roomy()
    });
    let start = Instant::now();
    let out = call(&tool, &env, json!({"guide": true})).await;
    assert_eq!(text(&out), "error: ego-browser skill timed out");
    assert!(start.elapsed() < Duration::from_secs(2));
}

/// Through the turn's own call path (`turn::call_tool`, which bounds every call by the tool's
/// `wait()`): the 32 s wait passing still answers the contract's `unknown: …`, not the turn's
/// generic `error: no answer within …`, and that answer counts as a failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_passing_in_a_turn_answers_unknown() {
    let env = Env::new(&[]);
    let tool: Arc<dyn ClientTool> = Arc::new(env.tool(Timings {
        deadline: Duration::from_secs(3),
        backstop: Duration::from_secs(4),
        wait: Duration::from_millis(600),
        drain: Duration::from_millis(200),
    }));
    let ctx = ToolContext {
        store: env.store.clone(),
        clock: Arc::new(SystemClock),
        preset_id: "turn-wait-p".into(),
        window: WindowKind::Main,
        turn_id: "t1".into(),
        call: Default::default(),
    };
    let out = yui_core::turn::call_tool(
        &tool,
        json!({ "code": format!("{SLEEP}await sleep(30000);") }),
        &ctx,
        &CancellationToken::new(),
    )
    .await
    .expect("not cancelled");
    assert_eq!(out, ToolOutput::Text(UNKNOWN.into()));
    assert!(tool.failed(&out));
    assert!(tool.failed(&ToolOutput::Text(format!("{UNKNOWN}\n{UNTRUSTED}\nx"))));
    assert!(!tool.failed(&ToolOutput::Text(format!("{UNTRUSTED}\nunknown: x"))));
}
