//! The addresses a Service names outside its cluster IPs: `spec.externalIPs` and the load
//! balancer source ranges, as `validateService` checks them with the StrictIPCIDRValidation
//! feature on (its 1.36 default): what `netutils.ParseIPSloppy` / `ParseCIDRSloppy` accept
//! but `net/netip` does not is refused with a message of its own.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::field::{FieldError, Path};

/// An IPv4 address as Go's sloppy parser reads it: four decimal parts, leading zeros allowed.
fn sloppy_v4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut n: u32 = 0;
        for b in part.bytes() {
            n = n * 10 + u32::from(b - b'0');
            if n > 255 {
                return None;
            }
        }
        *octet = u8::try_from(n).ok()?;
    }
    parts.next().is_none().then(|| Ipv4Addr::from(octets))
}

/// `netutils.ParseIPSloppy`: also the IPv4 tail of an IPv6 address may have leading zeros.
pub(super) fn sloppy_ip(text: &str) -> Option<IpAddr> {
    if !text.contains(':') {
        return sloppy_v4(text).map(IpAddr::V4);
    }
    if let Ok(ip) = text.parse::<Ipv6Addr>() {
        return Some(IpAddr::V6(ip));
    }
    let (head, tail) = text.rsplit_once(':')?;
    let v4 = sloppy_v4(tail)?;
    format!("{head}:{v4}")
        .parse::<Ipv6Addr>()
        .ok()
        .map(IpAddr::V6)
}

/// Whether `ip` is an IPv4 address written as IPv6 (`::ffff:a.b.c.d`), `netip.Addr.Is4In6`.
fn is_4_in_6(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `validation.IsValidIPForLegacyField` (strict): the address, if Go's parser takes it, and
/// its errors; one the old object already had is not re-checked (no address, no errors).
pub(super) fn legacy_ip_errors(
    value: &str,
    path: &Path,
    old: &[&str],
) -> (Option<IpAddr>, Vec<FieldError>) {
    if old.contains(&value) {
        return (None, Vec::new());
    }
    let Some(ip) = sloppy_ip(value) else {
        return (
            None,
            vec![FieldError::invalid(
                path,
                value,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )],
        );
    };
    let mut errors = Vec::new();
    // The sloppy parser took it, the strict one does not: leading zeros.
    if value.parse::<IpAddr>().is_err() {
        errors.push(FieldError::invalid(path, value, "must not have leading 0s"));
    }
    if is_4_in_6(ip) {
        errors.push(FieldError::invalid(
            path,
            value,
            "must not be an IPv4-mapped IPv6 address",
        ));
    }
    (Some(ip), errors)
}

/// `validation.IsValidIPForLegacyField` (strict), then for a valid address
/// `ValidateEndpointIP`, as `validateService` checks each external IP; one the old Service
/// already had is not re-checked.
pub(super) fn external_ip_errors(value: &str, path: &Path, old: &[&str]) -> Vec<FieldError> {
    let (ip, errors) = legacy_ip_errors(value, path, old);
    if ip.is_none() || !errors.is_empty() {
        return errors;
    }
    endpoint_ip_errors(value, path)
}

/// `ValidateEndpointIP`: an address a client can reach, so not unspecified, loopback or
/// link-local (unicast or multicast).
pub(super) fn endpoint_ip_errors(value: &str, path: &Path) -> Vec<FieldError> {
    let Some(ip) = sloppy_ip(value) else {
        return vec![FieldError::invalid(
            path,
            value,
            "must be a valid IP address",
        )];
    };
    let mut errors = Vec::new();
    let (unspecified, loopback, link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            (
                v4.is_unspecified(),
                v4.is_loopback(),
                a == 169 && b == 254,
                a == 224 && b == 0 && c == 0,
            )
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            (
                v6.is_unspecified(),
                v6.is_loopback(),
                s[0] & 0xffc0 == 0xfe80,
                // Go's `IsLinkLocalMulticast`: any multicast scope nibble of 2.
                s[0] & 0xff0f == 0xff02,
            )
        }
    };
    if unspecified {
        errors.push(FieldError::invalid(
            path,
            value,
            format!("may not be unspecified ({value})"),
        ));
    }
    if loopback {
        errors.push(FieldError::invalid(
            path,
            value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errors.push(FieldError::invalid(
            path,
            value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errors.push(FieldError::invalid(
            path,
            value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errors
}

/// `netutils.ParseCIDRSloppy`: the address and prefix length of `value`, if it parses (any
/// decimal length up to the address's size, zeros first).
pub(super) fn sloppy_cidr(value: &str) -> Option<(IpAddr, u32)> {
    let (address, bits) = value.split_once('/')?;
    let ip = sloppy_ip(address)?;
    let max = if address.contains(':') { 128 } else { 32 };
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix = bits.parse::<u32>().ok().filter(|p| *p <= max)?;
    Some((ip, prefix))
}

/// `validation.IsValidCIDRForLegacyField` (strict); one the old Service already had is not
/// re-checked.
pub(super) fn cidr_errors(value: &str, path: &Path, old: &[&str]) -> Vec<FieldError> {
    if old.contains(&value) {
        return Vec::new();
    }
    let invalid = || {
        vec![FieldError::invalid(
            path,
            value,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        )]
    };
    let Some((ip, prefix)) = sloppy_cidr(value) else {
        return invalid();
    };
    let (address, bits) = value.split_once('/').unwrap_or((value, ""));
    let leading_zeros =
        address.parse::<IpAddr>().is_err() || (bits.len() > 1 && bits.starts_with('0'));
    let message = if leading_zeros {
        "must not have leading 0s in IP or prefix length"
    } else if is_4_in_6(ip) {
        "must not have an IPv4-mapped IPv6 address"
    } else if beyond_prefix(ip, prefix) {
        "must not have bits set beyond the prefix length"
    } else {
        return Vec::new();
    };
    vec![FieldError::invalid(path, value, message)]
}

/// Whether `ip` has bits set after its first `prefix` bits.
fn beyond_prefix(ip: IpAddr, prefix: u32) -> bool {
    let (bits, size) = match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    };
    let host_bits = size - prefix.min(size);
    let host_mask = if host_bits == 0 {
        0
    } else {
        u128::MAX >> (128 - host_bits)
    };
    bits & host_mask != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errors: Vec<FieldError>) -> usize {
        errors.len()
    }

    #[test]
    fn sloppy_ipv4_takes_leading_zeros_and_nothing_else() {
        assert_eq!(sloppy_v4("010.1.2.3"), Some(Ipv4Addr::new(10, 1, 2, 3)));
        assert_eq!(sloppy_v4("1.2.3"), None);
        assert_eq!(sloppy_v4("256.1.1.1"), None);
        assert_eq!(sloppy_v4("99999999999999999999.1.1.1"), None);
    }

    #[test]
    fn cidrs_follow_the_strict_rules() {
        let path = Path::new("p");
        assert_eq!(messages(cidr_errors("10.0.0.0/8", &path, &[])), 0);
        assert_eq!(messages(cidr_errors("2001:db8::/64", &path, &[])), 0);
        assert_eq!(messages(cidr_errors("10.0.0.1/8", &path, &[])), 1);
        assert_eq!(messages(cidr_errors("10.0.0.0/33", &path, &[])), 1);
        assert_eq!(messages(cidr_errors("0.0.0.0/0", &path, &[])), 0);
        assert_eq!(messages(cidr_errors("10.0.0.0/0", &path, &[])), 1);
        assert_eq!(
            messages(cidr_errors("10.0.0.1/8", &path, &["10.0.0.1/8"])),
            0
        );
    }
}
