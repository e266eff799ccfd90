//! An object's labels as storage keeps them for selectors and the label index: sorted by key,
//! all in one buffer. Every stored object and every change in the history carries them, so they
//! are one shared allocation rather than two strings per label.

use std::sync::Arc;

use recon_apimachinery::json::Value;

use crate::wire::object::Object;

/// The string-valued `metadata.labels` of an object, sorted by key (keys are unique).
#[derive(Debug, Clone, Default)]
pub(crate) struct Labels(Option<Arc<Packed>>);

/// The pairs one after another in `text`; pair `i` is `text[ends[2i-1]..ends[2i]]` (its key,
/// from 0 for the first) then `text[ends[2i]..ends[2i+1]]` (its value).
#[derive(Debug)]
struct Packed {
    text: Box<str>,
    ends: Box<[usize]>,
}

impl Labels {
    /// The labels of `obj`: those whose value is a string (a decoded object has no others).
    pub(crate) fn of(obj: &Object) -> Labels {
        let Some(map) = obj
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
        else {
            return Labels::default();
        };
        // In key order, as a `Map` keeps them.
        let pairs: Vec<(&str, &str)> = map
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
            .collect();
        if pairs.is_empty() {
            return Labels::default();
        }
        let mut text = String::with_capacity(pairs.iter().map(|(k, v)| k.len() + v.len()).sum());
        let mut ends = Vec::with_capacity(2 * pairs.len());
        for (k, v) in pairs {
            text.push_str(k);
            ends.push(text.len());
            text.push_str(v);
            ends.push(text.len());
        }
        Labels(Some(Arc::new(Packed {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        })))
    }

    /// The number of labels.
    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |p| p.ends.len() / 2)
    }

    /// Label `i` (in key order) as `(key, value)`.
    fn pair(&self, i: usize) -> (&str, &str) {
        let Some(p) = &self.0 else { return ("", "") };
        let start = if i == 0 { 0 } else { p.ends[2 * i - 1] };
        let (key_end, end) = (p.ends[2 * i], p.ends[2 * i + 1]);
        (&p.text[start..key_end], &p.text[key_end..end])
    }

    /// The labels in key order.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.len()).map(|i| self.pair(i))
    }

    /// The value of label `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = (low + high) / 2;
            let (k, v) = self.pair(mid);
            match k.cmp(key) {
                std::cmp::Ordering::Equal => return Some(v),
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn object(v: Value) -> Object {
        recon_apimachinery::json::from_value(v).expect("a test object")
    }

    #[test]
    fn labels_are_the_string_values_in_key_order_and_are_found_by_key() {
        let labels = Labels::of(&object(json!({"metadata": {"labels": {
            "tier": "backend", "app.kubernetes.io/name": "web", "empty": "", "odd": 3,
        }}})));
        assert_eq!(
            labels.iter().collect::<Vec<_>>(),
            [
                ("app.kubernetes.io/name", "web"),
                ("empty", ""),
                ("tier", "backend")
            ]
        );
        assert_eq!(labels.len(), 3);
        assert_eq!(labels.get("tier"), Some("backend"));
        assert_eq!(labels.get("empty"), Some(""));
        assert_eq!(labels.get("odd"), None);
        assert_eq!(labels.get("zzz"), None);
        assert_eq!(labels.get("a"), None);
        assert_eq!(labels.get("app.kubernetes.io/name"), Some("web"));
    }

    #[test]
    fn no_labels_or_labels_that_are_not_a_map_are_none() {
        for obj in [
            json!({}),
            json!({"metadata": null}),
            json!({"metadata": {"labels": null}}),
            json!({"metadata": {"labels": ["a"]}}),
            json!({"metadata": {"labels": {}}}),
        ] {
            let labels = Labels::of(&object(obj));
            assert_eq!(labels.len(), 0);
            assert_eq!(labels.iter().count(), 0);
            assert_eq!(labels.get(""), None);
        }
    }
}
