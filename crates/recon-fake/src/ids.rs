//! Random identifiers: v4 uids and the `generateName` suffix, from a generator that is seeded
//! from the OS by default or from a fixed seed for reproducible tests.

use std::hash::{BuildHasher, RandomState};

/// The alphabet of `generateName` suffixes: no vowels (no accidental words) and no `0`, `1`, `3`
/// (k8s.io/apimachinery `pkg/util/rand`).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random suffix (`randomLength` in apiserver `pkg/storage/names`).
const NAME_SUFFIX_LEN: usize = 5;
/// The prefix is cut so that prefix + suffix fit a 63-character label (`maxGeneratedNameLength`).
const MAX_PREFIX_LEN: usize = 63 - NAME_SUFFIX_LEN;

/// A small, fast, seedable generator (SplitMix64); identifiers need uniqueness, not secrecy.
#[derive(Debug, Clone)]
pub(crate) struct IdGenerator {
    state: u64,
}

impl IdGenerator {
    pub(crate) fn from_seed(seed: u64) -> Self {
        IdGenerator { state: seed }
    }

    pub(crate) fn from_entropy() -> Self {
        Self::from_seed(RandomState::new().hash_one(0x5eed_u64))
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A random (version 4) UUID in its canonical text form.
    pub(crate) fn uid(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next_u64().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next_u64().to_le_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut uid = String::with_capacity(36);
        for (i, b) in bytes.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                uid.push('-');
            }
            uid.push(char::from(HEX[usize::from(b >> 4)]));
            uid.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        uid
    }

    /// `SimpleNameGenerator.GenerateName`: the base cut to 58 characters plus 5 random ones.
    pub(crate) fn generate_name(&mut self, base: &str) -> String {
        let mut name: String = base.chars().take(MAX_PREFIX_LEN).collect();
        while name.len() > MAX_PREFIX_LEN {
            name.pop();
        }
        for _ in 0..NAME_SUFFIX_LEN {
            let i = (self.next_u64() % NAME_ALPHABET.len() as u64) as usize;
            name.push(NAME_ALPHABET[i] as char);
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_is_a_version_4_variant_1_uuid() {
        let uid = IdGenerator::from_seed(7).uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(uid.as_bytes()[14], b'4');
        assert!(matches!(uid.as_bytes()[19], b'8' | b'9' | b'a' | b'b'));
        let groups: Vec<usize> = uid.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert!(
            uid.bytes()
                .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }

    #[test]
    fn generated_names_use_the_real_alphabet_and_length() {
        let mut ids = IdGenerator::from_seed(1);
        for _ in 0..100 {
            let name = ids.generate_name("web-");
            assert_eq!(name.len(), 9);
            assert!(
                name[4..].bytes().all(|b| NAME_ALPHABET.contains(&b)),
                "{name}"
            );
        }
    }

    #[test]
    fn generate_name_cuts_long_bases_to_58_characters() {
        let name = IdGenerator::from_seed(1).generate_name(&"a".repeat(80));
        assert_eq!(name.len(), 63);
        assert!(name.starts_with(&"a".repeat(58)));
    }

    #[test]
    fn the_same_seed_gives_the_same_ids() {
        let (mut a, mut b) = (IdGenerator::from_seed(42), IdGenerator::from_seed(42));
        assert_eq!(a.uid(), b.uid());
        assert_eq!(a.generate_name("x-"), b.generate_name("x-"));
    }
}
