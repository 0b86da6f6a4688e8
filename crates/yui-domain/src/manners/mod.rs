//! Manners: when a character may speak up on its own (a proactive turn: the user came back, the
//! morning, a reminder, an event from another program) and when it keeps quiet. This floor holds
//! the settings ([`SETTINGS`], read as one [`Config`]), the pure decision ([`rules::Manners`]:
//! "go" or "held: <reason>", the clock passed in) and the busy probes' trait
//! ([`probes::BusyProbes`]: the camera, microphone and screen recorders here, the window system's in yui-x11). The stage (yui-core
//! `stage/proactive.rs`) runs the turns. docs/proactive.md describes every rule and key.

pub mod aware;
pub mod camera;
pub mod microphone;
#[cfg(target_os = "linux")]
pub mod mpris;
pub mod probes;
pub mod rules;
pub mod said;
pub mod screen;
pub mod system;

use crate::error::{CoreError, Result};
use crate::model::Setting;
use crate::store::{kv, Store};
use chrono::{DateTime, NaiveTime, Utc};
use serde_json::{json, Value};
use std::collections::HashMap;

pub const PER_HOUR_KEY: &str = "yui.proactive.per_hour";
pub const COOLDOWN_KEY: &str = "yui.proactive.cooldown_min";
pub const AWAY_KEY: &str = "yui.proactive.away_min";
pub const QUIET_HOURS_KEY: &str = "yui.proactive.quiet_hours";
pub const MORNING_KEY: &str = "yui.proactive.morning";
pub const NIGHT_KEY: &str = "yui.proactive.night";
pub const CHARACTERS_KEY: &str = "yui.proactive.characters";
pub const QUIET_UNTIL_KEY: &str = "yui.proactive.quiet_until";
pub const TRIGGERS_KEY: &str = "yui.proactive.triggers";
pub const ACTIVE_APP_KEY: &str = "yui.awareness.active_app";
pub const NOW_PLAYING_KEY: &str = "yui.awareness.now_playing";

pub const PER_HOUR_DEFAULT: u64 = 4;
pub const PER_HOUR_MAX: u64 = 60;
pub const COOLDOWN_DEFAULT: u64 = 10;
pub const AWAY_DEFAULT: u64 = 20;
/// The longest cooldown or away time accepted, in minutes (a day).
pub const MINUTES_MAX: u64 = 24 * 60;
/// The triggers the user can switch off one by one (reminders follow the character's switch).
pub const TRIGGERS: [&str; 5] = ["back", "morning", "night", "perch", "events"];

fn minutes(key: &'static str, v: &Value, min: u64, max: u64) -> Result<()> {
    match v.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(()),
        _ => Err(CoreError::invalid(format!(
            "{key} must be a whole number from {min} to {max}"
        ))),
    }
}

/// `"HH:MM"` (24-hour local time) as a time of day.
pub fn parse_hhmm(s: &str) -> Option<NaiveTime> {
    let (h, m) = s.trim().split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    NaiveTime::from_hms_opt(h.parse().ok()?, m.parse().ok()?, 0)
}

fn hhmm_or_null(key: &'static str, v: &Value) -> Result<()> {
    match v {
        Value::Null => Ok(()),
        Value::String(s) if parse_hhmm(s).is_some() => Ok(()),
        _ => Err(CoreError::invalid(format!(
            "{key} must be a local time \"HH:MM\" (24-hour) or null (off)"
        ))),
    }
}

fn quiet_hours_of(v: &Value) -> Option<(NaiveTime, NaiveTime)> {
    let from = parse_hhmm(v.get("from")?.as_str()?)?;
    let to = parse_hhmm(v.get("to")?.as_str()?)?;
    Some((from, to))
}

fn switch(key: &'static str, v: &Value) -> Result<()> {
    match v.get("enabled").is_some_and(Value::is_boolean) {
        true => Ok(()),
        false => Err(CoreError::invalid(format!(
            "{key} must be {{\"enabled\": true|false}}"
        ))),
    }
}

fn bool_map(key: &'static str, v: &Value, allowed: Option<&[&str]>) -> Result<()> {
    let bad = || CoreError::invalid(format!("{key} must be an object of true|false values"));
    let map = v.as_object().ok_or_else(bad)?;
    for (k, b) in map {
        if !b.is_boolean() {
            return Err(bad());
        }
        if allowed.is_some_and(|a| !a.contains(&k.as_str())) {
            return Err(CoreError::invalid(format!(
                "{key}: unknown trigger {k:?}; the triggers are {}",
                TRIGGERS.join(", ")
            )));
        }
    }
    Ok(())
}

