//! `look at: screen` in a Wayland session through the desktop's screenshot portal, against a
//! portal double on a private session bus that speaks the real interface: the
//! `org.freedesktop.portal.Screenshot.Screenshot` call with a `handle_token`, the request path
//! built from the caller's bus name, and the `org.freedesktop.portal.Request.Response` signal
//! with the file's URI. The picture is cut to the asked area and the file deleted; a declined
//! request and a desktop with no portal are plain-words errors.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use yui_core::avatar::Rect;
use yui_core::display::portal::ScreenshotPortal;
use yui_testkit::dbus::Bus;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

/// The portal double: writes a 64×48 picture (red left half, blue right half) and answers.
struct Portal {
    dir: PathBuf,
    /// The answer's code: 0 done, 1 declined.
    code: u32,
    /// The options of each call, as sent.
    calls: Arc<Mutex<Vec<HashMap<String, OwnedValue>>>>,
}

#[zbus::interface(name = "org.freedesktop.portal.Screenshot")]
impl Portal {
    async fn screenshot(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
        _parent_window: &str,
        options: HashMap<String, OwnedValue>,
    ) -> zbus::fdo::Result<OwnedObjectPath> {
        let token = options
            .get("handle_token")
            .and_then(|v| <&str>::try_from(v).ok())
            .unwrap_or("none")
            .to_string();
        self.calls.lock().unwrap().push(options);
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let path = format!(
            "/org/freedesktop/portal/desktop/request/{}/{token}",
            sender.trim_start_matches(':').replace('.', "_")
        );
        let file = self.dir.join("Screenshot from the test.png");
        let img = image::RgbImage::from_fn(64, 48, |x, _| {
            if x < 32 {
                image::Rgb([255, 0, 0])
            } else {
                image::Rgb([0, 0, 255])
            }
        });
        img.save(&file).unwrap();
        let uri = format!("file://{}", file.display().to_string().replace(' ', "%20"));
        let (conn, code, reply_path) = (conn.clone(), self.code, path.clone());
        // The answer comes after the call returns, as a real portal's does.
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let mut results: HashMap<&str, Value<'_>> = HashMap::new();
            if code == 0 {
                results.insert("uri", Value::from(uri.as_str()));
            }
            conn.emit_signal(
                Some(sender.as_str()),
                reply_path.as_str(),
                "org.freedesktop.portal.Request",
                "Response",
                &(code, results),
            )
            .await
            .unwrap();
        });
        Ok(OwnedObjectPath::try_from(path).unwrap())
    }
}

async fn serve(
    bus: &Bus,
    code: u32,
    dir: PathBuf,
) -> (
    zbus::Connection,
    Arc<Mutex<Vec<HashMap<String, OwnedValue>>>>,
) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let portal = Portal {
        dir,
        code,
        calls: calls.clone(),
    };
    let conn = zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.freedesktop.portal.Desktop")
        .unwrap()
        .serve_at("/org/freedesktop/portal/desktop", portal)
        .unwrap()
        .build()
        .await
        .unwrap();
    (conn, calls)
}

#[tokio::test]
async fn the_portal_screenshot_is_cut_to_the_area_and_its_file_deleted() {
    let Some(bus) = Bus::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_portal, calls) = serve(&bus, 0, dir.path().to_path_buf()).await;
    let client = ScreenshotPortal {
        address: Some(bus.address.clone()),
        layout: None,
    };
    // 8 px of the red half and 8 of the blue one.
    let shot = client.capture(Rect::new(24, 10, 16, 4)).await.unwrap();
    assert_eq!((shot.width, shot.height), (16, 4));
    assert_eq!(&shot.rgb[..3], &[255, 0, 0]);
    assert_eq!(&shot.rgb[shot.rgb.len() - 3..], &[0, 0, 255]);
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "the portal's file is deleted"
    );
    let calls = calls.lock().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0]
            .get("interactive")
            .and_then(|v| bool::try_from(v).ok()),
        Some(false),
        "no dialog to pick an area: the model asked for the screen"
    );
}

#[tokio::test]
async fn a_declined_screenshot_and_a_desktop_without_a_portal_are_plain_words() {
    let Some(bus) = Bus::start() else { return };
    let client = ScreenshotPortal {
        address: Some(bus.address.clone()),
        layout: None,
    };
    let e = client
        .capture(Rect::new(0, 0, 8, 8))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("no screenshot portal answered on this desktop ("),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (_portal, _) = serve(&bus, 1, dir.path().to_path_buf()).await;
    let e = client.capture(Rect::new(0, 0, 8, 8)).await.unwrap_err();
    assert_eq!(e.to_string(), "the user declined the screenshot");
}
