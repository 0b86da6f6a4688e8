//! A stand-in for the user's mouse on a wlroots compositor (sway), for tests/e2e/wayland.sh: a
//! virtual pointer (zwlr_virtual_pointer_v1) that presses at one point of the output, moves in
//! steps to another and lets go: a drag as a hand makes it.
//!
//!   pointer drag X1 Y1 X2 Y2 [WIDTH HEIGHT]    (the output's size, 1280 720 by default)

use std::time::Duration;
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_pointer, wl_registry, wl_seat};
use wayland_client::{delegate_noop, Connection, Dispatch, QueueHandle};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};

/// The left button (linux/input-event-codes.h BTN_LEFT).
const BTN_LEFT: u32 = 0x110;
const STEPS: i32 = 20;

struct State;

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}
delegate_noop!(State: ignore wl_seat::WlSeat);
delegate_noop!(State: ignore ZwlrVirtualPointerManagerV1);
delegate_noop!(State: ignore ZwlrVirtualPointerV1);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = |i: usize, default: u32| -> u32 {
        args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    if args.first().map(String::as_str) != Some("drag") || args.len() < 5 {
        return Err("usage: pointer drag X1 Y1 X2 Y2 [WIDTH HEIGHT]".into());
    }
    let (x1, y1, x2, y2) = (n(1, 0), n(2, 0), n(3, 0), n(4, 0));
    let (w, h) = (n(5, 1280), n(6, 720));
    let conn = Connection::connect_to_env()?;
    let (globals, mut queue) = registry_queue_init::<State>(&conn)?;
    let qh = queue.handle();
    let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=7, ())?;
    let manager: ZwlrVirtualPointerManagerV1 = globals.bind(&qh, 1..=2, ())?;
    let pointer = manager.create_virtual_pointer(Some(&seat), &qh, ());
    // A pointer that appears just now is new to the clients: give them time to take it.
    queue.roundtrip(&mut State)?;
    std::thread::sleep(Duration::from_millis(
        std::env::var("YUI_POINTER_SETTLE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    ));
    let mut time = 0u32;
    let mut send = |f: &dyn Fn(u32), pause: u64| -> Result<(), Box<dyn std::error::Error>> {
        time += 10;
        f(time);
        pointer.frame();
        queue.roundtrip(&mut State)?;
        std::thread::sleep(Duration::from_millis(pause));
        Ok(())
    };
    // Arrive, let the client see the pointer enter, press, travel, let go.
    send(&|t| pointer.motion_absolute(t, x1, y1, w, h), 400)?;
    send(
        &|t| pointer.button(t, BTN_LEFT, wl_pointer::ButtonState::Pressed),
        150,
    )?;
    for i in 1..=STEPS {
        let x = x1 as i32 + (x2 as i32 - x1 as i32) * i / STEPS;
        let y = y1 as i32 + (y2 as i32 - y1 as i32) * i / STEPS;
        send(
            &|t| pointer.motion_absolute(t, x as u32, y as u32, w, h),
            40,
        )?;
    }
    send(
        &|t| pointer.button(t, BTN_LEFT, wl_pointer::ButtonState::Released),
        300,
    )?;
    pointer.destroy();
    queue.roundtrip(&mut State)?;
    Ok(())
}
