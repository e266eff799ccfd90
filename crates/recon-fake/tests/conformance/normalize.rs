//! One normalisation for both servers, so that what differs only by identity (uids,
//! resourceVersions, timestamps, generated names, namespaces, continue tokens) compares equal
//! while every relation (same / different) between those values is kept.
//!
//! Ordinals are given by first appearance in the scenario's responses, in step order and, within
//! a body, in key order (bodies are `serde_json::Value`s, whose objects are sorted).

use std::borrow::Cow;

use serde_json::{Map, Value};

pub struct Normalizer {
    uids: Vec<String>,
    rvs: Vec<String>,
    continues: Vec<String>,
    generated: Vec<String>,
    /// Service addresses and node ports the server allocated at random.
    cluster_ips: Vec<String>,
    node_ports: Vec<String>,
    /// (value, variable), longest value first so that `cf-a-ns2` is not seen as `cf-a-ns`.
    namespaces: Vec<(String, String)>,
    keep_managed_fields: bool,
}

fn ordinal(seen: &mut Vec<String>, value: &str) -> usize {
    match seen.iter().position(|s| s == value) {
        Some(i) => i + 1,
        None => {
            seen.push(value.to_owned());
            seen.len()
        }
    }
}

impl Normalizer {
    pub fn new(namespaces: &[(String, String)], keep_managed_fields: bool) -> Self {
        let mut namespaces = namespaces.to_vec();
        namespaces.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
        Normalizer {
            uids: Vec::new(),
            rvs: Vec::new(),
            continues: Vec::new(),
            generated: Vec::new(),
            cluster_ips: Vec::new(),
            node_ports: Vec::new(),
            namespaces,
            keep_managed_fields,
        }
    }

    /// A name the server generated from `generateName`: written `<generated:N>` from now on.
    pub fn note_generated(&mut self, name: &str) {
        if !self.generated.iter().any(|g| g == name) {
            self.generated.push(name.to_owned());
        }
    }

    pub fn value(&mut self, value: &Value) -> Value {
        let mut v = value.clone();
        self.walk(None, &mut v);
        v
    }

