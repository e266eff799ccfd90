//! The schedules: one perturbation each, enumerated from the reference run's trace (Sieve's
//! method: every write the controller sent is a point to restart it at, every event it was
//! sent one to drop, delay or coalesce), each named by an id that replays it.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use super::trace::{Entry, Request};

/// How a request the controller sends fails once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// 500 `InternalError`: nothing happened.
    Internal,
    /// 429 `TooManyRequests` with `Retry-After: 1`: nothing happened.
    Throttled,
    /// 504 `Timeout`: the write landed, but the answer is a timeout.
    Timeout,
}

impl Failure {
    fn code(self) -> u16 {
        match self {
            Failure::Internal => 500,
            Failure::Throttled => 429,
            Failure::Timeout => 504,
        }
    }
}

/// What one schedule does differently from the reference run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Perturbation {
    /// Stop the controller when it sends write `n` (before it lands) and start a fresh one.
    RestartBefore(usize),
    /// Let write `n` land, then stop the controller before it sees the answer.
    RestartAfter(usize),
    /// As `RestartAfter`, and the fresh controller's cached lists and watches are served from
    /// the server's past (the revision before the user's last action) for a while.
    StaleRestart(usize),
    /// Watch event `n` never arrives: its watch ends, and the history it came from is gone, so
    /// the watcher relists.
    DropEvent(usize),
    /// Watch event `n` (and those behind it on its watch) arrives late.
    DelayEvent(usize),
    /// Watch event `n` is folded into the next event of the same object, if that is the
    /// watch's next event within the lag (else it arrives late): the state it showed is never
    /// seen.
    CoalesceEvent(usize),
    /// Another writer changes the object of write `n` just before it lands.
    ConcurrentWrite(usize),
    /// Request `n` fails once.
    Fail(usize, Failure),
    /// After the run settles, a fresh controller starts on the settled world.
    RestartAtEnd,
    /// The user's actions run with no controller; then a controller starts on what they
    /// left, the final spec (Acto's oracle: the result must not depend on the path).
    FreshStart,
}

impl fmt::Display for Perturbation {
    /// The schedule id: what `Scenario::only` and `RECON_EXPLORE` take.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Perturbation::RestartBefore(n) => write!(f, "restart-before-write:{}", n + 1),
            Perturbation::RestartAfter(n) => write!(f, "restart-after-write:{}", n + 1),
            Perturbation::StaleRestart(n) => write!(f, "stale-restart-after-write:{}", n + 1),
            Perturbation::DropEvent(n) => write!(f, "drop-event:{}", n + 1),
            Perturbation::DelayEvent(n) => write!(f, "delay-event:{}", n + 1),
            Perturbation::CoalesceEvent(n) => write!(f, "coalesce-event:{}", n + 1),
            Perturbation::ConcurrentWrite(n) => write!(f, "concurrent-write:{}", n + 1),
            Perturbation::Fail(n, failure) => write!(f, "fail:{}:{}", n + 1, failure.code()),
            Perturbation::RestartAtEnd => f.write_str("restart-at-end"),
            Perturbation::FreshStart => f.write_str("fresh-start"),
        }
    }
}

/// A schedule id that names no schedule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a schedule id (restart-before-write:N, restart-after-write:N, \
     stale-restart-after-write:N, drop-event:N, delay-event:N, coalesce-event:N, \
     concurrent-write:N, fail:N:500|429|504, restart-at-end, fresh-start)"
)]
pub struct ScheduleIdError(String);

