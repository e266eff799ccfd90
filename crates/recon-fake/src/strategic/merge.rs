//! The merge: the server-side path of `strategicpatch.StrategicMergeMapPatch`
//! (`k8s.io/apimachinery` `pkg/util/strategicpatch/patch.go`), i.e. `mergeMap`
//! with `MergeParallelList: true` and `IgnoreUnmatchedNulls: true`.
//!
//! The structure follows upstream's functions so that results, element order
//! and error texts agree, including quirks:
//!
//! * merged list order comes from `normalizeElementOrder`/`mergeSortedSlice`:
//!   without `$setElementOrder`, patch elements that are new are placed
//!   *before* the stored elements that the patch does not mention;
//! * values taken from the patch as a whole (a key missing in the object, or a
//!   value of another JSON type) lose their `null`s and any object carrying
//!   `$patch`, but list elements appended by a merge and lists replaced
//!   wholesale are copied verbatim;
//! * Go's map iteration order is random, so when several keys of one patch
//!   object would fail, upstream may report any of them; this port visits keys
//!   in byte order (so `$deleteFromPrimitiveList/x` is applied before `x`).

use recon_apimachinery::json::{Map, Value};

use super::error::Fault;
use super::gofmt::{GoSet, GoType, fmt_map_v, fmt_s, fmt_slice_v, go_eq, go_type, type_name};
use super::gosort::go_stable_sort;
use super::schema::{Cursor, PatchStrategy};

type Obj = Map;

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

static NULL: Value = Value::Null;

// --- error values (k8s.io/apimachinery pkg/util/mergepatch/errors.go) ----------

/// `mergepatch.ErrNoMergeKey`.
fn no_merge_key(map: &Obj, key: &str) -> Fault {
    Fault::Plain(format!(
        "map: {} does not contain declared merge key: {}",
        fmt_map_v(map),
        key
    ))
}

/// `mergepatch.ErrBadArgType(map[string]interface{}, actual)`.
fn expected_map(actual: &Value) -> Fault {
    Fault::Plain(format!(
        "expected a map[string]interface {{}}, but received a {}",
        type_name(actual)
    ))
}

/// `mergepatch.ErrBadArgType([]interface{}, actual)`.
fn expected_slice(actual: &Value) -> Fault {
    Fault::Plain(format!(
        "expected a []interface {{}}, but received a {}",
        type_name(actual)
    ))
}

/// `mergepatch.ErrBadPatchType`.
fn bad_patch_type(directive: &Value, map: &Obj) -> Fault {
    Fault::Plain(format!(
        "unknown patch type: {} in map: {}",
        fmt_s(directive),
        fmt_map_v(map)
    ))
}

/// A failed unchecked type assertion `v.(map[string]interface{})`; unreachable
/// in practice because element types are checked first.
fn not_a_map_panic() -> Fault {
    Fault::Panic("interface conversion: interface {} is not map[string]interface {}".into())
}

fn sorted_keys(map: &Obj) -> Vec<String> {
    let mut keys: Vec<String> = map.keys().cloned().collect();
    keys.sort();
    keys
}

/// `extractKey`: `<prefix>/<key>` → `<key>`.
fn extract_key<'a>(key: &'a str, prefix: &str) -> Option<&'a str> {
    let (head, rest) = key.split_once('/')?;
    (head == prefix).then_some(rest)
}

// --- maps --------------------------------------------------------------------------

/// `mergeMap`. Upstream recurses once a level of the patch; this keeps its own list of the
/// maps being merged, so a patch as deep as Go reads takes no more stack (lists merged by key
/// still merge their items here, once a level of a list in the schema).
pub(super) fn merge_map(original: Obj, patch: Obj, schema: Cursor) -> Result<Obj, Fault> {
    let mut open: Vec<MergingMap> = Vec::new();
    let mut begun = begin_map(original, patch, schema, None)?;
    loop {
        match begun {
            Begun::Open(merging) => open.push(merging),
            Begun::Merged(target, merged) => match (open.last_mut(), target) {
                (Some(parent), Some(target)) => {
                    parent.original.insert(target, Value::Object(merged));
                }
                // Only the outermost map has no key to go under.
                _ => return Ok(merged),
            },
        }
        let Some(innermost) = open.last_mut() else {
            return Ok(Obj::new());
        };
        let mut below = None;
        for key in innermost.keys.by_ref() {
            if let Some(value) = innermost.patch.remove(&key) {
                below = merge_entry(&mut innermost.original, key, value, innermost.schema)?;
                if below.is_some() {
                    break;
                }
            }
        }
        begun = match below {
            Some(below) => begin_map(below.current, below.patch, below.schema, Some(below.target))?,
            None => match open.pop() {
                Some(done) => Begun::Merged(done.target, done.original),
                None => return Ok(Obj::new()),
            },
        };
    }
}

