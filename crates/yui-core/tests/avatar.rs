//! The avatar executor and its tools over an in-memory desktop: every action and result word,
//! following the perch, standing up and sitting back, look at each target, monitor numbering,
//! the screen switch, own windows hidden for a capture. (The same against a real X server:
//! crates/yui-x11/tests/.)

use crate::avatar_support;

use avatar_support::*;
use base64::Engine as _;
use serde_json::{json, Value};
use std::sync::Arc;
use yui_core::avatar::body::{Action, Outcome};
use yui_core::avatar::geometry::{self as geo, Side, SIT_SINK};
use yui_core::avatar::{Activity, Rect};
use yui_core::clock::SystemClock;
use yui_core::settings;
use yui_core::tools::avatar::{BodyActionTool, LookTool};
use yui_core::tools::{ToolContext, ToolOutput};
use yui_core::turn::CancellationToken;
use yui_core::WindowKind;

fn sit(app: &str) -> Action {
    Action::SitOnWindow { app: app.into() }
}

/// Where a body of [`BODY`] sits on a perch whose top edge is at `top`.
fn seat_y(top: i32) -> i32 {
    top + SIT_SINK - BODY.1 as i32
}

fn ctx(r: &Rig) -> ToolContext {
    ToolContext {
        store: r.store.clone(),
        clock: Arc::new(SystemClock),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "t1".into(),
        call: Default::default(),
    }
}

async fn body_action(r: &Rig, args: Value) -> String {
    let tool = BodyActionTool::shared(Some(r.avatar.clone()));
    tool.call(args, &ctx(r), CancellationToken::new())
        .await
        .unwrap()
        .as_text()
        .to_string()
}

async fn look(r: &Rig, args: Value) -> ToolOutput {
    LookTool::shared(Some(r.avatar.clone()))
        .call(args, &ctx(r), CancellationToken::new())
        .await
        .unwrap()
}

#[tokio::test]
async fn sit_on_window_ends_on_its_top_edge_ok() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    let (x, y) = r.body.pos();
    assert_eq!(y, seat_y(500));
    assert!(
        (300..=300 + 800 - BODY.0 as i32).contains(&x),
        "x {x} over the edge"
    );
    let s = r.avatar.state();
    assert_eq!(s.state, Activity::Sitting);
    assert_eq!(s.window.as_ref().unwrap().app, "XTerm");
    assert_eq!(s.monitor, Some(1));
    // The glide took several frames, not one jump.
    assert!(r.body.placed.lock().unwrap().len() > 1);
}

#[tokio::test]
async fn sit_on_window_matches_title_case_insensitively_and_prefers_exact_class() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("NOTES")).await, Outcome::Ok);
    assert_eq!(r.avatar.state().window.unwrap().app, "Gedit");
    // "xterm" is XTerm's exact class even though another window's title contains it.
    r.desk.edit(|d| {
        d.windows.push(window(
            3,
            "Firefox",
            "xterm docs",
            Rect::new(2100, 300, 700, 600),
        ))
    });
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    assert_eq!(r.avatar.state().window.unwrap().app, "XTerm");
}

#[tokio::test]
async fn sit_on_window_not_found() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("blender")).await, Outcome::NotFound);
    assert_eq!(
        body_action(&r, json!({"action":"sit_on_window","app":"blender"})).await,
        "not_found"
    );
}

#[tokio::test]
async fn sit_on_own_window_is_not_found() {
    let r = rig();
    r.desk.edit(|d| {
        let mut w = window(9, "yui-app", "YUI — Yui", Rect::new(100, 600, 220, 300));
        w.own = true;
        d.windows.push(w);
    });
    assert_eq!(r.avatar.act(sit("yui")).await, Outcome::NotFound);
}