    fn walk(&mut self, key: Option<&str>, v: &mut Value) {
        match v {
            Value::Object(map) => {
                if key == Some("metadata") && !self.keep_managed_fields {
                    map.remove("managedFields");
                }
                self.walk_map(map);
            }
            Value::Array(items) if key == Some("clusterIPs") => {
                for item in items {
                    self.walk(Some("clusterIP"), item);
                }
            }
            // A Table row's age of an object the scenario made: seconds or minutes, which two
            // runs need not agree on. Every other cell is compared.
            Value::Array(items) if key == Some("cells") => {
                for item in items {
                    match item {
                        Value::String(s) if is_recent_age(s) => *s = "<age>".into(),
                        _ => self.walk(None, item),
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(None, item);
                }
            }
            Value::Number(n) if matches!(key, Some("nodePort" | "healthCheckNodePort")) => {
                let n = n.to_string();
                *v = Value::String(format!("<node-port:{}>", ordinal(&mut self.node_ports, &n)));
            }
            Value::String(s) => {
                let replaced = match key {
                    Some("resourceVersion") if !s.is_empty() => {
                        format!("<rv:{}>", ordinal(&mut self.rvs, s))
                    }
                    Some("continue") if !s.is_empty() => {
                        format!("<continue:{}>", ordinal(&mut self.continues, s))
                    }
                    Some("serverAddress") => "<address>".into(),
                    // Allocated at random from the service range; `None` (headless) stays.
                    Some("clusterIP") if s.parse::<std::net::IpAddr>().is_ok() => {
                        format!("<cluster-ip:{}>", ordinal(&mut self.cluster_ips, s))
                    }
                    Some("message") => {
                        let s = self.text(s);
                        self.message_versions(&s)
                    }
                    _ => match self.text(s) {
                        Cow::Owned(text) => text,
                        Cow::Borrowed(_) => return,
                    },
                };
                *s = replaced;
            }
            _ => {}
        }
    }

    fn walk_map(&mut self, map: &mut Map<String, Value>) {
        for (k, child) in map.iter_mut() {
            self.walk(Some(k), child);
        }
    }

    /// Any string: a whole timestamp, uids, generated names and namespaces inside it; borrowed
    /// when none is there.
    fn text<'s>(&mut self, s: &'s str) -> Cow<'s, str> {
        if is_timestamp(s) {
            return Cow::Owned("<time>".into());
        }
        // A client certificate's fingerprint (a requester's `credential-id`): the recorder's
        // certificate is not the in-memory server's.
        if s.strip_prefix("X509SHA256=")
            .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Cow::Owned("X509SHA256=<fingerprint>".into());
        }
        if s.starts_with("-----BEGIN CERTIFICATE-----") {
            // A cluster's own CA: each server has its own.
            return Cow::Owned("<certificate>".into());
        }
        if is_jwt(s) {
            // A signed token: each server signs with its own key, at its own time.
            return Cow::Owned("<token>".into());
        }
        let mut out = match self.uids_in(s) {
            Cow::Borrowed(s) => timestamps_in(s),
            Cow::Owned(with_uids) => Cow::Owned(timestamps_in(&with_uids).into_owned()),
        };
        for (i, name) in self.generated.iter().enumerate() {
            if out.contains(name.as_str()) {
                out = out
                    .replace(name.as_str(), &format!("<generated:{}>", i + 1))
                    .into();
            }
        }
        for (value, var) in &self.namespaces {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &format!("${{{var}}}")).into();
            }
        }
        out
    }

    fn uids_in<'s>(&mut self, s: &'s str) -> Cow<'s, str> {
        let bytes = s.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        let mut copied = 0;
        while i + 36 <= bytes.len() {
            if is_uuid(&bytes[i..i + 36])
                && (i == 0 || !bytes[i - 1].is_ascii_hexdigit())
                && bytes.get(i + 36).is_none_or(|b| !b.is_ascii_hexdigit())
            {
                out.push_str(&s[copied..i]);
                let n = ordinal(&mut self.uids, &s[i..i + 36]);
                out.push_str(&format!("<uid:{n}>"));
                i += 36;
                copied = i;
            } else {
                i += 1;
            }
        }
        if copied == 0 {
            return Cow::Borrowed(s);
        }
        out.push_str(&s[copied..]);
        Cow::Owned(out)
    }

    /// resourceVersions quoted in messages: "too old resource version: 5 (9)", "Too large
    /// resource version: 9, current: 5", "the ResourceVersion in the precondition (5) does not
    /// match the ResourceVersion in record (6)". Other numbers (a storage error's `Code: 4`)
    /// stay.
    fn message_versions(&mut self, s: &str) -> String {
        const MARKERS: [&str; 8] = [
            // An object quoted as JSON in a message: `\"resourceVersion\":\"5\"`.
            "resourceversion\\\":\\\"",
            "resource version: ",
            "resourceversion: ",
            "resourceversion in precondition: ",
            "resourceversion in object meta: ",
            "current: ",
            "resourceversion in the precondition (",
            "resourceversion in record (",
        ];
        let lower = s.to_ascii_lowercase();
        if !lower.contains("resource version") && !lower.contains("resourceversion") {
            return s.to_owned();
        }
        let too_old = lower.contains("too old resource version");
        let bytes = s.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let end = (i..bytes.len())
                .find(|&j| !bytes[j].is_ascii_digit())
                .unwrap_or(bytes.len());
            if end == i {
                let next = (i + 1..bytes.len())
                    .find(|&j| bytes[j].is_ascii_digit())
                    .unwrap_or(bytes.len());
                out.push_str(&s[i..next]);
                i = next;
                continue;
            }
            let before = &lower[..i];
            let marked = MARKERS.iter().any(|m| before.ends_with(m))
                || (too_old && before.ends_with('(') && bytes.get(end) == Some(&b')'));
            if marked {
                out.push_str(&format!("<rv:{}>", ordinal(&mut self.rvs, &s[i..end])));
            } else {
                out.push_str(&s[i..end]);
            }
            i = end;
        }
        out
    }
}

