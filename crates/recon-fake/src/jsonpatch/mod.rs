//! RFC 6902 JSON patches as kube-apiserver applies them: with `gopkg.in/evanphx/json-patch.v4`
//! (`patch.go`), called by the patch handler (`k8s.io/apiserver`
//! `pkg/endpoints/handlers/patch.go`, `applyJSPatch`). That library is lenient where the RFC is
//! strict, and a cluster accepts what it accepts:
//!
//! - `replace` of a missing member adds it (only an array index must exist);
//! - `copy` from a missing member copies `null`; `move` from one fails (it is removed first);
//! - an `add` or `replace` without `value` sets `null`;
//! - a path is split on `/` and its first part dropped, whatever it is: `a/b` names the root's
//!   member `b`, and a path without `/` fails;
//! - array indices are read by `strconv.Atoi` (`01` is 1, `+1` is 1, `-1` counts from the end,
//!   for `add` from one past it);
//! - `test` compares scalars by their JSON text (`1.0` is not `1`, and the server's own text
//!   escapes `<`, `>` and `&`), a missing member equals `null`, and a `test` with no `value`
//!   passes only on a missing member or `null`;
//! - `copy` counts the bytes it copies, at most 3 MiB in one patch (`JSONPatchMaxCopyBytes`).
//!
//! Go's library holds the document as "lazy" nodes; the states they can be in that answer
//! differently are kept here ([`Node`]): a `null` of the document, a `null` the patch gave as a
//! value, and a `null` a copy wrote as text (which a later `add` into it panics on, as a Go map
//! that was never made does). Comparisons that dereference a `nil` node panic there too: those
//! are reported as [`Failure::Panic`] (kube-apiserver 1.36.2 drops the connection without an
//! answer; the patch handler answers a 500 with its panic filter's text).

use std::collections::{BTreeMap, btree_map};
use std::fmt;

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::json::{Map, Value};

use crate::wire::nesting;
use crate::wire::object::{json_type, read_json};

/// `JSONPatchMaxCopyBytes` of the generic API server's config: the bytes all the `copy`
/// operations of one patch may add.
pub(crate) const MAX_COPY_BYTES: usize = 3 << 20;

/// One decoded operation: `jsonpatch.Operation`, a map of raw members (a member given as
/// `null` is there, without a value).
type Operation = Option<BTreeMap<String, Option<String>>>;

/// A decoded patch (`jsonpatch.DecodePatch`).
#[derive(Debug, Default)]
pub(crate) struct Patch {
    ops: Vec<Operation>,
}

/// Why a patch did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// An operation failed; the text is the library's error (which kube-apiserver drops from
    /// its 422).
    Failed(String),
    /// The library would panic (a `nil` dereference or an assignment into a `nil` map).
    Panic(&'static str),
    /// An operation nested the document deeper than the patch may.
    TooDeep,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Failed(why) => f.write_str(why),
            Failure::Panic(why) => write!(f, "panic: {why}"),
            Failure::TooDeep => f.write_str("the patch nests the object too deep"),
        }
    }
}

impl std::error::Error for Failure {}

const NIL_DEREFERENCE: &str = "runtime error: invalid memory address or nil pointer dereference";
const NIL_MAP: &str = "assignment to entry in nil map";

impl Patch {
    /// `jsonpatch.DecodePatch`: a JSON array (or `null`, no operations) of objects (or
    /// `null`s). The error is Go's `json.Unmarshal` message.
    pub(crate) fn decode(body: &[u8]) -> Result<Patch, String> {
        // Read as deep as Go reads: an operation's value may nest thousands of levels.
        let items = match read_json(body) {
            Ok(Value::Null) => return Ok(Patch::default()),
            Ok(Value::Array(items)) => items,
            _ => return Err(not_a_patch(body)),
        };
        if let Some(bad) = items.iter().find(|i| !(i.is_object() || i.is_null())) {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                json_type(bad)
            ));
        }
        let text = std::str::from_utf8(body).map_err(|e| e.to_string())?;
        let ops = raw::items(text)
            .into_iter()
            .map(|item| {
                raw::members(item).map(|members| {
                    members
                        .into_iter()
                        .map(|(k, v)| (k, (v != "null").then(|| v.to_owned())))
                        .collect()
                })
            })
            .collect();
        Ok(Patch { ops })
    }

    /// How many operations the patch has.
    pub(crate) fn len(&self) -> usize {
        self.ops.len()
    }

    /// `Patch.Apply` to `doc`: all operations in order, or none. An operation that nests the
    /// document deeper than `max_depth` ends the patch ([`Failure::TooDeep`]): each copy or move
    /// can double the depth, and a body's worth of them would nest it past what any stack walks.
    pub(crate) fn apply(&self, doc: &Value, max_depth: usize) -> Result<Value, Failure> {
        let mut root = Node::from_value(doc);
        let mut copied = 0usize;
        // A bound on the document's depth, kept as the operations go.
        let mut depth = nesting::value_depth(doc);
        for op in &self.ops {
            let op = Op(op.as_ref());
            let kind = op.kind();
            let placed = op.placed_depth(kind.as_deref(), depth);
            match kind.as_deref() {
                Some("add") => add(&mut root, &op),
                Some("remove") => remove(&mut root, &op),
                Some("replace") => replace(&mut root, &op),
                Some("move") => move_(&mut root, &op),
                Some("test") => test(&mut root, &op),
                Some("copy") => copy(&mut root, &op, &mut copied),
                other => Err(Failure::Failed(format!(
                    "Unexpected kind: {}",
                    other.unwrap_or("unknown")
                ))),
            }?;
            depth = depth.max(placed);
            if depth > max_depth {
                // The bound was loose for a copy or move: measured before giving up.
                depth = root.depth();
                if depth > max_depth {
                    return Err(Failure::TooDeep);
                }
            }
        }
        Ok(root.into_value())
    }
}

