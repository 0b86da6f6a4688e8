//! Crash safety (issue 14): the process that writes is killed with SIGKILL at random points, 100
//! times, and after each kill the database is whole, nothing it accepted is lost and the next
//! start is clean.
//!
//! The writer is `yui converse` (the core's stage, turn engine, tools and store, exactly as the
//! app runs them) against the test kit's scripted Chat Completions server on 127.0.0.1. Each of
//! the five turns of the exchange (the user's and the four addressed ones the default chain cap
//! allows) streams long speech in two responses and calls `rate_relation` three times (toward
//! the user, toward the other character, and toward the user again, which the per-turn rule
//! ignores). The test reads the process's JSON lines as they come and kills it (seeded RNG; the
//! seed is printed, `YUI_CRASH_SEED` replays it) at one of three kinds of point: a timer from
//! spawn (start-up, migrations, the first writes), just after a `rate_relation` tool_call line
//! (the rating's write transaction is in flight), or just after a random line (mid-stream,
//! around the transcript writes).
//!
//! An accepted rating is one whose `tool_result` line reached stdout: the tool answers only after
//! `relations::rate` returned, and that returns only after `Store::write` committed the
//! transaction, so a line on stdout means a committed row. After each kill: `PRAGMA
//! integrity_check` is `ok` on the real WAL file opened read-only; every accepted rating is in
//! `relation_log` (by its unique reason) and each relation equals the sum of its log; the
//! transcript is a prefix of a run that was never killed (so no half assistant line is stored,
//! cut or not, and nothing is stored that was not said); the user line of every turn that
//! printed anything is stored; and `yui relation list` on the same data dir exits 0 and agrees.

use crate::support;

use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::yui_command;
use yui_testkit::sse::{c_call, c_finish, c_text, done, Part, Reply, ScriptServer};

/// The user's turn and the four addressed turns the default chain cap allows.
const TURNS: usize = 5;
/// Speech chunks per response (two responses per turn).
const CHUNKS: usize = 24;
const MESSAGE: &str = "talk to Kai about the rain";
const BANDS: [&str; 5] = ["hostile", "cold", "neutral", "warm", "close"];

/// splitmix64: a seeded RNG that needs no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// The character speaking in turn `k` and the name of the one it talks to.
fn speaker(k: usize) -> (&'static str, &'static str) {
    if k.is_multiple_of(2) {
        ("yui", "Kai")
    } else {
        ("kai", "Yui")
    }
}

fn reason(it: usize, k: usize, j: usize, toward: &str) -> String {
    format!("it{it} t{k} c{j} {toward}")
}

fn speech(k: usize, part: usize) -> Vec<Part> {
    let mut v = Vec::new();
    for i in 0..CHUNKS {
        v.push(c_text(&format!(
            "Turn {k} part {part} sentence {i}: long enough to keep the transcript write busy. "
        )));
        if i % 6 == 5 {
            v.push(Part::Sleep(Duration::from_millis(1)));
        }
    }
    v
}

/// Two responses per turn: speech, three ratings and (but the last turn) the hand-over; then
/// more speech and stop.
fn script(it: usize) -> Vec<Reply> {
    let mut replies = Vec::new();
    for k in 0..TURNS {
        let (_, other) = speaker(k);
        let mut first = speech(k, 0);
        for (j, toward) in ["user", other, "user"].into_iter().enumerate() {
            let args = json!({"toward": toward, "delta": 1, "why": reason(it, k, j, toward)});
            first.push(c_call(
                j,
                &format!("r{k}_{j}"),
                "rate_relation",
                &args.to_string(),
            ));
        }
        if k + 1 < TURNS {
            let to = json!({ "to": other }).to_string();
            first.push(c_call(3, &format!("a{k}"), "address_character", &to));
        }
        first.extend([c_finish("tool_calls"), done()]);
        replies.push(Reply::Sse(first));
        let mut second = speech(k, 1);
        second.extend([c_finish("stop"), done()]);
        replies.push(Reply::Sse(second));
    }
    replies
}

/// Where the process is killed.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// `micros` after spawn: start-up, migrations, the first writes.
    Timer { micros: u64 },
    /// `micros` after the `m`-th `rate_relation` tool_call line: the rating's commit in flight.
    AfterRating { m: usize, micros: u64 },
    /// `micros` after the `n`-th line: mid-stream, around the transcript writes.
    AfterLine { n: usize, micros: u64 },
}

struct Run {
    lines: Vec<Value>,
    /// The process was still running when the kill was sent.
    killed_alive: bool,
    exit_ok: bool,
}

