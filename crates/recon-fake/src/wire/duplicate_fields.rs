//! Keys a JSON document gives twice in one object. Go's strict decoder reports each as
//! `duplicate field "<path>"` (a strict decoding error: a `Warning` by default, a 400 with
//! `fieldValidation=Strict`); a plain JSON reader keeps the last value silently.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The paths of the keys `body` repeats, in document order (`data`, `spec.ports[0].port`);
/// none for a body that is not JSON (its parse error is reported elsewhere).
pub(crate) fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut reader = serde_json::Deserializer::from_slice(body);
    let walk = Walk {
        path: String::new(),
        found: &mut found,
    };
    match walk.deserialize(&mut reader) {
        Ok(()) => found,
        Err(_) => Vec::new(),
    }
}

/// One value of the document, at `path`.
struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Walk {
                path: format!("{}[{i}]", self.path),
                found: &mut *self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::duplicate_fields;

    #[test]
    fn repeated_keys_are_found_at_any_depth_in_document_order() {
        let body = br#"{"data":{"k":"a"},"data":{"k":"b","k":"c"},
                        "spec":{"ports":[{"port":1,"port":2}]},"kind":"x"}"#;
        assert_eq!(
            duplicate_fields(body),
            ["data", "data.k", "spec.ports[0].port"]
        );
        assert!(duplicate_fields(br#"{"a":1,"b":{"a":2}}"#).is_empty());
        assert!(duplicate_fields(b"not json").is_empty());
    }

    #[test]
    fn a_deep_document_is_refused_by_the_reader_not_the_stack() {
        let deep = "[".repeat(100_000);
        assert!(duplicate_fields(deep.as_bytes()).is_empty());
    }
}
