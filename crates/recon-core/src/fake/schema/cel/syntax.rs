//! CEL source to syntax tree, with the source position of every node so that type errors can
//! be reported where cel-go reports them (`ERROR: <input>:1:5: ...` and the caret snippet).
//!
//! The `cel` crate's ANTLR parser (the grammar cel-go uses) decides what is a syntax error and
//! words it; a source it accepts is then parsed again here, by a small recursive-descent parser
//! that keeps positions and shapes macros (`all`, `exists`, `map`, `has`, ...) as nodes of
//! their own rather than as expanded comprehensions.

use std::fmt::Write as _;

/// Deepest nesting the parser follows (cel-go refuses deeper expressions too).
const MAX_DEPTH: usize = 250;

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
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    /// `[a, ?b]`: the flags mark optional elements.
    List(Vec<(Expr, bool)>),
    /// `{k: v, ?k2: v2}`.
    Map(Vec<(Expr, Expr, bool)>),
    /// `Name{field: value}`: never valid here (no message types), kept to be reported.
    Struct(String),
    /// A comprehension macro over `range`; `args` are its expressions after the variables.
    Comprehension {
        kind: Macro,
        range: Box<Expr>,
        var: String,
        var2: Option<String>,
        args: Vec<Expr>,
    },
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

/// Stack for the ANTLR parser's thread: its recursion is deep and its frames are large (an
/// unoptimised build needs tens of megabytes for an expression nested 250 deep).
const PARSER_STACK: usize = 256 << 20;

/// Parses `source`: the syntax errors (worded by the ANTLR parser cel-go also uses) or the tree.
pub(super) fn parse(source: &str) -> Result<Expr, String> {
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
    if let Some(errors) = antlr_errors(source) {
        return Err(errors);
    }
    let tokens = lex(source).map_err(|issue| render_issues(source, &[issue]))?;
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
        end: source.len(),
    };
    let expr = parser
        .expr()
        .map_err(|issue| render_issues(source, &[issue]))?;
    if parser.at < parser.tokens.len() {
        let pos = parser.pos();
        return Err(issue(pos, "Syntax error: extraneous input".to_owned()));
    }
    if depth(&expr) > MAX_DEPTH {
        return Err(issue(NO_POS, "max recursion depth exceeded".to_owned()));
    }
    Ok(expr)
}