/// What decoding `body` (a list whose operations are objects or `null`) into the patch
/// handler's `[]jsonPatchOp` strictly reports (`kjson.UnmarshalStrict`, case-sensitive): each
/// member other than `op`, `path`, `from` and `value`, and each of those repeated, in the
/// order they come, by their place (`unknown field "[0].bogus"`).
pub(crate) fn strict_field_errors(body: &[u8]) -> Vec<String> {
    const FIELDS: [&str; 4] = ["op", "path", "from", "value"];
    let Ok(text) = std::str::from_utf8(body) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for (i, item) in raw::items(text).into_iter().enumerate() {
        let mut seen = Vec::new();
        for (key, _) in raw::members(item).unwrap_or_default() {
            if !FIELDS.contains(&key.as_str()) {
                errors.push(format!("unknown field \"[{i}].{key}\""));
            } else if seen.contains(&key) {
                errors.push(format!("duplicate field \"[{i}].{key}\""));
            } else {
                seen.push(key);
            }
        }
    }
    errors
}

/// The error for a body that is JSON but not a list.
fn not_a_patch(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            json_type(&v)
        ),
        Err(e) => e.to_string(),
    }
}

/// A value of the document being patched, in the states of Go's `*lazyNode` that behave
/// differently.
///
/// Documents nest as deep as Go decodes them (10,000 levels, and a patch can double that), so
/// every walk over a node keeps its own stack instead of recursing: converting
/// ([`Node::from_value`], [`Node::from_raw`], [`Node::reread`], [`Node::into_value`]), writing
/// ([`Node::marshal`], `Debug`), comparing ([`Node::equal`]) and dropping.
enum Node {
    /// A `nil` node: a `null` of the document (or inside a value), a missing member, an
    /// operation's missing `value`.
    Nil,
    /// A node without text: an operation's `"value": null`. Not a container, and equal only to
    /// another one.
    NoText,
    /// The text `null` (a copy of [`Node::NoText`]): read as a container it is a `nil` map,
    /// which reads as empty and panics on assignment.
    NullText,
    Scalar(Scalar),
    /// `partialDoc` (a Go map: written with its keys sorted).
    Doc(BTreeMap<String, Node>),
    /// `partialArray`.
    Ary(Vec<Node>),
}

/// A string, number or boolean, with the JSON text it is compared by.
#[derive(Debug)]
enum Scalar {
    /// From the document the server encoded: its text is Go's.
    Doc(Value),
    /// From a patch (or a copy): its text as written.
    Text(String),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Doc(v) => go_json(v),
            Scalar::Text(t) => t.clone(),
        }
    }
}

/// The members of a `nil` map, or of the text `null` read as one.
static NO_MEMBERS: BTreeMap<String, Node> = BTreeMap::new();

impl Node {
    fn from_value(v: &Value) -> Node {
        build_node(v, |v| match v {
            Value::Null => Opened::Leaf(Node::Nil),
            Value::Array(items) => Opened::Ary(items.iter()),
            Value::Object(map) => Opened::Doc(map.iter().map(|(k, v)| (k.clone(), v))),
            scalar => Opened::Leaf(Node::Scalar(Scalar::Doc(scalar.clone()))),
        })
    }

    /// An operation's raw value (`None` for `null`): a container's members decoded (where Go
    /// decodes them on first use; a repeated key keeps its last value, as a Go map does).
    fn from_raw(raw: Option<&str>) -> Node {
        let Some(text) = raw else {
            return Node::Nil;
        };
        // Where every container ends, found once: reading a container's members then jumps
        // over theirs instead of scanning them again for each level above them.
        let closes = raw::Closes::of(text);
        // Each value as its place in `text`.
        build_node(0..text.len(), |span| {
            let value = text.get(span.clone()).unwrap_or_default();
            match value.as_bytes().first() {
                _ if value == "null" => Opened::Leaf(Node::Nil),
                Some(b'{') => Opened::Doc(
                    raw::members_in(text, span, Some(&closes))
                        .unwrap_or_default()
                        .into_iter(),
                ),
                Some(b'[') => Opened::Ary(raw::items_in(text, span, Some(&closes)).into_iter()),
                _ => Opened::Leaf(Node::Scalar(Scalar::Text(value.to_owned()))),
            }
        })
    }