/// A map being merged: the stored map as merged so far, the patch's members left and the keys
/// to take them in, and the key it goes under in the map above.
struct MergingMap {
    original: Obj,
    patch: Obj,
    keys: std::vec::IntoIter<String>,
    schema: Cursor,
    target: Option<String>,
}

/// Two maps under `target` that merge key by key: the stored one and the patch's.
struct MapBelow {
    target: String,
    current: Obj,
    patch: Obj,
    schema: Cursor,
}

enum Begun {
    Open(MergingMap),
    /// A map merged (by its members, or whole by a `$patch` directive), under its key (none
    /// for the outermost).
    Merged(Option<String>, Obj),
}

/// `mergeMap` up to its main loop: a `$patch` directive, `$retainKeys` and the lists of
/// `$setElementOrder`.
fn begin_map(
    mut original: Obj,
    mut patch: Obj,
    schema: Cursor,
    target: Option<String>,
) -> Result<Begun, Fault> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER).cloned() {
        return Ok(Begun::Merged(target, map_directive(&directive, patch)?));
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_ordered_lists(&mut original, &mut patch, schema)?;
    let keys = sorted_keys(&patch).into_iter();
    Ok(Begun::Open(MergingMap {
        original,
        patch,
        keys,
        schema,
        target,
    }))
}

/// `handleDirectiveInMergeMap`: `$patch: replace` keeps the patch (minus the
/// marker) as the whole object, `$patch: delete` empties it.
fn map_directive(directive: &Value, mut patch: Obj) -> Result<Obj, Fault> {
    match directive.as_str() {
        Some(REPLACE_DIRECTIVE) => {
            patch.remove(DIRECTIVE_MARKER);
            Ok(patch)
        }
        Some(DELETE_DIRECTIVE) => Ok(Obj::new()),
        _ => Err(bad_patch_type(directive, &patch)),
    }
}

/// `applyRetainKeysDirective` with `MergeParallelList`: every non-null patch
/// key (other than the list directives) must be listed, and unlisted keys are
/// dropped from the object. It applies to any object, whatever the schema says.
fn apply_retain_keys(original: &mut Obj, patch: &mut Obj) -> Result<(), Fault> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(list) = &retain else {
        return Err(Fault::BadRetainKeysFormat);
    };
    let keep = GoSet::build(list)?;
    for key in sorted_keys(patch) {
        let is_null = patch.get(&key).is_none_or(Value::is_null);
        if is_null
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || key.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !keep.contains(&Value::String(key))? {
            return Err(Fault::BadRetainKeysFormat);
        }
    }
    let mut dropped = Vec::new();
    for key in original.keys() {
        if !keep.contains(&Value::String(key.clone()))? {
            dropped.push(key.clone());
        }
    }
    for key in dropped {
        original.remove(&key);
    }
    Ok(())
}

/// One iteration of `mergeMap`'s main loop; two maps to merge key by key are handed back.
fn merge_entry(
    original: &mut Obj,
    key: String,
    value: Value,
    schema: Cursor,
) -> Result<Option<MapBelow>, Fault> {
    // `preprocessDeletionListForMerging`.
    let (target, delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
        let suffix = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            .ok_or(Fault::BadPrimitiveListFormat)?;
        // Upstream only renames the key when the suffix is not empty.
        let target = if suffix.is_empty() {
            key.clone()
        } else {
            suffix.to_string()
        };
        (target, true)
    } else {
        (key, false)
    };

    // `null` deletes the key (even for a `$deleteFromPrimitiveList/x: null`).
    if value.is_null() {
        original.remove(&target);
        return Ok(None);
    }
    let Some(current) = original.remove(&target) else {
        if !delete_list {
            insert_from_patch(original, target, value);
        }
        return Ok(None);
    };
    if go_type(&current) != go_type(&value) {
        if delete_list {
            original.insert(target, current);
        } else {
            insert_from_patch(original, target, value);
        }
        return Ok(None);
    }
    let merged = match (current, value) {
        (Value::Object(current), Value::Object(value)) => {
            let (sub, strategy) = schema.field(&target);
            if strategy == PatchStrategy::Replace {
                // `mergeMapHandler` with `patchStrategy:"replace"`: taken verbatim.
                Value::Object(value)
            } else {
                return Ok(Some(MapBelow {
                    target,
                    current,
                    patch: value,
                    schema: sub,
                }));
            }
        }
        (Value::Array(current), Value::Array(value)) => {
            let (sub, strategy) = schema.field(&target);
            Value::Array(
                merge_list_field(
                    current.into_vec(),
                    value.into_vec(),
                    sub,
                    strategy,
                    delete_list,
                )?
                .merged
                .into(),
            )
        }
        // Scalars of the same Go type: the patch value wins, even for a
        // `$deleteFromPrimitiveList/x` aimed at a scalar.
        (_, value) => value,
    };
    original.insert(target, merged);
    Ok(None)
}