#[tokio::test]
async fn sit_on_window_blocked_when_fullscreen_maximized_minimized_or_covered() {
    for (what, f) in [
        (
            "fullscreen",
            (|w: &mut yui_core::avatar::DesktopWindow| w.fullscreen = true) as fn(&mut _),
        ),
        ("maximized", |w| w.maximized = true),
        ("minimized", |w| w.hidden = true),
    ] {
        let r = rig();
        r.desk.window_mut(1, f);
        assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Blocked, "{what}");
        assert_eq!(r.body.pos(), (1600, 740), "{what}: did not move");
    }
    // Covered: a window above spans the whole top edge.
    let r = rig();
    r.desk.edit(|d| {
        d.windows
            .push(window(5, "Gimp", "img", Rect::new(250, 300, 900, 500)))
    });
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Blocked);
    assert_eq!(
        body_action(&r, json!({"action":"sit_on_window","app":"xterm"})).await,
        "blocked"
    );
    // Touching the top of the screen: no room above the edge.
    let r = rig();
    r.desk.window_mut(1, |w| w.frame.y = 100);
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Blocked);
}

#[tokio::test]
async fn follows_a_moved_window() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    let before = r.body.pos();
    r.desk.window_mut(1, |w| {
        w.frame.x += 150;
        w.frame.y += 100;
    });
    assert!(
        eventually(|| r.body.pos() == (before.0 + 150, seat_y(600))).await,
        "{:?}",
        r.body.pos()
    );
    let s = r.avatar.state();
    assert_eq!(
        (s.state, s.x, s.y),
        (Activity::Sitting, Some(before.0 + 150), Some(seat_y(600)))
    );
}

#[tokio::test]
async fn stands_up_when_the_window_closes() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    r.desk.edit(|d| d.windows.retain(|w| w.id != 1));
    assert!(eventually(|| r.avatar.state().state == Activity::Standing).await);
    assert_eq!(r.body.pos().1, 1040 - BODY.1 as i32, "on the floor");
    assert_eq!(r.avatar.state().waiting_for, None);
}

#[tokio::test]
async fn stands_up_when_the_window_goes_fullscreen_and_sits_back_after() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    r.desk.window_mut(1, |w| w.fullscreen = true);
    assert!(eventually(|| r.avatar.state().state == Activity::Standing).await);
    assert_eq!(r.body.pos().1, 1040 - BODY.1 as i32);
    assert_eq!(r.avatar.state().waiting_for.unwrap().app, "XTerm");
    r.desk.window_mut(1, |w| w.fullscreen = false);
    assert!(eventually(|| r.avatar.state().state == Activity::Sitting).await);
    assert_eq!(r.body.pos().1, seat_y(500));
}

#[tokio::test]
async fn stands_up_when_the_window_is_minimized_maximized_or_covered() {
    for what in ["minimized", "maximized", "covered"] {
        let r = rig();
        assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
        match what {
            "minimized" => r.desk.window_mut(1, |w| w.hidden = true),
            "maximized" => r.desk.window_mut(1, |w| w.maximized = true),
            _ => r.desk.edit(|d| {
                d.windows
                    .push(window(7, "Gimp", "x", Rect::new(200, 300, 1000, 700)))
            }),
        }
        assert!(
            eventually(|| r.avatar.state().state == Activity::Standing).await,
            "{what}"
        );
        assert_eq!(r.body.pos().1, 1040 - BODY.1 as i32, "{what}");
    }
}

#[tokio::test]
async fn move_to_each_spot_of_each_monitor() {
    let r = rig();
    for m in [1u32, 2] {
        let wa = two_monitors()[m as usize - 1].work_area;
        for spot in geo::Spot::ALL {
            let out = r
                .avatar
                .act(Action::MoveTo {
                    spot: spot.name().into(),
                    monitor: Some(m),
                })
                .await;
            assert_eq!(out, Outcome::Ok, "{} on {m}", spot.name());
            assert_eq!(r.body.pos(), geo::spot_position(spot, wa, BODY));
            let s = r.avatar.state();
            assert_eq!((s.state, s.monitor), (Activity::Standing, Some(m)));
            assert_eq!(s.spot.as_deref(), Some(spot.name()));
        }
    }
    // The spots themselves: corners with the margin, inside the work area.
    let wa = two_monitors()[1].work_area;
    assert_eq!(
        geo::spot_position(geo::Spot::BottomRight, wa, BODY),
        (3840 - 200 - 16, 1040 - 300)
    );
    assert_eq!(
        geo::spot_position(geo::Spot::TopLeft, wa, BODY),
        (1920 + 16, 16)
    );
}

#[tokio::test]
async fn move_to_without_monitor_stays_on_the_bodys_display() {
    let r = rig_with(desktop(), FakeBody::at((2500, 740)));
    let out = body_action(&r, json!({"action":"move_to","spot":"bottom_left"})).await;
    assert_eq!(out, "ok");
    assert_eq!(r.avatar.state().monitor, Some(2));
}

