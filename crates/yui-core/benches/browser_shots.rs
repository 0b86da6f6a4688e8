//! Benchmark of the browser tool's screenshot pipeline (decode PNG, resize to a 1280 px long
//! edge, JPEG, data URL) for 4 screenshots of 1920×1080, against ImageMagick's `/usr/bin/convert`
//! doing the same (resize, JPEG) on the same files in the same run. Goal: ≤ 0.5× its time.
//!
//! Run: `cargo bench -p yui-core --bench browser_shots` (release). Prints figures; no asserts.

use image::{Rgb, RgbImage};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use yui_core::tools::browser::shots;

const CONVERT: &str = "/usr/bin/convert";
const RUNS: usize = 9;

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
        let glyph = ((x / 9) * 2654435761u32.wrapping_add(y / 24 + seed)) % 5 != 0;
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

fn time_ours(files: &[PathBuf]) -> (Duration, Duration) {
    let _ = shots::encode_files(files); // warm-up
    let mut t = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let urls = shots::encode_files(files);
        t.push(start.elapsed());
        assert!(urls.iter().all(Option::is_some), "every screenshot encodes");
    }
    let min = *t.iter().min().unwrap_or(&Duration::ZERO);
    (median(t), min)
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

fn time_convert(files: &[PathBuf], out: &Path, parallel: bool) -> (Duration, Duration) {
    let mut t = Vec::new();
    for run in 0..=RUNS {
        let start = Instant::now();
        let mut children = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let child = convert_one(f, &out.join(format!("{i}.jpg")));
            if parallel {
                children.push(child);
            } else {
                let mut c = child;
                assert!(c.wait().expect("convert waits").success());
            }
        }
        for mut c in children {
            assert!(c.wait().expect("convert waits").success());
        }
        if run > 0 {
            t.push(start.elapsed()); // run 0 is a warm-up
        }
    }
    let min = *t.iter().min().unwrap_or(&Duration::ZERO);
    (median(t), min)
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
    let (ours, ours_min) = time_ours(&files);
    println!(
        "yui pipeline (decode+resize+JPEG+data URL): median {} (min {})",
        ms(ours),
        ms(ours_min)
    );
    if !Path::new(CONVERT).exists() {
        println!("{CONVERT} not found: no comparison");
        return;
    }
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("out dir");
    let (seq, seq_min) = time_convert(&files, &out, false);
    println!(
        "{CONVERT}, one after another:   median {} (min {})",
        ms(seq),
        ms(seq_min)
    );
    let (par, par_min) = time_convert(&files, &out, true);
    println!(
        "{CONVERT}, 4 processes at once: median {} (min {})",
        ms(par),
        ms(par_min)
    );
    println!(
        "ratio yui / convert: {:.2}x (one after another), {:.2}x (at once); goal <= 0.50x",
        ours.as_secs_f64() / seq.as_secs_f64(),
        ours.as_secs_f64() / par.as_secs_f64()
    );
}
