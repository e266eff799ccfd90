//! Where Go's `base64.StdEncoding.Decode` (what `encoding/json` decodes a `[]byte` with) finds
//! its input corrupt: the byte offset of `illegal base64 data at input byte N`. Go skips `\r`
//! and `\n` anywhere, requires padding, and refuses anything after it.

/// The offset Go reports for `text`, or `None` when Go decodes it.
pub(crate) fn corrupt_at(text: &str) -> Option<usize> {
    let src = text.as_bytes();
    let mut si = 0;
    while si < src.len() {
        match quantum(src, si) {
            Ok(Some(next)) => si = next,
            Ok(None) => return None,
            Err(at) => return Some(at),
        }
    }
    None
}

fn is_newline(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

fn is_alphabet(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// Go's `decodeQuantum` from `si`: the offset after the quantum, `None` at the end of the
/// input, or the offset of the corruption.
fn quantum(src: &[u8], mut si: usize) -> Result<Option<usize>, usize> {
    let mut j = 0;
    while j < 4 {
        if si == src.len() {
            return match j {
                0 => Ok(None),
                // Standard encoding pads, so a short final quantum is corrupt.
                _ => Err(si - j),
            };
        }
        let b = src[si];
        si += 1;
        if is_alphabet(b) {
            j += 1;
            continue;
        }
        if is_newline(b) {
            continue;
        }
        if b != b'=' || j < 2 {
            return Err(si - 1);
        }
        if j == 2 {
            // `==` is expected; the first `=` is consumed.
            while si < src.len() && is_newline(src[si]) {
                si += 1;
            }
            if si == src.len() {
                return Err(src.len());
            }
            if src[si] != b'=' {
                return Err(si - 1);
            }
            si += 1;
        }
        while si < src.len() && is_newline(src[si]) {
            si += 1;
        }
        return if si < src.len() { Err(si) } else { Ok(None) };
    }
    Ok(Some(si))
}

#[cfg(test)]
mod tests {
    use super::corrupt_at;

    #[test]
    fn offsets_are_the_ones_go_reports() {
        // Recorded from kube-apiserver: a Secret value of "not base64!".
        assert_eq!(corrupt_at("not base64!"), Some(3));
        assert_eq!(corrupt_at("aGVsbG8="), None);
        assert_eq!(corrupt_at("aGVs\nbG8="), None);
        assert_eq!(corrupt_at(""), None);
        // Unpadded: the start of the short quantum.
        assert_eq!(corrupt_at("aGVsbG8"), Some(4));
        assert_eq!(corrupt_at("a"), Some(0));
        // Padding too early, one `=` where two are due, and data after the padding.
        assert_eq!(corrupt_at("a==="), Some(1));
        assert_eq!(corrupt_at("aG="), Some(3));
        assert_eq!(corrupt_at("aG=x"), Some(2));
        assert_eq!(corrupt_at("aGk=aGk="), Some(4));
        assert_eq!(corrupt_at("aGVsbG8=\n"), None);
    }
}
