//! CertificateSigningRequests (`pkg/apis/certificates/validation/validation.go`: the create,
//! update, status and approval validations), as `pkg/registry/certificates/certificates/strategy.go`
//! runs them: the request is a PEM `CERTIFICATE REQUEST` block (`ParseCSR` of
//! `pkg/apis/certificates/helpers.go`) whose signature checks, the usages are known and
//! unique, the signer name is a domain and a path (`ValidateSignerName` of
//! `pkg/apis/core/validation/names.go`), the expiration at least ten minutes; conditions are
//! typed, unique, `True` when they are Approved, Denied or Failed, never both Approved and
//! Denied; `status.certificate` is PEM `CERTIFICATE` blocks. An update may not remove an
//! Approved, Denied or Failed condition; only `/approval` adds or changes approval, only
//! `/status` sets the certificate, once. What an old object already broke stays allowed.
//!
//! Not reproduced: Go's wording when a request's or certificate's DER does not parse (the
//! `encoding/asn1` errors; here one message of ours, the update refused alike), and keys Go
//! verifies but ring does not (RSA under 2048 bits, P-521, SHA-1 ECDSA), which are refused here
//! as unverifiable. An Approved or Denied condition changed in place (which the strategies
//! never let reach validation) gets no diff.

use std::collections::HashSet;

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{dns1123_label_errors, dns1123_subdomain_name_errors};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::error::X509Error;
use x509_parser::prelude::FromDer;

use super::config_map_secret::base64_decode;
use super::read::{list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("certificates.k8s.io", "CertificateSigningRequest")
    )
}

/// `KeyUsage`s, sorted as `sets.String.List` prints them.
const USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";
const APPROVED: &str = "Approved";
const DENIED: &str = "Denied";
const FAILED: &str = "Failed";

/// What a write may do, and what an old object lets pass (`certificateValidationOptions`).
#[derive(Default)]
struct Options {
    setting_approval: bool,
    setting_certificate: bool,
    both_approved_and_denied: bool,
    legacy_signer: bool,
    duplicate_condition_types: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
}

fn usages(obj: &Object) -> Vec<&str> {
    list_at(obj.get("spec"), "usages")
        .iter()
        .map(|u| u.as_str().unwrap_or(""))
        .collect()
}

fn conditions(obj: &Object) -> &[Value] {
    list_at(obj.get("status"), "conditions")
}

fn condition_type(condition: &Value) -> &str {
    str_at(Some(condition), "type")
}

fn certificate(obj: &Object) -> &str {
    str_at(obj.get("status"), "certificate")
}

fn has_duplicates<'a>(items: impl IntoIterator<Item = &'a str>) -> bool {
    let mut seen = HashSet::new();
    items.into_iter().any(|item| !seen.insert(item))
}

/// `getValidationOptions`: what `old` already broke stays allowed.
fn options(new: &Object, old: Option<&Object>) -> Options {
    let Some(old) = old else {
        return Options::default();
    };
    let types: Vec<&str> = conditions(old).iter().map(condition_type).collect();
    let old_usages = usages(old);
    Options {
        both_approved_and_denied: types.contains(&APPROVED) && types.contains(&DENIED),
        legacy_signer: str_at(old.get("spec"), "signerName") == LEGACY_SIGNER,
        duplicate_condition_types: has_duplicates(types.iter().copied()),
        empty_condition_type: types.contains(&""),
        arbitrary_certificate: certificate(new) == certificate(old)
            || certificate_error(certificate(old)).is_some(),
        unknown_usages: old_usages.iter().any(|u| !USAGES.contains(u)),
        duplicate_usages: has_duplicates(old_usages),
        ..Options::default()
    }
}

/// The type-specific errors of creating `obj` (`ValidateCertificateSigningRequestCreate`).
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    validate(obj, &options(obj, None))
}

