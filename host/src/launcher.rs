//! A device's graph launcher: a thread that launches a deferred scope's segment graphs
//! ([`SubmitConfig::segment_lanes`](crate::SubmitConfig::segment_lanes)) while the scope's
//! closure goes on logging its other lanes.
//!
//! A graph's launch costs the host about a microsecond per branch (10-25 µs for a segment of
//! 8-32 lanes on an H100 host). Made by the thread that logs, that time delays every later
//! lane of the scope, and the scope's own end with them; made here, the GPU still starts on
//! the first lanes at once, and the program's thread only hands the launch over.
//!
//! The rule that keeps the order: a scope hands launches over only from its log's lock, and
//! makes no other driver call on its streams — and frees or reuses nothing the launched
//! graphs use — before [`Launches::finish`] has returned (every submission of the scope's
//! log, and its end, start with it). So the driver sees the scope's calls in the same order
//! as if they were made inline, only from two threads.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::driver::DriverError;
use crate::handle::GraphLaunch;

/// How long the thread looks for more work before it sleeps, after a launch: a scope's
/// segments come a few microseconds apart, and waking a sleeping thread costs more.
const SPIN: Duration = Duration::from_micros(200);

/// The launcher thread of a device, started at its first launch.
#[derive(Default)]
pub(crate) struct Launcher {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The last scope that ended formed segments ([`Launcher::wake_for_scope`]).
    wanted: AtomicBool,
    /// The thread was started.
    started: AtomicBool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
    /// Whether the thread may be asleep on `wake` (then a new job notifies it).
    sleeping: AtomicBool,
    /// Jobs in the queue, read without its lock while the thread looks for work.
    queued: AtomicUsize,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<(GraphLaunch, Arc<Launches>)>,
    closed: bool,
}

/// One scope's launches handed to the launcher: how many are not made yet, and the first
/// error of those made.
#[derive(Default)]
pub(crate) struct Launches {
    outstanding: AtomicUsize,
    failed: AtomicBool,
    error: Mutex<Option<DriverError>>,
    done: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Launcher {
    /// Hands `launch` over to the thread, counted in `launches`.
    ///
    /// # Errors
    /// The thread could not be started (`launch` was not made; nothing is counted).
    ///
    /// # Safety
    /// - What [`GraphLaunch::run`] needs stays true until `launches` is finished: the
    ///   context retained, the graph and the stream alive, every address the graph uses valid
    ///   and unshared in conflicting ways until the stream has passed it.
    /// - No other call on the stream, nor any that must follow the launch, is made before
    ///   [`Launches::finish`] has returned.
    pub(crate) unsafe fn launch(&self, launch: GraphLaunch, launches: &Arc<Launches>) -> std::io::Result<()> {
        self.start()?;
        launches.outstanding.fetch_add(1, Ordering::AcqRel);
        {
            let mut q = lock(&self.shared.queue);
            q.jobs.push_back((launch, launches.clone()));
            // Under the lock, as the thread's decrement is: the count never wraps.
            self.shared.queued.fetch_add(1, Ordering::AcqRel);
        }
        if self.shared.sleeping.load(Ordering::SeqCst) {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Whether the thread is up and looking for work: a launch handed over now is made at
    /// once. A sleeping thread takes tens of microseconds to wake, longer than a segment's
    /// launch made by the caller.
    pub(crate) fn awake(&self) -> bool {
        self.started.load(Ordering::Acquire) && !self.shared.sleeping.load(Ordering::SeqCst)
    }

    /// Starts the thread, or wakes it, for launches to come (a segment launched by its caller
    /// because the thread slept; a scope starting, [`Launcher::wake_for_scope`]).
    pub(crate) fn rouse(&self) {
        if self.start().is_ok() && self.shared.sleeping.load(Ordering::SeqCst) {
            self.shared.wake.notify_one();
        }
    }

    /// Wakes the thread if a scope that starts now is likely to hand it launches: the last
    /// scope that ended on this device formed segments ([`Launcher::note_scope`]). Its wake-up
    /// then overlaps the scope's first lanes' logging.
    pub(crate) fn wake_for_scope(&self) {
        if self.wanted.load(Ordering::Relaxed) {
            self.rouse();
        }
    }

    /// Notes whether a scope that ended formed segments (so the next one likely does).
    pub(crate) fn note_scope(&self, segmented: bool) {
        self.wanted.store(segmented, Ordering::Relaxed);
    }

    /// Starts the thread unless it runs.
    fn start(&self) -> std::io::Result<()> {
        if self.started.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut thread = lock(&self.thread);
        if thread.is_none() {
            let shared = self.shared.clone();
            *thread = Some(std::thread::Builder::new().name("sluice-launcher".into()).spawn(move || run(&shared))?);
            self.started.store(true, Ordering::Release);
        }
        Ok(())
    }
}

/// The thread: launches jobs in the order they came, looks for more for [`SPIN`], then
/// sleeps until one comes or the device is dropped.
fn run(shared: &Shared) {
    while let Some((launch, launches)) = next(shared) {
        // SAFETY: `Launcher::launch`'s caller keeps the launch's handles and memory valid
        // until `launches` is finished, which waits for this call.
        let result = unsafe { launch.run() };
        let mut error = lock(&launches.error);
        if let (Err(e), None) = (result, &*error) {
            *error = Some(e);
            launches.failed.store(true, Ordering::Release);
        }
        // Under the lock: `finish` checks the count under it before it sleeps.
        if launches.outstanding.fetch_sub(1, Ordering::AcqRel) == 1 {
            launches.done.notify_all();
        }
    }
}

/// The next job, in order; `None` once the device is dropped.
fn next(shared: &Shared) -> Option<(GraphLaunch, Arc<Launches>)> {
    let mut since = Instant::now();
    loop {
        if shared.queued.load(Ordering::Acquire) > 0 || since.elapsed() >= SPIN {
            let mut q = lock(&shared.queue);
            loop {
                if let Some(job) = q.jobs.pop_front() {
                    shared.queued.fetch_sub(1, Ordering::AcqRel);
                    return Some(job);
                }
                if q.closed {
                    return None;
                }
                if since.elapsed() < SPIN {
                    break;
                }
                // Said under the lock, which `wait` releases: a job pushed after it sees the
                // flag and wakes the thread.
                shared.sleeping.store(true, Ordering::SeqCst);
                q = shared.wake.wait(q).unwrap_or_else(|p| p.into_inner());
                shared.sleeping.store(false, Ordering::SeqCst);
                // Woken (for a job, or ahead of a scope's segments): look for work a while
                // again before sleeping.
                since = Instant::now();
            }
        }
        std::hint::spin_loop();
    }
}

impl Launches {
    /// Waits until every launch handed over is made; the first error among them, if any
    /// (then taken: reported once). One atomic load when nothing was handed over.
    pub(crate) fn finish(&self) -> Result<(), DriverError> {
        if self.outstanding.load(Ordering::Acquire) == 0 && !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut error = lock(&self.error);
        while self.outstanding.load(Ordering::Acquire) > 0 {
            error = self.done.wait(error).unwrap_or_else(|p| p.into_inner());
        }
        self.failed.store(false, Ordering::Release);
        match error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.wake.notify_all();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
    }
}
