//! Reconcile errors: any error a hook returns, plus the signals that steer the tree
//! ([`ErrorKind`]): halt the remaining sub-reconcilers, skip the status write, stay quiet, or
//! mark the failure durable.

use std::error::Error as StdError;
use std::fmt;

use crate::outcome::Outcome;

/// A boxed error from anywhere.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// The signals an [`Error`] can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Stop the remaining sub-reconcilers. The root treats the reconcile as successful (it still
    /// records `observedGeneration` and writes status; without a status write it requeues).
    /// Implies [`ErrorKind::Quiet`].
    HaltSubReconcilers,
    /// Do not write status in this reconcile.
    SkipStatusUpdate,
    /// Not a failure worth reporting: no log at error level, no warning event; the root turns it
    /// into a requeue.
    Quiet,
    /// Will not succeed until the observed state changes: meaningful state is on the status.
    /// Implies [`ErrorKind::HaltSubReconcilers`] and [`ErrorKind::Quiet`], so the root writes
    /// status and, without a status write, requeues, as reconciler.io's `ErrDurable` does;
    /// `SuppressTransientErrors` does not count it.
    Durable,
}

impl ErrorKind {
    const fn bit(self) -> u8 {
        match self {
            ErrorKind::HaltSubReconcilers => 1,
            ErrorKind::SkipStatusUpdate => 2,
            ErrorKind::Quiet => 4,
            ErrorKind::Durable => 8,
        }
    }
}

/// The error of a reconcile.
///
/// Any `std::error::Error` converts into it with `?`; signals are added with
/// [`Error::with`] or made with [`Error::signal`]:
///
/// ```
/// use recon_core::{Error, ErrorKind};
///
/// let halt = Error::signal(ErrorKind::HaltSubReconcilers);
/// assert!(halt.is_halt() && halt.is_quiet() && !halt.is_skip_status_update());
///
/// let io: Error = std::io::Error::other("disk full").into();
/// let skip = io.with(ErrorKind::SkipStatusUpdate);
/// assert!(skip.is_skip_status_update() && !skip.is_quiet());
/// assert_eq!(skip.to_string(), "disk full");
/// ```
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kinds: u8,
    cause: Cause,
    /// What the tree had gathered before this error stopped it.
    outcome: Outcome,
}

enum Cause {
    None,
    One(BoxError),
    Many(Vec<Error>),
}

impl Error {
    /// An error from `cause`.
    pub fn new(cause: impl Into<BoxError>) -> Self {
        Self::from_cause(Cause::One(cause.into()), 0)
    }

    /// An error from a message.
    pub fn msg(message: impl fmt::Display) -> Self {
        Self::new(message.to_string())
    }

    /// A bare signal, without an underlying failure.
    pub fn signal(kind: ErrorKind) -> Self {
        Self::from_cause(Cause::None, kind.bit())
    }

    fn from_cause(cause: Cause, kinds: u8) -> Self {
        Error {
            inner: Box::new(Inner {
                kinds,
                cause,
                outcome: Outcome::default(),
            }),
        }
    }

    /// Adds a signal.
    #[must_use]
    pub fn with(mut self, kind: ErrorKind) -> Self {
        self.inner.kinds |= kind.bit();
        self
    }

    /// Several errors as one (what `Always` returns). It is quiet only if every part is quiet,
    /// and durable only if every part is durable; it halts or skips the status write if any
    /// part does.
    pub fn join(errors: impl IntoIterator<Item = Error>) -> Self {
        let mut errors: Vec<Error> = errors.into_iter().collect();
        if errors.len() == 1 {
            return errors.remove(0);
        }
        let outcome = errors
            .iter()
            .fold(Outcome::default(), |o, e| o.merge(e.inner.outcome));
        let mut joined = Self::from_cause(Cause::Many(errors), 0);
        joined.inner.outcome = outcome;
        joined
    }

