use super::*;
use std::cell::Cell;

/// A compositor that answers `answer` and counts how often it was asked.
struct Fake {
    answer: Probe,
    asked: Cell<usize>,
}

impl CompositorProbe for Fake {
    fn probe(&self, wayland_display: &str) -> Probe {
        assert!(!wayland_display.is_empty());
        self.asked.set(self.asked.get() + 1);
        self.answer.clone()
    }
}

fn fake(answer: Probe) -> Fake {
    Fake {
        answer,
        asked: Cell::new(0),
    }
}

fn out() -> Vec<Output> {
    vec![Output {
        name: "HEADLESS-1".into(),
        rect: Rect::new(0, 0, 1280, 720),
        scale: 1,
    }]
}

const ANSWERS: [fn() -> Probe; 3] = [
    || Probe::LayerShell { outputs: out() },
    || Probe::NoLayerShell { outputs: out() },
    || Probe::Failed("connection refused".into()),
];

fn session(wl: bool, x: bool, gdk: Option<&str>) -> Session {
    let env = |k: &str| match k {
        "WAYLAND_DISPLAY" if wl => Some("wayland-1".to_string()),
        "DISPLAY" if x => Some(":0".to_string()),
        "GDK_BACKEND" => gdk.map(str::to_string),
        "XDG_SESSION_TYPE" if wl => Some("wayland".to_string()),
        _ => None,
    };
    Session::from_env(env)
}

fn run(pref: Preference, s: &Session, answer: Probe) -> (Choice, usize) {
    let f = fake(answer);
    let c = decide(pref, s, &f);
    (c, f.asked.get())
}

use Backend::*;
use Preference::{Auto, Wayland as PrefWayland, X11 as PrefX11};

#[test]
fn the_usual_desktops() {
    let kde = session(true, true, None);
    let (c, asked) = run(Auto, &kde, ANSWERS[0]());
    assert_eq!((c.backend, asked), (LayerShell, 1));
    assert_eq!(c.outputs, out());
    assert_eq!(
        c.reason.to_string(),
        "the compositor offers the overlay layer (zwlr_layer_shell_v1)"
    );
    assert_eq!(c.note(), None);

    let gnome = session(true, true, None);
    let (c, _) = run(Auto, &gnome, ANSWERS[1]());
    assert_eq!(c.backend, Xwayland);
    assert_eq!(c.backend.gdk_backend(), "x11");
    assert_eq!(
        c.reason.to_string(),
        "the compositor offers no overlay layer (zwlr_layer_shell_v1)"
    );
    assert_eq!(c.note(), Some(XWAYLAND_NOTE));
    // XWayland's places are in X11 coordinates: the compositor's outputs are not kept.
    assert!(c.outputs.is_empty());

    let x11 = session(false, true, None);
    let (c, asked) = run(Auto, &x11, ANSWERS[0]());
    assert_eq!((c.backend, asked), (X11, 0));
    assert_eq!(
        c.reason.to_string(),
        "this is no Wayland session (WAYLAND_DISPLAY is unset)"
    );
}

#[test]
fn the_setting_wins_where_the_session_has_what_it_names() {
    let both = session(true, true, None);
    let (c, asked) = run(PrefX11, &both, ANSWERS[0]());
    assert_eq!(
        (c.backend, asked),
        (Xwayland, 0),
        "x11 never asks the compositor"
    );
    assert_eq!(c.reason.to_string(), "yui.display.backend is x11");

    let (c, _) = run(PrefWayland, &both, ANSWERS[1]());
    assert_eq!(
        c.backend, Wayland,
        "wayland without the layer: plain windows"
    );
    assert_eq!(
        c.reason.to_string(),
        "yui.display.backend is wayland; the compositor offers no overlay layer (zwlr_layer_shell_v1)"
    );
    assert!(c.note().is_some());

    // x11 asked for where there is no XWayland: the Wayland choice, said so.
    let no_x = session(true, false, None);
    let (c, _) = run(PrefX11, &no_x, ANSWERS[0]());
    assert_eq!(c.backend, LayerShell);
    assert_eq!(
        c.reason.to_string(),
        "yui.display.backend is x11, but the session has no XWayland (DISPLAY is unset); the compositor offers the overlay layer (zwlr_layer_shell_v1)"
    );

    // wayland asked for in an X11 session.
    let (c, _) = run(PrefWayland, &session(false, true, None), ANSWERS[0]());
    assert_eq!(c.backend, X11);
    assert_eq!(
        c.reason.to_string(),
        "yui.display.backend is wayland, but this is no Wayland session (WAYLAND_DISPLAY is unset)"
    );
}

#[test]
fn the_users_own_gdk_backend_counts_under_auto_only() {
    let by_hand = session(true, true, Some("x11"));
    let (c, asked) = run(Auto, &by_hand, ANSWERS[0]());
    assert_eq!((c.backend, asked), (Xwayland, 0));
    assert_eq!(
        c.reason.to_string(),
        "GDK_BACKEND=x11 was set before YUI started"
    );
    // The setting is YUI's own and deliberate: it wins over a leftover variable.
    let (c, _) = run(PrefWayland, &by_hand, ANSWERS[0]());
    assert_eq!(c.backend, LayerShell);

    let (c, _) = run(Auto, &session(true, true, Some("wayland")), ANSWERS[1]());
    assert_eq!(c.backend, Wayland);
    assert_eq!(
        c.reason.to_string(),
        "GDK_BACKEND=wayland was set before YUI started; the compositor offers no overlay layer (zwlr_layer_shell_v1)"
    );
    // A GDK_BACKEND naming what the session lacks is GTK's failure, not a choice.
    let (c, _) = run(Auto, &session(true, false, Some("x11")), ANSWERS[0]());
    assert_eq!(c.backend, LayerShell);
}

