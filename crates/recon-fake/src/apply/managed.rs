//! `metadata.managedFields`: who owns which fields (apimachinery
//! `pkg/util/managedfields/internal/managedfields.go`, `fieldmanager.go`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};

use super::time::Time;
use crate::wire::nesting::{self, GO_MAX_DEPTH};
use recon_apimachinery::fieldpath::FieldsV1;
use recon_apimachinery::go_json::write_go_string;

/// The kind of write an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write: create, update, merge or JSON patch.
    Update,
}

impl Operation {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// An owner's identity: an entry is unique per (manager, operation, subresource), and for
/// Update entries also per apiVersion (`BuildManagerIdentifier`). Ordered like upstream
/// orders the identifier's JSON, which decides the order of conflict groups and cap ties.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ManagerId {
    key: String,
    manager: String,
    operation: Operation,
    api_version: String,
    subresource: String,
}

impl ManagerId {
    /// An identity; `api_version` is dropped for Apply, whose entries move with each apply.
    pub fn new(manager: &str, operation: Operation, api_version: &str, subresource: &str) -> Self {
        let api_version = match operation {
            Operation::Apply => "",
            Operation::Update => api_version,
        };
        // `json.Marshal` of the ManagedFieldsEntry with omitempty fields, in struct order.
        let mut key = String::from("{");
        let mut field = |name: &str, value: &str| {
            if !value.is_empty() {
                if key.len() > 1 {
                    key.push(',');
                }
                key.push('"');
                key.push_str(name);
                key.push_str("\":");
                write_go_string(&mut key, value);
            }
        };
        field("manager", manager);
        field("operation", operation.as_str());
        field("apiVersion", api_version);
        field("subresource", subresource);
        key.push('}');
        ManagerId {
            key,
            manager: manager.to_owned(),
            operation,
            api_version: api_version.to_owned(),
            subresource: subresource.to_owned(),
        }
    }

    /// The manager name.
    #[cfg(test)]
    pub fn manager(&self) -> &str {
        &self.manager
    }

    /// The subresource, or `""`.
    #[cfg(test)]
    pub fn subresource(&self) -> &str {
        &self.subresource
    }

    /// How conflict messages name the owner (`printManager`): `"m"` for appliers,
    /// `"m" using example.com/v1` for updaters, with ` with subresource "status"` after the
    /// name when there is one.
    pub fn display(&self) -> String {
        let mut s = go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                go_quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// The fields one owner holds, at the apiVersion it wrote them with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedSet {
    /// The owned fields, kept as their `fieldsV1`: a write that leaves them alone neither
    /// decodes nor encodes them again.
    pub set: FieldsV1,
    /// The apiVersion of the owner's last write.
    pub api_version: String,
    /// Whether the owner is an applier.
    pub applied: bool,
}

/// One entry as read back, for callers and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Who.
    pub id: &'a ManagerId,
    /// What it owns.
    pub fields: &'a VersionedSet,
    /// When it last changed something; absent for an applier that never changed the object.
    pub time: Option<Time>,
}

impl<'a> Entry<'a> {
    /// An entry of an owner's identity, fields and time.
    fn of((id, fields, time): &'a (ManagerId, VersionedSet, Option<Time>)) -> Self {
        Entry {
            id,
            fields,
            time: *time,
        }
    }
}

/// Every owner's fields plus the time of its last change. Like upstream, times live apart
/// from the sets: an owner can lose its set and keep its time during one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedFields {
    pub(super) sets: BTreeMap<ManagerId, VersionedSet>,
    pub(super) times: BTreeMap<ManagerId, Time>,
}

/// How a request's `metadata.managedFields` is treated (`decodeLiveOrNew`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestRules {
    /// A write to a subresource: the request's managedFields are ignored.
    pub subresource: bool,
    /// `managedFields: []` resets. True for built-in types; false for custom resources,
    /// whose metadata coercion drops an empty list before the field manager sees it
    /// (verified on the real server: `[]` in a merge patch of a CR changes nothing).
    pub empty_list_resets: bool,
}

impl ManagedFields {
    /// No owners.
    pub fn new() -> Self {
        ManagedFields::default()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The entries in wire order.
    #[cfg(test)]
    pub fn entries(&self) -> Vec<Entry<'_>> {
        let mut out: Vec<Entry<'_>> = self
            .sets
            .iter()
            .map(|(id, fields)| Entry {
                id,
                fields,
                time: self.times.get(id).copied(),
            })
            .collect();
        out.sort_by(wire_order);
        out
    }