/// `validateCertificateSigningRequestUpdate` after the metadata and before the metadata
/// update, through the main endpoint (`None`), `/status` or `/approval`.
pub(super) fn validate_update(
    new: &Object,
    old: &Object,
    subresource: Option<&str>,
) -> Vec<FieldError> {
    let mut opts = options(new, Some(old));
    opts.setting_certificate = subresource == Some("status");
    opts.setting_approval = subresource == Some("approval");
    let mut errors = validate(new, &opts);
    let count = |obj: &Object, kind: &str| {
        conditions(obj)
            .iter()
            .filter(|c| condition_type(c) == kind)
            .count()
    };
    let at = Path::new("status").child("conditions");
    for kind in [APPROVED, DENIED, FAILED] {
        if count(new, kind) < count(old, kind) {
            errors.push(FieldError::forbidden(
                &at,
                format!("updates may not remove a condition of type \"{kind}\""),
            ));
        }
    }
    if !opts.setting_approval {
        for kind in [APPROVED, DENIED] {
            let of = |obj: &Object| -> Vec<Value> {
                conditions(obj)
                    .iter()
                    .filter(|c| condition_type(c) == kind)
                    .cloned()
                    .collect()
            };
            let (now, before) = (of(new), of(old));
            if now.len() > before.len() {
                errors.push(FieldError::forbidden(
                    &at,
                    format!("updates may not add a condition of type \"{kind}\""),
                ));
            } else if now.len() == before.len() && now != before {
                errors.push(FieldError::forbidden(
                    &at,
                    format!("updates may not modify a condition of type \"{kind}\""),
                ));
            }
        }
    }
    if certificate(new) != certificate(old) {
        let at = Path::new("status").child("certificate");
        if !opts.setting_certificate {
            errors.push(FieldError::forbidden(
                at,
                "updates may not set certificate content",
            ));
        } else if !certificate(old).is_empty() {
            errors.push(FieldError::forbidden(
                at,
                "updates may not modify existing certificate content",
            ));
        }
    }
    errors
}