/// A patch value taken as a whole: `discardNullValuesFromPatch`, then
/// `removeDirectives` (a value that is itself a `$patch` object is dropped).
fn insert_from_patch(original: &mut Obj, key: String, mut value: Value) {
    discard_nulls(&mut value);
    if let Some(value) = remove_directives(value) {
        original.insert(key, value);
    }
}

/// `discardNullValuesFromPatch`: drops `null` members of objects, at every depth (`null`
/// list elements stay).
fn discard_nulls(value: &mut Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                pending.extend(map.values_mut());
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}

/// `removeDirectives`: `None` for an object carrying `$patch`; such objects
/// are also removed from nested objects and lists.
fn remove_directives(mut value: Value) -> Option<Value> {
    let directive = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
    };
    if directive(&value) {
        return None;
    }
    let mut pending = vec![&mut value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                map.retain(|_, v| !directive(v));
                pending.extend(map.values_mut());
            }
            Value::Array(items) => {
                items.retain(|v| !directive(v));
                pending.extend(items.iter_mut());
            }
            _ => {}
        }
    }
    Some(value)
}

// --- $setElementOrder ---------------------------------------------------------------

/// `mergePatchIntoOriginal`: merges every list named by a
/// `$setElementOrder/<list>` directive and orders it by the directive.
/// Precedence: `$setElementOrder` > order in the patch list > stored order.
fn merge_ordered_lists(original: &mut Obj, patch: &mut Obj, schema: Cursor) -> Result<(), Fault> {
    let keys: Vec<String> = sorted_keys(patch)
        .into_iter()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .collect();
    for key in keys {
        // A key removed by an earlier iteration is skipped, like Go's range
        // skips entries deleted before they are reached.
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let order = match order {
            Value::Array(items) => items,
            other => return Err(expected_slice(&other)),
        };
        let list_key = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)
            .ok_or(Fault::BadSetElementOrderFormat)?
            .to_string();
        let stored = list_value(original.get(&list_key))?;
        let patched = list_value(patch.get(&list_key))?;
        let (sub, strategy) = schema.field(&list_key);
        let merge_key = match strategy {
            PatchStrategy::Merge { key } => key,
            _ => "",
        };
        validate_order(patched.as_deref().unwrap_or_default(), &order, merge_key)?;

        let (merged, server_order) = match (stored.clone(), patched.clone()) {
            (Some(stored), None) => (stored.clone(), stored),
            (None, Some(patched)) => (
                patched.into_iter().filter_map(remove_directives).collect(),
                Vec::new(),
            ),
            (Some(stored), Some(patched)) => {
                let result = merge_list_field(stored, patched, sub, strategy, false)?;
                // Upstream keeps using its stored list afterwards, whose array
                // the merge may have rewritten in place (see `GoSlice`).
                (result.merged, result.backing)
            }
            (None, None) => continue,
        };

        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_primitives(&merged, &order)?
        } else {
            partition_maps(&merged, &order, merge_key)?
        };
        let kind = slice_element_type(&[
            stored.as_deref().unwrap_or_default(),
            patched.as_deref().unwrap_or_default(),
        ])?;
        let ordered = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            merge_key,
            kind,
        )?;
        original.insert(list_key.clone(), Value::Array(ordered.into()));
        patch.remove(&list_key);
    }
    Ok(())
}