#[test]
fn a_compositor_that_cannot_be_asked() {
    let (c, _) = run(Auto, &session(true, true, None), ANSWERS[2]());
    assert_eq!(c.backend, Xwayland);
    assert_eq!(
        c.reason.to_string(),
        "the compositor could not be asked what it offers (connection refused)"
    );
    let (c, _) = run(Auto, &session(true, false, None), ANSWERS[2]());
    assert_eq!(c.backend, Wayland);
    assert_eq!(
        c.reason.to_string(),
        "the compositor could not be asked what it offers (connection refused), and the session has no XWayland (DISPLAY is unset)"
    );
}

/// Every combination of setting, session, user variable and answer: the backend is one the
/// session has, the layer only where offered, the setting honoured where it can be, and the
/// compositor asked only in a Wayland session where its answer matters.
#[test]
fn every_combination_is_one_the_session_can_show() {
    let prefs = [Auto, PrefX11, PrefWayland];
    let gdks = [None, Some("x11"), Some("wayland"), Some("wayland,x11")];
    let mut seen = 0;
    for pref in prefs {
        for wl in [false, true] {
            for x in [false, true] {
                for gdk in gdks {
                    for (i, answer) in ANSWERS.iter().enumerate() {
                        let s = session(wl, x, gdk);
                        let (c, asked) = run(pref, &s, answer());
                        let ctx = format!("{pref:?} wl={wl} x={x} gdk={gdk:?} answer={i} -> {c:?}");
                        seen += 1;
                        assert_eq!(c.preference, pref, "{ctx}");
                        assert!(!c.reason.to_string().is_empty(), "{ctx}");
                        match c.backend {
                            X11 => assert!(!wl, "{ctx}"),
                            Xwayland => assert!(wl && x, "{ctx}"),
                            LayerShell => assert!(wl && i == 0, "{ctx}"),
                            Wayland => assert!(wl && i != 0, "{ctx}"),
                        }
                        assert!(asked <= 1, "{ctx}");
                        let x_wanted =
                            pref == PrefX11 || (pref == Auto && s.user_backend() == Some("x11"));
                        assert_eq!(asked == 1, wl && !(x && x_wanted), "{ctx}");
                        if wl && x && pref == PrefX11 {
                            assert_eq!(c.backend, Xwayland, "{ctx}");
                        }
                        if wl && pref == PrefWayland {
                            assert!(matches!(c.backend, LayerShell | Wayland), "{ctx}");
                        }
                        if wl && x && pref == Auto && gdk.is_none() {
                            let want = if i == 0 { LayerShell } else { Xwayland };
                            assert_eq!(c.backend, want, "{ctx}");
                        }
                        if c.backend != LayerShell && c.backend != Wayland {
                            assert!(c.outputs.is_empty(), "{ctx}");
                        }
                    }
                }
            }
        }
    }
    assert_eq!(seen, 3 * 2 * 2 * 4 * 3);
}

#[test]
fn the_setting_reads_three_words_and_refuses_others() {
    assert_eq!(Preference::from_value(&json!("auto")).unwrap(), Auto);
    assert_eq!(Preference::from_value(&json!("x11")).unwrap(), PrefX11);
    assert_eq!(
        Preference::from_value(&json!("wayland")).unwrap(),
        PrefWayland
    );
    assert_eq!(Preference::from_value(&default_value()).unwrap(), Auto);
    for bad in [
        json!("X11"),
        json!("gnome"),
        json!(1),
        json!({"backend": "x11"}),
    ] {
        let e = Preference::from_value(&bad).unwrap_err();
        assert_eq!(
            e.message,
            "yui.display.backend must be \"auto\", \"x11\" or \"wayland\""
        );
    }
}

#[test]
fn empty_variables_are_unset() {
    let s = Session::from_env(|k| match k {
        "WAYLAND_DISPLAY" => Some(" ".into()),
        "DISPLAY" => Some(String::new()),
        _ => None,
    });
    assert_eq!(s, Session::default());
}

#[test]
fn the_stored_preference_is_read_before_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("yui.db");
    assert_eq!(stored_preference(&db), Auto, "no file yet");
    let store = crate::Store::open(&db).unwrap();
    assert_eq!(stored_preference(&db), Auto, "never set");
    crate::store::kv::put(&store, KEY, &json!("x11")).unwrap();
    assert_eq!(stored_preference(&db), PrefX11);
    crate::store::kv::put(&store, KEY, &json!("gnome")).unwrap();
    assert_eq!(
        stored_preference(&db),
        Auto,
        "a value this version cannot read"
    );
    std::fs::write(dir.path().join("junk.db"), b"not sqlite").unwrap();
    assert_eq!(stored_preference(&dir.path().join("junk.db")), Auto);
}
