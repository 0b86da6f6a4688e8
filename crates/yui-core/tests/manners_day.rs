//! The manners over a simulated day, the clock passed in: the budget, the cooldown, the back-off
//! after two unanswered turns and its end when the user answers, a [SILENT] turn giving its
//! place back, high importance going over the back-off but not a fullscreen window, quiet
//! hours, quiet mode and the busy probes. The day's log (which turns went, which were held and
//! why) is compared line by line and printed (`--nocapture`); docs/proactive.md shows it.

use chrono::{DateTime, Duration, FixedOffset, NaiveTime, TimeZone, Utc};
use yui_core::manners::probes::Busy;
use yui_core::manners::rules::{in_span, next_local, Ask, Decision, Importance, Manners};
use yui_core::manners::{Config, QuietFor};

enum Step {
    /// A trigger: preset, trigger id, importance, what the probes say, then whether the turn
    /// (if it goes) says something.
    Ask(&'static str, &'static str, Importance, Option<Busy>, bool),
    /// The user says something to a character.
    User,
    /// Quiet mode until this local time (`None`: off).
    Quiet(Option<&'static str>),
}

use Importance::*;
use Step::*;

const OFFSET: i32 = 3600;

fn at(hhmm: &str) -> DateTime<Utc> {
    let t = NaiveTime::parse_from_str(hhmm, "%H:%M").unwrap();
    let local = FixedOffset::east_opt(OFFSET)
        .unwrap()
        .from_local_datetime(
            &chrono::NaiveDate::from_ymd_opt(2026, 12, 7)
                .unwrap()
                .and_time(t),
        )
        .unwrap();
    local.with_timezone(&Utc)
}

fn day() -> Vec<(&'static str, Step)> {
    vec![
        ("06:40", Ask("kai", "events", Normal, None, true)),
        ("07:45", Ask("yui", "morning", Normal, None, true)),
        ("07:46", User),
        ("07:50", Ask("kai", "events", Normal, None, true)),
        ("08:00", Ask("kai", "events", Normal, None, true)),
        ("08:15", Ask("kai", "events", Low, None, true)),
        ("08:30", Ask("yui", "back", Normal, None, true)),
        ("08:50", Ask("kai", "events", Normal, None, true)),
        (
            "09:00",
            Ask("kai", "events", High, Some(Busy::Fullscreen), true),
        ),
        ("09:05", Ask("kai", "events", High, None, true)),
        ("09:10", Ask("kai", "events", Normal, None, true)),
        ("09:20", Ask("yui", "back", Normal, None, true)),
        ("09:30", User),
        ("09:40", Ask("yui", "reminder", Normal, None, true)),
        ("09:41", User),
        ("09:50", Ask("yui", "events", Normal, None, false)),
        ("10:00", Ask("kai", "events", Normal, None, true)),
        ("10:01", User),
        ("10:10", Ask("kai", "events", Normal, None, true)),
        ("10:11", User),
        ("10:20", Ask("kai", "events", Normal, None, true)),
        ("10:21", User),
        ("10:30", Ask("kai", "events", Normal, None, true)),
        ("10:41", Ask("kai", "events", Normal, None, true)),
        (
            "14:00",
            Ask("yui", "back", Normal, Some(Busy::Typing), true),
        ),
        (
            "15:00",
            Ask(
                "yui",
                "events",
                High,
                Some(Busy::Microphone(Some("zoom".into()))),
                true,
            ),
        ),
        (
            "15:30",
            Ask("yui", "perch", Normal, Some(Busy::ScreenShared), true),
        ),
        ("15:55", Quiet(Some("17:00"))),
        ("16:00", Ask("yui", "reminder", High, None, true)),
        ("17:00", Ask("yui", "reminder", High, None, true)),
        ("17:01", User),
        ("17:01", Quiet(None)),
        ("23:00", Ask("yui", "night", Normal, None, true)),
        ("23:45", Ask("kai", "events", High, None, true)),
    ]
}

/// Run the day; one log line per step.
fn run_day() -> Vec<String> {
    let mut m = Manners::new();
    let mut cfg = Config::default();
    let off = FixedOffset::east_opt(OFFSET).unwrap();
    let mut out = Vec::new();
    for (i, (hhmm, step)) in day().into_iter().enumerate() {
        let now = at(hhmm);
        match step {
            User => {
                m.user_spoke();
                out.push(format!("{hhmm} the user answers"));
            }
            Quiet(until) => {
                cfg.quiet_until = until.map(at);
                out.push(match until {
                    Some(u) => format!("{hhmm} quiet mode on until {u}"),
                    None => format!("{hhmm} quiet mode off"),
                });
            }
            Ask(preset, trigger, importance, busy, speaks) => {
                let ask = Ask {
                    id: i as u64,
                    preset_id: preset,
                    trigger,
                    importance,
                    busy,
                    stage_busy: None,
                };
                let d = m.decide(now, now.with_timezone(&off), &cfg, &ask);
                let head = format!("{hhmm} {preset} {trigger} ({})", importance.as_str());
                match d {
                    Decision::Go => {
                        let t = m.went(now);
                        m.ended(t, speaks);
                        let said = if speaks { "spoke" } else { "[SILENT]" };
                        out.push(format!("{head}: went, {said}"));
                    }
                    Decision::Held { reason, .. } => out.push(format!("{head}: held: {reason}")),
                }
            }
        }
    }
    out
}

#[test]
fn a_simulated_day_of_budget_cooldown_back_off_and_quiet_rules() {
    let log = run_day();
    println!("--- a simulated day (UTC+01:00, the default settings) ---");
    for line in &log {
        println!("{line}");
    }
    let want = [
        "06:40 kai events (normal): held: quiet hours",
        "07:45 yui morning (normal): went, spoke",
        "07:46 the user answers",
        "07:50 kai events (normal): held: cooldown",
        "08:00 kai events (normal): went, spoke",
        "08:15 kai events (low): went, spoke",
        "08:30 yui back (normal): held: back-off (2 unanswered)",
        "08:50 kai events (normal): went, spoke",
        "09:00 kai events (high): held: fullscreen window",
        "09:05 kai events (high): went, spoke",
        "09:10 kai events (normal): held: cooldown",
        "09:20 yui back (normal): held: back-off (4 unanswered)",
        "09:30 the user answers",
        "09:40 yui reminder (normal): went, spoke",
        "09:41 the user answers",
        "09:50 yui events (normal): went, [SILENT]",
        "10:00 kai events (normal): went, spoke",
        "10:01 the user answers",
        "10:10 kai events (normal): went, spoke",
        "10:11 the user answers",
        "10:20 kai events (normal): went, spoke",
        "10:21 the user answers",
        "10:30 kai events (normal): held: budget (4 an hour)",
        "10:41 kai events (normal): went, spoke",
        "14:00 yui back (normal): held: user typing",
        "15:00 yui events (high): held: microphone in use by zoom",
        "15:30 yui perch (normal): held: screen shared or recorded",
        "15:55 quiet mode on until 17:00",
        "16:00 yui reminder (high): held: quiet mode until 17:00",
        "17:00 yui reminder (high): went, spoke",
        "17:01 the user answers",
        "17:01 quiet mode off",
        "23:00 yui night (normal): went, spoke",
        "23:45 kai events (high): held: quiet hours",
    ];
    assert_eq!(log, want);
}

#[test]
fn the_held_log_keeps_each_hold_once_newest_first() {
    let mut m = Manners::new();
    let cfg = Config::default();
    let off = FixedOffset::east_opt(OFFSET).unwrap();
    let ask = |id, busy| Ask {
        id,
        preset_id: "yui",
        trigger: "reminder",
        importance: High,
        busy,
        stage_busy: None,
    };
    for min in 0..5 {
        // One queued turn rechecked five times while a game runs fullscreen: one entry.
        let now = at("12:00") + Duration::minutes(min);
        m.decide(
            now,
            now.with_timezone(&off),
            &cfg,
            &ask(7, Some(Busy::Fullscreen)),
        );
    }
    let now = at("12:10");
    m.decide(
        now,
        now.with_timezone(&off),
        &cfg,
        &ask(8, Some(Busy::Typing)),
    );
    let log = m.log();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].reason, "held: user typing");
    assert_eq!(log[1].reason, "held: fullscreen window");
    assert_eq!(log[1].at, at("12:00"));
}

