//! The client context block: what YUI tells the model about this moment on every turn, written by
//! the client (not the user). Format and meaning: docs/client-context.md.
//!
//! ```text
//! [client context]
//! local time: Monday 2026-11-30 10:40 (UTC+01:00)
//! tool switches: relations on, browser off, screen off
//! relation: user: warm; Kai: neutral
//! memory: The user's cat is named Mochi.
//! addressed: Kai spoke to you: "…"
//! [/client context]
//! ```
//!
//! It rides in front of the user's message text in the request only (the transcript stores the
//! message alone), so the cached prefix of the request (system prompt, tools, history) stays the
//! same from turn to turn while the time changes.

use crate::clock::Clock;
use crate::settings;
use crate::store::Store;
use crate::tools::registry::ToolRegistry;
use chrono::{DateTime, FixedOffset};

pub const OPEN: &str = "[client context]";
pub const CLOSE: &str = "[/client context]";

/// One turn's context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientContext {
    /// Local time of the turn (from the clock passed in).
    pub local: DateTime<FixedOffset>,
    /// (switch id, on) for every switchable tool the window declares, in declaration order.
    pub switches: Vec<(&'static str, bool)>,
    /// The whole `relation:` line, when relations are on and there is one.
    pub relation: Option<String>,
    /// Awareness lines (`active app:`, `now playing:`; `manners::aware`), set by the stage.
    pub aware: Vec<String>,
    /// Long-term memory's lines (`memory:`, `summary:`, `earlier:`; `longterm::recall`).
    pub memory: Vec<String>,
    /// Addressed-turn lines (another character's reply addressed to this one).
    pub addressed: Vec<String>,
    /// A proactive turn's lines: why it happens, and that it may stay silent.
    pub proactive: Vec<String>,
}

impl ClientContext {
    /// Read the moment: the clock's local time, each declared switch as it is now, the
    /// `relation:` line. A failure reading a switch reads as off, and a failure building the
    /// relation line leaves it out: the context never fails a turn.
    pub fn build(
        clock: &dyn Clock,
        store: &Store,
        preset_id: &str,
        registry: &ToolRegistry,
    ) -> Self {
        let switches = registry
            .switches()
            .into_iter()
            .map(|s| (s.id, settings::switch_on(store, s.key).unwrap_or(false)))
            .collect();
        let relation = match crate::relations::relation_line(store, preset_id) {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!(error = %e, "relation line left out of the client context");
                None
            }
        };
        Self {
            local: clock.local_now(),
            switches,
            relation,
            aware: Vec::new(),
            memory: Vec::new(),
            addressed: Vec::new(),
            proactive: Vec::new(),
        }
    }

    /// The `tool switches:` line, or `None` when the window declares no switchable tool.
    pub fn switches_line(&self) -> Option<String> {
        if self.switches.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .switches
            .iter()
            .map(|(id, on)| format!("{id} {}", if *on { "on" } else { "off" }))
            .collect();
        Some(format!("tool switches: {}", parts.join(", ")))
    }

    /// The block, lines joined by `\n`, without a trailing newline.
    pub fn render(&self) -> String {
        let mut lines = vec![
            OPEN.to_string(),
            format!(
                "local time: {} ({})",
                self.local.format("%A %Y-%m-%d %H:%M"),
                utc_offset(&self.local)
            ),
        ];
        lines.extend(self.switches_line());
        lines.extend(self.relation.clone());
        lines.extend(self.aware.iter().cloned());
        lines.extend(self.memory.iter().cloned());
        lines.extend(self.addressed.iter().cloned());
        lines.extend(self.proactive.iter().cloned());
        lines.push(CLOSE.to_string());
        lines.join("\n")
    }

    /// The user message as the request carries it: the block, a blank line, the message.
    pub fn wrap(&self, message: &str) -> String {
        format!("{}\n\n{message}", self.render())
    }
}

fn utc_offset(t: &DateTime<FixedOffset>) -> String {
    let secs = t.offset().local_minus_utc();
    let sign = if secs < 0 { '-' } else { '+' };
    let secs = secs.abs();
    format!("UTC{sign}{:02}:{:02}", secs / 3600, (secs % 3600) / 60)
}
