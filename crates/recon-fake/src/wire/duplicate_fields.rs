//! Keys a JSON document gives twice in one object. Go's strict decoder reports each as
//! `duplicate field "<path>"` (a strict decoding error: a `Warning` by default, a 400 with
//! `fieldValidation=Strict`); a plain JSON reader keeps the last value silently.

use std::collections::HashSet;
use std::fmt;

use recon_apimachinery::json::{Map, Number, Value};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{go_json_syntax, nesting};

/// `body` read as serde_json reads a [`Value`] (the last of repeated keys wins), and whether
/// any object in it repeats a key: one pass, so that a body without repeats — nearly all —
/// is not walked again by [`duplicate_fields`] for the paths.
/// A body nested deeper than serde_json reads by recursion is read without it, if Go's decoder
/// reads it ([`nesting::parse`]).
pub(crate) fn parse_noting_repeats(body: &[u8]) -> serde_json::Result<(Value, bool)> {
    if let Some(read) = recon_apimachinery::json::read_noting_repeats(body) {
        return Ok(read);
    }
    let mut repeats = false;
    let mut reader = serde_json::Deserializer::from_slice(body);
    let read = Build {
        repeats: &mut repeats,
    }
    .deserialize(&mut reader)
    .and_then(|value| reader.end().map(|()| value));
    match read {
        Ok(value) => Ok((value, repeats)),
        Err(e)
            if nesting::is_recursion_limit(&e) && go_json_syntax::syntax_error(body).is_none() =>
        {
            nesting::parse(body)
        }
        Err(e) => Err(e),
    }
}

/// One value of the document, built as serde_json's own `Value` visitor builds it.
struct Build<'a> {
    repeats: &'a mut bool,
}

impl<'de> DeserializeSeed<'de> for Build<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Build<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Build {
                repeats: &mut *self.repeats,
            })?;
            if out.insert(key, value).is_some() {
                *self.repeats = true;
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(Build {
            repeats: &mut *self.repeats,
        })? {
            out.push(item);
        }
        Ok(Value::Array(out.into()))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// The paths of the keys `body` repeats, in document order (`data`, `spec.ports[0].port`);
/// none for a body that is not JSON (its parse error is reported elsewhere). A body nested
/// deeper than serde_json reads by recursion is walked without it ([`nesting::repeated_keys`]).
pub(crate) fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut reader = serde_json::Deserializer::from_slice(body);
    let walk = Walk {
        path: String::new(),
        found: &mut found,
    };
    match walk.deserialize(&mut reader) {
        Ok(()) => found,
        Err(e) if nesting::is_recursion_limit(&e) => {
            nesting::repeated_keys(body).unwrap_or_default()
        }
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
    use super::{duplicate_fields, parse_noting_repeats};

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

    #[test]
    fn repeated_keys_are_found_past_serde_json_s_depth_in_document_order() {
        // 5,000 levels of `{"a":`, then an object repeating `k` (itself repeating `x` inside),
        // and a list whose second item repeats `p`.
        let depth = 5_000;
        let body = format!(
            r#"{}{{"k":1,"k":{{"x":1,"x":2}},"l":[{{}},{{"p":1,"p":2}}]}}{}"#,
            r#"{"a":"#.repeat(depth),
            "}".repeat(depth)
        );
        let prefix = vec!["a"; depth].join(".");
        assert_eq!(
            duplicate_fields(body.as_bytes()),
            [
                format!("{prefix}.k"),
                format!("{prefix}.k.x"),
                format!("{prefix}.l[1].p"),
            ]
        );
        // The same shapes within serde_json's depth: the recursive walk agrees.
        let shallow = br#"{"a":{"k":1,"k":{"x":1,"x":2},"l":[{},{"p":1,"p":2}]}}"#;
        assert_eq!(
            duplicate_fields(shallow),
            crate::wire::nesting::repeated_keys(shallow).unwrap()
        );
    }

    #[test]
    fn the_one_pass_reading_is_serde_json_s_and_notes_repeats_at_any_depth() {
        for (body, repeats) in [
            (
                &br#"{"a":1,"b":[1,-2,3.5,-0.0,1e300,"x",null,true,{}],"c":{"d":"\u00e9"}}"#[..],
                false,
            ),
            (br#"{"a":{"k":1,"k":2}}"#, true),
            (br#"[{"a":1},{"a":2,"b":{"c":[{"x":1,"x":1}]}}]"#, true),
            (br#""plain""#, false),
        ] {
            let (value, found) = parse_noting_repeats(body).unwrap();
            let expected: recon_apimachinery::json::Value = serde_json::from_slice(body).unwrap();
            assert_eq!(value, expected, "{}", String::from_utf8_lossy(body));
            assert_eq!(found, repeats, "{}", String::from_utf8_lossy(body));
            assert_eq!(found, !duplicate_fields(body).is_empty());
        }
        for bad in [&b"{\"a\":1} x"[..], b"{", b"", b"[1,]", b"[1e400]"] {
            let theirs =
                serde_json::from_slice::<recon_apimachinery::json::Value>(bad).unwrap_err();
            let ours = parse_noting_repeats(bad).unwrap_err();
            assert_eq!(ours.to_string(), theirs.to_string());
        }
        let deep = "[".repeat(100_000);
        assert!(parse_noting_repeats(deep.as_bytes()).is_err());
    }
}
