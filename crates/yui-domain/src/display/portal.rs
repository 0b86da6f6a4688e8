//! Screen capture through the desktop's screenshot portal (`org.freedesktop.portal.Screenshot`
//! on the session bus): how `look at: screen` sees a Wayland session, where no client may read
//! the screen itself. One non-interactive screenshot per call; the desktop may ask the user the
//! first time (GNOME asks once and remembers), so the answer is awaited for [`ANSWER_WAIT`].
//!
//! The portal hands back a file (`uri`): it is read into memory and deleted at once, so no
//! picture stays on disk. The whole screen is captured and the asked area cut from it.
//!
//! The protocol: subscribe to `org.freedesktop.portal.Request.Response` on the request path the
//! call will use (`/org/freedesktop/portal/desktop/request/<sender>/<token>`, known before the
//! call from our unique bus name and our `handle_token`, so the answer cannot be missed), call
//! `Screenshot("", {handle_token, interactive: false, modal: false})`, then read the answer:
//! `0` with `uri`, `1` the user declined, `2` the portal ended it.

use crate::avatar::{Capture, HostError, Rect};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::time::Duration;
use zbus::zvariant::{OwnedValue, Value};
use zbus::{Connection, MatchRule, MessageStream};

/// How long the user (asked the first time) and the portal may take.
pub const ANSWER_WAIT: Duration = Duration::from_secs(30);

pub(crate) const DEST: &str = "org.freedesktop.portal.Desktop";
pub(crate) const PATH: &str = "/org/freedesktop/portal/desktop";

/// The portal on the bus at `address` (`None`: the session bus).
#[derive(Debug, Clone, Default)]
pub struct ScreenshotPortal {
    pub address: Option<String>,
    /// The compositor's layout the picture shows (the outputs' bounding box, logical pixels):
    /// areas are then in its coordinates and scaled to the picture (a scaled output's picture
    /// is larger than its logical size). `None`: areas are the picture's pixels (XWayland).
    pub layout: Option<Rect>,
}

fn fail(why: impl Into<String>) -> HostError {
    HostError::unavailable(why)
}

impl ScreenshotPortal {
    /// The whole screen, then `area` cut from it (clamped to the picture).
    pub async fn capture(&self, area: Rect) -> Result<Capture, HostError> {
        let conn = connect(self.address.as_deref()).await.map_err(|e| {
            HostError::Unsupported(format!("no session bus to reach a screenshot portal ({e})"))
        })?;
        let path = self.screenshot_file(&conn).await?;
        let bytes = std::fs::read(&path);
        // Never left on disk, whatever happens next.
        let _ = std::fs::remove_file(&path);
        let bytes = bytes.map_err(|e| HostError::platform("reading the portal's screenshot", e))?;
        let img = image::load_from_memory(&bytes)
            .map_err(|e| HostError::platform("decoding the portal's screenshot", e))?
            .to_rgb8();
        let area = match self.layout {
            Some(l) => to_picture(area, l, img.dimensions()),
            None => area,
        };
        crop(&img, area)
    }

    /// [`Self::capture`] from blocking code (the tools call hosts off the async threads): on a
    /// thread and runtime of its own, so it never blocks inside the caller's runtime. A failure
    /// says `reason` first, then the portal's own words.
    pub fn capture_blocking(&self, area: Rect, reason: &str) -> Result<Capture, HostError> {
        let portal = self.clone();
        let shot = std::thread::scope(|s| {
            s.spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| HostError::platform("starting the portal call", e))?;
                rt.block_on(portal.capture(area))
            })
            .join()
        });
        match shot {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e @ HostError::Unsupported(_))) => {
                Err(HostError::Unsupported(format!("{reason}: {e}")))
            }
            Ok(Err(e)) => Err(HostError::unavailable(format!("{reason}: {e}"))),
            Err(_) => Err(HostError::unavailable(reason)),
        }
    }

    /// Ask for a screenshot; the file it was written to.
    async fn screenshot_file(&self, conn: &Connection) -> Result<std::path::PathBuf, HostError> {
        let token = token("yui");
        let mut options: HashMap<&str, Value<'_>> = HashMap::new();
        options.insert("handle_token", Value::from(token.as_str()));
        options.insert("interactive", Value::from(false));
        options.insert("modal", Value::from(false));
        let answer = request(
            conn,
            "org.freedesktop.portal.Screenshot",
            "Screenshot",
            &("", options),
            &token,
            ANSWER_WAIT,
        )
        .await;
        let (code, results) = match answer {
            Ok(a) => a,
            Err(RequestError::Call(e)) => {
                return Err(HostError::Unsupported(format!(
                    "no screenshot portal answered on this desktop ({e}); install \
                     xdg-desktop-portal and the desktop's portal backend"
                )))
            }
            Err(RequestError::Timeout) => {
                return Err(fail(format!(
                    "the screenshot portal did not answer in {} s",
                    ANSWER_WAIT.as_secs()
                )))
            }
            Err(RequestError::Closed) => {
                return Err(fail("the session bus closed before the portal answered"))
            }
            Err(RequestError::Bus(what, e)) => return Err(HostError::platform(what, e)),
        };
        match code {
            0 => {}
            1 => return Err(fail("the user declined the screenshot")),
            _ => return Err(fail("the screenshot portal ended the request")),
        }
        let uri = results
            .get("uri")
            .and_then(|v| <&str>::try_from(v).ok())
            .ok_or_else(|| fail("the screenshot portal answered without a file"))?;
        url::Url::parse(uri)
            .ok()
            .filter(|u| u.scheme() == "file")
            .and_then(|u| u.to_file_path().ok())
            .ok_or_else(|| fail(format!("the screenshot portal gave {uri:?}, not a file")))
    }
}