/// A list found under a key, or `None` when the key is absent.
fn list_value(value: Option<&Value>) -> Result<Option<Vec<Value>>, Fault> {
    match value {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items.to_vec())),
        Some(other) => Err(expected_slice(other)),
    }
}

/// `validatePatchWithSetOrderList`: the patch list (deletions aside) must be a
/// subsequence of the `$setElementOrder` list.
fn validate_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> Result<(), Fault> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let kept = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        split_deletions(patch_list.to_vec())?.0
    };
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if has_directive_marker(&kept[p]) {
            p += 1;
            continue;
        }
        if merge_key_values_equal(&kept[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() && o >= order.len() {
        return Err(Fault::Plain(format!(
            "The order in patch list:\n{}\n doesn't match {} list:\n{}\n",
            fmt_slice_v(patch_list),
            SET_ELEMENT_ORDER_PREFIX,
            fmt_slice_v(order)
        )));
    }
    Ok(())
}

fn has_directive_marker(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
}

/// `mergeKeyValueEqual`.
fn merge_key_values_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, Fault> {
    if merge_key.is_empty() {
        return go_eq(left, right);
    }
    let Value::Object(left_map) = left else {
        return Err(expected_map(left));
    };
    let Value::Object(right_map) = right else {
        return Err(expected_map(right));
    };
    let left_value = left_map
        .get(merge_key)
        .ok_or_else(|| no_merge_key(left_map, merge_key))?;
    let right_value = right_map
        .get(merge_key)
        .ok_or_else(|| no_merge_key(right_map, merge_key))?;
    go_eq(left_value, right_value)
}

// --- lists ---------------------------------------------------------------------------

/// Result of merging one list field.
struct ListMerge {
    /// The merged list.
    merged: Vec<Value>,
    /// The stored list's array as upstream sees it after the merge (it can be
    /// rewritten in place by deletions, appends and deduplication).
    backing: Vec<Value>,
}

/// `mergeSliceHandler`: merge lists and `$deleteFromPrimitiveList` lists go
/// through `mergeSlice`, any other list is replaced by the patch's, verbatim.
fn merge_list_field(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Cursor,
    strategy: PatchStrategy,
    delete_list: bool,
) -> Result<ListMerge, Fault> {
    let (merges, merge_key) = match strategy {
        PatchStrategy::Merge { key } => (true, key),
        PatchStrategy::MergePrimitive => (true, ""),
        PatchStrategy::Default | PatchStrategy::Replace => (false, ""),
    };
    if !merges && !delete_list {
        return Ok(ListMerge {
            merged: patch,
            backing: original,
        });
    }
    // `PatchMetaFromStruct.Name()` of the element type: the Go kind.
    let element = if strategy == PatchStrategy::MergePrimitive {
        "string"
    } else {
        "struct"
    };
    merge_slice(original, patch, schema, merge_key, element, delete_list)
}

/// `mergeSlice`.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Cursor,
    merge_key: &str,
    element: &str,
    delete_list: bool,
) -> Result<ListMerge, Fault> {
    if original.is_empty() && patch.is_empty() {
        return Ok(ListMerge {
            merged: original.clone(),
            backing: original,
        });
    }
    let kind = slice_element_type(&[&original, &patch])?;
    let mut work = GoSlice::new(original);
    let (merged, server_order, patch) = if kind != GoType::Map {
        if delete_list {
            // `deleteFromSlice`: no reordering.
            let merged = delete_from_slice(work.view(), &patch)?;
            return Ok(ListMerge {
                merged,
                backing: work.into_backing(),
            });
        }
        if patch.is_empty() {
            // `append(original, patch...)` with nothing to append reuses the
            // stored array, so `deduplicateScalars` rewrites it in place.
            let kept = dedup_scalars(&mut work.shared)?;
            let merged = work.shared[..kept].to_vec();
            (merged, work.shared.clone(), patch)
        } else {
            let server_order = work.view().to_vec();
            let mut both = server_order.clone();
            both.extend(patch.iter().cloned());
            let kept = dedup_scalars(&mut both)?;
            both.truncate(kept);
            (both, server_order, patch)
        }
    } else {
        if merge_key.is_empty() {
            return Err(Fault::Plain(format!(
                "cannot merge lists without merge key for {element}"
            )));
        }
        let patch = apply_special_elements(&mut work, patch, merge_key)?;
        let kept = work.view().len();
        merge_plain_elements(&mut work, &patch, merge_key, schema)?;
        let merged = work.view().to_vec();
        // Upstream orders by its own `original` header: the first `kept`
        // slots, which hold the merged elements.
        let server_order = merged[..kept].to_vec();
        (merged, server_order, patch)
    };
    let (patch_items, server_only) = if merge_key.is_empty() {
        partition_primitives(&merged, &patch)?
    } else {
        partition_maps(&merged, &patch, merge_key)?
    };
    let merged = normalize_element_order(
        patch_items,
        server_only,
        &patch,
        &server_order,
        merge_key,
        kind,
    )?;
    Ok(ListMerge {
        merged,
        backing: work.into_backing(),
    })
}