/// Run `yui converse` in `dir` against `base`; kill it per `plan` (never, when `None`).
fn run(dir: &Path, base: &str, plan: Option<Plan>) -> Run {
    // Memory extraction off: its requests (the window fills with these long lines) would take the
    // scripted replies meant for the turns; this test is about the ratings and the transcript.
    let off = r#"{"enabled":false,"pause_minutes":2,"recall_tokens":400,"history_tokens":3000,"paused":[],"embeddings":null}"#;
    let set = yui_command(dir)
        .args(["settings", "set", "yui.memory", off])
        .output()
        .expect("yui settings set");
    assert!(set.status.success(), "yui settings set yui.memory: {set:?}");
    let mut child = yui_command(dir)
        .args(["converse", "--message", MESSAGE, "--base-url", base])
        .args(["--model", "m", "--transport", "chat_completions"])
        .env_remove("YUI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn yui converse");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    // Only whole lines go to `tx`. A kill -9 in the middle of a write leaves a torn last line:
    // the reader returns it, and it is judged only when the process was not killed.
    let reader = std::thread::spawn(move || -> Option<String> {
        let mut out = BufReader::new(out);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match out.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&buf).into_owned();
            match line.strip_suffix('\n') {
                Some(whole) => {
                    if tx.send(whole.to_string()).is_err() {
                        return None;
                    }
                }
                None => return Some(line),
            }
        }
    });
    let mut got = Vec::new();
    let wait_for = |got: &mut Vec<String>, done: &dyn Fn(&[String]) -> bool| {
        while !done(got) {
            match rx.recv() {
                Ok(l) => got.push(l),
                Err(_) => return,
            }
        }
    };
    let micros = match plan {
        None => None,
        Some(Plan::Timer { micros }) => Some(micros),
        Some(Plan::AfterRating { m, micros }) => {
            let calls = |g: &[String]| {
                g.iter()
                    .filter(|l| l.contains(r#""type":"tool_call""#) && l.contains("rate_relation"))
                    .count()
            };
            wait_for(&mut got, &|g| calls(g) > m);
            Some(micros)
        }
        Some(Plan::AfterLine { n, micros }) => {
            wait_for(&mut got, &|g| g.len() > n);
            Some(micros)
        }
    };
    let mut killed_alive = false;
    if let Some(us) = micros {
        std::thread::sleep(Duration::from_micros(us));
        killed_alive = child.try_wait().expect("try_wait").is_none();
        // Child::kill is SIGKILL on Unix.
        child.kill().expect("kill -9");
    }
    let status = child.wait().expect("wait");
    let torn = reader.join().expect("reader");
    got.extend(rx.try_iter());
    if !killed_alive {
        // Not killed mid-write: an unfinished last line is the CLI's fault, judge it as output.
        got.extend(torn);
    }
    let lines = got
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    Run {
        lines,
        killed_alive,
        exit_ok: status.success(),
    }
}

/// A transcript line without its random turn id: (preset, role, text, speaker, cut).
type Line = (String, String, String, Option<String>, bool);

/// The database as the killed process left it, opened without touching the original: a read-only
/// connection cannot replay a WAL that a crash left behind (SQLITE_READONLY_RECOVERY), so the
/// file and its WAL are copied to `scratch` and the copy is opened; the original stays for the
/// restart check.
fn open_copy(dir: &Path, scratch: &Path) -> Option<Connection> {
    let db = dir.join("yui.sqlite3");
    if !db.exists() {
        return None;
    }
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch).expect("scratch dir");
    for ext in ["", "-wal"] {
        let from = dir.join(format!("yui.sqlite3{ext}"));
        if from.exists() {
            std::fs::copy(&from, scratch.join(format!("yui.sqlite3{ext}"))).expect("copy db");
        }
    }
    let path = scratch.join("yui.sqlite3");
    Some(
        Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .unwrap_or_else(|e| panic!("open {}: {e}", path.display())),
    )
}

fn integrity(conn: &Connection) -> String {
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check")
}

/// The transcript, oldest first, with each line's turn id; empty before the schema exists.
fn transcript(conn: &Connection) -> Vec<(Line, Option<String>)> {
    let Ok(mut stmt) = conn
        .prepare("SELECT preset_id, role, text, speaker, cut, turn_id FROM transcript ORDER BY id")
    else {
        return Vec::new();
    };
    let rows = stmt
        .query_map([], |r| {
            Ok((
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
                r.get(5)?,
            ))
        })
        .expect("read transcript");
    rows.map(|r| r.expect("transcript row")).collect()
}

