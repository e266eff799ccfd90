//! CEL source to syntax tree, with the source position of every node so that type errors can
//! be reported where cel-go reports them (`ERROR: <input>:1:5: ...` and the caret snippet).
//!
//! The `cel` crate's ANTLR parser (the grammar cel-go uses) decides what is a syntax error and
//! words it; a source it accepts is then parsed again by [`super::parser`], which keeps
//! positions and shapes macros (`all`, `exists`, `map`, `has`, ...) as nodes of their own
//! rather than as expanded comprehensions.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Deepest nesting the parser follows (cel-go refuses deeper expressions too).
pub(super) const MAX_DEPTH: usize = 250;

/// A literal.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(String),
    Bytes(Vec<u8>),
}

/// A comprehension macro.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Macro {
    All,
    Exists,
    ExistsOne,
    /// `map(x, t)` or, with a filter, `map(x, p, t)`.
    Map,
    Filter,
    /// `transformList(i, v, [p,] t)`.
    TransformList,
    /// `transformMap(k, v, [p,] t)`.
    TransformMap,
    /// `transformMapEntry(k, v, [p,] t)`.
    TransformMapEntry,
    /// `sortBy(x, key)`.
    SortBy,
    /// `optMap(x, t)` on an optional.
    OptMap,
    /// `optFlatMap(x, t)` on an optional.
    OptFlatMap,
    /// `cel.bind(var, init, t)` (environments with the bindings extension only,
    /// [`super::bindings`]): `range` is `init`.
    Bind,
}

/// A node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    Lit(Lit),
    Ident(String),
    /// `operand.field`; `test` for `has(operand.field)`.
    Select {
        operand: Box<Expr>,
        field: String,
        test: bool,
    },
    /// A function or operator (`_+_`, `_[_]`, `_?._`, ...), with its receiver when called as a
    /// method.
    Call {
        func: String,
        /// `func` when it is one of the operators the interpreter tells apart without
        /// comparing names ([`Op::of`]); kept in step with `func`.
        op: Op,
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    /// `[a, ?b]`: the flags mark optional elements.
    List(Vec<(Expr, bool)>),
    /// `{k: v, ?k2: v2}`.
    Map(Vec<(Expr, Expr, bool)>),
    /// `Name{field: value, ?other: value}`: a message, which only admission policies' patch
    /// types (`Object`, `JSONPatch`) can build; refused elsewhere.
    Struct {
        name: String,
        fields: Vec<FieldInit>,
    },
    /// A comprehension macro over `range`; `args` are its expressions after the variables.
    Comprehension {
        kind: Macro,
        range: Box<Expr>,
        var: String,
        var2: Option<String>,
        args: Vec<Expr>,
    },
}

/// The operators a rule's loops call on every step, told apart by the interpreter without
/// comparing their names: the logic operators and the conditional it evaluates lazily, and
/// the relations and arithmetic it can answer at once for numbers, bools and null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    And,
    Or,
    Conditional,
    OptionalSelect,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    /// Any other function or operator, dispatched by its name.
    Other,
}

impl Op {
    /// The operator a function name stands for.
    pub(super) fn of(func: &str) -> Op {
        match func {
            "_&&_" => Op::And,
            "_||_" => Op::Or,
            "_?_:_" => Op::Conditional,
            "_?._" => Op::OptionalSelect,
            "_==_" => Op::Equal,
            "_!=_" => Op::NotEqual,
            "_<_" => Op::Less,
            "_<=_" => Op::LessEqual,
            "_>_" => Op::Greater,
            "_>=_" => Op::GreaterEqual,
            "_+_" => Op::Add,
            "_-_" => Op::Subtract,
            "_*_" => Op::Multiply,
            "_/_" => Op::Divide,
            "_%_" => Op::Modulo,
            _ => Op::Other,
        }
    }
}

/// One field of a message built by [`Kind::Struct`], at the offset of its `:`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FieldInit {
    pub(super) pos: usize,
    pub(super) name: String,
    pub(super) value: Expr,
    pub(super) optional: bool,
}

/// A node and the byte offset cel-go reports it at.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Expr {
    pub(super) pos: usize,
    pub(super) kind: Kind,
}

/// One compile error at a byte offset of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Issue {
    pub(super) pos: usize,
    pub(super) message: String,
}

