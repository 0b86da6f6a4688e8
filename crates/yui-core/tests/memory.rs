//! Long-term memory on real SQLite files and a scripted backend speaking the exact Chat
//! Completions wire (docs/memory.md): the store and its indexes, recall in real turns' requests,
//! forgetting, CJK, two characters kept apart, the token budgets.

use crate::turn_support::backends;
use crate::turn_support::{chat_say, Harness, ScriptServer};
use serde_json::Value;
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::longterm::{self, recall, Kind, NewMemory};
use yui_core::transcript::{self, Role};
use yui_core::turn::{self, Backend, TurnDeps};
use yui_core::{Store, WindowKind};

fn backend(base: &str) -> Backend {
    backends::backend(Transport::ChatCompletions, base)
}

fn now(h: &Harness) -> chrono::DateTime<chrono::Utc> {
    h.clock.now()
}

fn remember(h: &Harness, preset: &str, kind: Kind, text: &str) -> i64 {
    longterm::add(&h.store, now(h), preset, &NewMemory::new(kind, text))
        .unwrap()
        .id
}

/// Run one real turn of `preset` built as the app builds it (`turn::prepare`) against the
/// server; returns the text of the last user message the request carried.
async fn turn_request(h: &Harness, server: &ScriptServer, preset: &str, message: &str) -> String {
    server.push(chat_say("ok"));
    let before = server.bodies().len();
    let (req, reg) = turn::prepare(
        &h.store,
        &h.clock,
        preset,
        WindowKind::Main,
        message,
        backend(&server.base_url),
    )
    .unwrap();
    let deps = TurnDeps::new(h.store.clone(), h.clock.clone(), &req.timeouts).unwrap();
    let handle = turn::start(deps, req, reg);
    let out = tokio::time::timeout(Duration::from_secs(20), handle.join)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.text, "ok");
    let bodies = server.bodies();
    assert_eq!(bodies.len(), before + 1);
    last_user(&bodies[before])
}

pub(crate) fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string()
}

fn say(h: &Harness, preset: &str, role: Role, text: &str) -> i64 {
    transcript::append(&h.store, preset, role, text, None, now(h)).unwrap()
}