impl FromStr for Perturbation {
    type Err = ScheduleIdError;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let bad = || ScheduleIdError(id.to_owned());
        match id {
            "restart-at-end" => return Ok(Perturbation::RestartAtEnd),
            "fresh-start" => return Ok(Perturbation::FreshStart),
            _ => {}
        }
        let (kind, rest) = id.split_once(':').ok_or_else(bad)?;
        let number = |text: &str| match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n - 1),
            _ => Err(bad()),
        };
        Ok(match kind {
            "restart-before-write" => Perturbation::RestartBefore(number(rest)?),
            "restart-after-write" => Perturbation::RestartAfter(number(rest)?),
            "stale-restart-after-write" => Perturbation::StaleRestart(number(rest)?),
            "drop-event" => Perturbation::DropEvent(number(rest)?),
            "delay-event" => Perturbation::DelayEvent(number(rest)?),
            "coalesce-event" => Perturbation::CoalesceEvent(number(rest)?),
            "concurrent-write" => Perturbation::ConcurrentWrite(number(rest)?),
            "fail" => {
                let (n, code) = rest.split_once(':').ok_or_else(bad)?;
                let failure = match code {
                    "500" => Failure::Internal,
                    "429" => Failure::Throttled,
                    "504" => Failure::Timeout,
                    _ => return Err(bad()),
                };
                Perturbation::Fail(number(n)?, failure)
            }
            _ => return Err(bad()),
        })
    }
}

impl Perturbation {
    /// The perturbation in words, with the reference run's request or event it acts on:
    /// `restarted after its 2nd write (POST v1 configmaps default/web-7x2k, answered 201)`.
    pub(crate) fn words(&self, reference: &[Entry]) -> String {
        let write = |n: usize| {
            reference.iter().find_map(|e| match e {
                Entry::Request(r) if r.write == Some(n) => Some(r.answered()),
                _ => None,
            })
        };
        let request = |n: usize| {
            reference.iter().find_map(|e| match e {
                Entry::Request(r) if r.index == n => Some(r.answered()),
                _ => None,
            })
        };
        let event = |n: usize| {
            reference.iter().find_map(|e| match e {
                Entry::Event(ev) if ev.index == n => Some(format!(
                    "{} {} {} at resourceVersion {}",
                    ev.kind, ev.collection, ev.object, ev.revision
                )),
                _ => None,
            })
        };
        let with = |what: String, detail: Option<String>| match detail {
            Some(d) => format!("{what}: {d}"),
            None => what,
        };
        match *self {
            Perturbation::RestartBefore(n) => with(
                format!(
                    "restarted when it sent its {} write, before it landed",
                    nth(n)
                ),
                write(n),
            ),
            Perturbation::RestartAfter(n) => with(
                format!(
                    "restarted after its {} write landed, before it saw the answer",
                    nth(n)
                ),
                write(n),
            ),
            Perturbation::StaleRestart(n) => with(
                format!(
                    "restarted after its {} write landed, then served a stale view (from before \
                     the user's last action) by its cache for a while",
                    nth(n)
                ),
                write(n),
            ),
            Perturbation::DropEvent(n) => with(
                format!(
                    "missed its {} watch event (the watch ended and it relisted)",
                    nth(n)
                ),
                event(n),
            ),
            Perturbation::DelayEvent(n) => with(
                format!("received its {} watch event late", nth(n)),
                event(n),
            ),
            Perturbation::CoalesceEvent(n) => with(
                format!(
                    "never saw its {} watch event, folded into the object's next one (or, if \
                     none came in time, saw it late)",
                    nth(n)
                ),
                event(n),
            ),
            Perturbation::ConcurrentWrite(n) => with(
                format!(
                    "another writer changed the object just before its {} write",
                    nth(n)
                ),
                write(n),
            ),
            Perturbation::Fail(n, failure) => {
                let how = match failure {
                    Failure::Internal => "failed once with 500 InternalError",
                    Failure::Throttled => "was throttled once (429, Retry-After: 1)",
                    Failure::Timeout => "landed but timed out (504)",
                };
                with(format!("its {} request {how}", nth(n)), request(n))
            }
            Perturbation::RestartAtEnd => {
                "restarted once everything had settled (a fresh controller on the settled world)"
                    .to_owned()
            }
            Perturbation::FreshStart => {
                "started fresh on the final spec: the user's actions made with no controller \
                 running, then the controller started on what they left"
                    .to_owned()
            }
        }
    }
}

