//! Awareness: what the user is doing, told to the model as client context lines, each behind
//! its own switch, both off by default (docs/client-context.md, docs/proactive.md):
//!
//! - `active app: "<name>"` (`yui.awareness.active_app`): the active application's name (its
//!   window class, never a window title; while YUI's own window is active, the app the user was
//!   in before), from the desktop host;
//! - `now playing: "<artist> – <title>"` (`yui.awareness.now_playing`): what a media player
//!   plays (MPRIS on the session bus, [`super::mpris`]), only while it plays.
//!
//! Changing songs is never a trigger by itself: the lines only ride on turns that happen anyway.
//! A source that cannot tell leaves its line out (logged); it never fails a turn.

use crate::avatar::HostError;
use crate::store::Store;

/// What a media player plays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NowPlaying {
    /// The player's bus name after `org.mpris.MediaPlayer2.` (`vlc`, `spotify`).
    pub player: String,
    /// The artists, joined with ", ".
    pub artist: Option<String>,
    pub title: String,
}

/// The platform's answers; each defaults to "cannot tell".
pub trait Awareness: Send + Sync {
    fn active_app(&self) -> Result<Option<String>, HostError> {
        Ok(None)
    }
    fn now_playing(&self) -> Result<Option<NowPlaying>, HostError> {
        Ok(None)
    }
    /// The now-playing switch is `on`: start or stop watching the players (nothing listens on
    /// the bus while it is off).
    fn watch_playing(&self, _on: bool) {}
}

/// No platform: nothing to tell.
pub struct Unaware;
impl Awareness for Unaware {}

/// The lines for a turn, as the switches in `store` allow.
pub fn lines(store: &Store, aw: &dyn Awareness) -> Vec<String> {
    let on = |key| switch_on(store, key);
    let mut out = Vec::new();
    if on(super::ACTIVE_APP_KEY) {
        match aw.active_app() {
            Ok(Some(app)) => out.push(active_line(&app)),
            Ok(None) => {}
            Err(e) => tracing::debug!(error = %e, "active app left out of the client context"),
        }
    }
    if on(super::NOW_PLAYING_KEY) {
        match aw.now_playing() {
            Ok(Some(p)) => out.push(playing_line(&p)),
            Ok(None) => {}
            Err(e) => tracing::debug!(error = %e, "now playing left out of the client context"),
        }
    }
    out
}

/// An awareness switch (`{"enabled": bool}`; unreadable or unset reads as off).
pub fn switch_on(store: &Store, key: &str) -> bool {
    crate::store::kv::get(store, key)
        .ok()
        .flatten()
        .and_then(|v| v.get("enabled").and_then(serde_json::Value::as_bool))
        .unwrap_or(false)
}

/// `active app: "Firefox"`.
pub fn active_line(app: &str) -> String {
    format!("active app: {}", json(app))
}

/// `now playing: "Artist – Title"` (the title alone when no artist is given).
pub fn playing_line(p: &NowPlaying) -> String {
    let text = match &p.artist {
        Some(a) => format!("{a} – {}", p.title),
        None => p.title.clone(),
    };
    format!("now playing: {}", json(&text))
}

/// A JSON string of at most 120 characters, as other programs' text is given to the model.
fn json(s: &str) -> String {
    let cut: String = s.chars().take(120).collect();
    let cut = if cut.len() < s.len() {
        format!("{cut}…")
    } else {
        cut
    };
    serde_json::Value::String(cut).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_strings_and_a_missing_artist_leaves_the_title() {
        assert_eq!(active_line("Firefox"), r#"active app: "Firefox""#);
        let p = NowPlaying {
            player: "vlc".into(),
            artist: Some("Nujabes".into()),
            title: "Aruarian \"Dance\"".into(),
        };
        assert_eq!(
            playing_line(&p),
            r#"now playing: "Nujabes – Aruarian \"Dance\"""#
        );
        let p = NowPlaying { artist: None, ..p };
        assert_eq!(playing_line(&p), r#"now playing: "Aruarian \"Dance\"""#);
        assert!(json(&"x".repeat(300)).ends_with("…\""));
    }
}