#[tokio::test]
async fn move_to_unknown_spot_not_found_and_saved_spot_ok() {
    let r = rig();
    assert_eq!(
        body_action(&r, json!({"action":"move_to","spot":"kitchen"})).await,
        "not_found"
    );
    settings::set(
        &r.store,
        "yui.avatar",
        &json!({"spots": {"Kitchen": {"monitor": 2, "x": 100, "y": 50}}}),
    )
    .unwrap();
    assert_eq!(
        body_action(&r, json!({"action":"move_to","spot":"kitchen"})).await,
        "ok"
    );
    assert_eq!(r.body.pos(), (1920 + 100, 50));
}

#[tokio::test]
async fn move_to_invalid_monitor() {
    let r = rig();
    for m in [json!(3), json!(0), json!(-1), json!("2"), json!(1.5)] {
        let out = body_action(&r, json!({"action":"move_to","spot":"center","monitor": m})).await;
        assert_eq!(out, "error: invalid field monitor", "{m}");
    }
}

#[tokio::test]
async fn stand_goes_to_the_floor_below() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    let x = r.body.pos().0;
    assert_eq!(body_action(&r, json!({"action":"stand"})).await, "ok");
    assert_eq!(r.body.pos(), (x, 1040 - 300));
    assert_eq!(r.avatar.state().state, Activity::Standing);
    // It stays standing when the old perch moves.
    r.desk.window_mut(1, |w| w.frame.x += 50);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(r.body.pos(), (x, 1040 - 300));
}

#[tokio::test]
async fn go_to_bed_default_and_placed_bed() {
    let r = rig();
    assert_eq!(body_action(&r, json!({"action":"go_to_bed"})).await, "ok");
    assert_eq!(
        r.body.pos(),
        geo::spot_position(geo::Spot::BottomLeft, two_monitors()[0].work_area, BODY)
    );
    assert_eq!(r.avatar.state().state, Activity::InBed);
    settings::set(
        &r.store,
        "yui.avatar",
        &json!({"bed": {"monitor": 2, "x": 300, "y": 700}}),
    )
    .unwrap();
    assert_eq!(body_action(&r, json!({"action":"go_to_bed"})).await, "ok");
    assert_eq!(r.body.pos(), (1920 + 300, 700));
}

#[tokio::test]
async fn peek_around_the_screen_edge_and_the_perch() {
    let r = rig();
    assert_eq!(
        body_action(&r, json!({"action":"peek","side":"right"})).await,
        "ok"
    );
    assert_eq!(r.body.pos(), (1920 - 100, 1040 - 300));
    let s = r.avatar.state();
    assert_eq!((s.state, s.side), (Activity::Peeking, Some(Side::Right)));
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    assert_eq!(
        body_action(&r, json!({"action":"peek","side":"left"})).await,
        "ok"
    );
    assert_eq!(r.body.pos(), (300 - 100, seat_y(500)));
    assert_eq!(r.avatar.state().window.unwrap().app, "XTerm");
}

#[tokio::test]
async fn a_new_action_interrupts_a_running_move() {
    let mut t = timing();
    t.min_glide = std::time::Duration::from_millis(300);
    t.max_glide = t.min_glide;
    let dir = tempfile::tempdir().unwrap();
    let store = yui_core::Store::open(dir.path().join("y.db")).unwrap();
    let d = FakeDesktop::new(desktop());
    let body = FakeBody::at((1600, 740));
    let avatar = Arc::new(yui_core::avatar::Avatar::with_timing(
        Some(d),
        Some(body.clone()),
        Some(store),
        t,
    ));
    let a = avatar.clone();
    let first = tokio::spawn(async move { a.act(sit("gedit")).await });
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    let second = avatar.act(Action::Stand).await;
    assert_eq!(first.await.unwrap(), Outcome::Interrupted);
    assert_eq!(second, Outcome::Ok);
    assert_eq!(avatar.state().state, Activity::Standing);
}

