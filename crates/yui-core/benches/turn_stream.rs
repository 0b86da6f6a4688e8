//! Turn stream benchmark (filled in below).
fn main() {}
