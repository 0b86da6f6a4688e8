//! Cost of loading a sprite set (what a character window pays when it opens): a folder of 8
//! emotion PNGs and 2 motion WebPs of 512×512 noise (hard to compress, so near the worst case
//! per pixel), read, checked and turned into data URLs. Prints p50 / p99 / max over N loads
//! and the set's size in bytes.
//!
//! Run: `cargo bench -p yui-core --bench sprites` (N from `YUI_BENCH_CALLS`, default 50).

use std::time::{Duration, Instant};
use yui_core::sprites::load_sprite_set;
use yui_core::vocab::Vocab;

fn noise(seed: u32, size: u32) -> image::RgbaImage {
    let mut x = seed.wrapping_mul(2654435761).max(1);
    image::RgbaImage::from_fn(size, size, |_, _| {
        // xorshift: cheap, deterministic noise
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let b = x.to_le_bytes();
        image::Rgba([b[0], b[1], b[2], 255])
    })
}

fn main() {
    let n: usize = std::env::var("YUI_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().expect("temp dir");
    for (i, e) in Vocab::default().emotions.iter().enumerate() {
        noise(i as u32 + 1, 512)
            .save_with_format(
                dir.path().join(format!("{}.png", e.id)),
                image::ImageFormat::Png,
            )
            .expect("png");
    }
    for (i, m) in ["wave", "jump"].iter().enumerate() {
        noise(100 + i as u32, 512)
            .save_with_format(
                dir.path().join(format!("motion-{m}.webp")),
                image::ImageFormat::WebP,
            )
            .expect("webp");
    }
    let vocab = Vocab::default();
    let mut times = Vec::with_capacity(n);
    let mut bytes = 0;
    for _ in 0..n {
        let t = Instant::now();
        let set = load_sprite_set(dir.path(), &vocab).expect("load");
        times.push(t.elapsed());
        bytes = set
            .emotions
            .values()
            .chain(set.motions.values())
            .map(String::len)
            .sum();
        assert!(set.missing.is_empty() && set.skipped.is_empty());
    }
    times.sort();
    let pct = |p: f64| -> Duration { times[((times.len() as f64 - 1.0) * p).round() as usize] };
    println!(
        "sprite set load (8 PNG + 2 WebP, 512x512 noise, {:.1} MiB as data URLs), n={n}: p50 {:?}  p99 {:?}  max {:?}",
        bytes as f64 / 1048576.0,
        pct(0.5),
        pct(0.99),
        times[times.len() - 1]
    );
}
