//! core/v1 and events.k8s.io/v1 Events: one stored object read through two APIs that name some
//! of its fields differently (`pkg/apis/events/v1/conversion.go`: `involvedObject` is
//! `regarding`, `message` is `note`, the legacy source, timestamps and count are `deprecated*`,
//! `reportingComponent` is `reportingController`). Each version writes its own zero fields: the
//! core type always writes the reporting fields, the events type omits them when empty; see
//! [`defaults::as_stored`].

use recon_apimachinery::json::Value;

use super::defaults;
use crate::wire::object::Object;

/// `(core/v1 name, events.k8s.io/v1 name)` of each field the two versions name differently.
const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// A core/v1 Event as events.k8s.io/v1 serves it.
pub(crate) fn core_to_events_v1(core: &Object) -> Object {
    let mut event = renamed(core, |key| {
        RENAMED.iter().find(|(c, _)| *c == key).map(|(_, e)| *e)
    });
    // Strings and counts the events.k8s.io type writes only when set.
    drop_zero(
        &mut event,
        &[
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "note",
            "type",
        ],
        &["deprecatedCount"],
    );
    defaults::as_stored("events.k8s.io", "Event", &mut event);
    event
}

/// An events.k8s.io/v1 Event as core/v1 serves it.
pub(crate) fn events_v1_to_core(event: &Object) -> Object {
    let mut core = renamed(event, |key| {
        RENAMED.iter().find(|(_, e)| *e == key).map(|(c, _)| *c)
    });
    // The core type always writes the reporting fields, and these only when set.
    drop_zero(
        &mut core,
        &["message", "action", "reason", "type"],
        &["count"],
    );
    if let Some(series) = core.get_mut("series").and_then(Value::as_object_mut) {
        drop_zero(series, &[], &["count"]);
    }
    defaults::as_stored("", "Event", &mut core);
    core
}

fn renamed<'a>(obj: &'a Object, rename: impl Fn(&str) -> Option<&'a str>) -> Object {
    obj.iter()
        .map(|(key, value)| {
            let key = rename(key).unwrap_or(key);
            (key.to_owned(), value.clone())
        })
        .collect()
}

/// Removes the `strings` that are empty and the `counts` that are zero (or `null`).
fn drop_zero(obj: &mut Object, strings: &[&str], counts: &[&str]) {
    for key in strings {
        if obj
            .get(key)
            .is_some_and(|v| v.is_null() || v.as_str() == Some(""))
        {
            obj.remove(key);
        }
    }
    for key in counts {
        if obj
            .get(key)
            .is_some_and(|v| v.is_null() || v.as_i64() == Some(0))
        {
            obj.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_core_event_reads_through_events_v1_with_its_fields_renamed_and_empty_ones_omitted() {
        let core = obj(json!({
            "metadata": {"name": "e", "namespace": "ns", "resourceVersion": "7"},
            "involvedObject": {"kind": "ConfigMap", "name": "c", "namespace": "ns"},
            "message": "made", "reason": "Made", "type": "Normal", "count": 2,
            "source": {"component": "tester"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:01:00Z",
            "eventTime": null, "reportingComponent": "", "reportingInstance": "",
        }));
        assert_eq!(
            Value::Object(core_to_events_v1(&core)),
            json!({
                "metadata": {"name": "e", "namespace": "ns", "resourceVersion": "7"},
                "regarding": {"kind": "ConfigMap", "name": "c", "namespace": "ns"},
                "note": "made", "reason": "Made", "type": "Normal", "deprecatedCount": 2,
                "deprecatedSource": {"component": "tester"},
                "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
                "deprecatedLastTimestamp": "2024-01-01T00:01:00Z",
                "eventTime": null,
            })
        );
    }

    #[test]
    fn an_events_v1_event_reads_through_core_with_the_fields_core_always_writes() {
        let event = obj(json!({
            "metadata": {"name": "e"},
            "regarding": {"kind": "ConfigMap", "name": "c"},
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
            "reportingController": "example.com/tester", "reportingInstance": "t-1",
            "action": "Sync", "reason": "Synced", "note": "ok", "type": "Normal",
            "deprecatedSource": {}, "deprecatedFirstTimestamp": null,
            "deprecatedLastTimestamp": null,
        }));
        assert_eq!(
            Value::Object(events_v1_to_core(&event)),
            json!({
                "metadata": {"name": "e"},
                "involvedObject": {"kind": "ConfigMap", "name": "c"},
                "eventTime": "2024-01-01T00:00:00.000000Z",
                "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
                "reportingComponent": "example.com/tester", "reportingInstance": "t-1",
                "action": "Sync", "reason": "Synced", "message": "ok", "type": "Normal",
                "source": {}, "firstTimestamp": null, "lastTimestamp": null,
            })
        );
    }

    #[test]
    fn an_empty_series_is_written_as_each_version_writes_its_zero_fields() {
        let core = obj(json!({"involvedObject": {}, "series": {"lastObservedTime": null}}));
        let event = core_to_events_v1(&core);
        assert_eq!(
            event.get("series"),
            Some(&json!({"count": 0, "lastObservedTime": null}))
        );
        assert_eq!(
            events_v1_to_core(&event).get("series"),
            Some(&json!({"lastObservedTime": null}))
        );
    }

    #[test]
    fn converting_there_and_back_gives_the_same_object() {
        let core = obj(json!({
            "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
            "related": {"kind": "Node", "name": "n"}, "message": "m", "count": 3,
            "eventTime": null, "firstTimestamp": null, "lastTimestamp": null,
            "reportingComponent": "", "reportingInstance": "", "source": {"host": "h"},
        }));
        assert_eq!(events_v1_to_core(&core_to_events_v1(&core)), core);
    }
}