/// A Go slice header over the stored list's array. Upstream mutates that
/// array in place (`deleteMatchingEntries` shifts elements left, `append`
/// writes into spare capacity left by deletions) and later reads it again as
/// the "server order" of `$setElementOrder`; this keeps the same array.
///
/// The stored list comes from `ToUnstructured`, so its capacity equals its
/// length.
struct GoSlice {
    /// The stored list's array.
    shared: Vec<Value>,
    /// Length of the header while it still points into `shared`.
    len: usize,
    /// The array the header points to after a reallocation or a
    /// `$patch: replace`.
    own: Option<Vec<Value>>,
    /// How many leading elements of `own` are the same (Go pointer-shared)
    /// objects as those of `shared`.
    aliased: usize,
}

impl GoSlice {
    fn new(items: Vec<Value>) -> Self {
        Self {
            len: items.len(),
            shared: items,
            own: None,
            aliased: 0,
        }
    }

    fn view(&self) -> &[Value] {
        match &self.own {
            Some(items) => items,
            None => &self.shared[..self.len],
        }
    }

    /// `append(s[:i], s[i+1:]...)`.
    fn remove(&mut self, index: usize) {
        match &mut self.own {
            Some(items) => {
                items.remove(index);
                self.aliased = self.aliased.min(index);
            }
            None => {
                for j in index..self.len.saturating_sub(1) {
                    self.shared[j] = self.shared[j + 1].clone();
                }
                self.len -= 1;
            }
        }
    }

    /// `s[i] = v` where `v` is the same element object, merged.
    fn set(&mut self, index: usize, value: Value) {
        match &mut self.own {
            Some(items) => {
                if index < self.aliased {
                    self.shared[index] = value.clone();
                }
                items[index] = value;
            }
            None => self.shared[index] = value,
        }
    }

    /// `s = append(s, v)`.
    fn push(&mut self, value: Value) {
        match &mut self.own {
            Some(items) => items.push(value),
            None if self.len < self.shared.len() => {
                self.shared[self.len] = value;
                self.len += 1;
            }
            None => {
                let mut grown = self.shared[..self.len].to_vec();
                grown.push(value);
                self.aliased = self.len;
                self.own = Some(grown);
            }
        }
    }

    /// The header now points to a new array.
    fn replace(&mut self, items: Vec<Value>) {
        self.own = Some(items);
        self.aliased = 0;
    }

    fn into_backing(self) -> Vec<Value> {
        self.shared
    }
}

/// What a patch element carrying `$patch` asks for.
enum Special {
    Plain,
    Delete(Value),
    Replace,
}

/// `mergeSliceWithSpecialElements`: applies `$patch: delete` elements to the
/// stored list, notes `$patch: replace`, and returns the other patch elements
/// (none after a replace, which makes them the whole list).
fn apply_special_elements(
    work: &mut GoSlice,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<Vec<Value>, Fault> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Value::Object(map) = &item else {
            return Err(not_a_map_panic());
        };
        let special = match map.get(DIRECTIVE_MARKER) {
            None => Special::Plain,
            Some(directive) => match directive.as_str() {
                Some(DELETE_DIRECTIVE) => match map.get(merge_key) {
                    Some(value) => Special::Delete(value.clone()),
                    None => return Err(no_merge_key(map, merge_key)),
                },
                Some(REPLACE_DIRECTIVE) => Special::Replace,
                Some(MERGE_DIRECTIVE) => {
                    return Err(Fault::Plain(
                        "merging lists cannot yet be specified in the patch".into(),
                    ));
                }
                _ => return Err(bad_patch_type(directive, map)),
            },
        };
        match special {
            Special::Plain => plain.push(item),
            // `deleteMatchingEntries`: every element with that key value.
            Special::Delete(value) => {
                while let Some(index) = find_by_key(work.view(), merge_key, &value)? {
                    work.remove(index);
                }
            }
            Special::Replace => replace = true,
        }
    }
    if replace {
        work.replace(plain);
        return Ok(Vec::new());
    }
    Ok(plain)
}