/// The syntax errors the ANTLR parser finds, rendered; `None` when it accepts the source.
fn antlr_errors(source: &str) -> Option<String> {
    let owned = source.to_owned();
    // Third-party code fed arbitrary text, on a thread of its own with a large stack; a panic
    // in it is a refusal, not a crash of the server.
    let run = move || {
        std::panic::catch_unwind(|| {
            kube_cel::cel::parser::Parser::new()
                .enable_optional_syntax(true)
                .max_recursion_depth(u16::try_from(MAX_DEPTH).unwrap_or(u16::MAX))
                .parse(&owned)
                .map(|_| ())
                .map_err(|e| {
                    e.errors
                        .iter()
                        .map(|e| (e.pos.0, e.pos.1, e.msg.clone()))
                        .collect::<Vec<_>>()
                })
        })
    };
    let outcome = std::thread::Builder::new()
        .name("cel-parse".to_owned())
        .stack_size(PARSER_STACK)
        .spawn(run)
        .ok()
        .and_then(|handle| handle.join().ok());
    match outcome {
        Some(Ok(Ok(()))) => None,
        Some(Ok(Err(errors))) => {
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
        // The parser panicked, or no thread could be started for it.
        Some(Err(_)) | None => Some(render_issues(
            source,
            &[Issue {
                pos: NO_POS,
                message: "Syntax error: the expression could not be parsed".to_owned(),
            }],
        )),
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

/// The depth of a tree, as cel-go's parser counts its visits.
fn depth(e: &Expr) -> usize {
    let children = match &e.kind {
        Kind::Lit(_) | Kind::Ident(_) | Kind::Struct(_) => return 1,
        Kind::Select { operand, .. } => vec![operand.as_ref()],
        Kind::Call { target, args, .. } => target.iter().map(AsRef::as_ref).chain(args).collect(),
        Kind::List(elems) => elems.iter().map(|(e, _)| e).collect(),
        Kind::Map(entries) => entries.iter().flat_map(|(k, v, _)| [k, v]).collect(),
        Kind::Comprehension { range, args, .. } => {
            std::iter::once(range.as_ref()).chain(args).collect()
        }
    };
    1 + children.into_iter().map(depth).max().unwrap_or(0)
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

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Lit(Lit),
    /// A number literal whose sign a preceding `-` may still take (`-9223372036854775808`).
    Int(String, u32),
    Float(f64),
    Punct(&'static str),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    pos: usize,
}

const PUNCTS: [&str; 25] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}", "=",
];

fn lex(source: &str) -> Result<Vec<Token>, Issue> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if source[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        // String and bytes literals, with their r/b prefixes.
        let prefix_len = string_prefix(&source[i..]);
        if let Some(plen) = prefix_len {
            let prefix = source[i..i + plen].to_ascii_lowercase();
            let (lit, len) = lex_string(source, i + plen, prefix.contains('r'), start)?;
            let tok = if prefix.contains('b') {
                Tok::Lit(Lit::Bytes(lit))
            } else {
                Tok::Lit(Lit::String(String::from_utf8(lit).map_err(|_| Issue {
                    pos: start,
                    message: "Syntax error: invalid string literal".to_owned(),
                })?))
            };
            out.push(Token { tok, pos: start });
            i = i + plen + len;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &source[start..i];
            let tok = match word {
                "true" => Tok::Lit(Lit::Bool(true)),
                "false" => Tok::Lit(Lit::Bool(false)),
                "null" => Tok::Lit(Lit::Null),
                "in" => Tok::Punct("in"),
                _ => Tok::Ident(word.to_owned()),
            };
            out.push(Token { tok, pos: start });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, len) = lex_number(&source[i..]).ok_or_else(|| Issue {
                pos: start,
                message: "Syntax error: invalid number".to_owned(),
            })?;
            out.push(Token { tok, pos: start });
            i += len;
            continue;
        }
        let Some(p) = PUNCTS.iter().find(|p| source[i..].starts_with(**p)) else {
            return Err(Issue {
                pos: start,
                message: "Syntax error: token recognition error".to_owned(),
            });
        };
        out.push(Token {
            tok: Tok::Punct(p),
            pos: start,
        });
        i += p.len();
    }
    Ok(out)
}

/// The length of a string literal's prefix and opening quote position, if one starts here.
fn string_prefix(rest: &str) -> Option<usize> {
    let b = rest.as_bytes();
    let mut n = 0;
    while n < 2
        && b.get(n)
            .is_some_and(|c| matches!(c, b'r' | b'R' | b'b' | b'B'))
    {
        n += 1;
    }
    if matches!(b.get(n), Some(b'"' | b'\'')) {
        Some(n)
    } else {
        None
    }
}

/// A quoted literal at `at` (the opening quote): its bytes and its length.
fn lex_string(source: &str, at: usize, raw: bool, start: usize) -> Result<(Vec<u8>, usize), Issue> {
    let bad = |message: &str| Issue {
        pos: start,
        message: format!("Syntax error: {message}"),
    };
    let rest = &source[at..];
    let quote = &rest[..1];
    let triple = rest.starts_with(&quote.repeat(3));
    let delim = if triple {
        quote.repeat(3)
    } else {
        quote.to_owned()
    };
    let body_start = delim.len();
    let mut out = Vec::new();
    let mut chars = rest[body_start..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if rest[body_start + i..].starts_with(&delim) {
            return Ok((out, body_start + i + delim.len()));
        }
        if !triple && (c == '\n' || c == '\r') {
            return Err(bad("unterminated string"));
        }
        if c != '\\' || raw {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err(bad("unterminated string"));
        };
        match e {
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(11),
            '\\' | '\'' | '"' | '`' | '?' => out.push(e as u8),
            'x' | 'X' | 'u' | 'U' => {
                let n = match e {
                    'x' | 'X' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    let d = chars
                        .next()
                        .and_then(|(_, d)| d.to_digit(16))
                        .ok_or_else(|| bad("invalid escape"))?;
                    v = v * 16 + d;
                }
                if matches!(e, 'x' | 'X') {
                    out.push(u8::try_from(v).unwrap_or(0));
                } else {
                    let ch = char::from_u32(v).ok_or_else(|| bad("invalid unicode code point"))?;
                    let mut buf = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
            '0'..='3' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let d = chars
                        .next()
                        .and_then(|(_, d)| d.to_digit(8))
                        .ok_or_else(|| bad("invalid escape"))?;
                    v = v * 8 + d;
                }
                out.push(u8::try_from(v).unwrap_or(0));
            }
            _ => return Err(bad("invalid escape")),
        }
    }
    Err(bad("unterminated string"))
}

