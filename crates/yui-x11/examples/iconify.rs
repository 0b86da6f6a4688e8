//! `cargo run -p yui-x11 --example iconify -- <pid> [--restore]`: ask the window manager to
//! iconify (hide) every top-level window of process `pid`, as the user minimising them would, or
//! to show them again (`--restore`), and print how many. `tests/e2e/idle_cpu.sh` uses it to
//! measure the app with its characters hidden.

fn main() {
    let pid: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .expect("usage: iconify <pid> [--restore]");
    let restore = std::env::args().any(|a| a == "--restore");
    match yui_x11::minimize::set_iconic(pid, !restore) {
        Ok(n) => println!("{n}"),
        Err(e) => {
            eprintln!("iconify: {e}");
            std::process::exit(1);
        }
    }
}