    /// How many containers nest along the deepest branch (`nesting::value_depth` of the value
    /// it stands for), counted without recursion.
    fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut pending = vec![(self, 0)];
        while let Some((node, above)) = pending.pop() {
            let depth = above + 1;
            match node {
                Node::Doc(map) => pending.extend(map.values().map(|child| (child, depth))),
                Node::Ary(items) => pending.extend(items.iter().map(|child| (child, depth))),
                _ => continue,
            }
            deepest = deepest.max(depth);
        }
        deepest
    }

    /// The value the node stands for: every kind of `null` is `null`, a scalar's text read.
    fn into_value(self) -> Value {
        convert(
            self,
            // The node's members are taken out of it, leaving a node that drops at once.
            |mut node| match &mut node {
                Node::Nil | Node::NoText | Node::NullText => Opened::Leaf(Value::Null),
                Node::Scalar(Scalar::Doc(v)) => Opened::Leaf(std::mem::take(v)),
                Node::Scalar(Scalar::Text(t)) => {
                    Opened::Leaf(serde_json::from_str(t).unwrap_or(Value::Null))
                }
                Node::Doc(map) => Opened::Doc(std::mem::take(map).into_iter()),
                Node::Ary(items) => Opened::Ary(std::mem::take(items).into_iter()),
            },
            |members| Value::Object(members.into_iter().collect::<Map>()),
            |items| Value::Array(items.into()),
        )
    }

    /// Go's `json.Marshal` of the node (HTML characters escaped, maps sorted), and the node
    /// that text decodes to (`deepCopy`).
    fn deep_copy(&self) -> (Node, usize) {
        let mut text = String::new();
        self.marshal(&mut text);
        let copy = match self {
            Node::Nil => return (Node::Nil, 0),
            Node::NoText | Node::NullText => Node::NullText,
            other => other.reread(),
        };
        (copy, text.len())
    }

    /// The node the marshalled text of `self` decodes to, below the top: `null`s are `nil`.
    fn reread(&self) -> Node {
        build_node(self, |node| match node {
            Node::Nil | Node::NoText | Node::NullText => Opened::Leaf(Node::Nil),
            Node::Scalar(s) => Opened::Leaf(Node::Scalar(Scalar::Text(escape_html(&s.text())))),
            Node::Doc(map) => Opened::Doc(map.iter().map(|(k, v)| (k.clone(), v))),
            Node::Ary(items) => Opened::Ary(items.iter()),
        })
    }

    /// Appends Go's `json.Marshal` of the node to `out`: every kind of `null` is `null`, maps
    /// sorted, HTML characters escaped.
    fn marshal(&self, out: &mut String) {
        self.write(out, |leaf, out| match leaf {
            Node::Scalar(s) => crate::gotype::escape_html(&s.text(), out),
            _ => out.push_str("null"),
        });
    }

    /// Appends the node's JSON text to `out`, each node that is not a map or a list as `leaf`
    /// writes it; a map's keys in order, as Go writes them.
    fn write(&self, out: &mut String, mut leaf: impl FnMut(&Node, &mut String)) {
        // The containers being written, innermost last, and whether a child of each was.
        let mut open: Vec<(Writing<'_>, bool)> = Vec::new();
        let mut next = Some(self);
        loop {
            match next.take() {
                Some(Node::Doc(map)) => {
                    out.push('{');
                    open.push((Writing::Doc(map.iter()), false));
                }
                Some(Node::Ary(items)) => {
                    out.push('[');
                    open.push((Writing::Ary(items.iter()), false));
                }
                Some(node) => leaf(node, out),
                None => {}
            }
            let Some((container, started)) = open.last_mut() else {
                return;
            };
            let child = match container {
                Writing::Doc(members) => members.next().map(|(k, v)| (Some(k), v)),
                Writing::Ary(items) => items.next().map(|v| (None, v)),
            };
            let Some((key, child)) = child else {
                out.push(match container {
                    Writing::Doc(_) => '}',
                    Writing::Ary(_) => ']',
                });
                open.pop();
                continue;
            };
            if std::mem::replace(started, true) {
                out.push(',');
            }
            if let Some(key) = key {
                out.push_str(&go_json(&Value::String(key.clone())));
                out.push(':');
            }
            next = Some(child);
        }
    }

    /// `lazyNode.equal`, `self` a node of the document and `other` one of the patch: a pair of
    /// children is compared only once all those before it were found equal, depth first, as
    /// Go's recursion compares them (so the same `nil` dereference is the one that panics).
    fn equal(&self, other: &Node) -> Result<bool, Failure> {
        // The pairs of containers being compared, innermost last.
        let mut open: Vec<Comparing<'_>> = Vec::new();
        let (mut mine, mut theirs) = (self, other);
        loop {
            match compare(mine, theirs)? {
                Compared::Equal => {}
                Compared::Unequal => return Ok(false),
                Compared::Open(children) => open.push(children),
            }
            (mine, theirs) = loop {
                let Some(innermost) = open.last_mut() else {
                    return Ok(true);
                };
                match innermost.next() {
                    Step::Pair(mine, theirs) => break (mine, theirs),
                    Step::Differ => return Ok(false),
                    Step::Done => {
                        open.pop();
                    }
                }
            };
        }
    }

    /// Whether this is a map or a list.
    fn is_container(&self) -> bool {
        matches!(self, Node::Doc(_) | Node::Ary(_))
    }

    /// Moves the children of a map or a list that are maps or lists themselves to `into`,
    /// dropping the others (which hold nothing to walk) and leaving the container empty.
    fn give_containers(&mut self, into: &mut Vec<Node>) {
        match self {
            Node::Doc(map) => {
                into.extend(std::mem::take(map).into_values().filter(Node::is_container));
            }
            Node::Ary(items) => {
                into.extend(std::mem::take(items).into_iter().filter(Node::is_container));
            }
            _ => {}
        }
    }

    /// `container.get`: a map's member (`nil` when missing), or a list's element.
    fn get(&self, key: &str) -> Result<&Node, String> {
        const NIL: &Node = &Node::Nil;
        match self {
            Node::Doc(map) => Ok(map.get(key).unwrap_or(NIL)),
            Node::Ary(items) => {
                let i = existing_index(key, items.len())?;
                Ok(&items[i])
            }
            _ => Ok(NIL),
        }
    }

    /// `container.set` (for `replace`, after `get` found the key).
    fn set(&mut self, key: &str, value: Node) -> Result<(), Failure> {
        match self {
            Node::Doc(map) => {
                map.insert(key.to_owned(), value);
                Ok(())
            }
            Node::Ary(items) => {
                let i = existing_index(key, items.len()).map_err(Failure::Failed)?;
                items[i] = value;
                Ok(())
            }
            _ => Err(Failure::Panic(NIL_MAP)),
        }
    }

    /// `container.add`.
    fn add(&mut self, key: &str, value: Node) -> Result<(), Failure> {
        match self {
            Node::Doc(map) => {
                map.insert(key.to_owned(), value);
                Ok(())
            }
            Node::Ary(items) => {
                if key == "-" {
                    items.push(value);
                    return Ok(());
                }
                let idx = atoi(key).map_err(|e| {
                    Failure::Failed(format!("value was not a proper array index: '{key}': {e}"))
                })?;
                let size = items.len() + 1;
                let i = resolve(idx, size)
                    .filter(|&i| i < size)
                    .ok_or_else(|| Failure::Failed(invalid_index(idx)))?;
                items.insert(i, value);
                Ok(())
            }
            _ => Err(Failure::Panic(NIL_MAP)),
        }
    }

    /// `container.remove`, returning what was there.
    fn remove(&mut self, key: &str) -> Result<Node, String> {
        match self {
            Node::Doc(map) => map
                .remove(key)
                .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
            Node::Ary(items) => {
                let i = existing_index(key, items.len())?;
                Ok(items.remove(i))
            }
            _ => Err(format!(
                "Unable to remove nonexistent key: {key}: missing value"
            )),
        }
    }
}

