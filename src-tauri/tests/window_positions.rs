//! Character window positions on the mock runtime: a move is written once the window rests, and
//! Quit writes a move made just before it (whose debounced save has not run yet).

use crate::support;

use std::time::Duration;
use support::{harness, window};
use tauri::test::MockRuntime;
use tauri::{PhysicalPosition, WebviewWindow, WindowEvent};
use yui_app::windows;
use yui_core::presets;
use yui_core::Store;

/// What the window manager reports when the user drags `w` to (x, y).
fn moved(w: &WebviewWindow<MockRuntime>, x: i32, y: i32) {
    windows::on_window_event(
        &w.as_ref().window(),
        &WindowEvent::Moved(PhysicalPosition::new(x, y)),
    );
}

fn position(store: &Store, id: &str) -> (Option<i32>, Option<i32>) {
    let p = presets::get(store, id).unwrap();
    (p.pos_x, p.pos_y)
}

#[test]
fn a_move_is_written_once_the_window_rests() {
    let h = harness();
    let pet = window(&h, "pet-kai");
    moved(&pet, 10, 20);
    moved(&pet, 300, 400);
    // Not on every pixel: nothing written while the window still moves.
    assert_eq!(position(&h.store, "kai"), (None, None));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(position(&h.store, "kai"), (Some(300), Some(400)));
}

#[test]
fn quit_writes_the_moves_of_the_last_moments() {
    let h = harness();
    let main = window(&h, "main");
    let pet = window(&h, "pet-kai");
    let main_id = presets::main_preset(&h.store).unwrap().id;
    moved(&main, 111, 222);
    moved(&pet, 333, 444);
    assert_eq!(position(&h.store, &main_id), (None, None));
    // The mock runtime cannot exit (`request_exit` is unimplemented there and panics): what counts
    // is that the positions were written before the exit was asked for.
    let handle = h.app.handle().clone();
    let quit = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        yui_app::tray::quit(&handle)
    }));
    assert!(quit.is_err(), "the mock runtime refuses to exit");
    assert_eq!(position(&h.store, &main_id), (Some(111), Some(222)));
    assert_eq!(position(&h.store, "kai"), (Some(333), Some(444)));
}
