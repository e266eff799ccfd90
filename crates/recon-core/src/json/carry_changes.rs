//! Carrying a change made to one JSON view of an object over to another view of it: what
//! `CastResource` patches back onto the resource, and what an admission webhook patches onto
//! the object it was sent.

use serde_json::Value;

/// Applies the change from `before` to `after` (an RFC 6902 diff) onto `doc`, a document of
/// which `before` is a view: fields `doc` has and the view lacks are kept. Where `doc` lacks
/// what an operation expects (the view had a default `doc` lacks), an `add` or `replace`
/// creates the objects on its way and a `remove` of nothing does nothing.
pub(crate) fn carry_changes(doc: &mut Value, before: &Value, after: &Value) -> Result<(), String> {
    json_patch::diff(before, after)
        .0
        .into_iter()
        .try_for_each(|op| apply_op(doc, op))
}

/// Applies one operation of a diff onto `doc`, forgiving what the view had and `doc` lacks.
fn apply_op(doc: &mut Value, op: json_patch::PatchOperation) -> Result<(), String> {
    use json_patch::PatchOperation;

    let first = json_patch::patch(doc, std::slice::from_ref(&op));
    let Err(err) = first else { return Ok(()) };
    match op {
        PatchOperation::Remove(remove) if doc.pointer(remove.path.as_str()).is_none() => Ok(()),
        PatchOperation::Add(json_patch::AddOperation { path, value })
        | PatchOperation::Replace(json_patch::ReplaceOperation { path, value }) => {
            let tokens: Vec<String> = path.tokens().map(|t| t.decoded().into_owned()).collect();
            let Some((last, parents)) = tokens.split_last() else {
                return Err(err.to_string());
            };
            let mut node = doc;
            for token in parents {
                node = match node {
                    Value::Object(map) => map
                        .entry(token.clone())
                        .or_insert_with(|| Value::Object(serde_json::Map::new())),
                    Value::Array(items) => match token.parse::<usize>() {
                        Ok(i) if i < items.len() => &mut items[i],
                        _ => return Err(err.to_string()),
                    },
                    _ => return Err(err.to_string()),
                };
            }
            match node {
                Value::Object(map) => {
                    map.insert(last.clone(), value);
                    Ok(())
                }
                _ => Err(err.to_string()),
            }
        }
        _ => Err(err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_change_to_a_default_the_target_lacks_creates_its_parents() {
        let mut doc = json!({"metadata": {"name": "a"}, "other": 1});
        let before = json!({"metadata": {"name": "a"}, "spec": {"paused": false}});
        let after = json!({"metadata": {"name": "a"}, "spec": {"paused": true}});
        carry_changes(&mut doc, &before, &after).unwrap();
        assert_eq!(
            doc,
            json!({"metadata": {"name": "a"}, "other": 1, "spec": {"paused": true}})
        );
    }

    #[test]
    fn removing_what_the_target_lacks_does_nothing() {
        let mut doc = json!({"a": 1});
        carry_changes(&mut doc, &json!({"a": 1, "b": 2}), &json!({"a": 1})).unwrap();
        assert_eq!(doc, json!({"a": 1}));
    }

    #[test]
    fn a_change_under_a_scalar_of_the_target_is_an_error() {
        let mut doc = json!({"spec": 3});
        let err = carry_changes(
            &mut doc,
            &json!({"spec": {"x": 1}}),
            &json!({"spec": {"x": 2}}),
        );
        assert!(err.is_err());
    }
}
