//! `remind`: the character promises to say something later (`in_minutes` from now, or `at` a
//! local time) and YUI keeps the promise: the reminder is stored (`crate::reminders`), survives
//! restarts, and at its time the stage gives the character a proactive turn
//! (`stage/reminders.rs`). Declared in the main and pet windows of a character whose proactive
//! switch is on (docs/proactive.md, "The remind tool", lists the exact results).

use super::input::{self, Field};
use super::{ClientTool, ToolContext, ToolError, ToolOutput, REMIND};
use crate::clock::Clock;
use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

pub const MISSING_TEXT: &str = "error: missing field text";
pub const INVALID_TEXT: &str = "error: invalid field text";
pub const MISSING_WHEN: &str = "error: give in_minutes or at";
pub const BOTH_WHEN: &str = "error: give in_minutes or at, not both";
pub const INVALID_IN_MINUTES: &str = "error: invalid field in_minutes";
pub const INVALID_AT: &str = "error: invalid field at";
pub const TOO_MANY: &str = "error: too many reminders";
pub const OFF: &str = "error: proactive turns are off";
/// The furthest a reminder may be set, in minutes (a week).
pub const MAX_MINUTES: f64 = 7.0 * 24.0 * 60.0;

/// The `remind` client tool.
pub struct Remind;

#[derive(Debug, Default, Deserialize)]
struct Input {
    #[serde(default)]
    text: Field<String>,
    #[serde(default)]
    in_minutes: Field<f64>,
    #[serde(default)]
    at: Field<String>,
}

/// The instant a call asks for, or the exact result string. Pure: the clock is passed in.
pub fn due_of(args: &Value, clock: &dyn Clock) -> Result<(String, DateTime<Utc>), &'static str> {
    let i: Input = input::parse(args);
    let text = match i.text {
        Field::Absent => return Err(MISSING_TEXT),
        Field::Invalid => return Err(INVALID_TEXT),
        Field::Given(t) if t.trim().is_empty() => return Err(INVALID_TEXT),
        Field::Given(t) if t.trim().chars().count() > crate::reminders::MAX_TEXT => {
            return Err(INVALID_TEXT)
        }
        Field::Given(t) => t.trim().to_string(),
    };
    let now = clock.now();
    let due = match (i.in_minutes, i.at) {
        (Field::Absent, Field::Absent) => return Err(MISSING_WHEN),
        (Field::Absent, at) => at_of(at, clock)?,
        (m, Field::Absent) => {
            let m = m
                .given()
                .filter(|m| m.is_finite() && *m > 0.0 && *m <= MAX_MINUTES)
                .ok_or(INVALID_IN_MINUTES)?;
            now + Duration::milliseconds((m * 60_000.0).round() as i64)
        }
        _ => return Err(BOTH_WHEN),
    };
    Ok((text, due))
}

/// `at`: `HH:MM` (the next time the local clock shows it) or `YYYY-MM-DD HH:MM` (local, ahead,
/// within a week).
fn at_of(at: Field<String>, clock: &dyn Clock) -> Result<DateTime<Utc>, &'static str> {
    let s = at.given().ok_or(INVALID_AT)?;
    let s = s.trim();
    let local = clock.local_now();
    if let Some(t) = crate::manners::parse_hhmm(s) {
        return Ok(crate::manners::rules::next_local(local, t));
    }
    let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M"))
        .map_err(|_| INVALID_AT)?;
    let utc = naive - Duration::seconds(local.offset().local_minus_utc() as i64);
    let due = DateTime::<Utc>::from_naive_utc_and_offset(utc, Utc);
    let now = clock.now();
    if due <= now || due > now + Duration::minutes(MAX_MINUTES as i64) {
        return Err(INVALID_AT);
    }
    Ok(due)
}

/// `ok: reminder set for 14:30` (today), `… for tomorrow 07:00`, `… for 2026-12-09 14:30`.
pub fn ok_text(due: DateTime<Utc>, clock: &dyn Clock) -> String {
    let (d, today) = (clock.local(due), clock.local_now().date_naive());
    let day: NaiveDate = d.date_naive();
    let when = if day == today {
        d.format("%H:%M").to_string()
    } else if Some(day) == today.succ_opt() {
        format!("tomorrow {}", d.format("%H:%M"))
    } else {
        d.format("%Y-%m-%d %H:%M").to_string()
    };
    format!("ok: reminder set for {when}")
}

#[async_trait]
impl ClientTool for Remind {
    fn name(&self) -> &str {
        REMIND
    }

    fn description(&self) -> String {
        "Sets a reminder: at its time you get a turn to say it to the user (unless they are busy \
         or in quiet mode; then it waits). Give in_minutes from now or at a local time, and the \
         text you will be reminded of."
            .into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "maxLength": crate::reminders::MAX_TEXT,
                    "description": "What to remind the user of, in a few words"
                },
                "in_minutes": {
                    "type": "number",
                    "description": "Minutes from now (at most 10080, a week)"
                },
                "at": {
                    "type": "string",
                    "description": "Local time: HH:MM (the next time the clock shows it) or YYYY-MM-DD HH:MM"
                }
            },
            "required": ["text"],
            "additionalProperties": false
        })
    }

    async fn call(
        &self,
        args: Value,
        ctx: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        // The switch is read when the call runs: it may have gone off after the request.
        if !crate::manners::character_on(&ctx.store, &ctx.preset_id) {
            return Ok(OFF.into());
        }
        let (text, due) = match due_of(&args, ctx.clock.as_ref()) {
            Ok(v) => v,
            Err(answer) => return Ok(answer.into()),
        };
        let (store, preset, now) = (ctx.store.clone(), ctx.preset_id.clone(), ctx.clock.now());
        let pending = {
            let (store, preset) = (store.clone(), preset.clone());
            tokio::task::spawn_blocking(move || crate::reminders::pending_of(&store, &preset))
                .await
                .map_err(|e| ToolError::stopped("remind", e))?
                .map_err(ToolError::from)?
        };
        if pending.len() as i64 >= crate::reminders::MAX_PENDING {
            return Ok(TOO_MANY.into());
        }
        tokio::task::spawn_blocking(move || {
            crate::reminders::add(&store, &preset, &text, due, now)
        })
        .await
        .map_err(|e| ToolError::stopped("remind", e))?
        .map_err(ToolError::from)?;
        Ok(ok_text(due, ctx.clock.as_ref()).into())
    }
}
