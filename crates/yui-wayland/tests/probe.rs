//! The probe against real headless compositors: sway offers the overlay layer, weston does not;
//! both name their outputs; a socket where no compositor listens is a failure in words, fast.

mod support;

use std::time::{Duration, Instant};
use yui_domain::display::{CompositorProbe, Probe};
use yui_wayland::Registry;

/// The probe reads `XDG_RUNTIME_DIR` as GTK does; the tests give it the compositor's socket by
/// absolute path instead, so they need not change the environment.
fn ask(c: &support::Compositor) -> Probe {
    Registry.probe(c.runtime_dir.join(&c.display).to_str().unwrap())
}

#[test]
fn sway_offers_the_overlay_layer_and_names_its_output() {
    let sway = support::sway(1280, 720, "");
    match ask(&sway) {
        Probe::LayerShell { outputs } => {
            assert_eq!(outputs.len(), 1, "{outputs:?}");
            assert_eq!(outputs[0].name, "HEADLESS-1");
            assert_eq!((outputs[0].rect.w, outputs[0].rect.h), (1280, 720));
            assert_eq!(
                (outputs[0].rect.x, outputs[0].rect.y, outputs[0].scale),
                (0, 0, 1)
            );
        }
        other => panic!("sway: {other:?}"),
    }
}

#[test]
fn weston_offers_no_overlay_layer() {
    let weston = support::weston(1024, 768, false);
    match ask(&weston) {
        Probe::NoLayerShell { outputs } => {
            assert_eq!(outputs.len(), 1, "{outputs:?}");
            assert_eq!((outputs[0].rect.w, outputs[0].rect.h), (1024, 768));
        }
        other => panic!("weston: {other:?}"),
    }
}

#[test]
fn no_compositor_is_a_failure_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("wayland-9");
    let started = Instant::now();
    match Registry.probe(gone.to_str().unwrap()) {
        Probe::Failed(why) => assert!(why.contains("wayland-9"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(1));
}

/// A socket that accepts and never answers: the start is held up at most the probe's timeout.
#[test]
fn a_compositor_that_never_answers_cannot_hang_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wayland-mute");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let started = Instant::now();
    match Registry.probe(path.to_str().unwrap()) {
        Probe::Failed(why) => assert_eq!(why, "no answer in 2 s"),
        other => panic!("{other:?}"),
    }
    // Bounded by the timeout, not hung: slack for a loaded machine (the suite's compositors and
    // builds run beside it), far below "never".
    let took = started.elapsed();
    assert!(
        took >= yui_wayland::TIMEOUT && took < yui_wayland::TIMEOUT + Duration::from_secs(5),
        "{took:?}"
    );
}
