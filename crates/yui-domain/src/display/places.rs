//! Where the user put each character, per backend and per output (`yui.display.places`), for the
//! Wayland backends: `{"<backend>": {"outputs": {"<output>": {"<preset id>": [x, y]}},
//! "last": {"<preset id>": "<output>"}}}`, `x, y` relative to the output's top-left corner
//! (the layer shell's margins; XWayland's X11 pixels less the output's origin).
//!
//! A write touches its own backend's entry only, so a session of one kind never overwrites or
//! wipes another's places; [`restore`] brings a place that is off every current output back on
//! screen. (An X11 session keeps its places in the presets table, as before.)

use super::Backend;
use crate::avatar::geometry::Rect;
use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const KEY: &str = "yui.display.places";

/// One backend's places.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendPlaces {
    /// Output name → preset id → (x, y) relative to that output.
    #[serde(default)]
    pub outputs: BTreeMap<String, BTreeMap<String, (i32, i32)>>,
    /// Preset id → the output it was last put on.
    #[serde(default)]
    pub last: BTreeMap<String, String>,
}

/// Every backend's places, by [`Backend::key`].
pub type Places = BTreeMap<String, BackendPlaces>;

pub fn default_value() -> Value {
    serde_json::json!({})
}

pub fn from_value(v: &Value) -> Result<Places> {
    serde_json::from_value(v.clone()).map_err(|e| {
        CoreError::invalid(format!(
            "{KEY} must be {{\"<backend>\": {{\"outputs\": {{\"<output>\": {{\"<preset>\": [x, y]}}}}, \"last\": {{\"<preset>\": \"<output>\"}}}}}}: {e}"
        ))
    })
}

/// `backend`'s places as stored now (none when never saved; an unreadable entry reads as none,
/// and is logged).
pub fn load(store: &Store, backend: Backend) -> Result<Option<BackendPlaces>> {
    let all = kv::get(store, KEY)?;
    let Some(entry) = all.as_ref().and_then(|v| v.get(backend.key())) else {
        return Ok(None);
    };
    match serde_json::from_value(entry.clone()) {
        Ok(p) => Ok(Some(p)),
        Err(e) => {
            tracing::warn!(backend = backend.key(), error = %e, "saved window places unreadable; placing afresh");
            Ok(None)
        }
    }
}

/// Save `preset`'s place on `output` under `backend`. Only this backend's entry is rewritten:
/// every other backend's is kept as stored, and this backend's places on other outputs stay.
pub fn save(
    store: &Store,
    backend: Backend,
    preset: &str,
    output: &str,
    at: (i32, i32),
) -> Result<()> {
    let mut mine = load(store, backend)?.unwrap_or_default();
    mine.outputs
        .entry(output.to_string())
        .or_default()
        .insert(preset.to_string(), at);
    mine.last.insert(preset.to_string(), output.to_string());
    let mut all = match kv::get(store, KEY)? {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    all.insert(backend.key().to_string(), serde_json::to_value(&mine)?);
    kv::put(store, KEY, &Value::Object(all))
}

/// A current output as placement sees it: its name and its rectangle (the unit of its
/// backend's places).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    pub name: String,
    pub rect: Rect,
}

/// Where a character goes: the output (an index into the current outputs) and its place
/// relative to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub output: usize,
    pub at: (i32, i32),
}

/// Where `preset` opens under `mine` (its backend's places) on `screens`, for a window of
/// `size`: its place on the output it was last put on when that output is here, else its place
/// on the first current output that has one, else `None` (the default row). A place that would
/// leave the window partly off its output is brought back on it.
pub fn restore(
    mine: Option<&BackendPlaces>,
    preset: &str,
    screens: &[Screen],
    size: (u32, u32),
) -> Option<Placed> {
    let mine = mine?;
    let on = |name: &str| screens.iter().position(|s| s.name == name);
    let saved_on = |i: usize| mine.outputs.get(&screens[i].name)?.get(preset).copied();
    let last = mine
        .last
        .get(preset)
        .and_then(|n| on(n))
        .filter(|&i| saved_on(i).is_some());
    let output = last.or_else(|| (0..screens.len()).find(|&i| saved_on(i).is_some()))?;
    let at = saved_on(output)?;
    Some(Placed {
        output,
        at: on_screen(at, size, screens[output].rect),
    })
}