impl Drop for Node {
    /// Drops a container holding containers one container at a time: each is emptied into a
    /// list of its own before it drops, so no drop reaches below it. A leaf, or a container of
    /// leaves only (most of a document), drops as it is, without allocating.
    fn drop(&mut self) {
        let holds_containers = match self {
            Node::Doc(map) => map.values().any(Node::is_container),
            Node::Ary(items) => items.iter().any(Node::is_container),
            _ => false,
        };
        if !holds_containers {
            return;
        }
        let mut pending = Vec::new();
        self.give_containers(&mut pending);
        while let Some(mut container) = pending.pop() {
            container.give_containers(&mut pending);
        }
    }
}

impl fmt::Debug for Node {
    /// The node's text, written without recursion; the leaves that all marshal as `null` told
    /// apart (`nil`, `<no text>` and `null`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.write(&mut text, |leaf, out| match leaf {
            Node::Nil => out.push_str("nil"),
            Node::NoText => out.push_str("<no text>"),
            Node::Scalar(s) => out.push_str(&s.text()),
            _ => out.push_str("null"),
        });
        f.write_str(&text)
    }
}

/// A value of a tree being converted into another ([`convert`]): converted already, or a map's
/// or a list's children, still to convert.
enum Opened<T, D, A> {
    Leaf(T),
    Doc(D),
    Ary(A),
}

/// A container being converted: the children left to convert, those converted and, for a map,
/// the key of the child being converted.
enum Converting<T, D, A> {
    Doc(D, Vec<(String, T)>, String),
    Ary(A, Vec<T>),
}

impl<S, T, D, A> Opened<T, D, A>
where
    D: Iterator<Item = (String, S)>,
    A: Iterator<Item = S>,
{
    /// The value converted, or the container to convert the children of.
    fn begin(self) -> Result<Converting<T, D, A>, T> {
        match self {
            Opened::Leaf(converted) => Err(converted),
            Opened::Doc(members) => {
                let done = Vec::with_capacity(members.size_hint().0);
                Ok(Converting::Doc(members, done, String::new()))
            }
            Opened::Ary(items) => {
                let done = Vec::with_capacity(items.size_hint().0);
                Ok(Converting::Ary(items, done))
            }
        }
    }
}

impl<S, T, D, A> Converting<T, D, A>
where
    D: Iterator<Item = (String, S)>,
    A: Iterator<Item = S>,
{
    /// The next child to convert.
    fn next(&mut self) -> Option<S> {
        match self {
            Converting::Doc(members, _, key) => members.next().map(|(k, child)| {
                *key = k;
                child
            }),
            Converting::Ary(items, _) => items.next(),
        }
    }

    /// Puts the conversion of the child [`Converting::next`] gave last into the container.
    fn attach(&mut self, converted: T) {
        match self {
            Converting::Doc(_, done, key) => done.push((std::mem::take(key), converted)),
            Converting::Ary(_, done) => done.push(converted),
        }
    }
}