    /// Reads `metadata.managedFields` of an object; absent means no owners.
    pub fn from_object(obj: &Value) -> Result<Self, String> {
        match obj.pointer("/metadata/managedFields") {
            None | Some(Value::Null) => Ok(ManagedFields::new()),
            Some(list) => Self::from_value(list),
        }
    }

    /// Decodes a managedFields list (`DecodeManagedFields`).
    pub fn from_value(list: &Value) -> Result<Self, String> {
        let Value::Array(items) = list else {
            return Err("managedFields must be a list".to_owned());
        };
        Self::from_entries(items.iter().map(Cow::Borrowed))
    }

    /// [`from_value`](Self::from_value), moving each entry's `fieldsV1` out of `list`.
    fn from_owned(list: Value) -> Result<Self, String> {
        let Value::Array(items) = list else {
            return Err("managedFields must be a list".to_owned());
        };
        Self::from_entries(items.into_iter().map(Cow::Owned))
    }

    /// Decodes the entries of a list, borrowed or owned.
    fn from_entries<'a>(items: impl Iterator<Item = Cow<'a, Value>>) -> Result<Self, String> {
        let mut out = ManagedFields::new();
        for (i, item) in items.enumerate() {
            let (e, fields) = match item {
                Cow::Borrowed(Value::Object(e)) => {
                    (Cow::Borrowed(e), e.get("fieldsV1").map(Cow::Borrowed))
                }
                Cow::Owned(Value::Object(mut e)) => {
                    let fields = e.remove("fieldsV1").map(Cow::Owned);
                    (Cow::Owned(e), fields)
                }
                _ => return Err(format!("managed fields entry {i} is not an object")),
            };
            let text = |k: &str| -> Result<&str, String> {
                match e.get(k) {
                    None | Some(Value::Null) => Ok(""),
                    Some(Value::String(s)) => Ok(s),
                    Some(other) => Err(format!(
                        "managed fields entry {i}: {k} must be a string, got {other}"
                    )),
                }
            };
            let operation = match text("operation")? {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return Err("operation must be `Apply` or `Update`".to_owned()),
            };
            let api_version = text("apiVersion")?;
            if api_version.is_empty() {
                return Err("apiVersion must not be empty".to_owned());
            }
            match text("fieldsType")? {
                "FieldsV1" => {}
                "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
                other => {
                    return Err(format!(
                        "invalid fieldsType {} in managed fields entry {i}",
                        go_quote(other)
                    ));
                }
            }
            let time = match text("time")? {
                "" => None,
                t => Some(
                    Time::parse(t)
                        .ok_or_else(|| format!("managed fields entry {i}: bad time {t:?}"))?,
                ),
            };
            let set = match fields {
                None => Ok(FieldsV1::new()),
                Some(Cow::Borrowed(f)) => FieldsV1::from_value(f),
                Some(Cow::Owned(f)) => FieldsV1::from_owned(f),
            }
            .map_err(|err| format!("error decoding set: {err}"))?;
            let id = ManagerId::new(
                text("manager")?,
                operation,
                api_version,
                text("subresource")?,
            );
            // A later entry with the same identity replaces the earlier one, time included.
            match time {
                Some(t) => out.times.insert(id.clone(), t),
                None => out.times.remove(&id),
            };
            out.sets.insert(
                id,
                VersionedSet {
                    set,
                    api_version: api_version.to_owned(),
                    applied: operation == Operation::Apply,
                },
            );
        }
        Ok(out)
    }

    /// The managedFields a non-apply write starts from (`decodeLiveOrNew`): the request's list
    /// when it is valid and non-empty, nothing when it asks for a reset (`[{}]`, or `[]` where
    /// [`RequestRules::empty_list_resets`]), the live object's otherwise. Subresource writes
    /// always use the live list. `sent` is the request's list, taken out of its object
    /// ([`take_list`]).
    pub fn from_request(sent: Option<Value>, live: Option<&Value>, rules: RequestRules) -> Self {
        let live_fields = || {
            live.and_then(|l| Self::from_object(l).ok())
                .unwrap_or_default()
        };
        if rules.subresource {
            return live_fields();
        }
        match sent {
            Some(Value::Array(items)) if items.is_empty() => {
                if rules.empty_list_resets {
                    ManagedFields::new()
                } else {
                    live_fields()
                }
            }
            Some(Value::Array(items)) if items.len() == 1 && is_zero_entry(&items[0]) => {
                ManagedFields::new()
            }
            Some(list @ Value::Array(_)) => match Self::from_owned(list) {
                Ok(m) if !m.is_empty() => m,
                _ => live_fields(),
            },
            _ => live_fields(),
        }
    }

    /// The wire form, sorted; `None` when there are no entries (the field is then removed).
    #[cfg(test)]
    pub fn to_value(&self) -> Option<Value> {
        self.clone().into_value()
    }

    /// [`to_value`](Self::to_value), moving each entry's strings and `fieldsV1` into it.
    fn into_value(self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        let ManagedFields { sets, times } = self;
        let mut entries: Vec<(ManagerId, VersionedSet, Option<Time>)> = sets
            .into_iter()
            .map(|(id, fields)| {
                let time = times.get(&id).copied();
                (id, fields, time)
            })
            .collect();
        entries.sort_by(|p, q| wire_order(&Entry::of(p), &Entry::of(q)));
        let items = entries
            .into_iter()
            .map(|(id, fields, time)| entry_value(id, fields, time))
            .collect();
        Some(Value::Array(items))
    }

    /// Writes the entries into `obj.metadata.managedFields`, removing the field when empty.
    pub fn write_to(self, obj: &mut Value) {
        write_list(obj, self.into_value());
    }

    /// [`write_to`](Self::write_to) as `Unstructured.SetManagedFields` writes: each entry is
    /// converted to an unstructured map, its `fieldsV1` through `json.Unmarshal`, which refuses
    /// nesting deeper than [`GO_MAX_DEPTH`]; on the first refusal the object is left as it was.
    /// A non-apply write took its managedFields out first ([`take_list`]), so it is stored
    /// without any; an apply's merged object keeps the live object's entries (both recorded
    /// from the real server: `deep/an-*-too-deep-for-its-managed-fields-*`).
    pub fn write_to_unstructured(self, obj: &mut Value) {
        let list = self.into_value();
        let entries = list
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        let too_deep = |entry: &Value| {
            entry
                .get("fieldsV1")
                .is_some_and(|fields| nesting::value_depth(fields) > GO_MAX_DEPTH)
        };
        if entries.clone().any(too_deep) {
            return;
        }
        write_list(obj, list);
    }
}