/// A number literal at the start of `rest`, and its length.
fn lex_number(rest: &str) -> Option<(Tok, usize)> {
    let b = rest.as_bytes();
    if rest.starts_with("0x") || rest.starts_with("0X") {
        let mut n = 2;
        while b.get(n).is_some_and(u8::is_ascii_hexdigit) {
            n += 1;
        }
        let digits = rest.get(2..n)?.to_owned();
        if matches!(b.get(n), Some(b'u' | b'U')) {
            let v = u64::from_str_radix(&digits, 16).ok()?;
            return Some((Tok::Lit(Lit::Uint(v)), n + 1));
        }
        return Some((Tok::Int(digits, 16), n));
    }
    let mut n = 0;
    while b.get(n).is_some_and(u8::is_ascii_digit) {
        n += 1;
    }
    let mut float = false;
    if b.get(n) == Some(&b'.') && b.get(n + 1).is_some_and(u8::is_ascii_digit) {
        float = true;
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    if matches!(b.get(n), Some(b'e' | b'E')) {
        let mut m = n + 1;
        if matches!(b.get(m), Some(b'+' | b'-')) {
            m += 1;
        }
        if b.get(m).is_some_and(u8::is_ascii_digit) {
            float = true;
            n = m;
            while b.get(n).is_some_and(u8::is_ascii_digit) {
                n += 1;
            }
        }
    }
    let text = rest.get(..n)?;
    if float {
        return Some((Tok::Float(text.parse().ok()?), n));
    }
    if matches!(b.get(n), Some(b'u' | b'U')) {
        return Some((Tok::Lit(Lit::Uint(text.parse().ok()?)), n + 1));
    }
    Some((Tok::Int(text.to_owned(), 10), n))
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
    end: usize,
}

type PResult = Result<Expr, Issue>;

impl Parser {
    fn pos(&self) -> usize {
        self.tokens.get(self.at).map_or(self.end, |t| t.pos)
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|t| &t.tok)
    }

    fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn peek_punct_at(&self, offset: usize, p: &str) -> bool {
        matches!(self.tokens.get(self.at + offset).map(|t| &t.tok), Some(Tok::Punct(q)) if *q == p)
    }

    fn eat(&mut self, p: &str) -> Option<usize> {
        if self.peek_punct(p) {
            let pos = self.pos();
            self.at += 1;
            Some(pos)
        } else {
            None
        }
    }

    fn expect(&mut self, p: &str) -> Result<usize, Issue> {
        self.eat(p)
            .ok_or_else(|| self.error(&format!("expected '{p}'")))
    }

    fn error(&self, message: &str) -> Issue {
        Issue {
            pos: self.pos(),
            message: format!("Syntax error: {message}"),
        }
    }

    fn ident(&mut self) -> Result<(String, usize), Issue> {
        match self.tokens.get(self.at) {
            Some(Token {
                tok: Tok::Ident(name),
                pos,
            }) => {
                let r = (name.clone(), *pos);
                self.at += 1;
                Ok(r)
            }
            _ => Err(self.error("expected an identifier")),
        }
    }

    /// A chain (`a + b + c`, `a.b.c`) grows the tree one level per link without recursing.
    fn chain(&self, links: usize) -> Result<(), Issue> {
        if self.depth + links > MAX_DEPTH {
            return Err(Issue {
                pos: NO_POS,
                message: "max recursion depth exceeded".to_owned(),
            });
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), Issue> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Issue {
                pos: self.pos(),
                message: format!("expression recursion limit exceeded: {MAX_DEPTH}"),
            });
        }
        Ok(())
    }

    fn expr(&mut self) -> PResult {
        self.enter()?;
        let cond = self.or()?;
        let result = if let Some(pos) = self.eat("?") {
            let then = self.or()?;
            self.expect(":")?;
            let otherwise = self.expr()?;
            Ok(call(pos, "_?_:_", None, vec![cond, then, otherwise]))
        } else {
            Ok(cond)
        };
        self.depth -= 1;
        result
    }

    /// A chain of `||` or `&&`, balanced as cel-go's parser builds it.
    fn logic(&mut self, op: &'static str, next: fn(&mut Parser) -> PResult) -> PResult {
        let first = next(self)?;
        let mut terms = vec![first];
        let mut ops = Vec::new();
        while let Some(pos) = self.eat(op) {
            ops.push(pos);
            terms.push(next(self)?);
        }
        let func = if op == "||" { "_||_" } else { "_&&_" };
        Ok(balance(func, &mut terms.into_iter(), &ops))
    }

    fn or(&mut self) -> PResult {
        self.logic("||", Parser::and)
    }

    fn and(&mut self) -> PResult {
        self.logic("&&", Parser::relation)
    }

    fn relation(&mut self) -> PResult {
        let mut lhs = self.calc(0)?;
        let mut links = 0;
        loop {
            links += 1;
            self.chain(links)?;
            let op = match self.peek() {
                Some(Tok::Punct(p @ ("<" | "<=" | ">" | ">=" | "==" | "!=" | "in"))) => *p,
                _ => return Ok(lhs),
            };
            let pos = self.pos();
            self.at += 1;
            let rhs = self.calc(0)?;
            let func = match op {
                "in" => "@in".to_owned(),
                o => format!("_{o}_"),
            };
            lhs = call(pos, &func, None, vec![lhs, rhs]);
        }
    }

    /// `+ -` (level 0) over `* / %` (level 1).
    fn calc(&mut self, level: u8) -> PResult {
        let mut lhs = if level == 0 {
            self.calc(1)?
        } else {
            self.unary()?
        };
        let mut links = 0;
        loop {
            links += 1;
            self.chain(links)?;
            let op = match (level, self.peek()) {
                (0, Some(Tok::Punct(p @ ("+" | "-"))))
                | (1, Some(Tok::Punct(p @ ("*" | "/" | "%")))) => *p,
                _ => return Ok(lhs),
            };
            let pos = self.pos();
            self.at += 1;
            let rhs = if level == 0 {
                self.calc(1)?
            } else {
                self.unary()?
            };
            lhs = call(pos, &format!("_{op}_"), None, vec![lhs, rhs]);
        }
    }

    fn unary(&mut self) -> PResult {
        for (op, func) in [("!", "!_"), ("-", "-_")] {
            if !self.peek_punct(op) {
                continue;
            }
            // A `-` right before a number is the number's sign.
            if op == "-"
                && matches!(
                    self.tokens.get(self.at + 1).map(|t| &t.tok),
                    Some(Tok::Int(..) | Tok::Float(_))
                )
            {
                return self.member();
            }
            let pos = self.pos();
            let mut count = 0;
            while self.eat(op).is_some() {
                count += 1;
            }
            self.enter()?;
            let operand = self.member();
            self.depth -= 1;
            let operand = operand?;
            return Ok(if count % 2 == 0 {
                operand
            } else {
                call(pos, func, None, vec![operand])
            });
        }
        self.member()
    }

    fn member(&mut self) -> PResult {
        let mut e = self.primary()?;
        let mut links = 0;
        loop {
            links += 1;
            self.chain(links)?;
            if let Some(pos) = self.eat(".") {
                let optional = self.eat("?").is_some();
                let (name, name_pos) = self.ident()?;
                if !optional && self.peek_punct("(") {
                    let open = self.pos();
                    self.at += 1;
                    let args = self.args(")")?;
                    e = receiver_call(open, name, e, args)?;
                } else if optional {
                    let field = Expr {
                        pos: name_pos,
                        kind: Kind::Lit(Lit::String(name)),
                    };
                    e = call(pos, "_?._", None, vec![e, field]);
                } else {
                    e = Expr {
                        pos,
                        kind: Kind::Select {
                            operand: Box::new(e),
                            field: name,
                            test: false,
                        },
                    };
                }
            } else if let Some(pos) = self.eat("[") {
                let optional = self.eat("?").is_some();
                let index = self.expr()?;
                self.expect("]")?;
                let func = if optional { "_[?_]" } else { "_[_]" };
                e = call(pos, func, None, vec![e, index]);
            } else {
                return Ok(e);
            }
        }
    }

    fn args(&mut self, close: &str) -> Result<Vec<Expr>, Issue> {
        let mut args = Vec::new();
        if self.eat(close).is_some() {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(",").is_none() {
                break;
            }
            if self.peek_punct(close) {
                break;
            }
        }
        self.expect(close)?;
        Ok(args)
    }

    fn primary(&mut self) -> PResult {
        let pos = self.pos();
        let Some(token) = self.tokens.get(self.at).cloned() else {
            return Err(self.error("unexpected end of input"));
        };
        match token.tok {
            Tok::Lit(lit) => {
                self.at += 1;
                Ok(Expr {
                    pos,
                    kind: Kind::Lit(lit),
                })
            }
            Tok::Int(..) | Tok::Float(_) => self.number(false, pos),
            Tok::Punct("-") => {
                self.at += 1;
                self.number(true, pos)
            }
            Tok::Punct("(") => {
                self.at += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => {
                self.at += 1;
                let mut elems = Vec::new();
                while !self.peek_punct("]") {
                    let optional = self.eat("?").is_some();
                    elems.push((self.expr()?, optional));
                    if self.eat(",").is_none() {
                        break;
                    }
                }
                self.expect("]")?;
                Ok(Expr {
                    pos,
                    kind: Kind::List(elems),
                })
            }
            Tok::Punct("{") => {
                self.at += 1;
                let mut entries = Vec::new();
                while !self.peek_punct("}") {
                    let optional = self.eat("?").is_some();
                    let key = self.expr()?;
                    self.expect(":")?;
                    let value = self.expr()?;
                    entries.push((key, value, optional));
                    if self.eat(",").is_none() {
                        break;
                    }
                }
                self.expect("}")?;
                Ok(Expr {
                    pos,
                    kind: Kind::Map(entries),
                })
            }
            Tok::Punct(".") | Tok::Ident(_) => self.name(),
            _ => Err(self.error("unexpected token")),
        }
    }

    /// An identifier, a global call, or a message construction `a.b.C{...}`.
    fn name(&mut self) -> PResult {
        let leading = self.eat(".").is_some();
        let (first, pos) = self.ident()?;
        let name = if leading { format!(".{first}") } else { first };
        if self.peek_punct("(") {
            let open = self.pos();
            self.at += 1;
            let args = self.args(")")?;
            return global_call(open, name, args);
        }
        // `a.b.C{`: a qualified message name.
        let mut parts = vec![name.clone()];
        let mut look = 0;
        while self.peek_punct_at(look, ".")
            && matches!(
                self.tokens.get(self.at + look + 1).map(|t| &t.tok),
                Some(Tok::Ident(_))
            )
        {
            if let Some(Tok::Ident(n)) = self.tokens.get(self.at + look + 1).map(|t| &t.tok) {
                parts.push(n.clone());
            }
            look += 2;
        }
        if self.peek_punct_at(look, "{") {
            self.at += look;
            let open = self.pos();
            self.at += 1;
            let mut depth = 1;
            while depth > 0 {
                match self.peek() {
                    Some(Tok::Punct("{")) => depth += 1,
                    Some(Tok::Punct("}")) => depth -= 1,
                    None => return Err(self.error("expected '}'")),
                    _ => {}
                }
                self.at += 1;
            }
            return Ok(Expr {
                pos: open,
                kind: Kind::Struct(parts.join(".")),
            });
        }
        Ok(Expr {
            pos,
            kind: Kind::Ident(name),
        })
    }

    fn number(&mut self, negative: bool, pos: usize) -> PResult {
        let Some(token) = self.tokens.get(self.at).cloned() else {
            return Err(self.error("unexpected end of input"));
        };
        self.at += 1;
        let lit = match token.tok {
            Tok::Float(f) => Lit::Double(if negative { -f } else { f }),
            Tok::Int(digits, radix) => {
                let text = if negative {
                    format!("-{digits}")
                } else {
                    digits
                };
                Lit::Int(i64::from_str_radix(&text, radix).map_err(|_| Issue {
                    pos,
                    message: "invalid int literal".to_owned(),
                })?)
            }
            _ => return Err(self.error("expected a number")),
        };
        Ok(Expr {
            pos,
            kind: Kind::Lit(lit),
        })
    }
}