/// Converts the tree `root` into another one container at a time, depth first and in order:
/// `open` converts a leaf or gives a container's children, `doc` and `ary` make a container of
/// the converted children.
fn convert<S, T, D, A>(
    root: S,
    mut open: impl FnMut(S) -> Opened<T, D, A>,
    mut doc: impl FnMut(Vec<(String, T)>) -> T,
    mut ary: impl FnMut(Vec<T>) -> T,
) -> T
where
    D: Iterator<Item = (String, S)>,
    A: Iterator<Item = S>,
{
    let mut current = match open(root).begin() {
        Ok(container) => container,
        Err(leaf) => return leaf,
    };
    let mut outer = Vec::new();
    loop {
        match current.next() {
            Some(child) => match open(child).begin() {
                Ok(container) => outer.push(std::mem::replace(&mut current, container)),
                Err(leaf) => current.attach(leaf),
            },
            None => {
                let done = match current {
                    Converting::Doc(_, members, _) => doc(members),
                    Converting::Ary(_, items) => ary(items),
                };
                match outer.pop() {
                    Some(parent) => {
                        current = parent;
                        current.attach(done);
                    }
                    None => return done,
                }
            }
        }
    }
}

/// [`convert`] into a [`Node`] (a repeated key keeps its last value).
fn build_node<S, D, A>(root: S, open: impl FnMut(S) -> Opened<Node, D, A>) -> Node
where
    D: Iterator<Item = (String, S)>,
    A: Iterator<Item = S>,
{
    convert(
        root,
        open,
        |members| Node::Doc(members.into_iter().collect()),
        Node::Ary,
    )
}

/// A container being written ([`Node::write`]): its children left to write.
enum Writing<'a> {
    Doc(btree_map::Iter<'a, String, Node>),
    Ary(std::slice::Iter<'a, Node>),
}

/// A map or a list of the document and one of the patch, of the same length, being compared
/// ([`Node::equal`]): the document's children left to compare, and the patch's.
enum Comparing<'a> {
    Doc(
        btree_map::Iter<'a, String, Node>,
        &'a BTreeMap<String, Node>,
    ),
    Ary(std::iter::Zip<std::slice::Iter<'a, Node>, std::slice::Iter<'a, Node>>),
}

/// What comparing two nodes at their own level found.
enum Compared<'a> {
    Equal,
    Unequal,
    /// Two containers alike so far: their children are compared next.
    Open(Comparing<'a>),
}

/// The next step of comparing two containers.
enum Step<'a> {
    /// Two children to compare.
    Pair(&'a Node, &'a Node),
    /// The maps differ at a member: a key one lacks, or `nil` against a value.
    Differ,
    /// All children compared.
    Done,
}

impl<'a> Comparing<'a> {
    /// The next pair of children to compare, in order (two `nil` members are skipped, as
    /// `lazyNode.equal` skips them).
    fn next(&mut self) -> Step<'a> {
        match self {
            Comparing::Doc(own, theirs) => {
                for (key, mine) in own.by_ref() {
                    let Some(their) = theirs.get(key) else {
                        return Step::Differ;
                    };
                    match (matches!(mine, Node::Nil), matches!(their, Node::Nil)) {
                        // Two `nil`s are equal without being compared.
                        (true, true) => continue,
                        (false, false) => return Step::Pair(mine, their),
                        _ => return Step::Differ,
                    }
                }
                Step::Done
            }
            Comparing::Ary(pairs) => pairs
                .next()
                .map_or(Step::Done, |(mine, their)| Step::Pair(mine, their)),
        }
    }
}

/// One level of `lazyNode.equal`: `mine` of the document against `theirs` of the patch.
fn compare<'a>(mine: &'a Node, theirs: &'a Node) -> Result<Compared<'a>, Failure> {
    let nil = || Failure::Panic(NIL_DEREFERENCE);
    let found = |equal: bool| {
        if equal {
            Compared::Equal
        } else {
            Compared::Unequal
        }
    };
    match mine {
        Node::Nil => Err(nil()),
        // Neither a map nor a list: compared by text, and a node without text has none.
        Node::NoText | Node::Scalar(_) => {
            let own = match mine {
                Node::Scalar(s) => Some(s.text()),
                _ => None,
            };
            match theirs {
                Node::Nil => Err(nil()),
                Node::NoText => Ok(found(own.is_none())),
                Node::Scalar(s) => Ok(found(own.is_some_and(|t| t == s.text()))),
                // The text of a map or list is never a scalar's.
                _ => Ok(Compared::Unequal),
            }
        }
        Node::NullText | Node::Doc(_) => {
            let own = match mine {
                Node::Doc(map) => map,
                _ => &NO_MEMBERS,
            };
            let theirs = match theirs {
                Node::Nil => return Err(nil()),
                Node::Doc(map) => map,
                Node::NullText => &NO_MEMBERS,
                _ => return Ok(Compared::Unequal),
            };
            if own.len() != theirs.len() {
                return Ok(Compared::Unequal);
            }
            Ok(Compared::Open(Comparing::Doc(own.iter(), theirs)))
        }
        Node::Ary(own) => {
            let theirs: &[Node] = match theirs {
                Node::Nil => return Err(nil()),
                Node::Ary(items) => items,
                Node::NullText => &[],
                _ => return Ok(Compared::Unequal),
            };
            if own.len() != theirs.len() {
                return Ok(Compared::Unequal);
            }
            Ok(Compared::Open(Comparing::Ary(own.iter().zip(theirs))))
        }
    }
}

/// Go's `compact` with HTML escaping, as `json.Marshal` writes a raw value.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    crate::gotype::escape_html(text, &mut out);
    out
}

/// `strconv.Atoi`: an optional sign and decimal digits, within 64 bits.
fn atoi(key: &str) -> Result<i64, String> {
    let digits = key.strip_prefix(['+', '-']).unwrap_or(key);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing \"{key}\": invalid syntax"));
    }
    key.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing \"{key}\": value out of range"))
}

