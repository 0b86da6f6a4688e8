//! The memory soak (issue 14, "Memory flat"; docs/PERFORMANCE.md, "Memory soak"): the real app
//! with main + 2 pets (Yui, Kai and Mio) on a fresh data dir, measured at three checkpoints —
//! after a settle at start, after idling, and after scripted turns — PSS and RSS of every process
//! of its tree and idle CPU over a window; and, optionally, the cost of the third character (a
//! second launch with Mio closed). Used by `crates/yui-x11/benches/footprint.rs` (the full soak
//! `scripts/footprint.sh` runs) and the e2e test `memory.rs` (the short CI version).
//!
//! A turn is a real turn: "soak turn #N" typed into a character window's chat (as a user types:
//! XTest key presses, `soak_input.rs`), the windows taken in turn (main, pet-kai, pet-mio). The
//! scripted backend (the test kit's) answers with speech, a `generate_express` cue (happy or
//! sad) and a `rate_relation` call (+1 toward the user or one of the two others, in turn), and,
//! after the tool results went back, "Reply N." — the bubble's last words. A turn is done when
//! its window shows that bubble and the core's "playback finished" for its turn id. Afterwards
//! the store must hold every turn:
//! both lines in the transcript and one `rate_relation` mark each (`relation_turns`).

#[path = "soak_input.rs"]
pub mod input;
#[path = "soak_report.rs"]
mod report;

use super::procstat::{self, Ticks};
use super::{fake_backend, webdriver::Session, xinput};
use input::{type_as_user, Input, RETYPED};
pub use report::{print_summary, Checkpoint, Report, Stored};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yui_core::backend::Transport;
use yui_core::presets::{self, NewPreset};
use yui_core::transcript::Role;
use yui_core::Store;
use yui_testkit::sse::{self, Reply, Seen};

/// The characters, in the order their windows take turns, with their window labels.
pub const CHARACTERS: [(&str, &str, &str); 3] = [
    ("yui", "Yui", "main"),
    ("kai", "Kai", "pet-kai"),
    ("mio", "Mio", "pet-mio"),
];

/// What one soak does.
#[derive(Debug, Clone)]
pub struct Plan {
    pub app: PathBuf,
    /// After launch, before the start checkpoint (first paint, caches).
    pub settle: Duration,
    /// The CPU window of each checkpoint; memory is read at its end.
    pub window: Duration,
    /// Between the start and the "after idle" checkpoints.
    pub idle: Duration,
    pub turns: usize,
    /// After the last turn, before its checkpoint (the last bubble lingers 9 s).
    pub after_turns: Duration,
    /// Total PSS is sampled every this many turns (the slope).
    pub sample_every: usize,
    /// Also launch main + 1 pet (Mio closed) for the third character's cost.
    pub extra_character: bool,
    /// Other processes to show CPU of (`name`, pid): the X server, the compositor.
    pub context: Vec<(String, u32)>,
    /// A leak made on purpose, KiB per turn kept alive in the turn's page (0: none): checks
    /// that the verdicts catch one (`YUI_SOAK_LEAK_KIB`).
    pub leak_kib: usize,
}