    fn has(&self, kind: ErrorKind) -> bool {
        match &self.inner.cause {
            Cause::Many(errors) if self.inner.kinds & kind.bit() == 0 => match kind {
                ErrorKind::Quiet | ErrorKind::Durable => {
                    !errors.is_empty() && errors.iter().all(|e| e.has(kind))
                }
                ErrorKind::HaltSubReconcilers | ErrorKind::SkipStatusUpdate => {
                    errors.iter().any(|e| e.has(kind))
                }
            },
            _ => self.inner.kinds & kind.bit() != 0,
        }
    }

    /// Whether the remaining sub-reconcilers must not run.
    pub fn is_halt(&self) -> bool {
        self.has(ErrorKind::HaltSubReconcilers) || self.is_durable()
    }

    /// Whether the root must not write status.
    pub fn is_skip_status_update(&self) -> bool {
        self.has(ErrorKind::SkipStatusUpdate)
    }

    /// Whether the error is not reported as a failure: it is quiet, halts or is durable; a join
    /// only when every part is quiet (a loud error joined with a halt is loud).
    pub fn is_quiet(&self) -> bool {
        let quiet = [
            ErrorKind::Quiet,
            ErrorKind::HaltSubReconcilers,
            ErrorKind::Durable,
        ]
        .iter()
        .any(|kind| self.inner.kinds & kind.bit() != 0);
        quiet
            || match &self.inner.cause {
                Cause::Many(errors) => !errors.is_empty() && errors.iter().all(Error::is_quiet),
                _ => false,
            }
    }

    /// Whether retrying before the observed state changes is pointless.
    pub fn is_durable(&self) -> bool {
        self.has(ErrorKind::Durable)
    }

    /// The underlying failure, if there is exactly one.
    pub fn cause(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        match &self.inner.cause {
            Cause::One(e) => Some(e.as_ref()),
            _ => None,
        }
    }

    /// The first error of type `T` underneath: the cause, what the cause was caused by, and
    /// so on, through every part of a join.
    ///
    /// ```
    /// use recon_core::Error;
    ///
    /// let err = Error::join([Error::msg("first"), std::io::Error::other("disk").into()]);
    /// assert_eq!(err.find::<std::io::Error>().map(|e| e.to_string()).as_deref(), Some("disk"));
    /// ```
    pub fn find<T: StdError + 'static>(&self) -> Option<&T> {
        match &self.inner.cause {
            Cause::None => None,
            Cause::Many(errors) => errors.iter().find_map(Error::find),
            Cause::One(cause) => {
                let mut next: Option<&(dyn StdError + 'static)> = Some(cause.as_ref());
                while let Some(err) = next {
                    if let Some(found) = err.downcast_ref::<T>() {
                        return Some(found);
                    }
                    next = err.source();
                }
                None
            }
        }
    }

    /// The Kubernetes API error underneath, if that is what failed.
    pub fn as_api_error(&self) -> Option<&kube::core::Status> {
        match self.cause()?.downcast_ref::<kube::Error>()? {
            kube::Error::Api(status) => Some(status),
            _ => None,
        }
    }

    /// What the tree gathered before the error (for example a requeue asked by an earlier step).
    pub fn outcome(&self) -> Outcome {
        self.inner.outcome
    }

    /// The error with `outcome` added to what it carries: how a step fails and still asks for
    /// something (a requeue after a delay), as reconciler.io's steps return a result together
    /// with an error. The root returns it with the error; sequences merge it with what earlier
    /// steps asked for.
    ///
    /// ```
    /// use std::time::Duration;
    /// use recon_core::{Error, Outcome};
    ///
    /// let err = Error::msg("not ready").with_outcome(Outcome::requeue_after(Duration::from_secs(5)));
    /// assert_eq!(err.outcome(), Outcome::requeue_after(Duration::from_secs(5)));
    /// ```
    #[must_use]
    pub fn with_outcome(mut self, outcome: Outcome) -> Self {
        self.inner.outcome = outcome.merge(self.inner.outcome);
        self
    }
}