/// The session bus, or the one at `address` (tests).
pub(crate) async fn connect(address: Option<&str>) -> zbus::Result<Connection> {
    match address {
        Some(a) => zbus::connection::Builder::address(a)?.build().await,
        None => Connection::session().await,
    }
}

/// How a portal request failed before the portal's answer.
#[derive(Debug)]
pub(crate) enum RequestError {
    /// The call itself was refused: no portal, or no such interface or method.
    Call(zbus::Error),
    /// No answer in time.
    Timeout,
    /// The bus went away before the answer.
    Closed,
    /// Listening or reading failed (what was being done, the error).
    Bus(&'static str, zbus::Error),
}

/// Our unique bus name as a portal object path's element (`:1.42` → `1_42`).
pub(crate) fn sender_element(conn: &Connection) -> String {
    conn.unique_name()
        .map(|n| n.trim_start_matches(':').replace('.', "_"))
        .unwrap_or_default()
}

/// A request token, unique in this process (two requests at once must not share a path).
pub(crate) fn token(prefix: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{prefix}{}_{n}", std::process::id() ^ (rand_u32() & 0xffff))
}

/// Call `method` of the portal's `interface`, whose options carry `handle_token: token`, and
/// await the request's `Response` (the code and the results). The answer is listened for
/// before the call, on the path known from our bus name and the token, so it cannot be missed.
pub(crate) async fn request<B>(
    conn: &Connection,
    interface: &str,
    method: &str,
    body: &B,
    token: &str,
    wait: Duration,
) -> Result<(u32, HashMap<String, OwnedValue>), RequestError>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let request = format!("{PATH}/request/{}/{token}", sender_element(conn));
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface("org.freedesktop.portal.Request")
        .and_then(|b| b.member("Response"))
        .and_then(|b| b.path(request.as_str()))
        .map_err(|e| RequestError::Bus("listening for the portal's answer", e))?
        .build();
    let mut answers = MessageStream::for_match_rule(rule, conn, Some(4))
        .await
        .map_err(|e| RequestError::Bus("listening for the portal's answer", e))?;
    conn.call_method(Some(DEST), PATH, Some(interface), method, body)
        .await
        .map_err(RequestError::Call)?;
    let msg = tokio::time::timeout(wait, answers.next())
        .await
        .map_err(|_| RequestError::Timeout)?
        .ok_or(RequestError::Closed)?
        .map_err(|e| RequestError::Bus("reading the portal's answer", e))?;
    msg.body()
        .deserialize()
        .map_err(|e| RequestError::Bus("reading the portal's answer", e))
}

/// `area` in `layout`'s coordinates as pixels of a picture of `layout` sized `(w, h)`.
fn to_picture(area: Rect, layout: Rect, (w, h): (u32, u32)) -> Rect {
    let sx = f64::from(w) / f64::from(layout.w.max(1));
    let sy = f64::from(h) / f64::from(layout.h.max(1));
    Rect::new(
        (f64::from(area.x - layout.x) * sx).round() as i32,
        (f64::from(area.y - layout.y) * sy).round() as i32,
        (f64::from(area.w) * sx).round() as u32,
        (f64::from(area.h) * sy).round() as u32,
    )
}

/// `area` of `img` (clamped), as the capture the tools encode.
fn crop(img: &image::RgbImage, area: Rect) -> Result<Capture, HostError> {
    let (w, h) = img.dimensions();
    let x0 = area.x.clamp(0, w as i32) as u32;
    let y0 = area.y.clamp(0, h as i32) as u32;
    let x1 = (area.x + area.w as i32).clamp(0, w as i32) as u32;
    let y1 = (area.y + area.h as i32).clamp(0, h as i32) as u32;
    if x1 <= x0 || y1 <= y0 {
        return Err(fail("the area is off the screen"));
    }
    let part = image::imageops::crop_imm(img, x0, y0, x1 - x0, y1 - y0).to_image();
    Ok(Capture {
        width: part.width(),
        height: part.height(),
        rgb: part.into_raw(),
    })
}

/// A little randomness for the request token (two captures at once must not share a path).
fn rand_u32() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_are_clamped_to_the_picture() {
        let img = image::RgbImage::from_pixel(10, 10, image::Rgb([1, 2, 3]));
        let c = crop(&img, Rect::new(8, 8, 5, 5)).unwrap();
        assert_eq!((c.width, c.height, c.rgb.len()), (2, 2, 12));
        assert!(crop(&img, Rect::new(20, 20, 5, 5)).is_err());
    }

    #[test]
    fn layout_areas_are_scaled_to_the_picture() {
        // Two outputs side by side (logical), shot at scale 2.
        let layout = Rect::new(0, 0, 2560, 720);
        let second = Rect::new(1280, 0, 1280, 720);
        assert_eq!(
            to_picture(second, layout, (5120, 1440)),
            Rect::new(2560, 0, 2560, 1440)
        );
        assert_eq!(to_picture(second, layout, (2560, 720)), second);
    }
}