fn call(pos: usize, func: &str, target: Option<Expr>, args: Vec<Expr>) -> Expr {
    Expr {
        pos,
        kind: Kind::Call {
            func: func.to_owned(),
            target: target.map(Box::new),
            args,
        },
    }
}

/// cel-go's logic manager: `a || b || c || d` as a balanced tree, each node at its operator.
fn balance(func: &str, terms: &mut dyn Iterator<Item = Expr>, ops: &[usize]) -> Expr {
    let collected: Vec<Expr> = terms.collect();
    build_balanced(func, collected, ops)
}

fn build_balanced(func: &str, mut terms: Vec<Expr>, ops: &[usize]) -> Expr {
    if terms.len() == 1 || ops.is_empty() {
        return terms.remove(0);
    }
    let mid = ops.len() / 2;
    let right_terms = terms.split_off(mid + 1);
    let left = build_balanced(func, terms, &ops[..mid]);
    let right = build_balanced(func, right_terms, &ops[mid + 1..]);
    call(ops[mid], func, None, vec![left, right])
}

fn simple_name(e: &Expr) -> Option<String> {
    match &e.kind {
        Kind::Ident(n) if !n.starts_with('.') => Some(n.clone()),
        _ => None,
    }
}

fn macro_error(pos: usize, message: &str) -> Issue {
    Issue {
        pos,
        message: message.to_owned(),
    }
}