impl<E: StdError + Send + Sync + 'static> From<E> for Error {
    fn from(err: E) -> Self {
        Error::new(err)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner.cause {
            Cause::One(e) => match e.downcast_ref::<kube::Error>() {
                Some(api) => f.write_str(&describe_failure(api)),
                None => write!(f, "{e}"),
            },
            Cause::Many(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            Cause::None => {
                let names: Vec<&str> = [
                    (ErrorKind::Durable, "durable"),
                    (ErrorKind::HaltSubReconcilers, "sub-reconcilers halted"),
                    (ErrorKind::SkipStatusUpdate, "status update skipped"),
                    (ErrorKind::Quiet, "quiet"),
                ]
                .into_iter()
                .filter(|(k, _)| self.inner.kinds & k.bit() != 0)
                .map(|(_, n)| n)
                .collect();
                f.write_str(&names.join(", "))
            }
        }
    }
}

/// How a failed request reads: the API server's message for an API error, as Go's
/// `StatusError` prints (kube's own text adds a debug dump of the whole `Status`); else the
/// error itself.
pub(crate) fn describe_failure(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("message", &self.to_string())
            .field("halt", &self.is_halt())
            .field("skip_status_update", &self.is_skip_status_update())
            .field("quiet", &self.is_quiet())
            .field("durable", &self.is_durable())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loud() -> Error {
        Error::msg("boom")
    }

    #[test]
    fn an_api_error_reads_as_the_servers_message() {
        let status = kube::core::Status::failure("slow down", "TooManyRequests").with_code(429);
        let err: Error = kube::Error::Api(Box::new(status)).into();
        assert_eq!(err.to_string(), "slow down");
        assert_eq!(err.as_api_error().map(|s| s.code), Some(429));
    }

    #[test]
    fn halt_implies_quiet_and_durable_implies_both() {
        let durable = Error::signal(ErrorKind::Durable);
        assert!(durable.is_durable() && durable.is_halt() && durable.is_quiet());
        assert!(!Error::signal(ErrorKind::Quiet).is_halt());
    }

    #[test]
    fn a_join_is_quiet_only_when_every_part_is() {
        let quiet = || Error::signal(ErrorKind::Quiet);
        assert!(Error::join([quiet(), quiet()]).is_quiet());
        assert!(!Error::join([quiet(), loud()]).is_quiet());
    }

    #[test]
    fn an_empty_join_signals_nothing() {
        let empty = Error::join([]);
        assert!(!empty.is_quiet() && !empty.is_durable() && !empty.is_halt());
    }

    #[test]
    fn a_loud_error_joined_with_a_halt_is_loud_and_halts() {
        let joined = Error::join([loud(), Error::signal(ErrorKind::HaltSubReconcilers)]);
        assert!(!joined.is_quiet(), "the loud part is a failure to report");
        assert!(joined.is_halt());
        let durable = Error::join([Error::signal(ErrorKind::Durable), loud()]);
        assert!(!durable.is_quiet() && !durable.is_durable());
        let halts = Error::join([
            Error::signal(ErrorKind::HaltSubReconcilers),
            Error::signal(ErrorKind::Quiet),
        ]);
        assert!(halts.is_quiet());
    }

    #[test]
    fn a_join_halts_and_skips_when_any_part_does() {
        let joined = Error::join([loud(), Error::signal(ErrorKind::SkipStatusUpdate)]);
        assert!(joined.is_skip_status_update());
        assert!(!joined.is_halt());
        assert_eq!(joined.to_string(), "boom\nstatus update skipped");
    }

    #[test]
    fn api_errors_are_reachable_through_the_cause() {
        let status = kube::core::Status::failure("gone", "NotFound").with_code(404);
        let err: Error = kube::Error::Api(Box::new(status)).into();
        assert_eq!(err.as_api_error().map(|s| s.code), Some(404));
    }
}