#[test]
fn fts5_and_trigram_are_in_the_bundled_sqlite() {
    let h = Harness::new();
    let (fts5, version): (bool, String) = h
        .store
        .read(|c| {
            Ok((
                c.query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
                    r.get(0)
                })?,
                c.query_row("SELECT sqlite_version()", [], |r| r.get(0))?,
            ))
        })
        .unwrap();
    assert!(fts5, "FTS5 compiled in");
    assert!(
        version.as_str() >= "3.34",
        "trigram needs 3.34, have {version}"
    );
    let n: i64 = h
        .store
        .read(|c| {
            Ok(c.query_row(
                "SELECT count(*) FROM sqlite_master WHERE name IN ('memories_fts','memories_tri','transcript_fts','transcript_tri')",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(n, 4);
}

#[tokio::test]
async fn recall_survives_a_restart() {
    let h = Harness::new();
    remember(&h, "yui", Kind::Fact, "The user's cat is named Mochi.");
    let path = h.store.path().to_path_buf();
    let Harness { dir, clock, store } = h;
    drop(store);
    let h = Harness {
        store: Store::open(&path).unwrap(),
        dir,
        clock,
    };
    let server = ScriptServer::start(vec![]).await;
    let text = turn_request(&h, &server, "yui", "How is my cat doing?").await;
    assert!(
        text.contains("memory: The user's cat is named Mochi."),
        "{text}"
    );
    // The line sits inside the client context block, before the message.
    let block_end = text.find("[/client context]").unwrap();
    assert!(text.find("memory: ").unwrap() < block_end);
    // The last turn's recall is recorded for Settings → Memory.
    let used = longterm::last_used(&h.store, "yui").unwrap();
    assert_eq!(used.memories.len(), 1);
    assert_eq!(used.memories[0].times_used, 1);
}

#[tokio::test]
async fn a_fact_said_200_turns_ago_reaches_the_request_that_asks_about_it() {
    let h = Harness::new();
    say(
        &h,
        "yui",
        Role::User,
        "By the way, my sister Hanako lives in Sapporo.",
    );
    say(&h, "yui", Role::Assistant, "Sapporo! Lovely in winter.");
    for i in 0..199 {
        say(
            &h,
            "yui",
            Role::User,
            &format!("Turn {i}: the weather is grey and I am coding again today."),
        );
        say(
            &h,
            "yui",
            Role::Assistant,
            &format!("Reply {i}: keep going, a tea break helps."),
        );
    }
    let server = ScriptServer::start(vec![]).await;
    let text = turn_request(&h, &server, "yui", "Where does my sister live?").await;
    assert!(
        text.contains("earlier: ") && text.contains("my sister Hanako lives in Sapporo"),
        "{text}"
    );
    // The history window carries only what fits in its budget, not all 400 lines.
    let body = &server.bodies()[0];
    let n = body["messages"].as_array().unwrap().len();
    assert!(n < 400 && n > 2, "{n} messages");
}

#[tokio::test]
async fn forget_removes_it_from_every_later_request() {
    let h = Harness::new();
    let id = remember(&h, "yui", Kind::Preference, "The user hates cilantro.");
    let server = ScriptServer::start(vec![]).await;
    let first = turn_request(&h, &server, "yui", "What should I cook with cilantro?").await;
    assert!(first.contains("The user hates cilantro."), "{first}");
    longterm::forget(&h.store, id).unwrap();
    for q in ["cilantro?", "cook with cilantro", "what do I hate"] {
        let later = turn_request(&h, &server, "yui", q).await;
        assert!(!later.contains("hates cilantro"), "{later}");
    }
    // Gone from the row, both indexes and its vector.
    let left: i64 = h
        .store
        .read(|c| {
            Ok(c.query_row(
                "SELECT (SELECT count(*) FROM memories) + (SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'cilantro')
                 + (SELECT count(*) FROM memories_tri WHERE memories_tri MATCH 'cilantro') + (SELECT count(*) FROM memory_vectors)",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(left, 0);
    assert!(longterm::get(&h.store, id).is_err());
}

#[test]
fn cjk_text_is_found() {
    let h = Harness::new();
    remember(&h, "yui", Kind::Fact, "ユーザーの猫の名前はミケです。");
    remember(&h, "yui", Kind::Preference, "用户最喜欢吃北京烤鸭。");
    remember(&h, "yui", Kind::Fact, "The user works as a nurse.");
    let found = |q: &str| {
        h.store
            .read(|c| longterm::search::memories(c, "yui", q, None, 5))
            .unwrap()
            .into_iter()
            .map(|m| m.text)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        found("猫の名前は何だっけ？")[0],
        "ユーザーの猫の名前はミケです。"
    );
    assert_eq!(found("北京烤鸭好吃吗")[0], "用户最喜欢吃北京烤鸭。");
    // Two characters: too short for the trigram index, found by the scan.
    assert_eq!(found("北京")[0], "用户最喜欢吃北京烤鸭。");
    assert_eq!(
        found("what is my job? nurse?")[0],
        "The user works as a nurse."
    );
    // Transcript lines too.
    say(&h, "yui", Role::User, "明日は東京タワーに行きます");
    let r = h
        .store
        .read(|c| recall::recall(c, "yui", "東京タワーはどう？", i64::MAX, 400, None))
        .unwrap();
    assert!(
        r.lines.iter().any(|l| l.contains("東京タワー")),
        "{:?}",
        r.lines
    );
}

/// The query keeps only its rarest words (`search::MAX_QUERY_TERMS`): a long message whose one
/// telling word comes last still finds its memory, and a word first looked up when no memory
/// held it counts as soon as one does (a count of none is never cached).
#[test]
fn a_long_message_keeps_its_rare_word_and_new_words_count_at_once() {
    let h = Harness::new();
    for i in 0..20 {
        remember(
            &h,
            "yui",
            Kind::Fact,
            &format!("Note {i}: coffee garden weekend music office train rain."),
        );
    }
    let found = |q: &str| {
        h.store
            .read(|c| longterm::search::memories(c, "yui", q, None, 3))
            .unwrap()
            .into_iter()
            .map(|m| m.text)
            .collect::<Vec<_>>()
    };
    let q = "coffee garden weekend music office train rain, and what about Pochi?";
    assert!(found(q).iter().all(|t| !t.contains("Pochi")));
    remember(&h, "yui", Kind::Fact, "The user's dog is called Pochi.");
    assert_eq!(found(q)[0], "The user's dog is called Pochi.");
}

/// The ranking computed from postings (`longterm::bm25`) orders rows as FTS5's own `bm25()`
/// does when no row says a word twice, keeps only the asking character's rows even when
/// another character's rows hold the best matches, and the summary lookup uses its index.
#[test]
fn bm25_from_postings_ranks_as_fts5_does() {
    let h = Harness::new();
    let words = ["otter", "lantern", "violet", "harbour", "pepper"];
    let mut seed = 11u64;
    for i in 0..120 {
        let mut text = format!("Memory {i}:");
        for (k, w) in words.iter().enumerate() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (seed >> 33).is_multiple_of(k as u64 + 2) {
                text.push_str(&format!(" {w}"));
            }
        }
        // Lengths vary so that length normalisation decides between rows of the same words.
        for f in 0..(i % 9) {
            text.push_str(&format!(" filler{f}"));
        }
        remember(
            &h,
            if i % 4 == 3 { "kai" } else { "yui" },
            Kind::Fact,
            &text,
        );
    }
    for i in 0..300 {
        remember(&h, "kai", Kind::Fact, &format!("Kai's note {i}: quokka"));
    }
    let quokka = remember(
        &h,
        "yui",
        Kind::Fact,
        "A quokka smiled at the user in Perth, long ago",
    );
    h.store
        .read(|c| {
            let count = |t: &str| -> usize {
                c.query_row(
                    "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?1",
                    [format!("\"{t}\"")],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap() as usize
            };
            let terms: Vec<(String, usize)> = words[..4]
                .iter()
                .map(|w| (w.to_string(), count(w)))
                .collect();
            let ours =
                longterm::bm25::ranked(c, "memories_fts", "memories", "yui", &terms, i64::MAX, 30)?;
            let mut stmt = c.prepare(
                "SELECT m.id FROM memories_fts f JOIN memories m ON m.id = f.rowid
                 WHERE memories_fts MATCH ?1 AND m.preset_id = 'yui'
                 ORDER BY bm25(memories_fts), m.id LIMIT 30",
            )?;
            let theirs: Vec<i64> = stmt
                .query_map(["otter OR lantern OR violet OR harbour"], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            assert_eq!(ours.len(), 30);
            assert_eq!(ours, theirs);
            // 300 of kai's rows hold the word before yui's one does.
            let q = vec![("quokka".to_string(), count("quokka"))];
            let only =
                longterm::bm25::ranked(c, "memories_fts", "memories", "yui", &q, i64::MAX, 30)?;
            assert_eq!(only, vec![quokka]);
            let plan: String = c.query_row(
                "EXPLAIN QUERY PLAN SELECT id FROM memories WHERE preset_id = 'yui'
                 AND kind = 'summary' ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(3),
            )?;
            assert!(plan.contains("memories_kind"), "{plan}");
            Ok(())
        })
        .unwrap();
}

#[tokio::test]
async fn two_characters_memories_are_kept_apart() {
    let h = Harness::new();
    remember(
        &h,
        "yui",
        Kind::Fact,
        "The user's password hint is a blue teapot.",
    );
    say(&h, "yui", Role::User, "I keep my bicycle in the blue shed.");
    let server = ScriptServer::start(vec![]).await;
    let kai = turn_request(
        &h,
        &server,
        "kai",
        "Tell me about the blue teapot and the bicycle",
    )
    .await;
    assert!(
        !kai.contains("teapot.") && !kai.contains("earlier:"),
        "{kai}"
    );
    assert!(!kai.contains("memory:"), "{kai}");
    let yui = turn_request(&h, &server, "yui", "Tell me about the blue teapot").await;
    assert!(
        yui.contains("memory: The user's password hint is a blue teapot."),
        "{yui}"
    );
    assert!(longterm::list(&h.store, "kai").unwrap().is_empty());
    // Forget all for one leaves the other's.
    remember(&h, "kai", Kind::Fact, "Kai's own memory.");
    assert_eq!(longterm::forget_all(&h.store, "yui").unwrap(), 1);
    assert_eq!(longterm::list(&h.store, "kai").unwrap().len(), 1);
}

#[test]
fn the_token_budgets_hold() {
    let h = Harness::new();
    for i in 0..200 {
        remember(
            &h,
            "yui",
            Kind::Event,
            &format!("The user went hiking on trail number {i} near the lake."),
        );
        say(
            &h,
            "yui",
            Role::User,
            &format!("Hiking trail {i} by the lake was muddy but beautiful."),
        );
    }
    let pinned = remember(&h, "yui", Kind::Fact, "The user's name is Aki.");
    longterm::pin(&h.store, now(&h), pinned, true).unwrap();
    for budget in [0usize, 50, 120, 400, 1000] {
        let r = h
            .store
            .read(|c| {
                recall::recall(
                    c,
                    "yui",
                    "tell me about hiking by the lake",
                    i64::MAX,
                    budget,
                    None,
                )
            })
            .unwrap();
        let pinned_cost = recall::tokens("memory: The user's name is Aki.") + 1;
        let total: usize = r.lines.iter().map(|l| recall::tokens(l) + 1).sum();
        assert_eq!(total, r.tokens);
        assert!(
            r.tokens <= budget.max(pinned_cost),
            "budget {budget}: {} tokens",
            r.tokens
        );
        // The pinned memory always goes, whatever the budget.
        assert_eq!(r.lines[0], "memory: The user's name is Aki.");
        if budget >= 400 {
            assert!(r.lines.len() > 5, "{budget}: {:?}", r.lines);
        }
    }
    // The history window: the newest lines that fit.
    let recent = transcript::recent(&h.store, "yui", 400).unwrap();
    for budget in [200usize, 1000, 3000] {
        let n = recall::window_len(&recent, budget);
        let used: usize = recent[recent.len() - n..]
            .iter()
            .map(|e| recall::tokens(&e.text) + 4)
            .sum();
        assert!(
            used <= budget && n >= 1,
            "{budget}: {n} lines, {used} tokens"
        );
        let one_more = recall::tokens(&recent[recent.len() - n - 1].text) + 4;
        assert!(used + one_more > budget, "{budget}: the window stops early");
    }
}

#[test]
fn edits_pins_and_bad_input() {
    let h = Harness::new();
    let id = remember(&h, "yui", Kind::Fact, "The user lives in Osaka.");
    let m = longterm::edit(
        &h.store,
        now(&h),
        id,
        &longterm::Edit {
            text: Some("The user lives in Kyoto.".into()),
            importance: Some(5),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        (m.text.as_str(), m.importance),
        ("The user lives in Kyoto.", 5)
    );
    let found = h
        .store
        .read(|c| longterm::search::memories(c, "yui", "Osaka", None, 5))
        .unwrap();
    assert!(found.is_empty(), "the index follows an edit");
    assert!(longterm::add(&h.store, now(&h), "yui", &NewMemory::new(Kind::Fact, "  ")).is_err());
    assert!(longterm::add(
        &h.store,
        now(&h),
        "nobody",
        &NewMemory::new(Kind::Fact, "x")
    )
    .is_err());
    let mut bad = NewMemory::new(Kind::Fact, "x");
    bad.importance = 9;
    assert!(longterm::add(&h.store, now(&h), "yui", &bad).is_err());
    // Query syntax in user text is just text.
    for q in ["\"", "AND OR NOT", "text:*", "(((", "NEAR(a b)"] {
        h.store
            .read(|c| longterm::search::memories(c, "yui", q, None, 5))
            .unwrap();
    }
    let export = longterm::export(&h.store, now(&h), "yui").unwrap();
    assert_eq!(export["memories"][0]["text"], "The user lives in Kyoto.");
}
