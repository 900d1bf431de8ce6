//! Where a run's time comes from. The run owns its clock: the deadline is raced and transport
//! retries are waited out on it, never on the provider, so a provider is only a transport (a
//! test double is a few lines and cannot trip the deadline).
//!
//! [`SystemClock`] (the default) keeps real time with one timer thread for the whole process,
//! so it runs under any async executor. [`ManualClock`] is for tests: its time moves only when
//! the run sleeps, at once, and it records every sleep.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A future a clock gives for a sleep.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The time a run reads and the timer it waits on.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now.
    fn now(&self) -> Instant;
    /// A future that ends `delay` from now.
    fn sleep(&self, delay: Duration) -> Sleep;
}

/// The clock a run uses ([`RunConfig::clock`](super::RunConfig::clock)): the system's unless a
/// test gives its own. Two handles are equal when they share one clock.
#[derive(Clone)]
pub struct RunClock(Arc<dyn Clock>);

impl RunClock {
    /// A run on `clock`.
    pub fn new(clock: impl Clock + 'static) -> Self {
        RunClock(Arc::new(clock))
    }

    pub(crate) fn now(&self) -> Instant {
        self.0.now()
    }

    pub(crate) fn sleep(&self, delay: Duration) -> Sleep {
        self.0.sleep(delay)
    }
}

impl Default for RunClock {
    fn default() -> Self {
        RunClock::new(SystemClock)
    }
}

impl fmt::Debug for RunClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for RunClock {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Real time: `Instant::now`, and sleeps ended by one timer thread shared by the process (made
/// on the first sleep), so no async runtime is needed.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, delay: Duration) -> Sleep {
        Box::pin(Timer {
            at: Instant::now().checked_add(delay),
            slot: None,
        })
    }
}

/// One sleep on the timer thread.
struct Timer {
    /// When it ends; `None` beyond what an `Instant` holds (never).
    at: Option<Instant>,
    /// Its entry on the timer thread, once registered.
    slot: Option<Arc<Mutex<Slot>>>,
}

#[derive(Default)]
struct Slot {
    fired: bool,
    waker: Option<Waker>,
}

impl Future for Timer {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(at) = self.at else {
            return Poll::Pending;
        };
        if Instant::now() >= at {
            return Poll::Ready(());
        }
        match &self.slot {
            Some(slot) => {
                let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
                if slot.fired {
                    return Poll::Ready(());
                }
                slot.waker = Some(cx.waker().clone());
            }
            None => {
                let slot = Arc::new(Mutex::new(Slot {
                    fired: false,
                    waker: Some(cx.waker().clone()),
                }));
                timers().add(at, Arc::clone(&slot));
                self.slot = Some(slot);
            }
        }
        Poll::Pending
    }
}

/// Sleeps waiting to end, soonest first, and the thread that ends them.
struct Timers {
    queue: Mutex<BinaryHeap<Reverse<Entry>>>,
    changed: Condvar,
}

struct Entry {
    at: Instant,
    /// Order of registration, so entries with one `at` compare apart.
    n: u64,
    slot: Arc<Mutex<Slot>>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.n) == (other.at, other.n)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.n).cmp(&(other.at, other.n))
    }
}

fn timers() -> &'static Timers {
    static TIMERS: OnceLock<&'static Timers> = OnceLock::new();
    TIMERS.get_or_init(|| {
        let timers: &'static Timers = Box::leak(Box::new(Timers {
            queue: Mutex::new(BinaryHeap::new()),
            changed: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("structured-timer".into())
            .spawn(move || timers.run())
            .map(|_| ())
            .unwrap_or_else(|e| tracing::error!(%e, "no timer thread: sleeps end only when polled after their time"));
        timers
    })
}

impl Timers {
    fn add(&self, at: Instant, slot: Arc<Mutex<Slot>>) {
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.push(Reverse(Entry { at, n, slot }));
        self.changed.notify_one();
    }

    /// Ends each sleep at its time, for the life of the process.
    fn run(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(Reverse(entry)) = queue.peek() {
                if entry.at > now {
                    break;
                }
                if let Some(Reverse(entry)) = queue.pop() {
                    due.push(entry.slot);
                }
            }
            if !due.is_empty() {
                drop(queue);
                for slot in due {
                    let waker = {
                        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
                        slot.fired = true;
                        slot.waker.take()
                    };
                    if let Some(waker) = waker {
                        waker.wake();
                    }
                }
                queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            queue = match queue.peek().map(|Reverse(e)| e.at) {
                Some(at) => {
                    let wait = at.saturating_duration_since(now);
                    self.changed
                        .wait_timeout(queue, wait)
                        .map(|(q, _)| q)
                        .unwrap_or_else(|e| e.into_inner().0)
                }
                None => self.changed.wait(queue).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }
}

/// A clock for tests: time starts at its making and moves only when a run sleeps, by the
/// sleep's length, at once. Every sleep is recorded ([`ManualClock::sleeps`]); clones share one
/// time.
///
/// ```
/// use std::time::Duration;
/// use structured_runtime::run::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::default();
/// let start = clock.now();
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// block_on(clock.sleep(Duration::from_secs(30)));
/// assert_eq!(clock.now() - start, Duration::from_secs(30));
/// assert_eq!(clock.sleeps(), [Duration::from_secs(30)]);
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<Manual>>);

#[derive(Debug)]
struct Manual {
    now: Instant,
    sleeps: Vec<Duration>,
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock(Arc::new(Mutex::new(Manual {
            now: Instant::now(),
            sleeps: Vec::new(),
        })))
    }
}

impl ManualClock {
    /// Every sleep asked so far, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .sleeps
            .clone()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).now
    }

    fn sleep(&self, delay: Duration) -> Sleep {
        let mut manual = self.0.lock().unwrap_or_else(|e| e.into_inner());
        manual.sleeps.push(delay);
        manual.now = manual.now.checked_add(delay).unwrap_or(manual.now);
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_sleeps_end_in_order_on_one_thread() {
        let clock = SystemClock;
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        for ms in [60u64, 20, 40] {
            let tx = tx.clone();
            let sleep = clock.sleep(Duration::from_millis(ms));
            std::thread::spawn(move || {
                block_on(sleep);
                let _ = tx.send(ms);
            });
        }
        let order: Vec<u64> = (0..3).map(|_| rx.recv().unwrap()).collect();
        assert_eq!(order, [20, 40, 60]);
        assert!(started.elapsed() >= Duration::from_millis(60));
    }

    /// Parks the thread between polls (the timer thread's wake unparks it).
    fn block_on<F: Future>(future: F) -> F::Output {
        struct Unpark(std::thread::Thread);
        impl std::task::Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
            std::thread::park();
        }
    }
}
