//! `yui`: the headless command line over yui-core.
fn main() {}