#[tokio::test]
async fn a_user_drag_interrupts_and_makes_new_actions_busy() {
    let mut t = timing();
    t.min_glide = std::time::Duration::from_millis(300);
    t.max_glide = t.min_glide;
    let dir = tempfile::tempdir().unwrap();
    let store = yui_core::Store::open(dir.path().join("y.db")).unwrap();
    let d = FakeDesktop::new(desktop());
    let body = FakeBody::at((1600, 740));
    let avatar = Arc::new(yui_core::avatar::Avatar::with_timing(
        Some(d),
        Some(body),
        Some(store),
        t,
    ));
    let a = avatar.clone();
    let first = tokio::spawn(async move { a.act(sit("gedit")).await });
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    avatar.user_moved((900, 200));
    assert_eq!(first.await.unwrap(), Outcome::Interrupted);
    assert_eq!(avatar.act(Action::Stand).await, Outcome::Busy);
    let s = avatar.state();
    assert_eq!(
        (s.state, s.x, s.y),
        (Activity::Standing, Some(900), Some(200))
    );
    // Once the drag is over, actions run again.
    tokio::time::sleep(std::time::Duration::from_millis(350)).await;
    assert_eq!(avatar.act(Action::Stand).await, Outcome::Ok);
    // A "move" to where the window already is (a click on the character) is no drag.
    let s = avatar.state();
    avatar.user_moved((s.x.unwrap(), s.y.unwrap()));
    assert_eq!(avatar.act(Action::Stand).await, Outcome::Ok);
}

#[tokio::test]
async fn where_the_window_is_first_reported_is_no_drag() {
    let dir = tempfile::tempdir().unwrap();
    let store = yui_core::Store::open(dir.path().join("y.db")).unwrap();
    let avatar = Arc::new(yui_core::avatar::Avatar::with_timing(
        Some(FakeDesktop::new(desktop())),
        Some(FakeBody::at((1600, 740))),
        Some(store),
        timing(),
    ));
    // The window manager places the window at start: the body is there, nobody dragged it.
    avatar.user_moved((1500, 700));
    assert_eq!(avatar.act(Action::Stand).await, Outcome::Ok);
    // The next move that is not YUI's is the user's.
    avatar.user_moved((900, 200));
    assert_eq!(avatar.act(Action::Stand).await, Outcome::Busy);
}

#[tokio::test]
async fn a_window_that_never_moves_times_out() {
    let r = rig_with(desktop(), FakeBody::new((1600, 740), true));
    assert_eq!(body_action(&r, json!({"action":"stand"})).await, "ok"); // already on the floor
    assert_eq!(
        body_action(&r, json!({"action":"sit_on_window","app":"xterm"})).await,
        "timeout"
    );
}

#[tokio::test]
async fn body_action_arguments_missing_and_invalid() {
    let r = rig();
    for (args, answer) in [
        (json!({}), "error: missing field action"),
        (json!({"action": 3}), "error: invalid field action"),
        (json!({"action": "dance"}), "error: invalid field action"),
        (
            json!({"action": "sit_on_window"}),
            "error: missing field app",
        ),
        (
            json!({"action": "sit_on_window", "app": ""}),
            "error: invalid field app",
        ),
        (
            json!({"action": "sit_on_window", "app": 7}),
            "error: invalid field app",
        ),
        (json!({"action": "peek"}), "error: missing field side"),
        (
            json!({"action": "peek", "side": "up"}),
            "error: invalid field side",
        ),
        (json!({"action": "move_to"}), "error: missing field spot"),
        (
            json!({"action": "move_to", "spot": ["a"]}),
            "error: invalid field spot",
        ),
    ] {
        assert_eq!(body_action(&r, args.clone()).await, answer, "{args}");
    }
    assert_eq!(r.body.placed.lock().unwrap().len(), 0, "nothing moved");
}

#[tokio::test]
async fn body_action_without_a_body_window_is_unsupported() {
    let d = FakeDesktop::new(desktop());
    let avatar = Arc::new(yui_core::avatar::Avatar::new(Some(d), None, None));
    let r = rig();
    let out = BodyActionTool::shared(Some(avatar))
        .call(
            json!({"action":"stand"}),
            &ctx(&r),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.as_text(), "unsupported");
    assert_eq!(body_action(&r, json!({"action":"stand"})).await, "ok");
}