impl Plan {
    /// `YUI_SOAK_LEAK_KIB`, else 0.
    pub fn leak_from_env() -> usize {
        std::env::var("YUI_SOAK_LEAK_KIB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

/// Used by the soak's own checks: the store in `dir` (the app is closed by then).
fn open_store(dir: &Path) -> Store {
    Store::open(dir.join(yui_core::paths::DB_FILE)).expect("open store")
}

/// `N` of the last "soak turn #N" in a request (the current user message; history comes before).
fn turn_of(text: &str) -> Option<usize> {
    let at = text.rfind("soak turn #")? + "soak turn #".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `rate_relation`'s target for turn `n`: the user, then each of the two other characters.
fn toward(n: usize) -> &'static str {
    let me = n % 3;
    match (n / 3) % 3 {
        0 => "user",
        k => CHARACTERS[(me + k) % 3].1,
    }
}

fn emotion(n: usize) -> &'static str {
    if n.is_multiple_of(2) {
        "happy"
    } else {
        "sad"
    }
}

/// The scripted backend: round one speaks, cues and rates; the round trip says "Reply N.".
fn respond(req: &Seen) -> Reply {
    if req.method == "GET" {
        return Reply::Status(
            200,
            r#"{"object":"list","data":[{"id":"fake-model"}]}"#.into(),
        );
    }
    let Some(n) = turn_of(&req.text) else {
        return sse::chat_say("Hello.");
    };
    let last_role = req.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map_or(Value::Null, |m| m["role"].clone());
    if last_role == "tool" {
        return sse::chat_stream(&[
            json!({"choices":[{"index":0,"delta":{"content":format!("Reply {n}.")},"finish_reason":null}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
        ]);
    }
    let express = json!({"emotion_id": emotion(n)}).to_string();
    let rate =
        json!({"toward": toward(n), "delta": 1, "why": format!("soak turn {n}")}).to_string();
    let mut chunks = vec![
        json!({"choices":[{"index":0,"delta":{"role":"assistant","content":format!("Turn {n}, noted. ")},"finish_reason":null}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":format!("call_e{n}"),"type":"function","function":{"name":"generate_express","arguments":express}}]},"finish_reason":null}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":format!("call_r{n}"),"type":"function","function":{"name":"rate_relation","arguments":rate}}]},"finish_reason":null}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
    ];
    // An experiment: turns that leave the face as it is.
    if std::env::var("YUI_SOAK_NO_EXPRESS").is_ok() {
        chunks.remove(1);
    }
    sse::chat_stream(&chunks)
}

/// A fresh data dir: the backend, and Mio made (open unless `mio_open` is false).
fn seed_dir(dir: &Path, base_url: &str, mio_open: bool) {
    super::seed(dir, |st| {
        fake_backend::point_at(st, base_url, Transport::ChatCompletions);
        presets::create(
            st,
            &NewPreset {
                name: "Mio".into(),
                open: mio_open,
                ..Default::default()
            },
        )
        .expect("make Mio");
        // An experiment: another sleep threshold (0: never asleep).
        if let Ok(m) = std::env::var("YUI_SOAK_SLEEP_MINUTES") {
            let m: u64 = m.parse().expect("YUI_SOAK_SLEEP_MINUTES: minutes");
            yui_core::settings::set(st, yui_core::settings::SLEEP, &json!({"after_minutes": m}))
                .expect("set yui.sleep");
        }
    });
}

async fn checkpoint(name: &'static str, pid: u32, plan: &Plan, hz: f64) -> Checkpoint {
    let a: Ticks = procstat::sample(pid, &plan.context);
    let t = Instant::now();
    tokio::time::sleep(plan.window).await;
    let b = procstat::sample(pid, &plan.context);
    let cpu = procstat::usage(&a, &b, t.elapsed(), hz);
    let c = Checkpoint {
        name,
        mem: procstat::memory(pid),
        cpu,
    };
    report::print_checkpoint(&c, plan.window);
    c
}

/// A window of a character: its WebDriver handle and the elements a turn uses.
struct Seat {
    label: &'static str,
    /// The window's title on the X display (`YUI — <name>`).
    title: String,
    handle: String,
    input: Option<String>,
    last_turn: String,
}

/// Type turn `n` into `seat`'s chat and wait until it ended (bubble and playback finished).
/// Returns whether the face ended on the turn's cue.
async fn one_turn(
    s: &Session,
    hands: Option<&xinput::Hands>,
    seat: &mut Seat,
    n: usize,
    leak_kib: usize,
) -> Result<bool, String> {
    s.switch_to(&seat.handle).await?;
    if leak_kib > 0 {
        s.exec(
            "(window.__soakLeak ??= []).push(new Float64Array(arguments[0] * 128).fill(1)); return true;",
            json!([leak_kib]),
        )
        .await?;
    }
    // An experiment, not a turn: run this script in the page instead (what does it keep?).
    if let Ok(js) = std::env::var("YUI_SOAK_PAGE_JS") {
        s.exec(&js, json!([n])).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        return Ok(true);
    }
    let text = format!("soak turn #{n}");
    match Input::from_env() {
        Input::X11 => {
            let hands = hands.ok_or("no X display to type on")?;
            type_as_user(s, hands, &seat.title, &text).await?
        }
        Input::WebDriver => {
            let hidden = s
                .exec("return document.getElementById('chat').hidden", json!([]))
                .await?;
            if hidden == Value::Bool(true) || seat.input.is_none() {
                if hidden == Value::Bool(true) {
                    s.click(&s.find("#character").await?).await?;
                    s.wait_script(
                        "return !document.getElementById('chat').hidden",
                        Duration::from_secs(5),
                    )
                    .await?;
                }
                seat.input = Some(s.find("#chat-input").await?);
            }
            let input = seat.input.clone().unwrap_or_default();
            s.send_keys(&input, &format!("{text}\u{E007}")).await?;
        }
        Input::Page => {
            s.exec(
                "const chat = document.getElementById('chat'); chat.hidden = false;
                 document.getElementById('chat-input').value = arguments[0];
                 chat.requestSubmit(); return true;",
                json!([text]),
            )
            .await?;
        }
    }
    if wait_in_page() {
        // One script per turn, the same source every time (n is an argument): the page polls
        // itself, so the harness adds no per-turn WebDriver traffic to what is measured.
        let v = s
            .exec_async(
                WAIT_IN_PAGE,
                json!([seat.last_turn, format!("Reply {n}."), 20_000]),
            )
            .await?;
        return match v["turn"].as_str() {
            Some(turn) => {
                seat.last_turn = turn.to_string();
                Ok(v["emotion"] == emotion(n))
            }
            None => Err(format!(
                "{}: turn {n} did not end in 20 s (input {}, bubble {})",
                seat.label, v["input"], v["bubble"]
            )),
        };
    }
    let probe = format!(
        "const st = document.getElementById('stage');
         const done = st.dataset.turnId && st.dataset.turnId !== arguments[0]
           && st.dataset.playbackFinished === st.dataset.turnId
           && document.getElementById('bubble').textContent.includes('Reply {n}.');
         const face = document.querySelector('#character [data-emotion]');
         return done ? {{turn: st.dataset.turnId, emotion: face ? face.dataset.emotion : ''}} : null;"
    );
    let start = Instant::now();
    loop {
        let v = s.exec(&probe, json!([seat.last_turn])).await?;
        if let Some(turn) = v["turn"].as_str() {
            seat.last_turn = turn.to_string();
            return Ok(v["emotion"] == emotion(n));
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(format!("{}: turn {n} did not end in 30 s", seat.label));
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

/// `YUI_SOAK_WAIT=poll` polls each turn's end from the harness every 40 ms (the old way);
/// otherwise the page waits for it itself ([`WAIT_IN_PAGE`]).
fn wait_in_page() -> bool {
    std::env::var("YUI_SOAK_WAIT").map_or(true, |v| v != "poll")
}

/// Resolves `{turn, emotion}` once the turn after `arguments[0]` ended with `arguments[1]` in
/// its bubble, or `null` after `arguments[2]` ms.
const WAIT_IN_PAGE: &str = "const [last, words, ms, done] = arguments;
  const t0 = Date.now();
  const check = () => {
    const st = document.getElementById('stage');
    if (st.dataset.turnId && st.dataset.turnId !== last
        && st.dataset.playbackFinished === st.dataset.turnId
        && document.getElementById('bubble').textContent.includes(words)) {
      const face = document.querySelector('#character [data-emotion]');
      return done({turn: st.dataset.turnId, emotion: face ? face.dataset.emotion : ''});
    }
    if (Date.now() - t0 > ms) {
      return done({turn: null, input: document.getElementById('chat-input').value,
                   bubble: document.getElementById('bubble').textContent});
    }
    setTimeout(check, 40);
  };
  check();";

/// `YUI_SOAK_SMAPS=1`: the web process's PSS (KiB) by mapping (a file's name, or its kind:
/// heap, anon, memfd name), so a checkpoint can say which kind of memory grew.
fn web_maps(pid: u32) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if std::env::var("YUI_SOAK_SMAPS").is_err() {
        return out;
    }
    for (p, (name, _)) in procstat::memory(pid) {
        if !name.starts_with("WebKitWebProcess") {
            continue;
        }
        let text = std::fs::read_to_string(format!("/proc/{p}/smaps")).unwrap_or_default();
        let mut key = String::new();
        for line in text.lines() {
            if let Some(kib) = line.strip_prefix("Pss:") {
                let kib: u64 = kib
                    .trim()
                    .trim_end_matches(" kB")
                    .trim()
                    .parse()
                    .unwrap_or(0);
                *out.entry(key.clone()).or_insert(0) += kib;
            } else if line
                .split_whitespace()
                .next()
                .is_some_and(|f| f.contains('-') && f.len() > 12)
            {
                let fields: Vec<&str> = line.split_whitespace().collect();
                key = fields
                    .get(5..)
                    .map(|f| f.join(" "))
                    .filter(|k| !k.is_empty())
                    .unwrap_or_else(|| format!("[anon {}]", fields.get(1).unwrap_or(&"?")));
            }
        }
    }
    out
}

fn print_map_growth(from: &BTreeMap<String, u64>, to: &BTreeMap<String, u64>, what: &str) {
    let mut d: Vec<(i64, &String)> = to
        .iter()
        .map(|(k, v)| (*v as i64 - *from.get(k).unwrap_or(&0) as i64, k))
        .collect();
    d.sort();
    d.reverse();
    let top: Vec<String> = d
        .iter()
        .take(6)
        .map(|(kib, k)| format!("{k} {kib:+} KiB"))
        .collect();
    println!(
        "soak: web process growth by mapping {what}: {}",
        top.join("; ")
    );
}

/// What each page holds: DOM nodes, Tauri's IPC callbacks (a turn's channel and each event
/// listener are one each) and the bubble's text length. Printed at start and after the turns, so
/// a page that keeps something per turn shows here, not only in PSS.
const CENSUS: &str = "const i = window.__TAURI_INTERNALS__;
  return {nodes: document.getElementsByTagName('*').length,
          callbacks: i && i.callbacks ? i.callbacks.size : -1,
          bubble: (document.getElementById('bubble') || {textContent: ''}).textContent.length};";

async fn census(s: &Session, seats: &[Seat], at: &str) {
    let mut parts = Vec::new();
    for seat in seats {
        if s.switch_to(&seat.handle).await.is_err() {
            continue;
        }
        if let Ok(v) = s.exec(CENSUS, json!([])).await {
            parts.push(format!(
                "{} nodes {} callbacks {} bubble {}",
                seat.label, v["nodes"], v["callbacks"], v["bubble"]
            ));
        }
    }
    println!("soak: page census {at}: {}", parts.join("; "));
}

/// What the store in `dir` holds of the `turns` turns.
fn check_store(dir: &Path, turns: usize) -> Stored {
    let st = open_store(dir);
    let mut out = Stored::default();
    for (k, (id, _, _)) in CHARACTERS.iter().enumerate() {
        let lines = yui_core::transcript::lines(&st, id, 1_000_000).expect("transcript");
        for n in (1..=turns).filter(|n| n % 3 == k) {
            let user = format!("soak turn #{n}");
            let reply = format!("Reply {n}.");
            out.user_lines += lines.iter().any(|e| e.role == Role::User && e.text == user) as usize;
            out.replies += lines
                .iter()
                .any(|e| e.role == Role::Assistant && !e.cut && e.text.ends_with(&reply))
                as usize;
        }
    }
    out.relation_marks = st
        .read(|c| {
            Ok(c.query_row("SELECT COUNT(*) FROM relation_turns", [], |r| {
                r.get::<_, i64>(0)
            })?)
        })
        .expect("relation marks") as usize;
    out.relation_changes = st
        .read(|c| {
            Ok(c.query_row(
                "SELECT COUNT(*) FROM relation_log WHERE source = 'model'",
                [],
                |r| r.get::<_, i64>(0),
            )?)
        })
        .expect("relation log") as usize;
    out
}

/// End the session and wait until the app's process is gone.
async fn close(s: Session, pid: u32) {
    s.delete().await.ok();
    let t = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && t.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Run the soak. Panics when the app cannot be driven at all; failed turns are in the report.
pub async fn run(plan: &Plan) -> Report {
    let hz = procstat::clock_ticks();
    let (srv, _requests) = fake_backend::serve(respond).await;
    let dir = tempfile::tempdir().unwrap();
    seed_dir(dir.path(), &srv.base_url, true);
    let (s, pid) = procstat::launch(&plan.app, dir.path()).await;
    let labels: Vec<&str> = CHARACTERS.iter().map(|c| c.2).collect();
    s.wait_for_labels(&labels, Duration::from_secs(60))
        .await
        .expect("main and both pets");
    let handles = s.labels().await.expect("the windows");
    let mut seats: Vec<Seat> = CHARACTERS
        .iter()
        .map(|&(_, name, label)| Seat {
            label,
            title: format!("YUI — {name}"),
            handle: handles
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, h)| h.clone())
                .unwrap_or_else(|| panic!("no window {label}")),
            input: None,
            last_turn: String::new(),
        })
        .collect();
    for seat in &seats {
        s.switch_to(&seat.handle).await.unwrap();
        s.wait_script(
            "return !!document.querySelector('#character [data-emotion]')",
            Duration::from_secs(30),
        )
        .await
        .unwrap_or_else(|e| panic!("{} drawn: {e}", seat.label));
        // An experiment: run this script in each page once, before the start checkpoint.
        if let Ok(js) = std::env::var("YUI_SOAK_START_JS") {
            s.exec(&js, json!([])).await.expect("YUI_SOAK_START_JS ran");
        }
    }
    tokio::time::sleep(plan.settle).await;

    let total = |pid: u32| {
        let m = procstat::memory(pid);
        (
            m.values().map(|(_, m)| m.pss).sum::<u64>(),
            m.values().map(|(_, m)| m.own()).sum::<u64>(),
        )
    };
    census(&s, &seats, "at start").await;
    let mut report = Report {
        checkpoints: vec![checkpoint("start", pid, plan, hz).await],
        samples: Vec::new(),
        idle_samples: Vec::new(),
        turns_done: 0,
        turns_failed: Vec::new(),
        cues_seen: 0,
        turns_secs: 0.0,
        stored: Stored::default(),
        one_pet: None,
    };
    println!("soak: idling {} s", plan.idle.as_secs());
    // A line every 5 minutes: when idle growth happens (a warm-up, or all along).
    let idle_start = Instant::now();
    while idle_start.elapsed() < plan.idle {
        let left = plan.idle.saturating_sub(idle_start.elapsed());
        tokio::time::sleep(left.min(Duration::from_secs(300))).await;
        let (pss, own) = total(pid);
        report
            .idle_samples
            .push((idle_start.elapsed().as_secs(), pss, own));
        println!(
            "soak: idle {:>4} s, total PSS {:.1} MiB (anon + shmem {:.1} MiB)",
            idle_start.elapsed().as_secs(),
            pss as f64 / 1024.0,
            own as f64 / 1024.0
        );
    }
    report
        .checkpoints
        .push(checkpoint("after idle", pid, plan, hz).await);

    let hands = match Input::from_env() {
        Input::X11 => Some(xinput::Hands::connect().expect("the X display to type on")),
        _ => None,
    };
    let maps_before = web_maps(pid);
    println!("soak: {} turns over {} windows", plan.turns, seats.len());
    let (pss, own) = total(pid);
    report.samples.push((0, pss, own));
    // `YUI_SOAK_EVERY_SAMPLE=1`: a sample and a line after every turn, with each process's
    // share (when does it grow, and where?).
    let every_sample = std::env::var_os("YUI_SOAK_EVERY_SAMPLE").is_some();
    let t = Instant::now();
    // An experiment: `YUI_SOAK_PAUSE=EVERY:SECS` idles SECS seconds before every EVERY-th turn
    // (the characters fall asleep again with a short `yui.sleep`): does each wake cost memory?
    let pause: Option<(usize, u64)> = std::env::var("YUI_SOAK_PAUSE").ok().and_then(|v| {
        let (a, b) = v.split_once(':')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    });
    for n in 1..=plan.turns {
        if let Some((every, secs)) = pause {
            if n > 1 && (n - 1).is_multiple_of(every) {
                println!("soak: pausing {secs} s before turn {n}");
                tokio::time::sleep(Duration::from_secs(secs)).await;
            }
        }
        let seat = &mut seats[n % 3];
        match one_turn(&s, hands.as_ref(), seat, n, plan.leak_kib).await {
            Ok(cue) => {
                report.turns_done += 1;
                report.cues_seen += cue as usize;
            }
            Err(e) => {
                eprintln!("soak: {e}");
                report.turns_failed.push(e);
                if report.turns_failed.len() >= 10 {
                    break;
                }
            }
        }
        if n.is_multiple_of(plan.sample_every) || every_sample {
            let (pss, own) = total(pid);
            report.samples.push((n, pss, own));
            if n.is_multiple_of(plan.sample_every * 10) || every_sample {
                // Per sample, each process's share too: which one warms up, which one grows.
                let each = if every_sample {
                    let parts: Vec<String> = procstat::memory(pid)
                        .values()
                        .map(|(name, m)| format!("{name} {:.1}", m.own() as f64 / 1024.0))
                        .collect();
                    format!("; {}", parts.join(", "))
                } else {
                    String::new()
                };
                println!(
                    "soak: {n} turns in {:.0} s, total PSS {:.1} MiB (anon + shmem {:.1} MiB{each})",
                    t.elapsed().as_secs_f64(),
                    pss as f64 / 1024.0,
                    own as f64 / 1024.0
                );
            }
        }
    }
    report.turns_secs = t.elapsed().as_secs_f64();
    let retyped = RETYPED.swap(0, std::sync::atomic::Ordering::Relaxed);
    if retyped > 0 {
        println!("soak: {retyped} turns' words were lost on the way in and typed again");
    }
    tokio::time::sleep(plan.after_turns).await;
    report
        .checkpoints
        .push(checkpoint("after turns", pid, plan, hz).await);
    census(&s, &seats, "after turns").await;
    if !maps_before.is_empty() {
        print_map_growth(&maps_before, &web_maps(pid), "over the turns");
    }
    close(s, pid).await;
    report.stored = check_store(dir.path(), plan.turns);

    if plan.extra_character {
        let one = tempfile::tempdir().unwrap();
        seed_dir(one.path(), &srv.base_url, false);
        let (s, pid) = procstat::launch(&plan.app, one.path()).await;
        s.wait_for_labels(&["main", "pet-kai"], Duration::from_secs(60))
            .await
            .expect("main and kai");
        tokio::time::sleep(plan.settle).await;
        let c = checkpoint("main + 1 pet", pid, plan, hz).await;
        report.one_pet = Some(c);
        close(s, pid).await;
    }
    report
}