/// Timestamps that are values of an object quoted as JSON in a text (`\"time\":\"2024-...\"`,
/// or unescaped, `"time":"2024-..."`) become `<time>`; a timestamp a message quotes by itself
/// is the request's, and stays.
fn timestamps_in(s: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut rest = s;
    let mut changed = false;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match timestamp_len(rest).filter(|_| out.ends_with(":\\\"") || out.ends_with("\":\"")) {
            Some(n) => {
                out.push_str("<time>");
                rest = &rest[n..];
                changed = true;
            }
            None => {
                let n = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                out.push_str(&rest[..n]);
                rest = &rest[n..];
            }
        }
    }
    if !changed {
        return Cow::Borrowed(s);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// An age as `duration.HumanDuration` prints one under ten minutes: `42s`, `3m`, `3m7s`.
fn is_recent_age(s: &str) -> bool {
    let number = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match s.split_once('m') {
        Some((minutes, "")) => number(minutes),
        Some((minutes, rest)) => number(minutes) && rest.strip_suffix('s').is_some_and(number),
        None => s.strip_suffix('s').is_some_and(number),
    }
}

/// A compact JWS (`header.claims.signature`, base64url, the header a JSON object): a token a
/// server minted, which no other server reproduces.
fn is_jwt(s: &str) -> bool {
    if !s.starts_with("eyJ") {
        return false;
    }
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn is_uuid(b: &[u8]) -> bool {
    b.iter().enumerate().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => *c == b'-',
        _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
    })
}

/// A time as kube-apiserver writes a `metav1.Time` (`2024-01-01T00:00:00Z`) or a
/// `metav1.MicroTime` (`2024-01-01T00:00:00.000000Z`): in UTC, whole seconds or six digits. Any
/// other form (an offset, another fraction) is kept as it is, so a server that echoes a time
/// instead of writing it in its own form is caught.
fn is_timestamp(s: &str) -> bool {
    timestamp_len(s) == Some(s.len())
        && s.ends_with('Z')
        && (s.len() == 20 || (s.len() == 27 && s.as_bytes()[19] == b'.'))
}

/// The length of the RFC 3339 timestamp `s` starts with, if it starts with one.
fn timestamp_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut end = 19;
    if b[end] == b'.' {
        let n = b[end + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 {
            return None;
        }
        end += 1 + n;
    }
    match b.get(end) {
        Some(b'Z') => Some(end + 1),
        Some(b'+' | b'-')
            if b.get(end + 3) == Some(&b':')
                && digits(end + 1..end + 3)
                && digits(end + 4..end + 6) =>
        {
            Some(end + 6)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_and_versions_of_an_object_quoted_in_a_message_are_normalised() {
        let mut n = Normalizer::new(&[], false);
        let message = r#"patch: Invalid value: "{\"metadata\":{\"creationTimestamp\":\"2026-11-21T11:05:10Z\",\"resourceVersion\":\"120\"}}": at 2030-01-01T00:00:00Z"#;
        assert_eq!(
            n.value(&json!({"message": message})),
            json!({"message": r#"patch: Invalid value: "{\"metadata\":{\"creationTimestamp\":\"<time>\",\"resourceVersion\":\"<rv:1>\"}}": at 2030-01-01T00:00:00Z"#})
        );
    }

    #[test]
    fn ages_in_table_cells_are_normalised_and_nothing_else() {
        let mut n = Normalizer::new(&[], false);
        assert_eq!(
            n.value(&json!({"cells": ["a", "0s", "3m7s", "4m", "2d", 5, "5x"], "name": "3s"})),
            json!({"cells": ["a", "<age>", "<age>", "<age>", "2d", 5, "5x"], "name": "3s"})
        );
    }

    #[test]
    fn identities_become_ordinals_and_relations_stay() {
        let mut n = Normalizer::new(&[("cf-x".into(), "ns".into())], false);
        let a = n.value(
            &json!({"metadata": {"uid": "3a633f18-fb55-44ed-b324-af53ee3e9f3f",
            "resourceVersion": "11", "namespace": "cf-x",
            "creationTimestamp": "2026-11-21T07:22:44Z",
            "managedFields": []}}),
        );
        assert_eq!(
            a,
            json!({"metadata": {"uid": "<uid:1>", "resourceVersion": "<rv:1>", "namespace": "${ns}",
                "creationTimestamp": "<time>"}})
        );
        let b = n.value(&json!({"message": "too old resource version: 11 (12)", "code": 410}));
        assert_eq!(
            b,
            json!({"message": "too old resource version: <rv:1> (<rv:2>)", "code": 410})
        );
        assert_eq!(
            n.value(&json!("2024-01-01T00:00:00.123456Z")),
            json!("<time>")
        );
        assert_eq!(
            n.value(&json!({"message": "v1 has 10 items"})),
            json!({"message": "v1 has 10 items"})
        );
    }
}