/// Every relation_log row: (preset, target kind, target id, delta, reason, source).
fn relation_log(conn: &Connection) -> Vec<(String, String, String, i64, String, String)> {
    let Ok(mut stmt) = conn.prepare(
        "SELECT preset_id, target_kind, target_id, delta, reason, source FROM relation_log ORDER BY id",
    ) else {
        return Vec::new();
    };
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .expect("read relation_log");
    rows.map(|r| r.expect("log row")).collect()
}

/// Relations whose value is not the sum of their log (a torn rating would show here).
fn relations_off_their_log(conn: &Connection) -> Vec<String> {
    let Ok(mut stmt) = conn.prepare(
        "SELECT r.preset_id, r.target_kind, r.target_id, r.value,
                (SELECT COALESCE(SUM(delta), 0) FROM relation_log l WHERE l.preset_id = r.preset_id
                  AND l.target_kind = r.target_kind AND l.target_id = r.target_id)
         FROM relations r",
    ) else {
        return Vec::new();
    };
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })
        .expect("read relations");
    rows.map(|r| r.expect("relation row"))
        .filter(|(_, _, _, v, sum)| v != sum)
        .map(|(p, k, t, v, sum)| format!("{p}->{k}:{t} value {v}, log sum {sum}"))
        .collect()
}

/// The ratings the process accepted (their tool_result reached stdout): (preset, why, band).
fn accepted(lines: &[Value]) -> (Vec<(String, String, String)>, usize) {
    let mut args = std::collections::HashMap::new();
    let (mut ok, mut ignored) = (Vec::new(), 0);
    for l in lines {
        if l["name"] != "rate_relation" {
            continue;
        }
        let id = l["call_id"].as_str().unwrap_or_default().to_string();
        match l["type"].as_str() {
            Some("tool_call") => {
                let a: Value =
                    serde_json::from_str(l["arguments"].as_str().unwrap_or("{}")).expect("args");
                args.insert(id, a);
            }
            Some("tool_result") => {
                let result = l["result"].as_str().unwrap_or_default();
                if result.starts_with("ignored: already rated") {
                    ignored += 1;
                    continue;
                }
                assert!(BANDS.contains(&result), "unexpected result {l}");
                let a = &args[&id];
                ok.push((
                    l["preset"].as_str().expect("preset").to_string(),
                    a["why"].as_str().expect("why").to_string(),
                    result.to_string(),
                ));
            }
            _ => {}
        }
    }
    (ok, ignored)
}

/// Turns that printed any line, and turns that ended.
fn turns_seen(lines: &[Value]) -> (usize, usize) {
    let (mut started, mut ended) = (0, 0);
    for l in lines.iter().filter(|l| l.get("preset").is_some()) {
        started = started.max(ended + 1);
        if l["type"] == "turn_end" {
            ended += 1;
        }
    }
    (started, ended)
}