/// Every schedule the reference trace offers, in a stable order.
pub(crate) fn enumerate(reference: &[Entry]) -> Vec<Perturbation> {
    let requests: Vec<&Request> = reference
        .iter()
        .filter_map(|e| match e {
            Entry::Request(r) => Some(r),
            _ => None,
        })
        .collect();
    let events: Vec<&super::trace::Event> = reference
        .iter()
        .filter_map(|e| match e {
            Entry::Event(ev) => Some(ev),
            _ => None,
        })
        .collect();
    let cached = requests.iter().any(|r| r.cached);
    let mut schedules = Vec::new();
    for r in &requests {
        let Some(w) = r.write else { continue };
        schedules.push(Perturbation::RestartBefore(w));
        schedules.push(Perturbation::RestartAfter(w));
        if cached {
            schedules.push(Perturbation::StaleRestart(w));
        }
        // Nobody races a controller for its Events.
        if r.route.name.is_some() && r.method != "DELETE" && !super::run::is_record(r) {
            schedules.push(Perturbation::ConcurrentWrite(w));
        }
    }
    for (i, ev) in events.iter().enumerate() {
        schedules.push(Perturbation::DropEvent(ev.index));
        schedules.push(Perturbation::DelayEvent(ev.index));
        let later_same = events[i + 1..]
            .iter()
            .any(|next| next.collection == ev.collection && next.object == ev.object);
        if later_same {
            schedules.push(Perturbation::CoalesceEvent(ev.index));
        }
    }
    // A watch is made again every few minutes of quiet (its `timeoutSeconds`): one failure of
    // each watch per step is enough, the others would replay it.
    let mut step = 0;
    let mut watches = HashSet::new();
    for entry in reference {
        let r = match entry {
            Entry::Action(..) => {
                step += 1;
                continue;
            }
            Entry::Request(r) => r,
            _ => continue,
        };
        if r.watch && !watches.insert((step, r.generation, r.words(), &r.selectors)) {
            continue;
        }
        schedules.push(Perturbation::Fail(r.index, Failure::Internal));
        if !r.watch {
            schedules.push(Perturbation::Fail(r.index, Failure::Throttled));
        }
        if r.write.is_some() {
            schedules.push(Perturbation::Fail(r.index, Failure::Timeout));
        }
    }
    schedules.push(Perturbation::RestartAtEnd);
    schedules.push(Perturbation::FreshStart);
    schedules
}

/// `1st`, `2nd`, `3rd`, `11th` for index `n` (from 0).
fn nth(n: usize) -> String {
    let n = n + 1;
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schedule_id_reads_back_as_itself() {
        let all = [
            Perturbation::RestartBefore(0),
            Perturbation::RestartAfter(4),
            Perturbation::StaleRestart(2),
            Perturbation::DropEvent(9),
            Perturbation::DelayEvent(1),
            Perturbation::CoalesceEvent(3),
            Perturbation::ConcurrentWrite(0),
            Perturbation::Fail(6, Failure::Internal),
            Perturbation::Fail(6, Failure::Throttled),
            Perturbation::Fail(6, Failure::Timeout),
            Perturbation::RestartAtEnd,
            Perturbation::FreshStart,
        ];
        for p in all {
            assert_eq!(p.to_string().parse::<Perturbation>(), Ok(p), "{p}");
        }
        assert_eq!(
            Perturbation::RestartAfter(1).to_string(),
            "restart-after-write:2"
        );
        for bad in [
            "restart",
            "drop-event:0",
            "fail:3:418",
            "fail:x:500",
            "nap:1",
        ] {
            assert!(bad.parse::<Perturbation>().is_err(), "{bad}");
        }
    }

    #[test]
    fn ordinals_read_as_english() {
        let words: Vec<String> = [0, 1, 2, 3, 10, 11, 12, 20, 21, 102].map(nth).to_vec();
        assert_eq!(
            words,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "103rd"
            ]
        );
    }
}