/// An index counted from the end when negative (`SupportNegativeIndices`), in `0..=len`
/// wherever it points; `None` below the start.
fn resolve(idx: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let idx = if idx < 0 {
        if idx < -len {
            return None;
        }
        idx + len
    } else {
        idx
    };
    usize::try_from(idx).ok()
}

fn invalid_index(idx: i64) -> String {
    format!("Unable to access invalid index: {idx}: invalid index referenced")
}

/// The index of an existing element (`partialArray.get`, `remove`).
fn existing_index(key: &str, len: usize) -> Result<usize, String> {
    let idx = atoi(key)?;
    resolve(idx, len)
        .filter(|&i| i < len)
        .ok_or_else(|| invalid_index(idx))
}

/// `rfc6901Decoder`: `~1` is `/`, `~0` is `~`, in one pass.
fn decode_key(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut rest = part;
    while let Some(at) = rest.find('~') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("~1") {
            out.push('/');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("~0") {
            out.push('~');
            rest = tail;
        } else {
            out.push('~');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    out
}

/// `findObject`: the container holding the member `path` names, and that member's key. The
/// path's first part is dropped unread; every part between must name a map or a list.
fn find_object<'a>(root: &'a mut Node, path: &str) -> Option<(&'a mut Node, String)> {
    let mut parts: Vec<&str> = path.split('/').collect();
    if parts.len() < 2 {
        return None;
    }
    let key = decode_key(parts.pop().unwrap_or_default());
    let mut doc = root;
    for part in &parts[1..] {
        let part = decode_key(part);
        let next = match doc {
            Node::Doc(map) => map.get_mut(&part)?,
            Node::Ary(items) => {
                let i = existing_index(&part, items.len()).ok()?;
                &mut items[i]
            }
            // A `nil` map has no members.
            _ => return None,
        };
        match next {
            Node::Doc(_) | Node::Ary(_) | Node::NullText => doc = next,
            _ => return None,
        }
    }
    Some((doc, key))
}

/// One operation's members.
struct Op<'a>(Option<&'a BTreeMap<String, Option<String>>>);

impl Op<'_> {
    fn member(&self, name: &str) -> Option<&Option<String>> {
        self.0.and_then(|m| m.get(name))
    }

    /// `Operation.Kind`: `op` when it is a string.
    fn kind(&self) -> Option<String> {
        let raw = self.member("op")?.as_deref()?;
        serde_json::from_str(raw).ok()
    }

    /// `Operation.Path` / `From`: the member when it is a string.
    fn pointer(&self, name: &str) -> Result<String, String> {
        let Some(raw) = self.member(name).and_then(|r| r.as_deref()) else {
            return Err(format!("operation missing {name} field: missing value"));
        };
        serde_json::from_str::<String>(raw).map_err(|_| {
            format!(
                "json: cannot unmarshal {} into Go value of type string",
                raw_kind(raw)
            )
        })
    }

    /// How deep the deepest level this operation writes into a document at most `depth` deep
    /// can be: its path's length and the depth of the value it puts there (for a copy or a
    /// move, at most what lies below where it comes from).
    fn placed_depth(&self, kind: Option<&str>, depth: usize) -> usize {
        let levels = |name| self.pointer(name).map_or(0, |p| p.matches('/').count());
        let value = match kind {
            Some("add" | "replace") => self
                .member("value")
                .and_then(|raw| raw.as_deref())
                .map_or(0, |raw| nesting::text_depth(raw.as_bytes())),
            Some("copy" | "move") => depth.saturating_sub(levels("from")),
            _ => return 0,
        };
        levels("path") + value
    }

    /// `Operation.value`: `None` when there is no `value` member.
    fn value(&self) -> Option<Node> {
        self.member("value").map(|raw| match raw.as_deref() {
            None => Node::NoText,
            raw => Node::from_raw(raw),
        })
    }
}

fn raw_kind(text: &str) -> &'static str {
    read_json(text.as_bytes())
        .map(|v| json_type(&v))
        .unwrap_or("value")
}

fn failed(why: impl Into<String>) -> Failure {
    Failure::Failed(why.into())
}

fn add(root: &mut Node, op: &Op<'_>) -> Result<(), Failure> {
    let path = op
        .pointer("path")
        .map_err(|_| failed("add operation failed to decode path: missing value"))?;
    let Some((con, key)) = find_object(root, &path) else {
        return Err(failed(format!(
            "add operation does not apply: doc is missing path: \"{path}\": missing value"
        )));
    };
    con.add(&key, op.value().unwrap_or(Node::Nil))
        .map_err(|e| in_context(e, &format!("error in add for path: '{path}'")))
}

fn remove(root: &mut Node, op: &Op<'_>) -> Result<(), Failure> {
    let path = op
        .pointer("path")
        .map_err(|_| failed("remove operation failed to decode path: missing value"))?;
    let Some((con, key)) = find_object(root, &path) else {
        return Err(failed(format!(
            "remove operation does not apply: doc is missing path: \"{path}\": missing value"
        )));
    };
    con.remove(&key)
        .map(drop)
        .map_err(|e| failed(format!("error in remove for path: '{path}': {e}")))
}

