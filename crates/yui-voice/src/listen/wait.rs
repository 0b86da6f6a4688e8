//! Waiting on a future from a plain thread, with a deadline: the listening thread's one way to
//! block. The future's waker unparks the thread, so a block from the device, a cancel or a
//! release wakes it and nothing else does; no async runtime thread is woken for audio that holds
//! no speech (the reason the pipeline runs on its own thread: a tokio worker woken 25 times a
//! second cost hands-free listening most of its idle CPU, docs/PERFORMANCE.md).

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A waker for the current thread, made once and reused for every wait.
pub(super) struct Waiter(Waker);

impl Waiter {
    pub(super) fn new() -> Self {
        Self(Waker::from(Arc::new(Unpark(thread::current()))))
    }

    /// Poll `fut` on this thread until it is ready (`Some`) or `within` has passed (`None`).
    pub(super) fn wait<F: Future>(&self, fut: F, within: Duration) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        let mut cx = Context::from_waker(&self.0);
        let deadline = Instant::now() + within;
        loop {
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Some(v);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            // A spurious unpark only polls again.
            thread::park_timeout(deadline - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_sent_from_another_thread_wakes_the_wait_and_silence_times_out() {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        let w = Waiter::new();
        let sender = thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            tx.blocking_send(7).unwrap();
            thread::sleep(Duration::from_millis(300));
        });
        let t = Instant::now();
        assert_eq!(w.wait(rx.recv(), Duration::from_secs(5)), Some(Some(7)));
        assert!(t.elapsed() < Duration::from_secs(2), "woken by the send");
        let t = Instant::now();
        assert_eq!(w.wait(rx.recv(), Duration::from_millis(50)), None);
        assert!(t.elapsed() >= Duration::from_millis(50));
        sender.join().unwrap();
    }
}
