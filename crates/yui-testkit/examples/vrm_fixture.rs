//! Write a generated humanoid VRM model to a file, for scripts and manual checks:
//! `cargo run -p yui-testkit --example vrm_fixture -- OUT.vrm [1.0|0.x]`
//! (tests/e2e/idle_cpu.sh's IDLE_VRM uses one).

use yui_testkit::vrm::{Fixture, Version};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: vrm_fixture OUT.vrm [1.0|0.x]");
        std::process::exit(2);
    };
    let version = match args.next().as_deref() {
        Some("0.x") | Some("0") => Version::V0,
        _ => Version::V1,
    };
    let bytes = Fixture::full(version).build();
    std::fs::write(&out, &bytes).unwrap_or_else(|e| {
        eprintln!("cannot write {out}: {e}");
        std::process::exit(1);
    });
    println!("{out}: {} bytes", bytes.len());
}
