//! Recall quality on a synthetic long conversation (docs/memory.md, "Quality"): 1,200 turns of
//! small talk with 54 planted facts said in plain words, 10 of them changed later; the memory
//! store holds what a perfect extraction would (each fact, changed ones updated in place) among
//! 400 distractor memories. For each fact one question in other words; a hit is the right
//! memory in the top 5. Printed: recall@5 with BM25 alone, with BM25 + the deterministic
//! stand-in embedding (`longterm::embed::stand_in`, hashed words and trigrams: no model), and
//! for the transcript lines alone (the line stating the fact's current value among the top 5
//! `earlier:` candidates, no memories).
//!
//! Run: `cargo bench -p yui-core --bench memory_quality`.

use chrono::{Duration as CDuration, TimeZone, Utc};
use rusqlite::params;
use yui_core::longterm::{self, embed, search, Kind, NewMemory};
use yui_core::Store;

/// (what the user says, the memory, the question, Some((the later change, its memory))).
type Fact = (String, String, String, Option<(String, String)>);

fn facts() -> Vec<Fact> {
    let mut out: Vec<Fact> = Vec::new();
    let people = [
        ("sister", "Hanako"),
        ("brother", "Kenji"),
        ("mother", "Yumi"),
        ("father", "Hiroshi"),
        ("cousin", "Aya"),
        ("boss", "Mr. Tanaka"),
        ("neighbour", "Mrs. Sato"),
        ("best friend", "Riku"),
        ("dog", "Pochi"),
        ("cat", "Mochi"),
        ("hamster", "Nugget"),
        ("grandmother", "Chiyo"),
        ("roommate", "Daniel"),
        ("piano teacher", "Ms. Ito"),
        ("dentist", "Dr. Mori"),
        ("girlfriend", "Sakura"),
        ("nephew", "Taro"),
        ("goldfish", "Bubbles"),
    ];
    for (i, (who, name)) in people.iter().enumerate() {
        let change = (i % 6 == 5).then(|| {
            (
                format!("Oh, small correction: my {who} is actually called {name}ko, not {name}."),
                format!("The user's {who} is named {name}ko."),
            )
        });
        out.push((
            format!("My {who} is called {name}."),
            format!("The user's {who} is named {name}."),
            format!("What's the name of my {who} again?"),
            change,
        ));
    }
    let favourites = [
        ("food", "okonomiyaki", "ramen"),
        ("colour", "teal", "mustard yellow"),
        ("movie", "Spirited Away", "Paprika"),
        ("book", "Norwegian Wood", "Kafka on the Shore"),
        ("band", "Radiohead", "Sakanaction"),
        ("sport", "badminton", "climbing"),
        ("season", "autumn", "spring"),
        ("drink", "hojicha", "cold brew"),
        ("dessert", "mochi ice cream", "cheesecake"),
        ("flower", "hydrangea", "tulip"),
        ("video game", "Zelda", "Stardew Valley"),
        ("animal", "otter", "red panda"),
        ("holiday destination", "Okinawa", "Hokkaido"),
        ("podcast", "Radiolab", "99% Invisible"),
        ("board game", "Catan", "Azul"),
        ("tea", "genmaicha", "earl grey"),
        ("composer", "Debussy", "Satie"),
        ("painter", "Hokusai", "Monet"),
    ];
    for (i, (what, a, b)) in favourites.iter().enumerate() {
        let change = (i % 4 == 3).then(|| {
            (
                format!("These days my favourite {what} is {b}, I've gone off {a}."),
                format!("The user's favourite {what} is {b} (no longer {a})."),
            )
        });
        out.push((
            format!("My favourite {what} is {a}."),
            format!("The user's favourite {what} is {a}."),
            format!("Which {what} do I like the most?"),
            change,
        ));
    }
    let plain = [
        (
            "I live in Osaka.",
            "The user lives in Osaka.",
            "Which city do I live in?",
            Some((
                "I moved to Kyoto last week, I live in Kyoto now.",
                "The user lives in Kyoto (moved from Osaka).",
            )),
        ),
        (
            "I work as a nurse at the city hospital.",
            "The user works as a nurse at the city hospital.",
            "What is my job?",
            None,
        ),
        (
            "I drive a red Honda Fit.",
            "The user drives a red Honda Fit.",
            "What car do I drive?",
            Some((
                "I sold the Honda and now drive a blue Mazda.",
                "The user drives a blue Mazda (sold the Honda).",
            )),
        ),
        (
            "I was born in Fukuoka.",
            "The user was born in Fukuoka.",
            "Where was I born?",
            None,
        ),
        (
            "I'm allergic to peanuts.",
            "The user is allergic to peanuts.",
            "What am I allergic to?",
            None,
        ),
        (
            "My birthday is on the 14th of March.",
            "The user's birthday is on 14 March.",
            "When is my birthday?",
            None,
        ),
        (
            "I play the cello in a community orchestra.",
            "The user plays the cello in a community orchestra.",
            "Which instrument do I play?",
            None,
        ),
        (
            "I'm learning Spanish on weekends.",
            "The user is learning Spanish on weekends.",
            "What language am I learning?",
            Some((
                "I gave up Spanish and started learning Korean instead.",
                "The user is learning Korean (gave up Spanish).",
            )),
        ),
        (
            "My blood type is AB.",
            "The user's blood type is AB.",
            "What's my blood type?",
            None,
        ),
        (
            "I'm vegetarian.",
            "The user is vegetarian.",
            "Do I eat meat?",
            None,
        ),
        (
            "My apartment is on the 12th floor.",
            "The user's apartment is on the 12th floor.",
            "Which floor is my apartment on?",
            None,
        ),
        (
            "I'm afraid of spiders.",
            "The user is afraid of spiders.",
            "What am I scared of?",
            None,
        ),
        (
            "I take the Hankyu line to work.",
            "The user commutes on the Hankyu line.",
            "Which train line do I take to work?",
            None,
        ),
        (
            "I'm saving up for a trip to Iceland.",
            "The user is saving up for a trip to Iceland.",
            "What trip am I saving up for?",
            None,
        ),
        (
            "My wedding anniversary is in June.",
            "The user's wedding anniversary is in June.",
            "When is my wedding anniversary?",
            None,
        ),
        (
            "I wear glasses with black frames.",
            "The user wears glasses with black frames.",
            "Do I wear glasses?",
            None,
        ),
        (
            "My laptop is a ThinkPad X1.",
            "The user's laptop is a ThinkPad X1.",
            "What laptop do I use?",
            None,
        ),
        (
            "I go swimming every Tuesday morning.",
            "The user goes swimming every Tuesday morning.",
            "When do I go swimming?",
            None,
        ),
    ];
    for (say, mem, q, change) in plain {
        out.push((
            say.into(),
            mem.into(),
            q.into(),
            change.map(|(a, b)| (a.to_string(), b.to_string())),
        ));
    }
    out
}