/// `mergeSliceWithoutSpecialElements`: merges each patch element into the
/// first stored element with the same key value, or appends it verbatim.
fn merge_plain_elements(
    work: &mut GoSlice,
    patch: &[Value],
    merge_key: &str,
    schema: Cursor,
) -> Result<(), Fault> {
    for item in patch {
        let Value::Object(map) = item else {
            return Err(not_a_map_panic());
        };
        let value = map
            .get(merge_key)
            .ok_or_else(|| no_merge_key(map, merge_key))?;
        match find_by_key(work.view(), merge_key, value)? {
            Some(index) => {
                let Value::Object(current) = work.view()[index].clone() else {
                    return Err(not_a_map_panic());
                };
                let merged = merge_map(current, map.clone(), schema)?;
                work.set(index, Value::Object(merged));
            }
            None => work.push(item.clone()),
        }
    }
    Ok(())
}

/// `findMapInSliceBasedOnKeyValue`.
fn find_by_key(items: &[Value], key: &str, value: &Value) -> Result<Option<usize>, Fault> {
    for (index, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(Fault::Plain(format!("value for key {index} is not a map")));
        };
        if let Some(candidate) = map.get(key)
            && go_eq(candidate, value)?
        {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

/// `sliceElementType`: every element of every list must have the same Go type,
/// which must not be a list.
fn slice_element_type(lists: &[&[Value]]) -> Result<GoType, Fault> {
    let mut found: Option<GoType> = None;
    for list in lists {
        for item in list.iter() {
            let kind = go_type(item);
            match found {
                None => {
                    if kind == GoType::Nil {
                        // `reflect.TypeOf(nil).Kind()` dereferences a nil interface.
                        return Err(Fault::Panic(
                            "runtime error: invalid memory address or nil pointer dereference"
                                .into(),
                        ));
                    }
                    if kind == GoType::Slice {
                        return Err(Fault::NoListOfLists);
                    }
                    found = Some(kind);
                }
                Some(previous) if previous != kind => {
                    let printed: Vec<String> = lists.iter().map(|l| fmt_slice_v(l)).collect();
                    return Err(Fault::Plain(format!(
                        "list element types are not identical: [{}]",
                        printed.join(" ")
                    )));
                }
                Some(_) => {}
            }
        }
    }
    found.ok_or_else(|| Fault::Plain("no elements in any of the given slices".into()))
}

/// `deduplicateScalars`, in place and with its own (order-changing) moves;
/// returns the kept length. The tail of `items` keeps what Go leaves there.
fn dedup_scalars(items: &mut [Value]) -> Result<usize, Fault> {
    let mut last = items.len() as isize - 1;
    let mut i: isize = 0;
    while i < last {
        let mut j = i + 1;
        while j <= last {
            if go_eq(&items[i as usize], &items[j as usize])? {
                items[j as usize] = items[last as usize].clone();
                last -= 1;
                j -= 1;
            }
            j += 1;
        }
        i += 1;
    }
    Ok((last + 1) as usize)
}

/// `deleteFromSlice`.
fn delete_from_slice(current: &[Value], delete: &[Value]) -> Result<Vec<Value>, Fault> {
    let delete = GoSet::build(delete)?;
    let mut kept = Vec::with_capacity(current.len());
    for item in current {
        if !delete.contains(item)? {
            kept.push(item.clone());
        }
    }
    Ok(kept)
}

type Partition = (Vec<Value>, Vec<Value>);

/// `partitionPrimitivesByPresentInList`: (in `by`, not in `by`).
fn partition_primitives(items: &[Value], by: &[Value]) -> Result<Partition, Fault> {
    let by = GoSet::build(by)?;
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for item in items {
        if by.contains(item)? {
            inside.push(item.clone());
        } else {
            outside.push(item.clone());
        }
    }
    Ok((inside, outside))
}

/// `partitionMapsByPresentInList`: (key value in `by`, not in `by`).
fn partition_maps(items: &[Value], by: &[Value], merge_key: &str) -> Result<Partition, Fault> {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for item in items {
        let Value::Object(map) = item else {
            return Err(expected_map(item));
        };
        let value = map
            .get(merge_key)
            .ok_or_else(|| no_merge_key(map, merge_key))?;
        if find_by_key(by, merge_key, value)?.is_some() {
            inside.push(item.clone());
        } else {
            outside.push(item.clone());
        }
    }
    Ok((inside, outside))
}

// --- ordering ------------------------------------------------------------------------

/// `normalizeElementOrder`: sorts the patch items by `patch_order` and the
/// stored-only items by `server_order`, then interleaves them.
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>, Fault> {
    let patch_items = normalize_slice_order(patch_items, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    merge_sorted_slice(&server_only, &patch_items, server_order, merge_key, kind)
}

/// `normalizeSliceOrder`: a stable sort by position in `order` (with upstream's
/// comparator, which calls an element missing from `order` "less"), with
/// `$patch: delete` elements moved to the end.
fn normalize_slice_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>, Fault> {
    let (mut items, deleted) = if kind == GoType::Map {
        require_merge_key(&items, merge_key)?;
        require_merge_key(order, merge_key)?;
        split_deletions(items)?
    } else {
        (items, Vec::new())
    };
    go_stable_sort(&mut items, |a, b| {
        let ia = position(order, a, merge_key, kind)?;
        if ia >= 0 {
            let ib = position(order, b, merge_key, kind)?;
            if ib >= 0 {
                return Ok(ia < ib);
            }
        }
        Ok(true)
    })?;
    items.extend(deleted);
    Ok(items)
}

/// `validateMergeKeyInLists` for one list.
fn require_merge_key(items: &[Value], merge_key: &str) -> Result<(), Fault> {
    for item in items {
        let Value::Object(map) = item else {
            return Err(expected_map(item));
        };
        if !map.contains_key(merge_key) {
            return Err(no_merge_key(map, merge_key));
        }
    }
    Ok(())
}

/// `extractToDeleteItems`: (kept, `$patch: delete` elements).
fn split_deletions(items: Vec<Value>) -> Result<Partition, Fault> {
    let (mut kept, mut deleted) = (Vec::new(), Vec::new());
    for item in items {
        let Value::Object(map) = &item else {
            return Err(expected_map(&item));
        };
        let is_delete = map.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE);
        if is_delete {
            deleted.push(item);
        } else {
            kept.push(item);
        }
    }
    Ok((kept, deleted))
}

/// `index`: position of `item` in `list`, comparing merge key values for lists
/// of objects (a missing key or a non-object counts as `nil`), or `-1`.
fn position(list: &[Value], item: &Value, merge_key: &str, kind: GoType) -> Result<isize, Fault> {
    fn key_of<'v>(v: &'v Value, merge_key: &str, kind: GoType) -> &'v Value {
        if kind == GoType::Map {
            v.as_object()
                .and_then(|m| m.get(merge_key))
                .unwrap_or(&NULL)
        } else {
            v
        }
    }
    let needle = key_of(item, merge_key, kind);
    for (index, candidate) in list.iter().enumerate() {
        if go_eq(needle, key_of(candidate, merge_key, kind))? {
            return Ok(index as isize);
        }
    }
    Ok(-1)
}

/// `mergeSortedSlice`: inserts the stored-only items (`left`) among the patch
/// items (`right`). A stored item goes first only when both items are in
/// `server_order` and it comes earlier there; so an item new to the list is
/// placed before any stored-only item that follows it.
fn merge_sorted_slice(
    left: &[Value],
    right: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>, Fault> {
    let size = left.len() + right.len();
    let mut out = Vec::with_capacity(size);
    let (mut i, mut j) = (0, 0);
    for _ in 0..size {
        if i >= left.len() && j < right.len() {
            out.push(right[j].clone());
            j += 1;
        } else if j >= right.len() && i < left.len() {
            out.push(left[i].clone());
            i += 1;
        } else {
            let li = position(server_order, &left[i], merge_key, kind)?;
            let ri = position(server_order, &right[j], merge_key, kind)?;
            if li >= 0 && ri >= 0 && li < ri {
                out.push(left[i].clone());
                i += 1;
            } else {
                out.push(right[j].clone());
                j += 1;
            }
        }
    }
    Ok(out)
}