/// Takes `metadata.managedFields` out of `obj` (`RemoveObjectManagedFields`): a write is
/// recorded without them, and stored without any when its new ones cannot be set.
pub fn take_list(obj: &mut Value) -> Option<Value> {
    match obj.get_mut("metadata") {
        Some(Value::Object(meta)) => meta.remove("managedFields"),
        _ => None,
    }
}

/// Sets `obj.metadata.managedFields` to `list`, or removes it.
fn write_list(obj: &mut Value, list: Option<Value>) {
    let Value::Object(root) = obj else { return };
    match list {
        Some(list) => {
            let meta = root
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            // `metadata: null` (an applied configuration can say so) decodes as an empty
            // ObjectMeta, which takes the entries as any other.
            if meta.is_null() {
                *meta = Value::Object(Map::new());
            }
            if let Value::Object(meta) = meta {
                meta.insert("managedFields".to_owned(), list);
            }
        }
        None => {
            if let Some(Value::Object(meta)) = root.get_mut("metadata") {
                meta.remove("managedFields");
            }
        }
    }
}

/// `sortEncodedManagedFields`: Apply before Update, then by time (none counts as 0), manager,
/// apiVersion, subresource.
fn wire_order(p: &Entry<'_>, q: &Entry<'_>) -> std::cmp::Ordering {
    let op = |e: &Entry<'_>| {
        if e.fields.applied {
            Operation::Apply
        } else {
            e.id.operation
        }
    };
    op(p)
        .cmp(&op(q))
        .then_with(|| p.time.map_or(0, |t| t.0).cmp(&q.time.map_or(0, |t| t.0)))
        .then_with(|| p.id.manager.cmp(&q.id.manager))
        .then_with(|| p.fields.api_version.cmp(&q.fields.api_version))
        .then_with(|| p.id.subresource.cmp(&q.id.subresource))
}

/// One entry's wire form.
fn entry_value(id: ManagerId, fields: VersionedSet, time: Option<Time>) -> Value {
    let mut m = Map::new();
    m.insert("apiVersion".to_owned(), Value::String(fields.api_version));
    m.insert(
        "fieldsType".to_owned(),
        Value::String("FieldsV1".to_owned()),
    );
    m.insert("fieldsV1".to_owned(), fields.set.into_value());
    if !id.manager.is_empty() {
        m.insert("manager".to_owned(), Value::String(id.manager));
    }
    let op = if fields.applied {
        Operation::Apply
    } else {
        id.operation
    };
    m.insert(
        "operation".to_owned(),
        Value::String(op.as_str().to_owned()),
    );
    if !id.subresource.is_empty() {
        m.insert("subresource".to_owned(), Value::String(id.subresource));
    }
    if let Some(t) = time {
        m.insert("time".to_owned(), Value::String(t.to_string()));
    }
    Value::Object(m)
}