/// Errors of one expression, rendered as cel-go's `Issues.String()`: each
/// `ERROR: <input>:LINE:COL: message` with the source line and a caret under the column,
/// sorted by position.
pub(super) fn render_issues(source: &str, issues: &[Issue]) -> String {
    let mut sorted: Vec<(Option<(usize, usize)>, &str)> = issues
        .iter()
        .map(|i| {
            let at = (i.pos != NO_POS).then(|| line_col(source, i.pos));
            (at, i.message.as_str())
        })
        .collect();
    sorted.sort_by_key(|&(at, _)| at);
    let shown: Vec<String> = sorted
        .iter()
        .take(100)
        .map(|&(at, message)| match at {
            Some((line, col)) => render_one(source, line, col, message),
            None => format!("ERROR: <input>:-1:0: {message}"),
        })
        .collect();
    let mut out = shown.join("\n");
    if sorted.len() > 100 {
        let _ = write!(out, "\n{} more errors were truncated", sorted.len() - 100);
    }
    out
}

/// 1-based line and 0-based column in code points of a byte offset.
fn line_col(source: &str, pos: usize) -> (usize, usize) {
    let mut line = 1;
    let mut col = 0;
    for (i, c) in source.char_indices() {
        if i >= pos {
            break;
        }
        if c == '\n' {
            line += 1;
            col = 0;
        } else {
            col += 1;
        }
    }
    (line, col)
}

fn render_one(source: &str, line: usize, col: usize, message: &str) -> String {
    let mut out = format!("ERROR: <input>:{line}:{}: {message}", col + 1);
    let Some(snippet) = source.split('\n').nth(line - 1) else {
        return out;
    };
    if snippet.len() > 16384 {
        return out;
    }
    let snippet = snippet.replace('\t', " ");
    let _ = write!(out, "\n | {snippet}\n | ");
    let mut chars = snippet.chars();
    for _ in 0..col {
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => out.push('\u{ff0e}'),
            Some(_) => out.push('.'),
            None => break,
        }
    }
    match chars.next() {
        Some(c) if c.len_utf8() > 1 => out.push('\u{ff3e}'),
        _ => out.push('^'),
    }
    out
}

/// Where an error has no position (cel-go prints `<input>:-1:0` and no snippet).
pub(super) const NO_POS: usize = usize::MAX;

/// cel-go's limit on the length of an expression, in code points.
const MAX_CODE_POINTS: usize = 100_000;

/// Sources parsed lately, shared by every thread: a CRD's rules are compiled more than once
/// (checked when it is written, then kept), each time on a thread of its own, and the ANTLR
/// parse is the costly part.
static PARSED: std::sync::LazyLock<Mutex<HashMap<String, Result<Expr, String>>>> =
    std::sync::LazyLock::new(Mutex::default);

