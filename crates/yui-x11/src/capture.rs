//! Screen capture: `GetImage` (ZPixmap) of an area of the root window, converted to packed RGB
//! in memory. Nothing is written to disk.

use crate::{xerr, X11Desktop};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, ImageOrder};
use yui_domain::avatar::{Capture, HostError, Rect};

/// The pixels of `area` (clipped to the root window).
pub fn capture(h: &X11Desktop, area: Rect) -> Result<Capture, HostError> {
    let conn = &*h.conn;
    let setup = conn.setup();
    let screen = setup
        .roots
        .iter()
        .find(|s| s.root == h.root)
        .ok_or_else(|| HostError::unavailable("X11: no screen"))?;
    let (sw, sh) = (
        i32::from(screen.width_in_pixels),
        i32::from(screen.height_in_pixels),
    );
    let (x0, y0) = (area.x.clamp(0, sw), area.y.clamp(0, sh));
    let (x1, y1) = (area.right().clamp(0, sw), area.bottom().clamp(0, sh));
    let (w, h_) = ((x1 - x0) as u16, (y1 - y0) as u16);
    if w == 0 || h_ == 0 {
        return Err(HostError::unavailable("X11: the area is off the screen"));
    }
    let reply = conn
        .get_image(
            ImageFormat::Z_PIXMAP,
            h.root,
            x0 as i16,
            y0 as i16,
            w,
            h_,
            !0,
        )
        .map_err(xerr)?
        .reply()
        .map_err(xerr)?;
    let bpp = setup
        .pixmap_formats
        .iter()
        .find(|f| f.depth == reply.depth)
        .map(|f| f.bits_per_pixel)
        .unwrap_or(32);
    if bpp != 32 || reply.depth < 24 {
        return Err(HostError::unavailable(format!(
            "X11: unsupported pixel format (depth {}, {} bits per pixel)",
            reply.depth, bpp
        )));
    }
    let msb = setup.image_byte_order == ImageOrder::MSB_FIRST;
    let (w, h_) = (u32::from(w), u32::from(h_));
    let stride = reply.data.len() / h_ as usize;
    if stride < w as usize * 4 {
        return Err(HostError::unavailable("X11: short image reply"));
    }
    let mut rgb = Vec::with_capacity((w * h_ * 3) as usize);
    for row in reply.data.chunks_exact(stride) {
        for px in row[..w as usize * 4].chunks_exact(4) {
            // 0x00RRGGBB in the server's byte order (TrueColor, the usual 8-8-8 masks).
            if msb {
                rgb.extend_from_slice(&[px[1], px[2], px[3]]);
            } else {
                rgb.extend_from_slice(&[px[2], px[1], px[0]]);
            }
        }
    }
    Ok(Capture {
        width: w,
        height: h_,
        rgb,
    })
}