#[tokio::test]
async fn body_action_refusals_are_marked_failed() {
    let tool = BodyActionTool::shared(None);
    assert!(!tool.failed(&ToolOutput::text("ok")));
    for w in [
        "not_found",
        "blocked",
        "interrupted",
        "busy",
        "unsupported",
        "timeout",
    ] {
        assert!(tool.failed(&ToolOutput::text(w)), "{w}");
    }
}

#[tokio::test]
async fn look_at_body_is_the_state_as_json() {
    let r = rig();
    assert_eq!(r.avatar.act(sit("xterm")).await, Outcome::Ok);
    let out = look(&r, json!({"at": "body"})).await;
    let v: Value = serde_json::from_str(out.as_text()).unwrap();
    assert_eq!(v["state"], "sitting");
    assert_eq!(v["window"]["app"], "XTerm");
    assert_eq!(v["monitor"], 1);
    assert_eq!(v["live"], true);
    // The settled state was written down for the CLI.
    let stored = settings::get(&r.store, "yui.body").unwrap();
    assert_eq!(stored["state"], "sitting");
    // Headless (no body window): the last state the app wrote.
    let headless = Arc::new(yui_core::avatar::Avatar::new(
        Some(r.desk.clone()),
        None,
        None,
    ));
    let out = LookTool::shared(Some(headless))
        .call(json!({"at": "body"}), &ctx(&r), CancellationToken::new())
        .await
        .unwrap();
    let v: Value = serde_json::from_str(out.as_text()).unwrap();
    assert_eq!(
        (v["state"].clone(), v["live"].clone()),
        (json!("sitting"), json!(false))
    );
}

#[tokio::test]
async fn look_at_perch_targets_lists_windows_with_monitor_and_visibility() {
    let r = rig();
    r.desk.window_mut(2, |w| w.hidden = true);
    r.desk.edit(|d| {
        let mut own = window(9, "yui-app", "YUI", Rect::new(0, 0, 10, 10));
        own.own = true;
        d.windows.push(own);
    });
    let out = look(&r, json!({"at": "perch_targets", "monitor": 99})).await;
    let v: Value = serde_json::from_str(out.as_text()).unwrap();
    assert_eq!(v["supported"], true);
    let ws = v["windows"].as_array().unwrap();
    assert_eq!(ws.len(), 2, "own window left out: {v}");
    // Topmost first.
    assert_eq!(ws[0]["app"], "Gedit");
    assert_eq!(
        (ws[0]["monitor"].clone(), ws[0]["visible"].clone()),
        (json!(2), json!(false))
    );
    assert_eq!(ws[0]["status"], "minimized");
    assert_eq!(ws[1]["app"], "XTerm");
    assert_eq!(ws[1]["title"], "bash");
    assert_eq!(
        (
            ws[1]["monitor"].clone(),
            ws[1]["visible"].clone(),
            ws[1]["can_sit"].clone()
        ),
        (json!(1), json!(true), json!(true))
    );
}

#[tokio::test]
async fn look_at_screen_refused_while_the_switch_is_off() {
    let r = rig();
    let out = look(&r, json!({"at": "screen"})).await;
    assert_eq!(out, ToolOutput::text("error: screen capture is off"));
    assert!(
        r.desk.captured_hidden.lock().unwrap().is_empty(),
        "nothing captured"
    );
    // Read at call time: on now, a capture.
    settings::set_switch(&r.store, settings::SCREEN, true).unwrap();
    assert!(matches!(
        look(&r, json!({"at": "screen"})).await,
        ToolOutput::Images { .. }
    ));
    settings::set_switch(&r.store, settings::SCREEN, false).unwrap();
    assert_eq!(
        look(&r, json!({"at": "screen"})).await,
        ToolOutput::text("error: screen capture is off")
    );
}

