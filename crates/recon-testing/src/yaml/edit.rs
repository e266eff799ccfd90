//! Rewriting a suite file's expectations in place: each `expect` block that changed is replaced
//! by the new one, written in block style at the block's own indentation, and every other byte
//! of the file (the inputs, their flow or block style, key order, comments) stays as it was.

use granit_parser::{Event, Parser, StructureStyle};

/// A node of the file's YAML, with where it is.
#[derive(Debug)]
struct Node {
    /// The byte after its last character.
    end: usize,
    /// Column of its first character.
    col: usize,
    flow: bool,
    kind: Kind,
}

/// A key (its text, column, and the byte after it) and its value.
#[derive(Debug)]
struct Entry {
    key: String,
    col: usize,
    key_end: usize,
    value: Node,
}

#[derive(Debug)]
enum Kind {
    /// Entries, in order.
    Map(Vec<Entry>),
    Seq(Vec<Node>),
    Scalar,
}

/// Where an expectation lives in a suite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// `cases[i].expect`.
    Case(usize),
    /// `cases[i].additionalConfigs[name].expect`.
    Config(usize, String),
}

/// `text` with the expectations at each place replaced by the YAML given (block style, no
/// trailing newline); `Err` when the file cannot be edited in place (the caller then writes it
/// whole).
pub(crate) fn replace_expectations(
    text: &str,
    edits: &[(Place, String)],
) -> Result<String, String> {
    let root = parse(text)?;
    let mut splices: Vec<(usize, usize, String)> = Vec::new();
    for (place, yaml) in edits {
        let (holder, owner_col) = holder(&root, place)?;
        let Kind::Map(entries) = &holder.kind else {
            return Err(format!("{place:?}: not a mapping"));
        };
        if holder.flow {
            return Err(format!("{place:?}: written in flow style"));
        }
        let key_col = entries.first().map_or(owner_col, |e| e.col);
        let body = |col: usize| {
            if yaml.trim() == "{}" {
                " {}".to_owned()
            } else {
                format!("\n{}", indent(yaml, col))
            }
        };
        match entries.iter().find(|e| e.key == "expect") {
            // From the end of the key, so that any style of value (block, flow, empty) gives
            // way to `expect:` and a block below it.
            Some(e) => {
                let col = match &e.value.kind {
                    Kind::Map(m) if !e.value.flow && !m.is_empty() => e.value.col,
                    _ => e.col + 2,
                };
                splices.push((e.key_end, e.value.end, format!(":{}", body(col))));
            }
            None => {
                let pad = " ".repeat(key_col);
                let at = holder.end;
                splices.push((at, at, format!("\n{pad}expect:{}", body(key_col + 2))));
            }
        }
    }
    splices.sort_by_key(|(start, ..)| std::cmp::Reverse(*start));
    let mut out = text.to_owned();
    for (start, end, replacement) in splices {
        if end > out.len()
            || start > end
            || !out.is_char_boundary(start)
            || !out.is_char_boundary(end)
        {
            return Err("an expectation's position is outside the file".to_owned());
        }
        out.replace_range(start..end, &replacement);
    }
    Ok(out)
}

/// The mapping that holds the expectation at `place`, and the column of its owner's key.
fn holder<'a>(root: &'a Node, place: &Place) -> Result<(&'a Node, usize), String> {
    let cases = get(root, "cases").ok_or("no `cases`")?;
    let Kind::Seq(items) = &cases.kind else {
        return Err("`cases` is not a list".to_owned());
    };
    let (index, config) = match place {
        Place::Case(i) => (*i, None),
        Place::Config(i, name) => (*i, Some(name)),
    };
    let case = items.get(index).ok_or(format!("no cases[{index}]"))?;
    match config {
        None => Ok((case, case.col)),
        Some(name) => {
            let configs = get(case, "additionalConfigs").ok_or("no `additionalConfigs`")?;
            let config = get(configs, name).ok_or(format!("no additionalConfigs.{name}"))?;
            Ok((config, config.col))
        }
    }
}

fn get<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    match &node.kind {
        Kind::Map(entries) => entries.iter().find(|e| e.key == key).map(|e| &e.value),
        _ => None,
    }
}