/// Parses `source`: the syntax errors (worded by the ANTLR parser cel-go also uses) or the tree.
///
/// Both parsers recurse once per bracket, the ANTLR one through large frames: a hundred nested
/// brackets would overflow a test thread's 2 MiB. Callers run this on
/// [`super::stack::on_large_stack`], as [`super::CelRules::compile_at`] does.
pub(super) fn parse(source: &str) -> Result<Expr, String> {
    let cache = || {
        PARSED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    if let Some(done) = cache().get(source).cloned() {
        return done;
    }
    let result = parse_uncached(source);
    let mut parsed = cache();
    if parsed.len() >= 256 {
        parsed.clear();
    }
    parsed.insert(source.to_owned(), result.clone());
    result
}

fn parse_uncached(source: &str) -> Result<Expr, String> {
    let issue = |pos, message: String| render_issues(source, &[Issue { pos, message }]);
    let size = source.chars().count();
    if size > MAX_CODE_POINTS {
        return Err(issue(
            NO_POS,
            format!(
                "expression code point size exceeds limit: size: {size}, limit {MAX_CODE_POINTS}"
            ),
        ));
    }
    if nesting(source) >= MAX_DEPTH {
        return Err(issue(
            NO_POS,
            format!("expression recursion limit exceeded: {MAX_DEPTH}"),
        ));
    }
    // Third-party code fed arbitrary text: a panic in it is a refusal, not a crash.
    std::panic::catch_unwind(|| parse_both(source)).unwrap_or_else(|_| {
        Err(issue(
            NO_POS,
            "Syntax error: the expression could not be parsed".to_owned(),
        ))
    })
}

/// The two parses: ANTLR's for the syntax errors, then ours for the tree.
fn parse_both(source: &str) -> Result<Expr, String> {
    if let Some(errors) = antlr_errors(source) {
        return Err(errors);
    }
    let tokens = super::lex::lex(source).map_err(|issue| render_issues(source, &[issue]))?;
    let expr = super::parser::parse(tokens, source.len())
        .map_err(|issue| render_issues(source, &[issue]))?;
    if visit_depth(&expr) > MAX_DEPTH {
        return Err(render_issues(
            source,
            &[Issue {
                pos: NO_POS,
                message: "max recursion depth exceeded".to_owned(),
            }],
        ));
    }
    Ok(expr)
}

/// The syntax errors the ANTLR parser finds, rendered; `None` when it accepts the source.
fn antlr_errors(source: &str) -> Option<String> {
    let outcome = kube_cel::cel::parser::Parser::new()
        .enable_optional_syntax(true)
        .max_recursion_depth(u16::try_from(MAX_DEPTH).unwrap_or(u16::MAX))
        .parse(source)
        .map(|_| ())
        .map_err(|e| {
            e.errors
                .iter()
                .map(|e| (e.pos.0, e.pos.1, e.msg.clone()))
                .collect::<Vec<_>>()
        });
    match outcome {
        Ok(()) => None,
        Err(errors) => {
            // The `cel` crate adds errors of its own while visiting a broken tree (`Incomplete
            // ExprContext ...`); cel-go reports the syntax errors only.
            let internal = |m: &str| {
                m.starts_with("Incomplete ")
                    || m.starts_with("No `")
                    || m.starts_with("Unknown `")
                    || m == "UNKNOWN"
            };
            let errors: Vec<_> = if errors.iter().all(|(_, _, m)| internal(m)) {
                errors
            } else {
                errors
                    .into_iter()
                    .filter(|(_, _, m)| !internal(m))
                    .collect()
            };
            let issues: Vec<Issue> = errors
                .into_iter()
                .map(|(line, col, message)| Issue {
                    pos: if line < 1 {
                        NO_POS
                    } else {
                        offset_of(source, line, col)
                    },
                    message,
                })
                .collect();
            Some(render_issues(source, &issues))
        }
    }
}

/// The deepest nesting of brackets, which is how deep the ANTLR parser recurses.
fn nesting(source: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in source.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// How deep cel-go's visitor recurses over a tree, as its `checkAndIncrementRecursionDepth`
/// counts: one for each node built from a ternary, a relation, an arithmetic operator, a field
/// selection, an index or a receiver-style call (macros included) on the way down; logic,
/// negation, global calls, literals and list or map creation pass through uncounted. More
/// than [`MAX_DEPTH`] is `max recursion depth exceeded` (kube-apiserver 1.36 takes
/// `1+1+...+1 > 0` with 249 `+` and `self.a.a...a == 1` with 249 selections, not one more).
fn visit_depth(e: &Expr) -> usize {
    let counted = match &e.kind {
        Kind::Lit(_) | Kind::Ident(_) => return 0,
        Kind::Select { .. } | Kind::Comprehension { .. } => true,
        Kind::Call { func, target, .. } => target.is_some() || counted_operator(func),
        Kind::List(_) | Kind::Map(_) | Kind::Struct { .. } => false,
    };
    usize::from(counted) + children(e).into_iter().map(visit_depth).max().unwrap_or(0)
}

/// The operators whose parse rules cel-go's visitor counts.
fn counted_operator(function: &str) -> bool {
    matches!(
        function,
        "_?_:_"
            | "_==_"
            | "_!=_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "@in"
            | "_+_"
            | "_-_"
            | "_*_"
            | "_/_"
            | "_%_"
            | "_[_]"
            | "_[?_]"
            | "_?._"
    )
}

/// The depth of a tree, every node counted: how deep checking and evaluating it recurse.
pub(super) fn tree_depth(e: &Expr) -> usize {
    1 + children(e).into_iter().map(tree_depth).max().unwrap_or(0)
}

/// The subexpressions of a node.
fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        Kind::Lit(_) | Kind::Ident(_) => Vec::new(),
        Kind::Struct { fields, .. } => fields.iter().map(|f| &f.value).collect(),
        Kind::Select { operand, .. } => vec![operand.as_ref()],
        Kind::Call { target, args, .. } => target.iter().map(AsRef::as_ref).chain(args).collect(),
        Kind::List(elems) => elems.iter().map(|(e, _)| e).collect(),
        Kind::Map(entries) => entries.iter().flat_map(|(k, v, _)| [k, v]).collect(),
        Kind::Comprehension { range, args, .. } => {
            std::iter::once(range.as_ref()).chain(args).collect()
        }
    }
}

/// The byte offset of a 1-based line and 1-based column (in code points), as the ANTLR parser
/// reports positions.
fn offset_of(source: &str, line: isize, col: isize) -> usize {
    let mut current = 1;
    let mut start = 0;
    for (i, c) in source.char_indices() {
        if current >= line {
            break;
        }
        if c == '\n' {
            current += 1;
            start = i + 1;
        }
    }
    let skip = usize::try_from(col - 1).unwrap_or(0);
    source
        .get(start..)
        .and_then(|rest| rest.char_indices().nth(skip).map(|(i, _)| start + i))
        .unwrap_or(source.len())
}
