//! Ages as tables print them: `duration.HumanDuration` of the time since a timestamp
//! (apimachinery/pkg/util/duration/duration.go; apimachinery/pkg/api/meta/table/table.go,
//! `ConvertToHumanReadableDateType`).

use jiff::Timestamp;

/// The age of `t` at `now`, or `<unknown>` without a time (the zero `metav1.Time`).
pub(crate) fn since(t: Option<Timestamp>, now: Timestamp) -> String {
    match t {
        Some(t) => human_duration(now.as_nanosecond() - t.as_nanosecond()),
        None => "<unknown>".to_owned(),
    }
}

/// `duration.HumanDuration` of `nanos`: two or three significant figures, from seconds to
/// years; a little in the future (under two seconds) is `0s`, further is `<invalid>`.
pub(crate) fn human_duration(nanos: i128) -> String {
    const SECOND: i128 = 1_000_000_000;
    // Go truncates toward zero when it converts seconds to an int.
    let seconds = nanos / SECOND;
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{days}d"),
            h => format!("{days}d{h}h"),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return match days % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{years}y")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: i128) -> String {
        human_duration(s * 1_000_000_000)
    }

    #[test]
    fn ages_keep_two_or_three_figures() {
        assert_eq!(secs(-5), "<invalid>");
        assert_eq!(human_duration(-1_500_000_000), "0s");
        assert_eq!(secs(0), "0s");
        assert_eq!(secs(119), "119s");
        assert_eq!(secs(120), "2m");
        assert_eq!(secs(125), "2m5s");
        assert_eq!(secs(600), "10m");
        assert_eq!(secs(3 * 3600), "3h");
        assert_eq!(secs(3 * 3600 + 60 * 7), "3h7m");
        assert_eq!(secs(9 * 3600), "9h");
        assert_eq!(secs(50 * 3600), "2d2h");
        assert_eq!(secs(9 * 86400), "9d");
        assert_eq!(secs(3 * 365 * 86400 + 86400), "3y1d");
        assert_eq!(secs(9 * 365 * 86400), "9y");
    }

    #[test]
    fn no_time_is_unknown() {
        assert_eq!(since(None, Timestamp::UNIX_EPOCH), "<unknown>");
    }
}
