//! Finding the first byte of a class in long texts (the strings of megabyte bodies), a chunk
//! at a time.

/// The bytes of a chunk tested at once: whole chunks without a byte of the class are passed
/// over by a test with no early exit, which the compiler turns into vector instructions.
const CHUNK: usize = 32;

/// The index of the first byte at or after `at` for which `class` holds, or `bytes.len()`.
/// `class` should be comparisons joined by `|` (no branch, no table), for the chunks to be
/// tested in vector instructions.
#[inline]
pub(crate) fn find_first(bytes: &[u8], at: usize, class: impl Fn(u8) -> bool) -> usize {
    let mut i = at;
    while let Some(chunk) = bytes.get(i..i + CHUNK) {
        if chunk.iter().fold(false, |any, &b| any | class(b)) {
            break;
        }
        i += CHUNK;
    }
    bytes
        .get(i..)
        .and_then(|rest| rest.iter().position(|&b| class(b)))
        .map_or(bytes.len(), |n| i + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_byte_of_the_class_wherever_it_is() {
        let quote = |b: u8| b == b'"';
        for len in [0, 1, 31, 32, 33, 64, 100] {
            let mut text = vec![b'x'; len];
            assert_eq!(find_first(&text, 0, quote), len, "none in {len}");
            for at in 0..len {
                text[at] = b'"';
                assert_eq!(find_first(&text, 0, quote), at, "{at} of {len}");
                assert_eq!(find_first(&text, at, quote), at, "from {at} of {len}");
                assert_eq!(find_first(&text, at + 1, quote), len, "after {at} of {len}");
                text[at] = b'x';
            }
        }
        assert_eq!(find_first(b"ab", 5, quote), 2, "from past the end");
    }
}
