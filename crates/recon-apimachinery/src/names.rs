//! The syntax of Kubernetes names: DNS-1123 subdomains and labels, DNS-1035 labels, label keys
//! (qualified names) and label values, each returning the real apiserver's messages in its order
//! (length first, then pattern; both when both fail).
//!
//! Label keys and values follow apimachinery `pkg/api/validate/content/kube.go` (1.35+: lengths
//! in "bytes", "a valid label key ..."); object names follow `pkg/util/validation/validation.go`,
//! whose length messages still say "characters".

use std::fmt::Write as _;

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_EXAMPLES: &[&str] = &["MyName", "my.name", "123-abc"];
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_EXAMPLES: &[&str] = &["MyValue", "my_value", "12345"];
const LABEL_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// `content.RegexError` with examples, including its doubled spaces (`'MyName',  or ...`).
pub fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    let mut out = format!("{message} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        let _ = write!(out, "'{example}', ");
    }
    let _ = write!(out, "regex used for validation is '{regex}')");
    out
}

/// Matches `LABEL_KEY_FMT`: alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
fn is_label_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Matches `DNS1123_SUBDOMAIN_FMT`: dot-separated labels of lowercase alphanumerics and `-`,
/// each starting and ending alphanumeric.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let bytes = label.as_bytes();
        let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        edge(bytes.first())
            && edge(bytes.last())
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    })
}

fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errors.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} bytes"
        ));
    }
    if !is_dns1123_subdomain(value) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

/// `content.IsLabelKey`: an optional DNS-subdomain prefix and `/`, then a name of at most 63
/// bytes; more than one `/` gets a single message of its own.
pub fn label_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let name = match key.split_once('/') {
        None => key,
        Some((prefix, name)) if !name.contains('/') => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            name
        }
        Some(_) => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, LABEL_KEY_EXAMPLES)
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > LABEL_MAX_LENGTH {
        errors.push(format!(
            "name part must be no more than {LABEL_MAX_LENGTH} bytes"
        ));
    }
    if !is_label_name(name) {
        errors.push(format!(
            "name part {}",
            regex_error(LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, LABEL_KEY_EXAMPLES)
        ));
    }
    errors
}

/// `content.IsLabelValue`: empty, or a label name of at most 63 bytes.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > LABEL_MAX_LENGTH {
        errors.push(format!("must be no more than {LABEL_MAX_LENGTH} bytes"));
    }
    if !value.is_empty() && !is_label_name(value) {
        errors.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            LABEL_VALUE_EXAMPLES,
        ));
    }
    errors
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS_LABEL_MAX_LENGTH: usize = 63;

/// `validation.IsDNS1123Subdomain`, used for object names (its length message says "characters").
pub fn dns1123_subdomain_name_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errors.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
        ));
    }
    if !is_dns1123_subdomain(value) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

/// One DNS label: lowercase alphanumerics and `-`, starting (with `first`) and ending alphanumeric.
fn is_label(s: &str, first: fn(u8) -> bool) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&f), Some(&l)) => {
            first(f)
                && (l.is_ascii_lowercase() || l.is_ascii_digit())
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        }
        _ => false,
    }
}

/// `validation.IsDNS1123Label`: a value that would be a valid subdomain gets "must not contain
/// dots" instead of the pattern message.
pub fn dns1123_label_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS_LABEL_MAX_LENGTH {
        errors.push(format!(
            "must be no more than {DNS_LABEL_MAX_LENGTH} characters"
        ));
    }
    if !is_label(value, |b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        if is_dns1123_subdomain(value) {
            errors.push("must not contain dots".to_owned());
        } else {
            errors.push(regex_error(
                DNS1123_LABEL_ERR_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errors
}

/// `validation.IsDNS1035Label`.
pub fn dns1035_label_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS_LABEL_MAX_LENGTH {
        errors.push(format!(
            "must be no more than {DNS_LABEL_MAX_LENGTH} characters"
        ));
    }
    if !is_label(value, |b| b.is_ascii_lowercase()) {
        errors.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

/// How `metadata.name` is validated (`ValidateObjectMeta`'s name function of each type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: most types, all custom resources.
    DnsSubdomain,
    /// `NameIsDNSLabel`: Namespace, and Service from Kubernetes 1.36
    /// (`RelaxedServiceNameValidation`).
    DnsLabel,
    /// `NameIsDNS1035Label`: Service before Kubernetes 1.36.
    Dns1035Label,
    /// No name rule of its own (core/v1 Event): only the path-segment check every type gets.
    PathSegment,
}

/// The messages of a type's name function for `name`; with `prefix` (a `generateName`), Go's
/// `maskTrailingDash` first replaces a trailing `-` as it does (dropping two bytes, adding `a`).
pub fn name_errors(rule: NameRule, name: &str, prefix: bool) -> Vec<String> {
    let masked;
    let name = if prefix && name.len() > 1 && name.ends_with('-') {
        masked = format!("{}a", &name[..name.len() - 2]);
        masked.as_str()
    } else {
        name
    };
    match rule {
        NameRule::DnsSubdomain => dns1123_subdomain_name_errors(name),
        NameRule::DnsLabel => dns1123_label_errors(name),
        NameRule::Dns1035Label => dns1035_label_errors(name),
        NameRule::PathSegment => path_segment_errors(name, prefix),
    }
}

/// `content.IsPathSegmentName` / `IsPathSegmentPrefix`: names must work as one URL path segment.
pub fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    let mut errors = Vec::new();
    if !prefix {
        match name {
            "." => return vec!["may not be '.'".to_owned()],
            ".." => return vec!["may not be '..'".to_owned()],
            _ => {}
        }
    }
    for c in ['/', '%'] {
        if name.contains(c) {
            errors.push(format!("may not contain '{c}'"));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_bad_subdomain_name_gets_the_length_and_the_pattern_message() {
        let errors = dns1123_subdomain_name_errors(&"A".repeat(254));
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0], "must be no more than 253 characters");
        assert!(errors[1].starts_with("a lowercase RFC 1123 subdomain must consist of"));
    }

    #[test]
    fn a_dns_label_with_dots_says_so_instead_of_the_pattern() {
        assert_eq!(
            dns1123_label_errors("a.b"),
            vec!["must not contain dots".to_owned()]
        );
    }

    #[test]
    fn dns1035_labels_must_start_with_a_letter() {
        assert!(dns1035_label_errors("web-1").is_empty());
        assert_eq!(dns1035_label_errors("1web").len(), 1);
    }

    #[test]
    fn generate_name_prefixes_may_end_with_a_dash() {
        assert!(name_errors(NameRule::DnsSubdomain, "web-", true).is_empty());
        assert_eq!(name_errors(NameRule::DnsSubdomain, "web-", false).len(), 1);
    }

    #[test]
    fn label_values_may_be_empty_but_not_longer_than_63_bytes() {
        assert!(label_value_errors("").is_empty());
        assert_eq!(
            label_value_errors(&"y".repeat(64)),
            vec!["must be no more than 63 bytes".to_owned()]
        );
    }
}