/// `validateCertificateSigningRequest` after the metadata.
fn validate(obj: &Object, opts: &Options) -> Vec<FieldError> {
    let spec = obj.get("spec");
    let at = Path::new("spec");
    let mut errors = Vec::new();
    let request = str_at(spec, "request");
    if let Some(message) = request_error(request) {
        errors.push(FieldError::invalid(at.child("request"), request, message));
    }
    let usages = usages(obj);
    if usages.is_empty() {
        errors.push(FieldError::required(at.child("usages"), ""));
    }
    if !opts.unknown_usages {
        for (i, usage) in usages.iter().enumerate() {
            if !USAGES.contains(usage) {
                errors.push(FieldError::not_supported(
                    at.child("usages").index(i),
                    usage,
                    &USAGES,
                ));
            }
        }
    }
    if !opts.duplicate_usages {
        let mut seen = HashSet::new();
        for (i, usage) in usages.iter().enumerate() {
            if !seen.insert(*usage) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    at.child("usages").index(i),
                    BadValue::Str((*usage).to_owned()),
                    "",
                ));
            }
        }
    }
    let signer = str_at(spec, "signerName");
    if !opts.legacy_signer && signer == LEGACY_SIGNER {
        errors.push(FieldError::invalid(
            at.child("signerName"),
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errors.extend(signer_name_errors(signer, &at.child("signerName")));
    }
    if let Some(seconds) = spec
        .and_then(|s| s.get("expirationSeconds"))
        .and_then(Value::as_i64)
        && seconds < 600
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at.child("expirationSeconds"),
            BadValue::Raw(seconds.to_string()),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errors.extend(condition_errors(obj, opts));
    if !opts.arbitrary_certificate
        && let Some(message) = certificate_error(certificate(obj))
    {
        errors.push(FieldError::invalid(
            Path::new("status").child("certificate"),
            "<certificate data>",
            message,
        ));
    }
    errors
}

/// `validateConditions`.
fn condition_errors(obj: &Object, opts: &Options) -> Vec<FieldError> {
    let at = Path::new("status").child("conditions");
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let (mut approved, mut denied) = (false, false);
    for (i, condition) in conditions(obj).iter().enumerate() {
        let here = at.index(i);
        let kind = condition_type(condition);
        if !opts.empty_condition_type && kind.is_empty() {
            errors.push(FieldError::required(here.child("type"), ""));
        }
        let status = str_at(Some(condition), "status");
        let allowed: &[&str] = if [APPROVED, DENIED, FAILED].contains(&kind) {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        if status.is_empty() {
            errors.push(FieldError::required(here.child("status"), ""));
        } else if !allowed.contains(&status) {
            errors.push(FieldError::not_supported(
                here.child("status"),
                status,
                allowed,
            ));
        }
        if !opts.both_approved_and_denied {
            let exclusive = match kind {
                APPROVED => {
                    approved = true;
                    denied
                }
                DENIED => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if exclusive {
                errors.push(FieldError::invalid(
                    &at,
                    kind,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !opts.duplicate_condition_types && !seen.insert(kind) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                here.child("type"),
                BadValue::Str(kind.to_owned()),
                "",
            ));
        }
    }
    errors
}

/// `ValidateSignerName`.
fn signer_name_errors(signer: &str, at: &Path) -> Vec<FieldError> {
    const MAX_DOMAIN: usize = 253;
    const MAX_SIGNER: usize = MAX_DOMAIN + (253 + 63 + 1) + 1;
    if signer.is_empty() {
        return vec![FieldError::required(at, "")];
    }
    let segments: Vec<&str> = signer.split('/').collect();
    let [domain, path] = segments.as_slice() else {
        return vec![FieldError::invalid(
            at,
            signer,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    };
    let mut errors = Vec::new();
    if domain.len() > MAX_DOMAIN {
        errors.push(FieldError::too_long(at, MAX_DOMAIN as i64));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        let problems = dns1123_label_errors(label);
        if !problems.is_empty() {
            for problem in problems {
                errors.push(FieldError::invalid(
                    at,
                    domain,
                    format!("validating label \"{label}\": {problem}"),
                ));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errors.push(FieldError::invalid(
            at,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for label in path.split('.') {
        let problems = dns1123_subdomain_name_errors(label);
        if !problems.is_empty() {
            for problem in problems {
                errors.push(FieldError::invalid(
                    at,
                    path,
                    format!("validating label \"{label}\": {problem}"),
                ));
            }
            break;
        }
    }
    if signer.len() > MAX_SIGNER {
        errors.push(FieldError::too_long(at, MAX_SIGNER as i64));
    }
    errors
}

/// The message of our own for DER that does not parse (Go words `encoding/asn1`'s error).
const MALFORMED: &str = "asn1: structure error: malformed DER";

/// Why `request` (base64, as `[]byte` is written) is not a signed PEM certificate request
/// (`validateCSR`).
fn request_error(request: &str) -> Option<String> {
    let bytes = base64_decode(request).unwrap_or_default();
    let block = match pem_decode(&bytes) {
        Some((block, _)) if block.kind == b"CERTIFICATE REQUEST" => block,
        _ => return Some("PEM block type must be CERTIFICATE REQUEST".to_owned()),
    };
    let (rest, csr) = match X509CertificationRequest::from_der(&block.bytes) {
        Ok(parsed) => parsed,
        Err(_) => return Some(MALFORMED.to_owned()),
    };
    if !rest.is_empty() {
        return Some("asn1: syntax error: trailing data".to_owned());
    }
    let key = csr
        .certification_request_info
        .subject_pki
        .algorithm
        .algorithm
        .to_id_string();
    match csr.verify_signature() {
        Ok(()) => None,
        Err(X509Error::SignatureVerificationError) => Some(
            match key.as_str() {
                "1.2.840.10045.2.1" => "x509: ECDSA verification failure",
                "1.3.101.112" => "x509: Ed25519 verification failure",
                _ => "crypto/rsa: verification error",
            }
            .to_owned(),
        ),
        Err(_) => Some("x509: cannot verify signature: algorithm unimplemented".to_owned()),
    }
}

/// Why `certificate` (base64) is not PEM `CERTIFICATE` blocks (`validateCertificate`); empty
/// is fine.
fn certificate_error(certificate: &str) -> Option<String> {
    let mut data = base64_decode(certificate).unwrap_or_default();
    if data.is_empty() {
        return None;
    }
    let mut blocks = 0;
    while let Some((block, rest)) = pem_decode(&data) {
        if block.kind != b"CERTIFICATE" {
            return Some(format!(
                "only CERTIFICATE PEM blocks are allowed, found {}",
                go_quote(&String::from_utf8_lossy(&block.kind))
            ));
        }
        if block.has_headers {
            return Some("no PEM block headers are permitted".to_owned());
        }
        blocks += 1;
        if block.bytes.is_empty() {
            return Some("found CERTIFICATE PEM block containing 0 certificates".to_owned());
        }
        let mut der: &[u8] = &block.bytes;
        while !der.is_empty() {
            match x509_parser::parse_x509_certificate(der) {
                Ok((rest, _)) => der = rest,
                Err(_) => return Some(MALFORMED.to_owned()),
            }
        }
        data = rest;
    }
    (blocks == 0).then(|| "must contain at least one CERTIFICATE PEM block".to_owned())
}

/// A PEM block as `pem.Decode` returns it.
struct Block {
    kind: Vec<u8>,
    has_headers: bool,
    bytes: Vec<u8>,
}

/// `getLine`: the line (trailing spaces, tabs and `\r` trimmed) and what follows it.
fn get_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (line, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let end = line
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .map_or(0, |i| i + 1);
    (&line[..end], rest)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `pem.Decode`: the first well-formed block of `data` and the bytes after it; a malformed
/// candidate is skipped.
fn pem_decode(data: &[u8]) -> Option<(Block, Vec<u8>)> {
    const START: &[u8] = b"\n-----BEGIN ";
    const END: &[u8] = b"\n-----END ";
    const DASHES: &[u8] = b"-----";
    let mut rest = data;
    loop {
        if rest.starts_with(&START[1..]) {
            rest = &rest[START.len() - 1..];
        } else if let Some(i) = find(rest, START) {
            rest = &rest[i + START.len()..];
        } else {
            return None;
        }
        let (type_line, after) = get_line(rest);
        rest = after;
        let Some(kind) = type_line.strip_suffix(DASHES) else {
            continue;
        };
        let mut has_headers = false;
        let mut truncated = false;
        loop {
            if rest.is_empty() {
                truncated = true;
                break;
            }
            let (line, next) = get_line(rest);
            if !line.contains(&b':') {
                break;
            }
            has_headers = true;
            rest = next;
        }
        if truncated {
            return None;
        }
        let (end, trailer_at) = if !has_headers && rest.starts_with(&END[1..]) {
            (0, END.len() - 1)
        } else {
            match find(rest, END) {
                Some(i) => (i, i + END.len()),
                None => continue,
            }
        };
        let trailer = &rest[trailer_at..];
        let trailer_len = kind.len() + DASHES.len();
        if trailer.len() < trailer_len {
            continue;
        }
        let (trailer, after_end) = trailer.split_at(trailer_len);
        if !trailer.starts_with(kind) || !trailer.ends_with(DASHES) {
            continue;
        }
        if !get_line(after_end).0.is_empty() {
            continue;
        }
        let text: Vec<u8> = rest[..end]
            .iter()
            .copied()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .collect();
        let Some(bytes) = std_base64(&text) else {
            continue;
        };
        let (_, remaining) = get_line(&rest[end + END.len() - 1..]);
        return Some((
            Block {
                kind: kind.to_vec(),
                has_headers,
                bytes,
            },
            remaining.to_vec(),
        ));
    }
}

/// `base64.StdEncoding.Decode`: padded standard base64.
fn std_base64(text: &[u8]) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    ENGINE.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_blocks_decode_as_go_decodes_them() {
        let text = b"junk\n-----BEGIN X-----\nAAEC\n-----END X-----\ntail";
        let (block, rest) = pem_decode(text).expect("a block");
        assert_eq!(block.kind, b"X");
        assert_eq!(block.bytes, [0, 1, 2]);
        assert_eq!(rest, b"tail");
        assert!(pem_decode(b"-----BEGIN X-----\nAAEC\n-----END Y-----\n").is_none());
        let headers = b"-----BEGIN X-----\nk: v\n\nAAEC\n-----END X-----\n";
        assert!(pem_decode(headers).is_some_and(|(b, _)| b.has_headers));
    }

    #[test]
    fn signer_names_are_a_domain_and_a_path() {
        let at = Path::new("spec").child("signerName");
        assert!(signer_name_errors("example.com/x.y", &at).is_empty());
        let bodies: Vec<String> = signer_name_errors("a/b", &at)
            .iter()
            .map(FieldError::body)
            .collect();
        assert_eq!(
            bodies,
            [
                "Invalid value: \"a\": should be a domain with at least two segments separated by dots"
            ]
        );
    }

    #[test]
    fn certificates_are_pem_certificate_blocks() {
        use base64::Engine;
        let encode = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        assert_eq!(certificate_error(""), None);
        assert_eq!(
            certificate_error(&encode("garbage")).as_deref(),
            Some("must contain at least one CERTIFICATE PEM block")
        );
        assert_eq!(
            certificate_error(&encode("-----BEGIN KEY-----\nAAEC\n-----END KEY-----\n")).as_deref(),
            Some("only CERTIFICATE PEM blocks are allowed, found \"KEY\"")
        );
    }
}