fn replace(root: &mut Node, op: &Op<'_>) -> Result<(), Failure> {
    let path = op
        .pointer("path")
        .map_err(|e| failed(format!("replace operation failed to decode path: {e}")))?;
    if path.is_empty() {
        // The whole document: only by a map or a list.
        return match op.value() {
            None => Err(Failure::Panic(NIL_DEREFERENCE)),
            Some(value @ (Node::Doc(_) | Node::Ary(_))) => {
                *root = value;
                Ok(())
            }
            Some(_) => Err(failed(
                "replace operation value must be object or array: %!w(<nil>)",
            )),
        };
    }
    let Some((con, key)) = find_object(root, &path) else {
        return Err(failed(format!(
            "replace operation does not apply: doc is missing path: {path}: missing value"
        )));
    };
    if con.get(&key).is_err() {
        return Err(failed(format!(
            "replace operation does not apply: doc is missing key: {path}: missing value"
        )));
    }
    con.set(&key, op.value().unwrap_or(Node::Nil))
        .map_err(|e| in_context(e, &format!("error in remove for path: '{path}'")))
}

fn move_(root: &mut Node, op: &Op<'_>) -> Result<(), Failure> {
    let from = op
        .pointer("from")
        .map_err(|e| failed(format!("move operation failed to decode from: {e}")))?;
    let Some((con, key)) = find_object(root, &from) else {
        return Err(failed(format!(
            "move operation does not apply: doc is missing from path: {from}: missing value"
        )));
    };
    con.get(&key)
        .map_err(|e| failed(format!("error in move for path: '{key}': {e}")))?;
    let value = con
        .remove(&key)
        .map_err(|e| failed(format!("error in move for path: '{key}': {e}")))?;
    let path = op
        .pointer("path")
        .map_err(|e| failed(format!("move operation failed to decode path: {e}")))?;
    let Some((con, key)) = find_object(root, &path) else {
        return Err(failed(format!(
            "move operation does not apply: doc is missing destination path: {path}: missing value"
        )));
    };
    con.add(&key, value)
        .map_err(|e| in_context(e, &format!("error in move for path: '{path}'")))
}

fn test(root: &mut Node, op: &Op<'_>) -> Result<(), Failure> {
    let path = op
        .pointer("path")
        .map_err(|e| failed(format!("test operation failed to decode path: {e}")))?;
    let value = op.value();
    let test_failed = || failed(format!("testing value {path} failed: test failed"));
    if path.is_empty() {
        let Some(value) = value else {
            return Err(Failure::Panic(NIL_DEREFERENCE));
        };
        return if root.equal(&value)? {
            Ok(())
        } else {
            Err(test_failed())
        };
    }
    let Some((con, key)) = find_object(root, &path) else {
        return Err(failed(format!(
            "test operation does not apply: is missing path: {path}: missing value"
        )));
    };
    let found = con
        .get(&key)
        .map_err(|e| failed(format!("error in test for path: '{path}': {e}")))?;
    let equal = match (found, &value) {
        // Missing (or `null`) is what a missing value or `null` tests for.
        (Node::Nil, None | Some(Node::NoText)) => true,
        (Node::Nil, Some(_)) | (_, None) => false,
        (found, Some(value)) => found.equal(value)?,
    };
    if equal { Ok(()) } else { Err(test_failed()) }
}

fn copy(root: &mut Node, op: &Op<'_>, copied: &mut usize) -> Result<(), Failure> {
    let from = op
        .pointer("from")
        .map_err(|e| failed(format!("copy operation failed to decode from: {e}")))?;
    let Some((con, key)) = find_object(root, &from) else {
        return Err(failed(format!(
            "copy operation does not apply: doc is missing from path: {from}: missing value"
        )));
    };
    // Made while the source is borrowed, rather than from a clone of it: nothing below reads
    // the copy before adding it.
    let (copy, size) = con
        .get(&key)
        .map_err(|e| failed(format!("error in copy for from: '{from}': {e}")))?
        .deep_copy();
    let path = op
        .pointer("path")
        .map_err(|_| failed("copy operation failed to decode path: missing value"))?;
    let Some((con, key)) = find_object(root, &path) else {
        return Err(failed(format!(
            "copy operation does not apply: doc is missing destination path: {path}: missing value"
        )));
    };
    *copied = copied.saturating_add(size);
    if *copied > MAX_COPY_BYTES {
        return Err(failed(format!(
            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
        )));
    }
    con.add(&key, copy)
        .map_err(|e| in_context(e, "error while adding value during copy"))
}

/// A container's failure, wrapped as the operation wraps it; a panic stays one.
fn in_context(failure: Failure, context: &str) -> Failure {
    match failure {
        Failure::Failed(why) => Failure::Failed(format!("{context}: {why}")),
        panic => panic,
    }
}

/// The texts of the members of JSON the body's decoding has checked already, as Go's decoder
/// hands them to `json.RawMessage`s: without the space around them.
///
/// A container's members are found by scanning each one to its end. Reading a whole tree that
/// way scans a value once for each container above it, so `Closes` finds where every
/// container ends in one pass up front, and the scans jump over a container instead.
mod raw {
    use std::ops::Range;

    /// The elements of the list `text` (none when it is not one).
    pub(super) fn items(text: &str) -> Vec<&str> {
        items_in(text, 0..text.len(), None)
            .into_iter()
            .map(|item| &text[item])
            .collect()
    }

    /// The members of the object `text`, keys decoded (`None` when it is not an object).
    pub(super) fn members(text: &str) -> Option<Vec<(String, &str)>> {
        let members = members_in(text, 0..text.len(), None)?;
        Some(
            members
                .into_iter()
                .map(|(key, value)| (key, &text[value]))
                .collect(),
        )
    }