/// Every key of this module, declared once (listed in `settings::KNOWN`).
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: PER_HOUR_KEY,
        kind: "whole number 0..60",
        default: || json!(PER_HOUR_DEFAULT),
        validate: |v| minutes(PER_HOUR_KEY, v, 0, PER_HOUR_MAX),
        doc: "The budget: at most this many proactive turns in any hour, across all characters (a high-importance event may go over it). 0: none but high-importance ones.",
    },
    Setting {
        key: COOLDOWN_KEY,
        kind: "whole number of minutes 0..1440",
        default: || json!(COOLDOWN_DEFAULT),
        validate: |v| minutes(COOLDOWN_KEY, v, 0, MINUTES_MAX),
        doc: "The quiet time after each proactive turn before the next (any character).",
    },
    Setting {
        key: AWAY_KEY,
        kind: "whole number of minutes 1..1440",
        default: || json!(AWAY_DEFAULT),
        validate: |v| minutes(AWAY_KEY, v, 1, MINUTES_MAX),
        doc: "The user counts as away after this long without input; coming back after it is the 'back' trigger.",
    },
    Setting {
        key: QUIET_HOURS_KEY,
        kind: "object {from: \"HH:MM\", to: \"HH:MM\"} or null",
        default: || json!({"from": "23:30", "to": "07:00"}),
        validate: |v| match v.is_null() || quiet_hours_of(v).is_some() {
            true => Ok(()),
            false => Err(CoreError::invalid(format!(
                "{QUIET_HOURS_KEY} must be {{\"from\": \"HH:MM\", \"to\": \"HH:MM\"}} or null (none)"
            ))),
        },
        doc: "Local hours with no proactive turn at all (from may be after to: across midnight). null: none.",
    },
    Setting {
        key: MORNING_KEY,
        kind: "string \"HH:MM\" or null",
        default: || json!("07:30"),
        validate: |v| hhmm_or_null(MORNING_KEY, v),
        doc: "When the morning starts: the user's first activity after it (once a day) is the 'morning' trigger. null: off.",
    },
    Setting {
        key: NIGHT_KEY,
        kind: "string \"HH:MM\" or null",
        default: || json!("23:00"),
        validate: |v| hhmm_or_null(NIGHT_KEY, v),
        doc: "Late at night: once a night, at this time (when the user is there), the 'night' trigger. null: off.",
    },
    Setting {
        key: CHARACTERS_KEY,
        kind: "object {preset_id: true|false}",
        default: || json!({}),
        validate: |v| bool_map(CHARACTERS_KEY, v, None),
        doc: "The proactive switch per character; a character not listed is on. Off: it never speaks up on its own and does not declare remind.",
    },
    Setting {
        key: QUIET_UNTIL_KEY,
        kind: "string RFC 3339 instant or null",
        default: || Value::Null,
        validate: |v| match v {
            Value::Null => Ok(()),
            Value::String(s) if DateTime::parse_from_rfc3339(s).is_ok() => Ok(()),
            _ => Err(CoreError::invalid(format!(
                "{QUIET_UNTIL_KEY} must be an RFC 3339 instant or null (off)"
            ))),
        },
        doc: "Quiet mode: no proactive turn until this instant (the quick controls, the tray and `yui quiet` set it). null: off.",
    },
    Setting {
        key: TRIGGERS_KEY,
        kind: "object {back, morning, night, perch, events: true|false}",
        default: || json!({"back": true, "morning": true, "night": true, "perch": true, "events": true}),
        validate: |v| bool_map(TRIGGERS_KEY, v, Some(&TRIGGERS)),
        doc: "Which triggers may start a proactive turn; one not listed is on.",
    },
    Setting {
        key: ACTIVE_APP_KEY,
        kind: "{\"enabled\": true|false}",
        default: || json!({"enabled": false}),
        validate: |v| switch(ACTIVE_APP_KEY, v),
        doc: "Awareness: the active application's name (never its window title) as a client context line. Off by default.",
    },
    Setting {
        key: NOW_PLAYING_KEY,
        kind: "{\"enabled\": true|false}",
        default: || json!({"enabled": false}),
        validate: |v| switch(NOW_PLAYING_KEY, v),
        doc: "Awareness: what is playing (MPRIS: artist and title) as a client context line. Off by default.",
    },
];

/// The manners' settings as one value, read at the moment of a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub per_hour: u64,
    pub cooldown: chrono::Duration,
    pub away: chrono::Duration,
    pub quiet_hours: Option<(NaiveTime, NaiveTime)>,
    pub morning: Option<NaiveTime>,
    pub night: Option<NaiveTime>,
    pub characters: HashMap<String, bool>,
    pub quiet_until: Option<DateTime<Utc>>,
    pub triggers: HashMap<String, bool>,
}

impl Default for Config {
    fn default() -> Self {
        Self::from_values(&|key| {
            SETTINGS
                .iter()
                .find(|s| s.key == key)
                .map(|s| (s.default)())
        })
    }
}

impl Config {
    /// Read every key now; an unreadable or invalid value reads as its default (manners never
    /// fail a trigger, and a bad value never makes a character chattier than the default).
    pub fn load(store: &Store) -> Self {
        Self::from_values(&|key| {
            let s = SETTINGS.iter().find(|s| s.key == key)?;
            match kv::get(store, key) {
                Ok(Some(v)) if (s.validate)(&v).is_ok() => Some(v),
                _ => Some((s.default)()),
            }
        })
    }