/// `at` (relative to `output`'s corner) moved the least so that a window of `size` is wholly on
/// the output (its top-left corner on it when the window is larger).
pub fn on_screen((x, y): (i32, i32), (w, h): (u32, u32), output: Rect) -> (i32, i32) {
    let max_x = (output.w as i32 - w as i32).max(0);
    let max_y = (output.h as i32 - h as i32).max(0);
    (x.clamp(0, max_x), y.clamp(0, max_y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn screens(names: &[(&str, u32, u32)]) -> Vec<Screen> {
        let mut x = 0;
        names
            .iter()
            .map(|&(n, w, h)| {
                let s = Screen {
                    name: n.into(),
                    rect: Rect::new(x, 0, w, h),
                };
                x += w as i32;
                s
            })
            .collect()
    }

    const BODY: (u32, u32) = (220, 300);

    fn mine(v: Value) -> BackendPlaces {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_place_opens_on_the_output_it_was_last_put_on() {
        let m = mine(json!({
            "outputs": {"DP-1": {"yui": [100, 200]}, "eDP-1": {"yui": [10, 20]}},
            "last": {"yui": "DP-1"}
        }));
        let both = screens(&[("eDP-1", 1920, 1080), ("DP-1", 2560, 1440)]);
        assert_eq!(
            restore(Some(&m), "yui", &both, BODY),
            Some(Placed {
                output: 1,
                at: (100, 200)
            })
        );
        // Undocked: DP-1 is gone; the laptop screen's own place for yui.
        let laptop = screens(&[("eDP-1", 1920, 1080)]);
        assert_eq!(
            restore(Some(&m), "yui", &laptop, BODY),
            Some(Placed {
                output: 0,
                at: (10, 20)
            })
        );
        // Nothing saved for this character here, or under this backend: the default row.
        assert_eq!(restore(Some(&m), "kai", &both, BODY), None);
        assert_eq!(restore(None, "yui", &both, BODY), None);
        let other = screens(&[("HDMI-A-1", 1920, 1080)]);
        assert_eq!(restore(Some(&m), "yui", &other, BODY), None);
    }

    #[test]
    fn a_place_off_its_output_is_brought_back_on_it() {
        let m = mine(json!({"outputs": {"DP-1": {"yui": [2400, 1300]}}, "last": {"yui": "DP-1"}}));
        // The output became smaller (a lower resolution): the window's corner is off it.
        let small = screens(&[("DP-1", 1280, 720)]);
        assert_eq!(
            restore(Some(&m), "yui", &small, BODY),
            Some(Placed {
                output: 0,
                at: (1280 - 220, 720 - 300)
            })
        );
        assert_eq!(
            on_screen((-50, -9), BODY, Rect::new(0, 0, 800, 600)),
            (0, 0)
        );
        assert_eq!(
            on_screen((300, 200), BODY, Rect::new(0, 0, 800, 600)),
            (300, 200)
        );
        // An output smaller than the window: the corner stays on it.
        assert_eq!(on_screen((90, 90), BODY, Rect::new(0, 0, 100, 100)), (0, 0));
    }

    #[test]
    fn places_survive_a_round_trip_and_bad_values_are_refused() {
        let v = json!({"layer-shell": {"outputs": {"HEADLESS-1": {"p1": [5, 6]}}, "last": {"p1": "HEADLESS-1"}}});
        let p = from_value(&v).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        assert!(from_value(&default_value()).unwrap().is_empty());
        for bad in [
            json!([]),
            json!({"x": {"outputs": {"A": {"p": "far"}}}}),
            json!({"x": {"where": 1}}),
        ] {
            assert!(
                from_value(&bad).unwrap_err().message.starts_with(KEY),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_session_of_one_kind_never_touches_anothers_places() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("yui.db")).unwrap();
        save(&store, Backend::Xwayland, "yui", "XWAYLAND0", (300, 400)).unwrap();
        save(&store, Backend::LayerShell, "yui", "HEADLESS-1", (40, 50)).unwrap();
        save(&store, Backend::LayerShell, "yui", "HEADLESS-2", (60, 70)).unwrap();
        save(&store, Backend::LayerShell, "kai", "HEADLESS-1", (1, 2)).unwrap();
        let x = load(&store, Backend::Xwayland).unwrap().unwrap();
        assert_eq!(x.outputs["XWAYLAND0"]["yui"], (300, 400));
        assert_eq!(x.last["yui"], "XWAYLAND0");
        let l = load(&store, Backend::LayerShell).unwrap().unwrap();
        assert_eq!(
            l.outputs["HEADLESS-1"]["yui"],
            (40, 50),
            "another output's place is kept"
        );
        assert_eq!(l.outputs["HEADLESS-2"]["yui"], (60, 70));
        assert_eq!(l.last["yui"], "HEADLESS-2");
        assert_eq!(l.outputs["HEADLESS-1"]["kai"], (1, 2));
        assert_eq!(load(&store, Backend::Wayland).unwrap(), None);
        // An entry this version cannot read (another version's) reads as none here, and is kept
        // as it is when another backend saves.
        let odd = json!({"xwayland": {"future": true}, "layer-shell": {"outputs": {}, "last": {}}});
        kv::put(&store, KEY, &odd).unwrap();
        assert_eq!(load(&store, Backend::Xwayland).unwrap(), None);
        save(&store, Backend::LayerShell, "yui", "HEADLESS-1", (7, 8)).unwrap();
        let v = kv::get(&store, KEY).unwrap().unwrap();
        assert_eq!(v["xwayland"], json!({"future": true}));
        assert_eq!(
            v["layer-shell"]["outputs"]["HEADLESS-1"]["yui"],
            json!([7, 8])
        );
    }
}
