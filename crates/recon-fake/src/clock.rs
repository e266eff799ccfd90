//! Time as the server sees it: the wall clock by default, or a clock the test controls.

use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};

/// A source of "now" for creation and deletion timestamps.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to. Clones share the same time.
///
/// ```
/// use recon_fake::{Clock, ManualClock};
///
/// let clock = ManualClock::new("2024-05-01T10:00:00Z".parse().unwrap());
/// clock.advance(std::time::Duration::from_secs(90));
/// assert_eq!(clock.now().to_string(), "2024-05-01T10:01:30Z");
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Timestamp>>,
}

impl ManualClock {
    /// A clock stopped at `now`.
    pub fn new(now: Timestamp) -> Self {
        ManualClock {
            now: Arc::new(Mutex::new(now)),
        }
    }

    /// Moves the clock to `now`.
    pub fn set(&self, now: Timestamp) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = now;
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: std::time::Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
        *now = now.saturating_add(by).unwrap_or(Timestamp::MAX);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}