/// `reflect.DeepEqual(entry, ManagedFieldsEntry{})`.
fn is_zero_entry(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .all(|(k, v)| v.is_null() || (k != "fieldsV1" && v.as_str() == Some(""))),
        _ => false,
    }
}

/// Keeps the stored times when a write changes nothing but managedFields times
/// (`IgnoreManagedFieldsTimestampsTransformer`), so that the no-op check (U6) sees equal
/// objects. Call it on the final object, after the strategy's resets, before comparing.
pub fn restore_unchanged_times(new: &mut Map, old: &Map) {
    let (new_mf, old_mf) = (managed_entries(new), managed_entries(old));
    if new_mf.len() != old_mf.len() || new_mf.is_empty() {
        return;
    }
    if new_mf
        .iter()
        .zip(old_mf)
        .all(|(n, o)| n.get("time") == o.get("time"))
    {
        return;
    }
    let same_but_time = new_mf.iter().zip(old_mf).all(|(n, o)| match (n, o) {
        (Value::Object(n), Value::Object(o)) => equal_except(n, o, "time"),
        _ => n == o,
    });
    if !same_but_time || !equal_except_managed_fields(new, old) {
        return;
    }
    let old_times: Vec<Option<Value>> = old_mf.iter().map(|o| o.get("time").cloned()).collect();
    if let Some(Value::Array(items)) = new
        .get_mut("metadata")
        .and_then(|m| m.get_mut("managedFields"))
    {
        for (n, time) in items.iter_mut().zip(old_times) {
            if let Value::Object(m) = n {
                match time {
                    Some(t) => m.insert("time".to_owned(), t),
                    None => m.remove("time"),
                };
            }
        }
    }
}

/// The `metadata.managedFields` items of an object.
fn managed_entries(obj: &Map) -> &[Value] {
    match obj.get("metadata").and_then(|m| m.get("managedFields")) {
        Some(Value::Array(items)) => items,
        _ => &[],
    }
}

/// Whether two maps are equal once `key` is ignored on both sides.
fn equal_except(a: &Map, b: &Map, key: &str) -> bool {
    let kept = |m: &Map| m.len() - usize::from(m.contains_key(key));
    kept(a) == kept(b)
        && a.iter()
            .filter(|(k, _)| *k != key)
            .all(|(k, v)| b.get(k) == Some(v))
}

