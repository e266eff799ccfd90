//! A gateway's settings: read from the keys of its ConfigMap, validated, and hashed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The ConfigMap key of the address the gateway listens on (required).
pub(crate) const LISTEN: &str = "listen";
/// The ConfigMap key of the URL the gateway forwards to (required).
pub(crate) const UPSTREAM: &str = "upstream";
/// The ConfigMap key of the upstream timeout (optional).
pub(crate) const TIMEOUT: &str = "timeout";

/// The settings a gateway runs with, validated. Values are trimmed of surrounding whitespace (a
/// ConfigMap made from files often ends its values with a newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `[host]:port` or `port`, as written.
    pub(crate) listen: String,
    /// The port of `listen`.
    pub(crate) port: i32,
    /// An `http://` or `https://` URL.
    pub(crate) upstream: String,
    /// A positive duration (`500ms`, `30s`, `5m`, `1h`), if set.
    pub(crate) timeout: Option<String>,
}

impl Settings {
    /// The settings in a ConfigMap's `data`, or every problem found with them (keys other than
    /// the three the gateway reads are ignored).
    pub(crate) fn from_data(data: &BTreeMap<String, String>) -> Result<Settings, Vec<String>> {
        let value = |key: &str| data.get(key).map(|v| v.trim().to_owned());
        let mut problems = Vec::new();

        let listen = value(LISTEN);
        let port = match &listen {
            None => {
                problems.push(format!("{LISTEN:?} is missing"));
                None
            }
            Some(listen) => {
                let port = listen_port(listen);
                if port.is_none() {
                    problems.push(format!(
                        "{LISTEN:?} must be a port or host:port with a port from 1 to 65535, got {listen:?}"
                    ));
                }
                port
            }
        };

        let upstream = value(UPSTREAM);
        match &upstream {
            None => problems.push(format!("{UPSTREAM:?} is missing")),
            Some(upstream) if !is_http_url(upstream) => problems.push(format!(
                "{UPSTREAM:?} must be an http:// or https:// URL, got {upstream:?}"
            )),
            Some(_) => {}
        }

        let timeout = value(TIMEOUT);
        if let Some(timeout) = &timeout
            && !is_positive_duration(timeout)
        {
            problems.push(format!(
                "{TIMEOUT:?} must be a positive duration such as 500ms, 30s, 5m or 1h, got {timeout:?}"
            ));
        }

        match (listen, port, upstream) {
            (Some(listen), Some(port), Some(upstream)) if problems.is_empty() => Ok(Settings {
                listen,
                port,
                upstream,
                timeout,
            }),
            _ => Err(problems),
        }
    }

    /// The settings as `(key, value)` pairs, in key order, without the keys left unset.
    pub(crate) fn entries(&self) -> Vec<(&'static str, &str)> {
        let mut entries = vec![(LISTEN, self.listen.as_str())];
        if let Some(timeout) = &self.timeout {
            entries.push((TIMEOUT, timeout.as_str()));
        }
        entries.push((UPSTREAM, self.upstream.as_str()));
        entries
    }

    /// The SHA-256, in lowercase hex, of the settings written as `key=value` lines in key order,
    /// each ending with a newline (unset keys left out). Validated values hold no whitespace,
    /// so the text is unambiguous: the same settings always give the same hash, and any change
    /// to them gives another.
    pub(crate) fn hash(&self) -> String {
        let mut text = String::new();
        for (key, value) in self.entries() {
            text.push_str(key);
            text.push('=');
            text.push_str(value);
            text.push('\n');
        }
        let digest = Sha256::digest(text.as_bytes());
        let mut hex = String::with_capacity(64);
        for byte in digest.iter() {
            // Writing to a String cannot fail.
            let _ = write!(hex, "{byte:02x}");
        }
        hex
    }
}

/// The port of `listen`: `port`, `:port`, `host:port` or `[ipv6]:port`, with a port from 1 to
/// 65535 and a host without whitespace.
fn listen_port(listen: &str) -> Option<i32> {
    let (host, port) = match listen.rsplit_once(':') {
        Some((host, port)) => (host, port),
        None => ("", listen),
    };
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner.strip_suffix(']').is_some_and(|ip| {
            !ip.is_empty()
                && ip
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        })
    } else {
        !host.contains(':') && !host.chars().any(|c| c.is_whitespace() || c.is_control())
    };
    if !host_ok || port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    port.parse::<i32>().ok().filter(|p| (1..=65535).contains(p))
}