/// Everything the test asserts after one kill of iteration `it`; returns the accepted count.
fn check(it: usize, dir: &Path, r: &Run, reference: &[Line], ctx: &str) -> usize {
    let (ratings, _) = accepted(&r.lines);
    let (started, ended) = turns_seen(&r.lines);
    let scratch_dir = tempfile::tempdir().expect("scratch");
    let scratch = scratch_dir.path().join("db");
    if let Some(conn) = open_copy(dir, &scratch) {
        assert_eq!(integrity(&conn), "ok", "{ctx}: integrity_check");
        let lines = transcript(&conn);
        let plain: Vec<Line> = lines.iter().map(|(l, _)| l.clone()).collect();
        assert!(
            plain.len() <= reference.len() && plain[..] == reference[..plain.len()],
            "{ctx}: the transcript is not a prefix of the unkilled run's:\n{plain:#?}"
        );
        // Each assistant line belongs to the turn of the user line before it.
        for w in lines.windows(2) {
            if w[1].0 .1 == "assistant" {
                assert_eq!(
                    w[0].1, w[1].1,
                    "{ctx}: reply and message in different turns"
                );
            }
        }
        let users = plain.iter().filter(|l| l.1 == "user").count();
        let replies = plain.iter().filter(|l| l.1 == "assistant").count();
        assert!(
            users >= started,
            "{ctx}: {started} turns started, {users} user lines"
        );
        assert!(
            replies >= ended,
            "{ctx}: {ended} turns ended, {replies} replies"
        );
        let log = relation_log(&conn);
        for (preset, why, band) in &ratings {
            let n = log
                .iter()
                .filter(|l| &l.0 == preset && &l.4 == why && l.3 == 1 && l.5 == "model")
                .count();
            assert_eq!(
                n, 1,
                "{ctx}: accepted rating {preset} {why:?} ({band}) not logged once"
            );
        }
        for l in &log {
            assert!(
                (0..TURNS).any(|k| (0..2).any(|j| {
                    let (p, other) = speaker(k);
                    let toward = if j == 0 { "user" } else { other };
                    l.0 == p && l.4 == reason(it, k, j, toward)
                })),
                "{ctx}: a log row nobody accepted or sent: {l:?}"
            );
        }
        let off = relations_off_their_log(&conn);
        assert!(off.is_empty(), "{ctx}: {off:?}");
    } else {
        assert!(r.lines.is_empty(), "{ctx}: lines printed but no database");
    }
    // The next start on the same data dir is clean and reads what was committed.
    let out = yui_command(dir)
        .args(["relation", "list"])
        .output()
        .expect("spawn yui relation list");
    assert!(
        out.status.success(),
        "{ctx}: restart failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("relation list JSON");
    let logged = list["log"].as_array().map_or(0, Vec::len);
    assert!(
        logged >= ratings.len(),
        "{ctx}: {logged} logged after restart"
    );
    let conn = open_copy(dir, &scratch).expect("the restart created the database");
    assert_eq!(
        integrity(&conn),
        "ok",
        "{ctx}: integrity_check after restart"
    );
    ratings.len()
}

#[test]
fn kill_9_at_random_points_loses_no_accepted_rating_and_corrupts_nothing() {
    let seed = env_u64("YUI_CRASH_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let iterations = env_u64("YUI_CRASH_ITERATIONS").unwrap_or(100) as usize;
    eprintln!("crash test: seed {seed} (YUI_CRASH_SEED={seed} replays it), {iterations} kills");
    let mut rng = Rng(seed);
    let t0 = Instant::now();

    // The reference: the same exchange, never killed.
    let ref_dir = tempfile::tempdir().expect("dir");
    let server = ScriptServer::builder().script(script(0)).start_blocking();
    let full = run(ref_dir.path(), &server.base_url, None);
    assert!(full.exit_ok, "the unkilled run failed: {:?}", full.lines);
    assert_eq!(turns_seen(&full.lines), (TURNS, TURNS));
    let (ratings, ignored) = accepted(&full.lines);
    assert_eq!((ratings.len(), ignored), (2 * TURNS, TURNS));
    let scratch_dir = tempfile::tempdir().expect("scratch");
    let scratch = scratch_dir.path().join("db");
    let reference: Vec<Line> = transcript(&open_copy(ref_dir.path(), &scratch).expect("db"))
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    assert_eq!(reference.len(), 2 * TURNS);
    assert!(reference.iter().all(|l| !l.4), "no cut line in a clean run");
    check(0, ref_dir.path(), &full, &reference, "reference");
    let total_lines = full.lines.len();
    let run_micros = t0.elapsed().as_micros() as u64;

    let (mut alive, mut kept, mut kinds) = (0, 0, [0usize; 3]);
    for it in 1..=iterations {
        let plan = match rng.below(20) {
            0..=2 => Plan::Timer {
                micros: rng.below(run_micros.min(60_000)),
            },
            3..=11 => Plan::AfterRating {
                m: rng.below(3 * TURNS as u64) as usize,
                micros: rng.below(1_500),
            },
            _ => Plan::AfterLine {
                n: rng.below(total_lines as u64) as usize,
                micros: rng.below(3_000),
            },
        };
        kinds[match plan {
            Plan::Timer { .. } => 0,
            Plan::AfterRating { .. } => 1,
            Plan::AfterLine { .. } => 2,
        }] += 1;
        let dir = tempfile::tempdir().expect("dir");
        let server = ScriptServer::builder().script(script(it)).start_blocking();
        let r = run(dir.path(), &server.base_url, Some(plan));
        alive += usize::from(r.killed_alive);
        let ctx = format!("seed {seed} iteration {it} {plan:?}");
        kept += check(it, dir.path(), &r, &reference, &ctx);
    }
    eprintln!(
        "crash test: {iterations} kills in {:.1} s ({alive} while running; timer {}, after a \
         rating call {}, after a line {}); {kept} accepted ratings, all kept",
        t0.elapsed().as_secs_f64(),
        kinds[0],
        kinds[1],
        kinds[2]
    );
    // A kill that lands after the process exited tests nothing: most must hit it running.
    assert!(
        alive * 10 >= iterations * 9,
        "only {alive} of {iterations} kills hit a running process"
    );
}
