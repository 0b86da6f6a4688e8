//! Benchmark of the browser tool's screenshot pipeline (decode PNG, resize to a 1280 px long
//! edge, JPEG, data URL) for 4 screenshots of 1920×1080, against ImageMagick's `/usr/bin/convert`
//! doing the same (resize, JPEG) on the same files in the same run. Goal: ≤ 0.5× its time.
//!
//! Run: `cargo bench -p yui-core --bench browser_shots` (release). Prints figures; no asserts.

use image::{Rgb, RgbImage};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use yui_core::images as shots;

const CONVERT: &str = "/usr/bin/convert";
const RUNS: usize = 15;

/// A screenshot-like page: white background, a header bar, text-like lines, a photo-like block.
fn page(seed: u32) -> RgbImage {
    let (w, h) = (1920u32, 1080u32);
    RgbImage::from_fn(w, h, |x, y| {
        if y < 64 {
            return Rgb([30, 60 + (seed * 40 % 120) as u8, 140]);
        }
        if (1200..1800).contains(&x) && (200..800).contains(&y) {
            let v = (x * 7 + y * 13 + seed * 31) % 255;
            return Rgb([v as u8, ((x ^ y) % 255) as u8, ((x + y) / 8 % 255) as u8]);
        }
        let line = (y / 24) % 3 != 2 && (y % 24) > 6 && (y % 24) < 18;
        let glyph = !(x / 9)
            .wrapping_mul(2654435761u32.wrapping_add(y / 24 + seed))
            .is_multiple_of(5);
        if x > 80 && x < 1100 && line && glyph && (x % 9) > 1 {
            Rgb([20, 20, 20])
        } else {
            Rgb([255, 255, 255])
        }
    })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// One run of the yui pipeline over the files.
fn once_ours(files: &[PathBuf]) -> Duration {
    let start = Instant::now();
    let urls = shots::encode_files(files);
    let took = start.elapsed();
    assert!(urls.iter().all(Option::is_some), "every screenshot encodes");
    took
}

/// Single-thread time of each stage for one file (median of the runs).
fn stages(file: &Path) {
    let bytes = std::fs::read(file).expect("read");
    let (mut dec, mut res, mut enc) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let t = Instant::now();
        let img = image::load_from_memory(&bytes).expect("decode").into_rgb8();
        dec.push(t.elapsed());
        let t = Instant::now();
        let small = shots::shrink(img).expect("resize");
        res.push(t.elapsed());
        let t = Instant::now();
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, shots::JPEG_QUALITY)
            .encode_image(&small)
            .expect("jpeg");
        enc.push(t.elapsed());
    }
    println!(
        "one file, one thread: decode PNG {}, resize {}, JPEG {}",
        ms(median(dec)),
        ms(median(res)),
        ms(median(enc))
    );
}

fn convert_one(input: &Path, out: &Path) -> std::process::Child {
    Command::new(CONVERT)
        .arg(input)
        .args(["-resize", "1280x1280>", "-quality", "80"])
        .arg(out)
        .spawn()
        .expect("convert starts")
}

/// One run of `convert` over the files: one process after another, or all at once.
fn once_convert(files: &[PathBuf], out: &Path, parallel: bool) -> Duration {
    let start = Instant::now();
    let mut children = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut child = convert_one(f, &out.join(format!("{i}.jpg")));
        if parallel {
            children.push(child);
        } else {
            assert!(child.wait().expect("convert waits").success());
        }
    }
    for mut c in children {
        assert!(c.wait().expect("convert waits").success());
    }
    start.elapsed()
}

fn report(name: &str, t: &[Duration]) -> Duration {
    let m = median(t.to_vec());
    let min = t.iter().min().copied().unwrap_or_default();
    println!("{name}: median {} (min {})", ms(m), ms(min));
    m
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used here.
    let dir = tempfile::tempdir().expect("temp dir");
    let files: Vec<PathBuf> = (0..4)
        .map(|i| {
            let p = dir.path().join(format!("{:03}.png", i + 1));
            page(i).save(&p).expect("write png");
            p
        })
        .collect();
    let sample = shots::encode_files(&files[..1]);
    let jpeg_kib = sample[0].as_ref().map_or(0, |u| u.len() * 3 / 4 / 1024);
    println!(
        "browser screenshot pipeline: 4 PNGs 1920x1080 -> 1280x720 JPEG q{} (~{jpeg_kib} KiB each), {} threads available",
        shots::JPEG_QUALITY,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    stages(&files[0]);
    let have_convert = Path::new(CONVERT).exists();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("out dir");
    // Each round times all three back to back, so load from other processes hits them alike.
    let (mut ours, mut seq, mut par) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..=RUNS {
        let o = once_ours(&files);
        let (s, p) = if have_convert {
            (
                once_convert(&files, &out, false),
                once_convert(&files, &out, true),
            )
        } else {
            (Duration::ZERO, Duration::ZERO)
        };
        if round > 0 {
            // Round 0 warms caches up.
            ours.push(o);
            seq.push(s);
            par.push(p);
        }
    }
    let ours = report("yui pipeline (decode+resize+JPEG+data URL)", &ours);
    if !have_convert {
        println!("{CONVERT} not found: no comparison");
        return;
    }
    let seq = report("/usr/bin/convert, one after another", &seq);
    let par = report("/usr/bin/convert, 4 processes at once", &par);
    println!(
        "ratio yui / convert: {:.2}x (one after another), {:.2}x (at once); goal <= 0.50x",
        ours.as_secs_f64() / seq.as_secs_f64(),
        ours.as_secs_f64() / par.as_secs_f64()
    );
}
