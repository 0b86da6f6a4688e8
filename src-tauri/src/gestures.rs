//! WebKit's record of a page's key and mouse presses, and how a page drops it.
//!
//! WebKitGTK's UI process (yui-app) keeps an entry for every key press and release and every
//! mouse press and release a page receives (`WebProcessProxy`'s map of user-gesture
//! authorization tokens, per page), and on GTK it never removes one: ~0.3 KiB a key for the life
//! of the app, ~1.5–2 MiB over 500 typed turns (docs/PERFORMANCE.md, "The sleeping face's Zz, and
//! WebKit's map of every key"). One thing empties a page's map: with WebKit's
//! `VerifyWindowOpenUserGestureFromUIProcess` feature on, a `window.open` made during a user
//! gesture makes the UI process check that gesture against the map and, when it is there, drop
//! the page's whole map (`WebProcessProxy::consumeIfNotVerifiablyFromUIProcess`, before any
//! window is asked for). So the shell turns the feature on for the views whose pages send typed
//! messages ([`forget_input_records`], from `window_context`), the page makes such a call as a
//! message is sent (`ui/js/typing.js`), and every YUI window refuses to open a new window
//! ([`RefuseNewWindows`]): nothing opens, and the map starts empty again.

use tauri::{Runtime, WebviewWindow, WebviewWindowBuilder};

/// The WebKit feature (`webkit_settings_get_all_features`) that checks `window.open` gestures.
pub const VERIFY_WINDOW_OPEN: &str = "VerifyWindowOpenUserGestureFromUIProcess";

/// Every window YUI builds goes through this: no page of YUI opens a window of its own. A
/// `window.open` (the one `typing.js` makes, or one in text a model wrote) gets none, on every
/// platform.
pub trait RefuseNewWindows {
    fn refuse_new_windows(self) -> Self;
}

impl<R: Runtime, M: tauri::Manager<R>> RefuseNewWindows for WebviewWindowBuilder<'_, R, M> {
    fn refuse_new_windows(self) -> Self {
        self.on_new_window(|url, _| {
            tracing::trace!(%url, "a page asked for a new window: refused");
            tauri::webview::NewWindowResponse::Deny
        })
    }
}

/// Turn [`VERIFY_WINDOW_OPEN`] on in `window`'s view and say whether it is on. `false` where
/// there is no WebKitGTK view (another platform, the mock runtime) or the feature is missing
/// (a WebKitGTK that does not have it): then the page has no reason to call `window.open`.
#[cfg(target_os = "linux")]
pub async fn forget_input_records<R: Runtime>(window: &WebviewWindow<R>) -> bool {
    use gtk::glib::object::ObjectType as _;
    let (tx, rx) = tokio::sync::oneshot::channel();
    // On the main thread, where WebKit's settings live; a runtime without webviews drops it.
    let dispatched = window.with_webview(move |view| {
        // SAFETY: the pointer is the live WebKitWebView this closure borrows, on the main thread.
        let on = unsafe { ffi::verify_window_open(view.inner().as_ptr().cast()) };
        let _ = tx.send(on);
    });
    if dispatched.is_err() {
        return false;
    }
    rx.await.unwrap_or(false)
}

#[cfg(not(target_os = "linux"))]
pub async fn forget_input_records<R: Runtime>(_window: &WebviewWindow<R>) -> bool {
    false
}

/// WebKitGTK's feature API (2.42+), which webkit2gtk-rs 2.0 does not bind. The symbols are in
/// libwebkit2gtk-4.1, which the app links already.
#[cfg(target_os = "linux")]
mod ffi {
    use std::ffi::{c_char, c_int, c_void, CStr};

    extern "C" {
        fn webkit_web_view_get_settings(view: *mut c_void) -> *mut c_void;
        fn webkit_settings_get_all_features() -> *mut c_void;
        fn webkit_feature_list_get_length(list: *mut c_void) -> usize;
        fn webkit_feature_list_get(list: *mut c_void, index: usize) -> *mut c_void;
        fn webkit_feature_list_unref(list: *mut c_void);
        fn webkit_feature_get_identifier(feature: *mut c_void) -> *const c_char;
        fn webkit_settings_set_feature_enabled(s: *mut c_void, f: *mut c_void, on: c_int);
        fn webkit_settings_get_feature_enabled(s: *mut c_void, f: *mut c_void) -> c_int;
    }

    /// Turn the feature on in `view`'s settings; whether it is on after.
    ///
    /// # Safety
    /// `view` is a live `WebKitWebView*`, and this runs on the GTK main thread.
    pub unsafe fn verify_window_open(view: *mut c_void) -> bool {
        let settings = webkit_web_view_get_settings(view);
        if settings.is_null() {
            return false;
        }
        let list = webkit_settings_get_all_features();
        if list.is_null() {
            return false;
        }
        let mut on = false;
        for i in 0..webkit_feature_list_get_length(list) {
            let feature = webkit_feature_list_get(list, i);
            let id = webkit_feature_get_identifier(feature);
            if !id.is_null()
                && CStr::from_ptr(id).to_bytes() == super::VERIFY_WINDOW_OPEN.as_bytes()
            {
                webkit_settings_set_feature_enabled(settings, feature, 1);
                on = webkit_settings_get_feature_enabled(settings, feature) != 0;
                break;
            }
        }
        webkit_feature_list_unref(list);
        on
    }
}