#[test]
fn quiet_hours_span_midnight_and_lift_at_their_end() {
    let t = |s| NaiveTime::parse_from_str(s, "%H:%M").unwrap();
    assert!(in_span(t("23:45"), t("23:30"), t("07:00")));
    assert!(in_span(t("03:00"), t("23:30"), t("07:00")));
    assert!(!in_span(t("07:00"), t("23:30"), t("07:00")));
    assert!(in_span(t("13:00"), t("12:00"), t("14:00")));
    let local = at("23:45").with_timezone(&FixedOffset::east_opt(OFFSET).unwrap());
    assert_eq!(
        next_local(local, t("07:00")),
        at("07:00") + Duration::days(1)
    );
}

#[test]
fn quiet_for_parses_what_the_user_says_and_refuses_the_rest_in_plain_words() {
    let clock = yui_core::clock::ManualClock::new(at("15:00"), OFFSET);
    let cfg = Config::default();
    let until = |s: &str| QuietFor::parse(s).unwrap().until(&clock, &cfg);
    assert_eq!(until("1h"), Some(at("16:00")));
    assert_eq!(until("30m"), Some(at("15:30")));
    assert_eq!(until("off"), None);
    // Tomorrow: when the morning starts (07:30 by default).
    assert_eq!(until("tomorrow"), Some(at("07:30") + Duration::days(1)));
    let e = QuietFor::parse("soon").unwrap_err();
    assert_eq!(
        e.message,
        "\"soon\" is not a quiet time: say how long (30m, 1h, 2h), tomorrow, or off"
    );
    assert!(QuietFor::parse("0m").is_err());
}

#[test]
fn the_settings_are_declared_once_with_their_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let store = yui_core::Store::open(dir.path().join("yui.db")).unwrap();
    let cfg = Config::load(&store);
    assert_eq!(cfg.per_hour, 4);
    assert_eq!(cfg.away, Duration::minutes(20));
    assert_eq!(cfg.cooldown, Duration::minutes(10));
    assert!(cfg.character_on("yui"));
    let v = yui_core::settings::get(&store, "yui.awareness.active_app").unwrap();
    assert_eq!(v, serde_json::json!({"enabled": false}));
    let e = yui_core::settings::set(
        &store,
        "yui.proactive.quiet_hours",
        &serde_json::json!({"from": "25:00", "to": "07:00"}),
    )
    .unwrap_err();
    assert!(e.message.contains("\"HH:MM\""), "{}", e.message);
    yui_core::manners::set_character(&store, "kai", false).unwrap();
    assert!(!Config::load(&store).character_on("kai"));
    assert!(Config::load(&store).character_on("yui"));
}