/// Whether `url` is `http://` or `https://` followed by a host, with no whitespace.
fn is_http_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    !authority.is_empty() && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Whether `duration` is a positive whole number of `ms`, `s`, `m` or `h`.
fn is_positive_duration(duration: &str) -> bool {
    let digits_end = duration
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(duration.len());
    let (amount, unit) = duration.split_at(digits_end);
    matches!(unit, "ms" | "s" | "m" | "h") && amount.parse::<u64>().is_ok_and(|n| n > 0)
}

/// Whether `name` is a DNS-1123 subdomain, as object names such as a ConfigMap's must be.
pub(crate) fn is_object_name(name: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            label.starts_with(alphanumeric)
                && label.ends_with(alphanumeric)
                && label.chars().all(|c| alphanumeric(c) || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn complete_settings_are_read_trimmed() {
        let settings = Settings::from_data(&data(&[
            ("listen", ":8080\n"),
            ("upstream", " http://backend:9000/api "),
            ("timeout", "30s"),
            ("comment", "ignored"),
        ]))
        .unwrap();
        assert_eq!(
            settings,
            Settings {
                listen: ":8080".into(),
                port: 8080,
                upstream: "http://backend:9000/api".into(),
                timeout: Some("30s".into()),
            }
        );
        assert_eq!(
            settings.entries(),
            [
                ("listen", ":8080"),
                ("timeout", "30s"),
                ("upstream", "http://backend:9000/api")
            ]
        );
    }

    #[test]
    fn every_problem_is_reported() {
        let problems = Settings::from_data(&data(&[("timeout", "soon")])).unwrap_err();
        assert_eq!(
            problems,
            [
                "\"listen\" is missing",
                "\"upstream\" is missing",
                "\"timeout\" must be a positive duration such as 500ms, 30s, 5m or 1h, got \"soon\"",
            ]
        );
    }

    #[test]
    fn listen_addresses() {
        for (listen, port) in [
            ("8080", Some(8080)),
            (":443", Some(443)),
            ("0.0.0.0:80", Some(80)),
            ("gateway.local:65535", Some(65535)),
            ("[::]:8080", Some(8080)),
            ("[::1]:1", Some(1)),
            ("0", None),
            ("65536", None),
            (":", None),
            ("host:", None),
            ("host:http", None),
            ("a b:80", None),
            ("::8080", None),
            ("[]:80", None),
            ("[::1:80", None),
            ("-1", None),
        ] {
            assert_eq!(listen_port(listen), port, "{listen:?}");
        }
    }

    #[test]
    fn upstream_urls() {
        for (url, ok) in [
            ("http://backend", true),
            ("https://backend:9443/path?q=1", true),
            ("http://", false),
            ("http:///path", false),
            ("ftp://backend", false),
            ("backend:9000", false),
            ("http://back end", false),
        ] {
            assert_eq!(is_http_url(url), ok, "{url:?}");
        }
    }

    #[test]
    fn durations() {
        for (duration, ok) in [
            ("500ms", true),
            ("30s", true),
            ("5m", true),
            ("1h", true),
            ("0s", false),
            ("30", false),
            ("s", false),
            ("1.5s", false),
            ("30 s", false),
            ("-1s", false),
            ("1d", false),
        ] {
            assert_eq!(is_positive_duration(duration), ok, "{duration:?}");
        }
    }

    #[test]
    fn object_names() {
        for (name, ok) in [
            ("gateway-settings", true),
            ("settings.v2", true),
            ("a", true),
            ("", false),
            ("Settings", false),
            ("-settings", false),
            ("settings-", false),
            ("a..b", false),
            ("a/b", false),
            ("a_b", false),
        ] {
            assert_eq!(is_object_name(name), ok, "{name:?}");
        }
        assert!(is_object_name(&"a".repeat(253)));
        assert!(!is_object_name(&"a".repeat(254)));
    }

    #[test]
    fn the_hash_is_the_sha256_of_the_key_value_lines() {
        let settings = Settings::from_data(&data(&[
            ("listen", ":8080"),
            ("upstream", "http://backend:9000"),
        ]))
        .unwrap();
        // printf 'listen=:8080\nupstream=http://backend:9000\n' | sha256sum
        assert_eq!(
            settings.hash(),
            "2f300acd5fe360f230fa92863736ba16eacf296bcc164feda5b94ffc0a0269a7"
        );
        let mut other = settings.clone();
        other.timeout = Some("30s".into());
        assert_ne!(other.hash(), settings.hash());
        assert_eq!(other.hash().len(), 64);
    }
}