const FILLER: &[&str] = &[
    "The weather is grey again, I might stay in.",
    "Work was long today, lots of meetings.",
    "I had noodles for lunch, nothing special.",
    "Did you sleep well? I kept waking up.",
    "I watched a bit of TV and went to bed early.",
    "The train was crowded this morning.",
    "I'm thinking of cleaning the kitchen later.",
    "It was sunny for once, so I went for a walk.",
    "My friend sent me a funny video of a cat.",
    "I need to buy groceries, the fridge is empty.",
    "Coding all afternoon, the bug finally went away.",
    "I read a few pages before sleeping.",
    "Tea or coffee this evening, what do you think?",
    "The neighbours were loud last night.",
    "I forgot my umbrella and got soaked.",
];
const REPLIES: &[&str] = &[
    "That sounds like a lot, take it easy.",
    "Oh nice, tell me more!",
    "I hope tomorrow is calmer for you.",
    "Ha, that made me smile.",
    "I'm right here if you want to chat.",
];

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("yui.sqlite3")).expect("store");
    let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 9, 0, 0).unwrap();
    let facts = facts();
    let turns = 1200usize;
    // Where each fact is said, and (for changed ones) where it changes: spread over the talk.
    let said_at = |i: usize| 5 + i * (turns / 2) / facts.len();
    let changed_at = |i: usize| turns / 2 + 20 + i * (turns / 2 - 40) / facts.len();
    let mut stated_line = vec![0i64; facts.len()];
    let mut seed = 1u64;
    let mut rnd = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    store
        .write(|tx| {
            let mut ins = tx.prepare(
                "INSERT INTO transcript (preset_id, role, text, at) VALUES ('yui', ?1, ?2, ?3)",
            )?;
            for t in 0..turns {
                let at = (t0 + CDuration::minutes(t as i64 * 7)).to_rfc3339();
                let mut user = FILLER[rnd(FILLER.len())].to_string();
                for (i, f) in facts.iter().enumerate() {
                    if said_at(i) == t {
                        user = f.0.clone();
                    }
                    if let Some((change, _)) = f.3.as_ref().filter(|_| changed_at(i) == t) {
                        user = change.clone();
                    }
                }
                ins.execute(params!["user", user, at])?;
                let id = tx.last_insert_rowid();
                for (i, f) in facts.iter().enumerate() {
                    if said_at(i) == t || (f.3.is_some() && changed_at(i) == t) {
                        stated_line[i] = id;
                    }
                }
                ins.execute(params!["assistant", REPLIES[rnd(REPLIES.len())], at])?;
            }
            Ok(())
        })
        .expect("fill");
    // Memories as a perfect extraction leaves them: distractors, each fact, changes in place.
    for i in 0..400 {
        let text = format!(
            "On day {} the user mentioned: {}",
            i / 3,
            FILLER[i % FILLER.len()].trim_end_matches('.')
        );
        longterm::add(&store, t0, "yui", &NewMemory::new(Kind::Event, text)).expect("add");
    }
    let mut ids = Vec::new();
    for f in &facts {
        let m = longterm::add(&store, t0, "yui", &NewMemory::new(Kind::Fact, f.1.clone())).unwrap();
        if let Some((_, new)) = &f.3 {
            let edit = longterm::Edit {
                text: Some(new.clone()),
                ..Default::default()
            };
            longterm::edit(&store, t0, m.id, &edit).unwrap();
        }
        ids.push(m.id);
    }
    for (id, text) in embed::missing(&store, "stand-in", 10_000).unwrap() {
        embed::put(&store, id, "stand-in", &embed::stand_in(&text)).unwrap();
    }
    let changed = facts.iter().filter(|f| f.3.is_some()).count();
    println!(
        "{turns} turns ({} lines), {} planted facts ({changed} changed later), {} memories",
        turns * 2,
        facts.len(),
        400 + facts.len()
    );
    let (mut bm25, mut fused, mut lines) = (0usize, 0usize, 0usize);
    let (mut bm25_changed, mut fused_changed) = (0usize, 0usize);
    let mut misses = Vec::new();
    let mut line_misses = Vec::new();
    for (i, f) in facts.iter().enumerate() {
        let q = &f.2;
        let top = |v: Option<(&str, &[f32])>| {
            store
                .read(|c| search::memories(c, "yui", q, v, 5))
                .unwrap()
                .iter()
                .any(|m| m.id == ids[i])
        };
        let a = top(None);
        let qv = embed::stand_in(q);
        let b = top(Some(("stand-in", &qv)));
        bm25 += a as usize;
        fused += b as usize;
        if f.3.is_some() {
            bm25_changed += a as usize;
            fused_changed += b as usize;
        }
        if !a {
            misses.push(q.clone());
        }
        let terms = search::Terms::of(q);
        let hit = store
            .read(|c| {
                let ls = search::lists(c, "transcript", "yui", &terms, i64::MAX)?;
                Ok(search::rrf(&ls)
                    .into_iter()
                    .take(5)
                    .any(|(id, _)| id == stated_line[i]))
            })
            .unwrap();
        lines += hit as usize;
        if !hit {
            line_misses.push(q.clone());
        }
    }
    let n = facts.len() as f64;
    println!(
        "recall@5, memories, BM25 alone:              {:.3} ({bm25}/{})",
        bm25 as f64 / n,
        facts.len()
    );
    println!(
        "recall@5, memories, BM25 + stand-in (RRF):   {:.3} ({fused}/{})",
        fused as f64 / n,
        facts.len()
    );
    println!(
        "  changed facts only: BM25 {bm25_changed}/{changed}, fused {fused_changed}/{changed}"
    );
    println!(
        "recall@5, transcript lines alone (BM25):     {:.3} ({lines}/{})",
        lines as f64 / n,
        facts.len()
    );
    for m in misses {
        println!("  BM25 miss: {m}");
    }
    for m in line_misses {
        println!("  transcript miss: {m}");
    }
}
