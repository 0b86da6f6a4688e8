//! `yui-app`: the desktop app. All the work is in the library (`yui_app::run`).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    yui_app::run();
}