    fn from_values(get: &dyn Fn(&str) -> Option<Value>) -> Self {
        let num = |k: &str, d: u64| get(k).and_then(|v| v.as_u64()).unwrap_or(d);
        let time = |k: &str| get(k).and_then(|v| v.as_str().and_then(parse_hhmm));
        let map = |k: &str| -> HashMap<String, bool> {
            get(k)
                .and_then(|v| v.as_object().cloned())
                .map(|m| {
                    m.into_iter()
                        .filter_map(|(k, v)| v.as_bool().map(|b| (k, b)))
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            per_hour: num(PER_HOUR_KEY, PER_HOUR_DEFAULT),
            cooldown: chrono::Duration::minutes(num(COOLDOWN_KEY, COOLDOWN_DEFAULT) as i64),
            away: chrono::Duration::minutes(num(AWAY_KEY, AWAY_DEFAULT) as i64),
            quiet_hours: get(QUIET_HOURS_KEY).as_ref().and_then(quiet_hours_of),
            morning: time(MORNING_KEY),
            night: time(NIGHT_KEY),
            characters: map(CHARACTERS_KEY),
            quiet_until: get(QUIET_UNTIL_KEY)
                .and_then(|v| {
                    v.as_str()
                        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
                })
                .map(|t| t.with_timezone(&Utc)),
            triggers: map(TRIGGERS_KEY),
        }
    }

    /// Whether `preset_id` may speak up on its own (on unless switched off).
    pub fn character_on(&self, preset_id: &str) -> bool {
        self.characters.get(preset_id).copied().unwrap_or(true)
    }

    /// Whether the trigger `id` (one of [`TRIGGERS`]) is on.
    pub fn trigger_on(&self, id: &str) -> bool {
        self.triggers.get(id).copied().unwrap_or(true)
    }
}

/// Whether `preset_id`'s proactive switch is on now (an unreadable value reads as on).
pub fn character_on(store: &Store, preset_id: &str) -> bool {
    Config::load(store).character_on(preset_id)
}

/// Switch `preset_id`'s proactive turns on or off.
pub fn set_character(store: &Store, preset_id: &str, on: bool) -> Result<()> {
    let mut map = match kv::get(store, CHARACTERS_KEY)? {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    map.insert(preset_id.to_string(), Value::Bool(on));
    kv::put(store, CHARACTERS_KEY, &Value::Object(map))
}

/// Quiet mode until `until` (`None`: off).
pub fn set_quiet_until(store: &Store, until: Option<DateTime<Utc>>) -> Result<()> {
    let v = until.map_or(Value::Null, |t| {
        Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    });
    kv::put(store, QUIET_UNTIL_KEY, &v)
}

/// What `yui quiet` and the quick controls ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuietFor {
    /// Quiet for this long from now.
    For(chrono::Duration),
    /// Quiet until the next morning starts (the morning setting, else 07:00 local).
    Tomorrow,
    Off,
}

impl QuietFor {
    /// `1h`, `30m`, `90min`, `2h`, `tomorrow`, `off`.
    pub fn parse(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        let bad = || {
            CoreError::invalid(format!(
                "{s:?} is not a quiet time: say how long (30m, 1h, 2h), tomorrow, or off"
            ))
        };
        match t.as_str() {
            "off" => return Ok(Self::Off),
            "tomorrow" => return Ok(Self::Tomorrow),
            _ => {}
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: i64 = t[..split].parse().map_err(|_| bad())?;
        let mins = match &t[split..] {
            "m" | "min" | "mins" | "minutes" => n,
            "h" | "hour" | "hours" => n * 60,
            _ => return Err(bad()),
        };
        if !(1..=7 * 24 * 60).contains(&mins) {
            return Err(CoreError::invalid(
                "a quiet time is from 1 minute to 7 days".to_string(),
            ));
        }
        Ok(Self::For(chrono::Duration::minutes(mins)))
    }

    /// The instant quiet mode ends, from `now` (`None`: off).
    pub fn until(self, clock: &dyn crate::clock::Clock, cfg: &Config) -> Option<DateTime<Utc>> {
        match self {
            Self::Off => None,
            Self::For(d) => Some(clock.now() + d),
            Self::Tomorrow => {
                let local = clock.local_now();
                let at = cfg
                    .morning
                    .unwrap_or_else(|| NaiveTime::from_hms_opt(7, 0, 0).expect("a valid time"));
                let day = local.date_naive() + chrono::Duration::days(1);
                let naive = day.and_time(at);
                // The offset of now: across a DST change the morning is off by that hour at most.
                let t = naive - chrono::Duration::seconds(local.offset().local_minus_utc() as i64);
                Some(DateTime::from_naive_utc_and_offset(t, Utc))
            }
        }
    }
}

/// Apply `yui quiet …`: store the quiet instant and return it.
pub fn quiet(
    store: &Store,
    clock: &dyn crate::clock::Clock,
    what: QuietFor,
) -> Result<Option<DateTime<Utc>>> {
    let until = what.until(clock, &Config::load(store));
    set_quiet_until(store, until)?;
    Ok(until)
}