#[tokio::test]
async fn look_at_screen_numbers_displays_and_hides_own_windows() {
    let r = rig_with(desktop(), FakeBody::at((2500, 740)));
    settings::set_switch(&r.store, settings::SCREEN, true).unwrap();
    // Omitted monitor: the body's display (2).
    let ToolOutput::Images { text, images } = look(&r, json!({"at": "screen"})).await else {
        panic!("not an image result");
    };
    assert_eq!(text, "screenshot of display 2");
    assert_eq!(images.len(), 1);
    let b64 = images[0].strip_prefix("data:image/jpeg;base64,").unwrap();
    let img = image::load_from_memory(
        &base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap();
    assert_eq!((img.width(), img.height()), (1280, 720));
    let ToolOutput::Images { text, .. } = look(&r, json!({"at": "screen", "monitor": 1})).await
    else {
        panic!("not an image result");
    };
    assert_eq!(text, "screenshot of display 1");
    // Own windows were hidden during each capture, shown after; the character showed it looked.
    assert_eq!(*r.desk.captured_hidden.lock().unwrap(), vec![true, true]);
    assert!(!*r.body.hidden.lock().unwrap());
    assert_eq!(
        *r.body.looking.lock().unwrap(),
        vec![true, false, true, false]
    );
}

#[tokio::test]
async fn look_at_screen_invalid_monitor_and_invalid_at() {
    let r = rig();
    settings::set_switch(&r.store, settings::SCREEN, true).unwrap();
    for m in [json!(3), json!(0), json!("1"), json!(true)] {
        assert_eq!(
            look(&r, json!({"at": "screen", "monitor": m})).await,
            ToolOutput::text("error: invalid field monitor"),
            "{m}"
        );
    }
    assert_eq!(
        look(&r, json!({})).await,
        ToolOutput::text("error: missing field at")
    );
    assert_eq!(
        look(&r, json!({"at": "moon"})).await,
        ToolOutput::text("error: invalid field at")
    );
    assert_eq!(
        look(&r, json!({"at": 1})).await,
        ToolOutput::text("error: invalid field at")
    );
}

#[test]
fn geometry_clamps_to_the_work_area_and_finds_monitors() {
    let wa = Rect::new(1920, 0, 1920, 1040);
    assert_eq!(geo::clamp_to(wa, BODY, (5000, -50)), (3840 - 200, 0));
    assert_eq!(geo::clamp_to(wa, BODY, (1000, 2000)), (1920, 1040 - 300));
    let ms = two_monitors();
    assert_eq!(geo::monitor_at(&ms, (2000, 10)).unwrap().number, 2);
    assert_eq!(
        geo::monitor_at(&ms, (-500, 10)).unwrap().number,
        1,
        "nearest"
    );
    assert_eq!(
        geo::monitor_of(&ms, Rect::new(1800, 0, 400, 100))
            .unwrap()
            .number,
        2,
        "mostly on 2"
    );
    // Sitting keeps the body over the edge and inside the work area.
    let perch = Rect::new(3700, 500, 600, 300);
    assert_eq!(
        geo::sit_position(perch, wa, BODY, 3750),
        Some((3640, seat_y(500))),
        "kept inside the work area"
    );
    let perch = Rect::new(2500, 500, 600, 300);
    assert_eq!(
        geo::sit_position(perch, wa, BODY, 0),
        Some((2500, seat_y(500)))
    );
    assert_eq!(
        geo::sit_position(perch, wa, BODY, 2700),
        Some((2700, seat_y(500)))
    );
    assert_eq!(
        geo::sit_position(perch, wa, BODY, 5000),
        Some((2900, seat_y(500)))
    );
    assert_eq!(
        geo::sit_position(Rect::new(2000, 200, 500, 300), wa, BODY, 0),
        None
    );
    // A perch narrower than the body: centred on it.
    assert_eq!(
        geo::sit_position(Rect::new(2000, 500, 100, 300), wa, BODY, 0),
        Some((1950, seat_y(500)))
    );
}

#[test]
fn geometry_partly_covered_edge_is_free_when_the_body_fits() {
    let mut d = desktop();
    // Covers the left 500 px of xterm's edge: 300 px (≥ body width) stay open.
    d.windows
        .insert(1, window(5, "Gimp", "img", Rect::new(200, 300, 600, 400)));
    assert_eq!(geo::perch_status(&d, 0, BODY), geo::Perch::Free);
    d.windows[1].frame.w = 750; // now only 150 px open
    assert_eq!(geo::perch_status(&d, 0, BODY), geo::Perch::Covered);
    // A window below does not cover it.
    d.windows.swap(0, 1);
    assert_eq!(geo::perch_status(&d, 1, BODY), geo::Perch::Free);
    // On another virtual desktop: not visible.
    d.windows[1].desktop = Some(1);
    assert_eq!(geo::perch_status(&d, 1, BODY), geo::Perch::OtherDesktop);
}