fn global_call(pos: usize, name: String, mut args: Vec<Expr>) -> PResult {
    if name == "has" && args.len() == 1 {
        let arg = args.remove(0);
        return match arg.kind {
            Kind::Select { operand, field, .. } => Ok(Expr {
                pos,
                kind: Kind::Select {
                    operand,
                    field,
                    test: true,
                },
            }),
            _ => Err(macro_error(arg.pos, "invalid argument to has() macro")),
        };
    }
    Ok(call(pos, &name, None, args))
}

fn receiver_call(pos: usize, name: String, target: Expr, mut args: Vec<Expr>) -> PResult {
    let kind = match (name.as_str(), args.len()) {
        ("all", 2 | 3) => Macro::All,
        ("exists", 2 | 3) => Macro::Exists,
        ("exists_one", 2) | ("existsOne", 2 | 3) => Macro::ExistsOne,
        ("map", 2 | 3) => Macro::Map,
        ("filter", 2) => Macro::Filter,
        ("transformList", 3 | 4) => Macro::TransformList,
        ("transformMap", 3 | 4) => Macro::TransformMap,
        ("transformMapEntry", 3 | 4) => Macro::TransformMapEntry,
        ("sortBy", 2) => Macro::SortBy,
        ("optMap", 2) => Macro::OptMap,
        ("optFlatMap", 2) => Macro::OptFlatMap,
        _ => return Ok(call(pos, &name, Some(target), args)),
    };
    let two_vars = match kind {
        Macro::All | Macro::Exists | Macro::ExistsOne => args.len() == 3,
        Macro::TransformList | Macro::TransformMap | Macro::TransformMapEntry => true,
        _ => false,
    };
    let var = simple_name(&args[0])
        .ok_or_else(|| macro_error(args[0].pos, "argument must be a simple name"))?;
    let var2 = if two_vars {
        let v = simple_name(&args[1])
            .ok_or_else(|| macro_error(args[1].pos, "argument must be a simple name"))?;
        Some(v)
    } else {
        None
    };
    let skip = if two_vars { 2 } else { 1 };
    let rest = args.split_off(skip);
    Ok(Expr {
        pos,
        kind: Kind::Comprehension {
            kind,
            range: Box::new(target),
            var,
            var2,
            args: rest,
        },
    })
}