    /// The elements of the list `text[span]` as places in `text` (none when it is not one);
    /// containers jumped over where `closes` (of all of `text`) says they end.
    pub(super) fn items_in(
        text: &str,
        span: Range<usize>,
        closes: Option<&Closes>,
    ) -> Vec<Range<usize>> {
        let mut items = Vec::new();
        let Some(text) = text.get(..span.end) else {
            return items;
        };
        let Some(mut at) = open(text, span.start, b'[') else {
            return items;
        };
        while let Some(end) = value_end(text, at, closes) {
            items.push(at..end);
            match next(text, end) {
                Some((b',', after)) => at = skip_space(text, after),
                _ => break,
            }
        }
        items
    }

    /// The members of the object `text[span]`, keys decoded and values as places in `text`
    /// (`None` when it is not an object); containers jumped over as in [`items_in`].
    pub(super) fn members_in(
        text: &str,
        span: Range<usize>,
        closes: Option<&Closes>,
    ) -> Option<Vec<(String, Range<usize>)>> {
        let mut members = Vec::new();
        let text = text.get(..span.end)?;
        let mut at = open(text, span.start, b'{')?;
        while let Some(key_end) = value_end(text, at, closes) {
            let key: String = serde_json::from_str(&text[at..key_end]).ok()?;
            let (_, after_colon) = next(text, key_end).filter(|(c, _)| *c == b':')?;
            let start = skip_space(text, after_colon);
            let end = value_end(text, start, closes)?;
            members.push((key, start..end));
            match next(text, end) {
                Some((b',', after)) => at = skip_space(text, after),
                _ => break,
            }
        }
        Some(members)
    }

    /// Where each container of a text ends: the place of each opening bracket, in order, with
    /// the place after the bracket that closes it (`None` when none does).
    pub(super) struct Closes(Vec<(usize, Option<usize>)>);

    impl Closes {
        /// One pass over `text`, strings skipped; a closing bracket closes the innermost open
        /// container whatever its kind, as [`value_end`] counts them.
        pub(super) fn of(text: &str) -> Closes {
            let bytes = text.as_bytes();
            let mut found: Vec<(usize, Option<usize>)> = Vec::new();
            // The containers open at `at`, innermost last, as places in `found`.
            let mut open = Vec::new();
            let mut at = 0;
            while let Some(&b) = bytes.get(at) {
                at += 1;
                match b {
                    b'"' => match string_end(bytes, at) {
                        Some(end) => at = end,
                        None => break,
                    },
                    b'{' | b'[' => {
                        open.push(found.len());
                        found.push((at - 1, None));
                    }
                    b'}' | b']' => {
                        if let Some(i) = open.pop() {
                            found[i].1 = Some(at);
                        }
                    }
                    _ => {}
                }
            }
            Closes(found)
        }

        /// The place after the bracket that closes the container opened at `open`.
        fn after(&self, open: usize) -> Option<usize> {
            let i = self.0.binary_search_by_key(&open, |(at, _)| *at).ok()?;
            self.0[i].1
        }
    }

    /// Where the first member of a container opened by `bracket` at `start` (after space)
    /// starts (`None` when there is no such container).
    fn open(text: &str, start: usize, bracket: u8) -> Option<usize> {
        let start = skip_space(text, start);
        (text.as_bytes().get(start) == Some(&bracket)).then(|| skip_space(text, start + 1))
    }

    fn skip_space(text: &str, mut at: usize) -> usize {
        let bytes = text.as_bytes();
        while bytes
            .get(at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            at += 1;
        }
        at
    }

    /// The next byte that is not space, and the position after it.
    fn next(text: &str, at: usize) -> Option<(u8, usize)> {
        let at = skip_space(text, at);
        text.as_bytes().get(at).map(|b| (*b, at + 1))
    }

    /// Where the string whose text starts at `at` (after its opening quote) ends, after its
    /// closing quote (`None` when it does not).
    fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
        while let Some(&b) = bytes.get(at) {
            at += 1;
            match b {
                // The escaped byte is skipped: an escaped quote does not close the string.
                b'\\' => at += 1,
                b'"' => return Some(at),
                _ => {}
            }
        }
        None
    }

    /// Where the value starting at `start` ends (`None` at a closing bracket or the end): a
    /// container that `closes` knows the end of is jumped over, any other scanned through.
    fn value_end(text: &str, start: usize, closes: Option<&Closes>) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut depth = 0usize;
        let mut at = start;
        while let Some(&b) = bytes.get(at) {
            at += 1;
            match b {
                b'"' => {
                    at = string_end(bytes, at)?;
                    if depth == 0 {
                        return Some(at);
                    }
                }
                b'{' | b'[' if depth == 0 => match closes {
                    // This scan and the one that found the ends are both outside a string
                    // here (a value starts outside one), so they pair the same brackets.
                    Some(closes) => {
                        return closes.after(at - 1).filter(|end| *end <= bytes.len());
                    }
                    None => depth += 1,
                },
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return (at - 1 > start).then_some(at - 1),
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(at);
                    }
                }
                b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => {
                    return (at - 1 > start).then_some(at - 1);
                }
                _ => {}
            }
        }
        (at > start && depth == 0).then_some(at)
    }
}

#[cfg(test)]
mod tests;
