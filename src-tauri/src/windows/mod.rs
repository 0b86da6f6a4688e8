//! Windows: labels (`labels.rs`), building and opening them (`build.rs`), and where character
//! windows are (`positions.rs`; the placement rules themselves are pure, in
//! `yui_core::layout`), and where a character window takes clicks (`input_region.rs`). Which preset is open lives in the core (`presets`); this module only turns
//! that table into windows and remembers where the user dragged them.

mod build;
mod characters;
pub mod input_region;
mod labels;
pub(crate) mod layer;
mod positions;

pub use build::*;
pub use characters::*;
pub use labels::*;
pub use positions::*;

pub use crate::bridge::{emit, BridgeEvent};
pub use crate::error::tauri_err;

#[cfg(test)]
mod tests {
    use super::*;

    /// `EVENTS` in ui/js/ipc.js mirrors this enum: the UI must listen for the names we emit.
    #[test]
    fn ui_event_names_mirror_bridge_events() {
        let ipc_js = include_str!("../../../ui/js/ipc.js");
        for ev in BridgeEvent::ALL {
            assert!(
                ipc_js.contains(&format!("\"{}\"", ev.name())),
                "ui/js/ipc.js EVENTS lacks {}",
                ev.name()
            );
        }
    }
}