/// Each line of `yaml` indented by `col` spaces.
fn indent(yaml: &str, col: usize) -> String {
    let pad = " ".repeat(col);
    yaml.trim_end_matches('\n')
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A collection being read: its node so far, and for a mapping the key awaiting its value.
struct Open {
    node: Node,
    key: Option<(String, usize, usize)>,
}

/// The first document's root node.
fn parse(text: &str) -> Result<Node, String> {
    let mut stack: Vec<Open> = Vec::new();
    let offset = |m: &granit_parser::Marker| m.byte_offset().ok_or("no byte offsets");
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| e.to_string())?;
        let (start, end, col) = (offset(&span.start)?, offset(&span.end)?, span.start.col());
        let done = match event {
            Event::MappingStart(style, ..) | Event::SequenceStart(style, ..) => {
                let kind = if matches!(event, Event::MappingStart(..)) {
                    Kind::Map(Vec::new())
                } else {
                    Kind::Seq(Vec::new())
                };
                stack.push(Open {
                    node: Node {
                        end: start,
                        col,
                        flow: style == StructureStyle::Flow,
                        kind,
                    },
                    key: None,
                });
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let mut open = stack.pop().ok_or("unbalanced document")?;
                if open.node.flow {
                    open.node.end = end;
                }
                open.node
            }
            Event::Scalar(value, ..) => {
                // A map key: remembered until its value arrives.
                if let Some(top) = stack.last_mut()
                    && matches!(top.node.kind, Kind::Map(_))
                    && top.key.is_none()
                {
                    top.key = Some((value.into_owned(), col, end));
                    continue;
                }
                Node {
                    end: end_of_scalar(text, start, end),
                    col,
                    flow: false,
                    kind: Kind::Scalar,
                }
            }
            Event::Alias(_) => Node {
                end,
                col,
                flow: false,
                kind: Kind::Scalar,
            },
            _ => continue,
        };
        match stack.last_mut() {
            None => return Ok(done),
            Some(parent) => {
                parent.node.end = parent.node.end.max(done.end);
                match &mut parent.node.kind {
                    Kind::Map(entries) => {
                        let (key, col, key_end) = parent
                            .key
                            .take()
                            .ok_or("a mapping key that is not a scalar")?;
                        entries.push(Entry {
                            key,
                            col,
                            key_end,
                            value: done,
                        });
                    }
                    Kind::Seq(items) => items.push(done),
                    Kind::Scalar => return Err("a scalar with children".to_owned()),
                }
            }
        }
    }
    Err("no document".to_owned())
}

/// The end of a scalar without the line breaks a block scalar's span takes in.
fn end_of_scalar(text: &str, start: usize, end: usize) -> usize {
    let kept = text
        .get(start..end)
        .unwrap_or("")
        .trim_end_matches(['\n', '\r']);
    start + kept.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = "\
# A suite.
crds: [../crds/widgets.yaml]
cases:
# the first case
- name: one
  request: {namespace: default, name: w}   # flow style stays
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: w, namespace: default}}
  expect:
    creates:
    - apiVersion: v1
      kind: Secret
    result: {requeueAfter: 5m}
  # after the expectations
- name: two
  expect: {}
- name: three
  metadata: {mode: fast}
  additionalConfigs:
    other:
      given: []
      expect:
        deletes: []
";

    #[test]
    fn only_the_expectations_change() {
        let edits = vec![
            (
                Place::Case(0),
                "events:\n- type: Normal\n  reason: Made\n".to_owned(),
            ),
            (Place::Case(1), "creates:\n- kind: ConfigMap\n".to_owned()),
            (Place::Case(2), "result:\n  requeue: true\n".to_owned()),
            (Place::Config(2, "other".to_owned()), "{}\n".to_owned()),
        ];
        let out = replace_expectations(SUITE, &edits).expect("editable");
        let expected = "\
# A suite.
crds: [../crds/widgets.yaml]
cases:
# the first case
- name: one
  request: {namespace: default, name: w}   # flow style stays
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: w, namespace: default}}
  expect:
    events:
    - type: Normal
      reason: Made
  # after the expectations
- name: two
  expect:
    creates:
    - kind: ConfigMap
- name: three
  metadata: {mode: fast}
  additionalConfigs:
    other:
      given: []
      expect: {}
  expect:
    result:
      requeue: true
";
        assert_eq!(out, expected);
    }

    #[test]
    fn a_file_without_the_place_is_not_edited() {
        let err = replace_expectations(SUITE, &[(Place::Case(7), "{}\n".to_owned())]);
        assert!(err.is_err());
        let err = replace_expectations("cases: {}\n", &[(Place::Case(0), "{}\n".to_owned())]);
        assert!(err.is_err());
    }
}