/// Whether two objects are equal once `metadata.managedFields` is ignored on both sides.
fn equal_except_managed_fields(a: &Map, b: &Map) -> bool {
    if !equal_except(a, b, "metadata") {
        return false;
    }
    match (a.get("metadata"), b.get("metadata")) {
        (Some(Value::Object(ma)), Some(Value::Object(mb))) => equal_except(ma, mb, "managedFields"),
        (ma, mb) => ma == mb,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use recon_apimachinery::json;

    use super::*;

    fn entry(manager: &str, op: &str, time: Option<&str>, fields: Value) -> Value {
        let mut e = json!({"manager": manager, "operation": op, "apiVersion": "g/v1",
            "fieldsType": "FieldsV1", "fieldsV1": fields});
        if let Some(t) = time {
            e["time"] = json!(t);
        }
        e
    }

    #[test]
    fn identity_json_and_display() {
        let u = ManagerId::new("m<x>", Operation::Update, "g/v1", "status");
        assert_eq!(
            u.key,
            r#"{"manager":"m\u003cx\u003e","operation":"Update","apiVersion":"g/v1","subresource":"status"}"#
        );
        assert_eq!(
            u.display(),
            r#""m<x>" with subresource "status" using g/v1"#
        );
        let a = ManagerId::new("m", Operation::Apply, "g/v1", "");
        assert_eq!(a.key, r#"{"manager":"m","operation":"Apply"}"#);
        assert_eq!(a.display(), r#""m""#);
    }

    #[test]
    fn sorted_apply_first_then_time_then_manager() {
        let list = json!([
            entry(
                "z",
                "Update",
                Some("2020-01-01T00:00:00Z"),
                json!({"f:a": {}})
            ),
            entry(
                "b",
                "Apply",
                Some("2020-01-01T00:00:05Z"),
                json!({"f:b": {}})
            ),
            entry(
                "a",
                "Apply",
                Some("2020-01-01T00:00:05Z"),
                json!({"f:c": {}})
            ),
            entry("c", "Apply", None, json!({"f:d": {}})),
            entry("y", "Update", None, json!({"f:e": {}})),
        ]);
        let m = ManagedFields::from_value(&list).unwrap();
        let order: Vec<&str> = m.entries().iter().map(|e| e.id.manager()).collect();
        assert_eq!(order, ["c", "a", "b", "y", "z"]);
        let round = m.to_value().unwrap();
        assert_eq!(
            round[0],
            json!({"apiVersion": "g/v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:d": {}}, "manager": "c", "operation": "Apply"})
        );
    }

    #[test]
    fn decode_errors() {
        let bad = |e: Value| ManagedFields::from_value(&json!([e])).unwrap_err();
        assert_eq!(
            bad(json!({"operation": "Bogus", "apiVersion": "v1"})),
            "operation must be `Apply` or `Update`"
        );
        assert_eq!(
            bad(json!({"operation": "Update"})),
            "apiVersion must not be empty"
        );
        assert_eq!(
            bad(json!({"operation": "Update", "apiVersion": "v1"})),
            "missing fieldsType in managed fields entry 0"
        );
        assert_eq!(
            bad(json!({"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"})),
            r#"invalid fieldsType "FieldsV2" in managed fields entry 0"#
        );
        assert!(bad(json!({"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"k:x": {}}})).starts_with("error decoding set"));
    }

    #[test]
    fn request_rules() {
        let live = json!({"metadata": {"managedFields": [entry("live", "Update", None, json!({"f:a": {}}))]}});
        let req = |mf: Value| Some(mf);
        let cr = RequestRules::default();
        let builtin = RequestRules {
            empty_list_resets: true,
            ..cr
        };
        let names = |m: ManagedFields| -> Vec<String> {
            m.entries()
                .iter()
                .map(|e| e.id.manager().to_owned())
                .collect()
        };
        assert_eq!(
            names(ManagedFields::from_request(req(json!([])), Some(&live), cr)),
            ["live"]
        );
        assert!(ManagedFields::from_request(req(json!([])), Some(&live), builtin).is_empty());
        assert!(ManagedFields::from_request(req(json!([{}])), Some(&live), cr).is_empty());
        let mine = req(json!([entry("mine", "Update", None, json!({"f:b": {}}))]));
        assert_eq!(
            names(ManagedFields::from_request(mine.clone(), Some(&live), cr)),
            ["mine"]
        );
        let status = RequestRules {
            subresource: true,
            ..cr
        };
        assert_eq!(
            names(ManagedFields::from_request(
                mine.clone(),
                Some(&live),
                status
            )),
            ["live"]
        );
        let invalid = req(json!([{"manager": "x", "operation": "Bogus"}]));
        assert_eq!(
            names(ManagedFields::from_request(invalid, Some(&live), cr)),
            ["live"]
        );
        assert_eq!(
            names(ManagedFields::from_request(None, Some(&live), cr)),
            ["live"]
        );
        assert!(ManagedFields::from_request(None, None, cr).is_empty());
    }

    #[test]
    fn write_to_sets_or_removes() {
        let m = ManagedFields::from_value(&json!([entry("a", "Update", None, json!({"f:a": {}}))]))
            .unwrap();
        let mut obj = json!({"spec": {}});
        m.write_to(&mut obj);
        assert_eq!(obj["metadata"]["managedFields"][0]["manager"], "a");
        ManagedFields::new().write_to(&mut obj);
        assert_eq!(obj, json!({"spec": {}, "metadata": {}}));
    }

    #[test]
    fn unchanged_objects_keep_their_times() {
        let map = |v: Value| v.as_object().cloned().unwrap();
        let old = map(
            json!({"metadata": {"managedFields": [entry("a", "Apply", Some("2020-01-01T00:00:00Z"), json!({"f:x": {}}))]}, "spec": {"x": 1}}),
        );
        let mut new = old.clone();
        new["metadata"]["managedFields"][0]["time"] = json!("2021-01-01T00:00:00Z");
        restore_unchanged_times(&mut new, &old);
        assert_eq!(new, old);
        let mut changed = new.clone();
        changed["metadata"]["managedFields"][0]["time"] = json!("2021-01-01T00:00:00Z");
        changed["spec"]["x"] = json!(2);
        let before = changed.clone();
        restore_unchanged_times(&mut changed, &old);
        assert_eq!(changed, before);
        // Another metadata field changed: the new time stays too.
        let mut relabelled = new.clone();
        relabelled["metadata"]["managedFields"][0]["time"] = json!("2021-01-01T00:00:00Z");
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        let before = relabelled.clone();
        restore_unchanged_times(&mut relabelled, &old);
        assert_eq!(relabelled, before);
    }
}
