//! What a reconcile asks of the controller: nothing, a requeue, or a requeue after a delay.

use std::time::Duration;

/// The result of a (sub-)reconcile, aggregated up the tree.
///
/// ```
/// use std::time::Duration;
/// use recon_core::Outcome;
///
/// let a = Outcome::requeue_after(Duration::from_secs(30));
/// let b = Outcome::requeue_after(Duration::from_secs(10));
/// assert_eq!(a.merge(b), Outcome::requeue_after(Duration::from_secs(10)));
/// assert!(Outcome::done().merge(Outcome::requeue()).requeue);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Reconcile again soon (the controller's retry delay).
    pub requeue: bool,
    /// Reconcile again after this long.
    pub requeue_after: Option<Duration>,
}

impl Outcome {
    /// Nothing more to do until something changes.
    pub fn done() -> Self {
        Outcome::default()
    }

    /// Reconcile again soon.
    pub fn requeue() -> Self {
        Outcome {
            requeue: true,
            requeue_after: None,
        }
    }

    /// Reconcile again after `delay`.
    pub fn requeue_after(delay: Duration) -> Self {
        Outcome {
            requeue: false,
            requeue_after: Some(delay),
        }
    }

    /// The aggregate of two outcomes: requeue if either does; the smallest non-zero delay wins.
    #[must_use]
    pub fn merge(self, other: Outcome) -> Outcome {
        let requeue_after = match (self.requeue_after, other.requeue_after) {
            (Some(a), Some(b)) if !a.is_zero() && !b.is_zero() => Some(a.min(b)),
            (Some(a), Some(b)) => Some(if a.is_zero() { b } else { a }),
            (a, b) => a.or(b),
        };
        Outcome {
            requeue: self.requeue || other.requeue,
            requeue_after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_non_zero_delay_wins() {
        let zero = Outcome::requeue_after(Duration::ZERO);
        let five = Outcome::requeue_after(Duration::from_secs(5));
        assert_eq!(zero.merge(five), five);
        assert_eq!(five.merge(zero), five);
        assert_eq!(five.merge(Outcome::done()), five);
        assert_eq!(Outcome::done().merge(Outcome::done()), Outcome::done());
    }

    #[test]
    fn requeue_is_ored() {
        assert_eq!(
            Outcome::requeue().merge(Outcome::done()),
            Outcome::requeue()
        );
    }
}
