//! Events of both groups, printed by `printEvent` (pkg/printers/internalversion/printers.go):
//! an events.k8s.io Event is printed as the core Event it converts to (its `regarding`, `note`,
//! `deprecated…` fields read as the core fields they map to).

use jiff::Timestamp;

use super::super::document::{Cell, Column, Row};
use super::super::{age, timestamp};
use super::{NAME_DESCRIPTION, Printer, at, int_at, str_at, text, wide};
use crate::wire::object::Object;

const COLUMNS: &[Column<'static>] = &[
    text(
        "Last Seen",
        "The time at which the most recent occurrence of this event was recorded.",
    ),
    text(
        "Type",
        "Type of this event (Normal, Warning), new types could be added in the future",
    ),
    text(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    text("Object", "The object that this event is about."),
    wide(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
    ),
    wide(
        "Source",
        "The component reporting this event. Should be a short machine understandable string.",
    ),
    text(
        "Message",
        "A human-readable description of the status of this operation.",
    ),
    wide(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    wide("Count", "The number of times this event has occurred."),
    Column::new("Name", "string", "name", NAME_DESCRIPTION, 1),
];

pub(super) const CORE_EVENT: Printer = Printer {
    group: "",
    kind: "Event",
    columns: COLUMNS,
    row: |obj, now| event_row(obj, &CORE_FIELDS, now),
};

pub(super) const EVENTS_EVENT: Printer = Printer {
    group: "events.k8s.io",
    kind: "Event",
    columns: COLUMNS,
    row: |obj, now| event_row(obj, &EVENTS_FIELDS, now),
};

/// Where a version of Event keeps what the printer reads.
struct Fields {
    regarding: &'static str,
    message: &'static str,
    source: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
    reporting_controller: &'static str,
}

const CORE_FIELDS: Fields = Fields {
    regarding: "involvedObject",
    message: "message",
    source: "source",
    first: "firstTimestamp",
    last: "lastTimestamp",
    count: "count",
    reporting_controller: "reportingComponent",
};

const EVENTS_FIELDS: Fields = Fields {
    regarding: "regarding",
    message: "note",
    source: "deprecatedSource",
    first: "deprecatedFirstTimestamp",
    last: "deprecatedLastTimestamp",
    count: "deprecatedCount",
    reporting_controller: "reportingController",
};

fn event_row(obj: &Object, fields: &Fields, now: Timestamp) -> Row {
    let time = |path: &[&str]| timestamp(str_at(obj, path));
    let first = match time(&[fields.first]) {
        Some(t) => age::since(Some(t), now),
        None => age::since(time(&["eventTime"]), now),
    };
    let mut last = match time(&[fields.last]) {
        Some(t) => age::since(Some(t), now),
        None => first.clone(),
    };
    let mut count = int_at(obj, &[fields.count]);
    match at(obj, &["series"]).filter(|s| s.is_object()) {
        Some(_) => {
            last = age::since(time(&["series", "lastObservedTime"]), now);
            count = int_at(obj, &["series", "count"]);
        }
        // Singleton events of the newer API carry no count.
        None if count == 0 => count = 1,
        None => {}
    }
    let kind = str_at(obj, &[fields.regarding, "kind"]).to_lowercase();
    let target = match str_at(obj, &[fields.regarding, "name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    // `formatEventSource`: the source's component and host, else the reporting controller
    // and instance.
    let first_set = |a: &'static str, b: &'static str| -> String {
        match str_at(obj, &[fields.source, a]) {
            "" => str_at(obj, &[b]).to_owned(),
            s => s.to_owned(),
        }
    };
    let component = first_set("component", fields.reporting_controller);
    let instance = first_set("host", "reportingInstance");
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    Row::new(vec![
        Cell::text(last),
        Cell::text(str_at(obj, &["type"])),
        Cell::text(str_at(obj, &["reason"])),
        Cell::text(target),
        Cell::text(str_at(obj, &[fields.regarding, "fieldPath"])),
        Cell::text(source),
        Cell::text(str_at(obj, &[fields.message]).trim()),
        Cell::text(first),
        Cell::Int(count),
        Cell::text(str_at(obj, &["metadata", "name"])),
    ])
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn both_groups_print_the_same_event() {
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        let core = json!({
            "metadata": {"name": "e"}, "type": "Normal", "reason": "Pulled",
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
            "message": " pulled \n", "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:50:00Z",
            "count": 3
        });
        let events = json!({
            "metadata": {"name": "e"}, "type": "Normal", "reason": "Pulled",
            "regarding": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
            "note": " pulled \n", "deprecatedSource": {"component": "kubelet", "host": "n1"},
            "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
            "deprecatedLastTimestamp": "2026-01-01T00:50:00Z", "deprecatedCount": 3
        });
        let expected = vec![
            Cell::text("10m"),
            Cell::text("Normal"),
            Cell::text("Pulled"),
            Cell::text("pod/web"),
            Cell::text("spec.containers{app}"),
            Cell::text("kubelet, n1"),
            Cell::text("pulled"),
            Cell::text("60m"),
            Cell::Int(3),
            Cell::text("e"),
        ];
        assert_eq!(
            event_row(core.as_object().unwrap(), &CORE_FIELDS, now).cells,
            expected
        );
        assert_eq!(
            event_row(events.as_object().unwrap(), &EVENTS_FIELDS, now).cells,
            expected
        );
    }

    #[test]
    fn a_new_event_counts_once_from_its_event_time() {
        let now: Timestamp = "2026-01-01T00:00:30Z".parse().unwrap();
        let obj = json!({
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "regarding": {"kind": "Node"}, "reportingController": "ctl", "reportingInstance": "i"
        });
        let cells = event_row(obj.as_object().unwrap(), &EVENTS_FIELDS, now).cells;
        assert_eq!(cells[0], Cell::text("30s"));
        assert_eq!(cells[3], Cell::text("node"));
        assert_eq!(cells[5], Cell::text("ctl, i"));
        assert_eq!(cells[7], Cell::text("30s"));
        assert_eq!(cells[8], Cell::Int(1));
    }
}
