//! The `labelSelector` and `fieldSelector` query parameters of list and watch requests: parsing,
//! validation and matching, with the error texts of the real apiserver.
//!
//! The rules follow k8s.io/apimachinery `pkg/labels/selector.go` and `pkg/fields/selector.go`
//! as of Kubernetes 1.35–1.37. A selector that fails to parse becomes a 400 BadRequest whose
//! message is the parser's error text, unwrapped: `listOpts` in k8s.io/apiserver
//! `pkg/endpoints/handlers/get.go` answers `errors.NewBadRequest(err.Error())` for the error of
//! `ParameterCodec.DecodeParameters`, which passes on unchanged what
//! `Convert_string_To_labels_Selector` / `Convert_string_To_fields_Selector`
//! (apimachinery `pkg/apis/meta/v1/conversion.go`) got from `labels.Parse` / `fields.ParseSelector`.

use std::collections::BTreeSet;
use std::fmt;

use crate::go_quote;
use crate::names::{label_key_errors, label_value_errors};

/// A selector the apiserver rejects; the string is the `message` of its 400 BadRequest `Status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorError(pub String);

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SelectorError {}

// ---------------------------------------------------------------------------------------------
// Label selectors (pkg/labels/selector.go)
// ---------------------------------------------------------------------------------------------

/// A parsed `labelSelector` query value: every requirement must hold for an object to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// One term of a label selector (`labels.Requirement`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Operator,
    /// Sorted and free of duplicates: the parser gathers values in a `sets.String` and hands
    /// `NewRequirement` its sorted list.
    values: Vec<String>,
}

/// `selection.Operator`; `=` and `==` behave identically everywhere, so they share a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Equals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

impl LabelSelector {
    /// Parses the query-string form (`a=b,c in (d,e),!f,g notin (h)`); the empty string (or
    /// only whitespace) selects everything.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = Parser::new(input).parse().map_err(SelectorError)?;
        // selector.go sorts by key; matching is an AND so this only fixes the iteration order.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self { requirements })
    }

    /// Whether the selector has no requirement, and so selects everything (`Empty`).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object's labels satisfy every requirement. `labels` yields the object's
    /// value for a key; `None` means the label is absent.
    pub fn matches<'a>(&self, labels: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| r.matches(&labels))
    }

    /// Requirements of the form `key=value` / `key==value` / `key in (single)` that any match
    /// must satisfy, for index lookups: (key, value).
    pub fn required_equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        // Same cases as `internalSelector.RequiresExactMatch`; `in (a,a)` has one value once
        // duplicates are dropped, and `in ()` requires the empty value.
        self.requirements
            .iter()
            .filter_map(|r| match (r.op, r.values.as_slice()) {
                (Operator::Equals | Operator::In, [only]) => Some((r.key.as_str(), only.as_str())),
                _ => None,
            })
    }
}

impl Requirement {
    /// `Requirement.Matches`: `!=` and `notin` hold for objects without the label, while
    /// `gt`/`lt` need the label to be present and a base-10 int64.
    fn matches<'a>(&self, labels: &impl Fn(&str) -> Option<&'a str>) -> bool {
        let actual = labels(&self.key);
        match self.op {
            Operator::Equals | Operator::In => actual.is_some_and(|v| self.has_value(v)),
            Operator::NotEquals | Operator::NotIn => actual.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => actual.is_some(),
            Operator::DoesNotExist => actual.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(actual), [bound]) = (actual.and_then(parse_int), self.values.as_slice())
                else {
                    return false;
                };
                let Some(bound) = parse_int(bound) else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }

    fn has_value(&self, value: &str) -> bool {
        self.values.iter().any(|v| v == value)
    }
}

/// Go's `strconv.ParseInt(s, 10, 64)`: optional sign, decimal digits, int64 range; Rust's
/// integer parser accepts exactly the same strings.
fn parse_int(s: &str) -> Option<i64> {
    s.parse().ok()
}

/// Builds a requirement the way `NewRequirement` validates it. The key was already checked by
/// the parser, and the parser always supplies the value count each operator needs, so only the
/// integer check for `gt`/`lt` and the label-value check can fail here.
fn new_requirement(key: &str, op: Operator, values: Vec<String>) -> Result<Requirement, String> {
    let mut errors = Vec::new();
    if matches!(op, Operator::GreaterThan | Operator::LessThan) {
        for (i, value) in values.iter().enumerate() {
            if parse_int(value).is_none() {
                errors.push(format!(
                    "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                    go_quote(value)
                ));
            }
        }
    }
    for (i, value) in values.iter().enumerate() {
        let problems = label_value_errors(value);
        if !problems.is_empty() {
            errors.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                go_quote(value),
                problems.join("; ")
            ));
        }
    }
    match crate::errors::aggregate(errors) {
        Some(message) => Err(message),
        None => Ok(Requirement {
            key: key.to_owned(),
            op,
            values,
        }),
    }
}

/// Lexer tokens of selector.go; its `ErrorToken` is left out because every special symbol is a
/// token by itself, so the lexer can never produce one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// The only bytes that end an identifier besides whitespace; each is a token on its own.
fn special_symbol(byte: u8) -> Option<Token> {
    match byte {
        b'=' => Some(Token::Equals),
        b'!' => Some(Token::DoesNotExist),
        b'(' => Some(Token::OpenPar),
        b')' => Some(Token::ClosedPar),
        b',' => Some(Token::Comma),
        b'>' => Some(Token::GreaterThan),
        b'<' => Some(Token::LessThan),
        _ => None,
    }
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// Byte-wise scanner mirroring selector.go's `Lexer`, including its quirk that `read` reports
/// a NUL byte the same way as the end of input: a NUL where a token would start ends the
/// selector, and a NUL inside a token just ends that token.
struct Lexer<'s> {
    s: &'s str,
    pos: usize,
}

impl<'s> Lexer<'s> {
    fn read(&mut self) -> u8 {
        match self.s.as_bytes().get(self.pos) {
            Some(&byte) => {
                self.pos += 1;
                byte
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    /// Token boundaries are next to ASCII bytes, so they always fall on char boundaries.
    fn slice(&self, start: usize, end: usize) -> &'s str {
        self.s.get(start..end).unwrap_or_default()
    }

    fn lex(&mut self) -> (Token, &'s str) {
        let mut byte = self.read();
        while is_whitespace(byte) {
            byte = self.read();
        }
        if byte == 0 {
            return (Token::EndOfString, "");
        }
        self.unread();
        match special_symbol(byte) {
            Some(token) => self.scan_special_symbol(token),
            None => self.scan_identifier_or_keyword(),
        }
    }

    /// Everything up to whitespace, a special symbol or NUL; `in` and `notin` are keywords.
    fn scan_identifier_or_keyword(&mut self) -> (Token, &'s str) {
        let start = self.pos;
        let end = loop {
            let at = self.pos;
            let byte = self.read();
            if byte == 0 {
                break at;
            }
            if special_symbol(byte).is_some() || is_whitespace(byte) {
                self.unread();
                break at;
            }
        };
        let literal = self.slice(start, end);
        let token = match literal {
            "in" => Token::In,
            "notin" => Token::NotIn,
            _ => Token::Identifier,
        };
        (token, literal)
    }

    /// Longest run of special symbols that is still a token: `==` and `!=` are the only
    /// two-byte ones, so `!==` lexes as `!=` then `=`.
    fn scan_special_symbol(&mut self, first: Token) -> (Token, &'s str) {
        let start = self.pos;
        self.read();
        let mut best = (first, self.pos);
        loop {
            let byte = self.read();
            if byte == 0 {
                break;
            }
            if special_symbol(byte).is_none() {
                self.unread();
                break;
            }
            match self.slice(start, self.pos) {
                "==" => best = (Token::DoubleEquals, self.pos),
                "!=" => best = (Token::NotEquals, self.pos),
                _ => {
                    self.unread();
                    break;
                }
            }
        }
        (best.0, self.slice(start, best.1))
    }
}

/// Whether `in` / `notin` count as operators or as plain identifiers (selector.go's
/// `ParserContext`): they are operators only right after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// Recursive-descent parser over the fully scanned token list, like selector.go's `Parser`.
struct Parser<'s> {
    items: Vec<(Token, &'s str)>,
    position: usize,
}

impl<'s> Parser<'s> {
    fn new(input: &'s str) -> Self {
        let mut lexer = Lexer { s: input, pos: 0 };
        let mut items = Vec::new();
        loop {
            let item = lexer.lex();
            items.push(item);
            if item.0 == Token::EndOfString {
                break;
            }
        }
        Self { items, position: 0 }
    }

    fn lookahead(&self, context: Context) -> (Token, &'s str) {
        let (token, literal) = self
            .items
            .get(self.position)
            .copied()
            .unwrap_or((Token::EndOfString, ""));
        match (context, token) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, literal),
            _ => (token, literal),
        }
    }

    fn consume(&mut self, context: Context) -> (Token, &'s str) {
        let item = self.lookahead(context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    // Only errors from inside a requirement get this prefix.
                    let requirement = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(requirement);
                    let (token, literal) = self.consume(Context::Values);
                    match token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, next_literal) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{next_literal}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!(
                                "found '{literal}', expected: ',' or 'end of string'"
                            ));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{literal}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, inferred) = self.parse_key_and_infer_operator()?;
        if let Some(op) = inferred {
            return new_requirement(key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => vec![self.parse_exact_value()?],
        };
        new_requirement(key, op, values)
    }

    /// Reads `[!]key`. A leading `!` always yields does-not-exist (so `!a=b` fails later, at
    /// the `=`), and a bare key followed by `,` or the end yields exists.
    fn parse_key_and_infer_operator(&mut self) -> Result<(&'s str, Option<Operator>), String> {
        let mut op = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        let problems = label_key_errors(literal);
        if !problems.is_empty() {
            // labels.Parse is called without a field path, and a nil *field.Path prints as
            // "<nil>".
            return Err(format!(
                "<nil>: Invalid value: {}: {}",
                go_quote(literal),
                problems.join("; ")
            ));
        }
        let (next, _) = self.lookahead(Context::Values);
        if op.is_none() && matches!(next, Token::EndOfString | Token::Comma) {
            op = Some(Operator::Exists);
        }
        Ok((literal, op))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        match token {
            Token::In => Ok(Operator::In),
            Token::Equals | Token::DoubleEquals => Ok(Operator::Equals),
            Token::GreaterThan => Ok(Operator::GreaterThan),
            Token::LessThan => Ok(Operator::LessThan),
            Token::NotIn => Ok(Operator::NotIn),
            Token::NotEquals => Ok(Operator::NotEquals),
            // The list is selector.go's `binaryOperators`, spelled as `selection.Operator`s.
            _ => Err(format!(
                "found '{literal}', expected: in, notin, =, ==, !=, gt, lt"
            )),
        }
    }

    /// `( values )` after `in` / `notin`; `()` means the single empty value.
    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            // Go's message has no comma after the literal here.
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let (token, _) = self.consume(Context::Values);
                if token != Token::ClosedPar {
                    // Unreachable (the list only ends before a `)`), kept with Go's text.
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!(
                "found '{literal}', expected: ',', ')' or identifier"
            )),
        }
    }

    /// Comma-separated values, where a missing value between, before or after commas is the
    /// empty string (`(,a)`, `(a,,b)`, `(a,)`).
    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values = BTreeSet::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    values.insert(literal.to_owned());
                    let (next, next_literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(values.into_iter().collect()),
                        _ => return Err(format!("found '{next_literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.insert(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        values.insert(String::new());
                        return Ok(values.into_iter().collect());
                    }
                    if next == Token::Comma {
                        values.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; nothing before `,` or the end is "".
    fn parse_exact_value(&mut self) -> Result<String, String> {
        let (token, _) = self.lookahead(Context::Values);
        if matches!(token, Token::EndOfString | Token::Comma) {
            return Ok(String::new());
        }
        let (token, literal) = self.consume(Context::Values);
        if token == Token::Identifier {
            Ok(literal.to_owned())
        } else {
            Err(format!("found '{literal}', expected: identifier"))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Field selectors (pkg/fields/selector.go)
// ---------------------------------------------------------------------------------------------

/// A parsed `fieldSelector` query value: every requirement must hold for an object to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

/// One `field op value` term of a field selector, with the value already unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// The field path exactly as written (no trimming, no unescaping), e.g. `metadata.name`.
    pub field: String,
    /// How the object's value is compared with `value`.
    pub op: FieldOp,
    /// The value to compare with, after `\\`, `\,` and `\=` are unescaped.
    pub value: String,
}

/// The comparison of a field requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOp {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

impl FieldSelector {
    /// Parses `field=value,field!=value,...`. Terms are kept in sorted order, as
    /// `parseSelector` sorts them before parsing (which also decides which bad term is
    /// reported first); empty terms and terms with both an empty field and an empty value
    /// (`=`, `==`, `!=`) are dropped.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut terms = split_terms(input);
        terms.sort_unstable();
        let mut requirements = Vec::new();
        for term in terms {
            if term.is_empty() {
                continue;
            }
            let Some((field, op, raw_value)) = split_term(term) else {
                return Err(SelectorError(format!(
                    "invalid selector: '{input}'; can't understand '{term}'"
                )));
            };
            let value = unescape_value(raw_value).map_err(SelectorError)?;
            // ParseSelector applies an identity Transform, which turns such a term into
            // Everything(), and an AND skips empty selectors.
            if field.is_empty() && value.is_empty() {
                continue;
            }
            requirements.push(FieldRequirement {
                field: field.to_owned(),
                op,
                value,
            });
        }
        Ok(Self { requirements })
    }

    /// The requirements, sorted by their source text.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether an object satisfies every requirement. `value_of(field)` returns the object's
    /// value for that field (callers have already rejected unsupported fields); `None` compares
    /// as the empty string, as `fields.Set.Get` returns "" for a missing field.
    pub fn matches(&self, value_of: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|r| {
            let actual = value_of(&r.field).unwrap_or_default();
            match r.op {
                FieldOp::Equals => actual == r.value,
                FieldOp::NotEquals => actual != r.value,
            }
        })
    }
}

/// `splitTerms`: splits on commas that are not backslash-escaped, keeping escapes in place.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// `splitTerm`: the first position where `!=`, `==` or `=` starts (tried in that order)
/// splits the term; the field side has no escaping.
fn split_term(term: &str) -> Option<(&str, FieldOp, &str)> {
    const OPERATORS: [(&str, FieldOp); 3] = [
        ("!=", FieldOp::NotEquals),
        ("==", FieldOp::Equals),
        ("=", FieldOp::Equals),
    ];
    for (i, _) in term.char_indices() {
        let (field, rest) = term.split_at(i);
        for (text, op) in OPERATORS {
            if let Some(value) = rest.strip_prefix(text) {
                return Some((field, op, value));
            }
        }
    }
    None
}

/// `UnescapeValue`: only `\\`, `\,` and `\=` are escapes; a bare `,` or `=` is an error (Go
/// prints the rune with `%v`, i.e. as its code point number).
fn unescape_value(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut in_slash = false;
    for c in raw.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    u32::from(c)
                ));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn labels(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn label_match(selector: &str, pairs: &[(&str, &str)]) -> bool {
        let set = labels(pairs);
        let selector =
            LabelSelector::parse(selector).unwrap_or_else(|e| panic!("{selector:?}: {e}"));
        selector.matches(|k| set.get(k).map(String::as_str))
    }

    fn label_error(selector: &str) -> String {
        match LabelSelector::parse(selector) {
            Ok(parsed) => panic!("{selector:?} parsed as {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn equalities(selector: &str) -> Vec<(String, String)> {
        let parsed = LabelSelector::parse(selector).unwrap_or_else(|e| panic!("{selector:?}: {e}"));
        parsed
            .required_equalities()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    const NAME_REGEX_ERROR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const VALUE_REGEX_ERROR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    // --- label selectors: matching --------------------------------------------------------

    #[test]
    fn empty_selector_selects_everything() {
        for input in ["", "   ", "\t\r\n"] {
            let parsed = LabelSelector::parse(input).unwrap();
            assert!(parsed.matches(|_| None));
            assert!(label_match(input, &[("a", "b")]));
        }
        assert!(!LabelSelector::parse("a").unwrap().matches(|_| None));
    }

    #[test]
    fn equals_matches_only_the_exact_value() {
        assert!(label_match("x=y", &[("x", "y")]));
        assert!(!label_match("x=y", &[("x", "z")]));
        assert!(!label_match("x=y", &[]));
        assert!(label_match("x==y", &[("x", "y")]));
        assert!(!label_match("x==y", &[("x", "z")]));
    }

    #[test]
    fn not_equals_matches_objects_without_the_label() {
        assert!(label_match("x!=y", &[]));
        assert!(label_match("x!=y", &[("x", "z")]));
        assert!(!label_match("x!=y", &[("x", "y")]));
    }

    #[test]
    fn in_matches_any_listed_value_but_not_a_missing_label() {
        assert!(label_match("x in (a,b)", &[("x", "a")]));
        assert!(label_match("x in (a,b)", &[("x", "b")]));
        assert!(!label_match("x in (a,b)", &[("x", "c")]));
        assert!(!label_match("x in (a,b)", &[]));
    }

    #[test]
    fn notin_matches_objects_without_the_label() {
        assert!(label_match("x notin (a,b)", &[]));
        assert!(label_match("x notin (a,b)", &[("x", "c")]));
        assert!(!label_match("x notin (a,b)", &[("x", "a")]));
    }

    #[test]
    fn exists_matches_any_value_including_empty() {
        assert!(label_match("x", &[("x", "")]));
        assert!(label_match("x", &[("x", "y")]));
        assert!(!label_match("x", &[("y", "z")]));
    }

    #[test]
    fn does_not_exist_matches_only_objects_without_the_label() {
        assert!(label_match("!x", &[("y", "z")]));
        assert!(!label_match("!x", &[("x", "")]));
        assert!(label_match("! x", &[]));
    }

    #[test]
    fn gt_and_lt_compare_label_values_as_integers() {
        assert!(label_match("x>1", &[("x", "2")]));
        assert!(!label_match("x>1", &[("x", "1")]));
        assert!(label_match("x<10", &[("x", "9")]));
        assert!(!label_match("x<10", &[("x", "10")]));
        assert!(label_match("x>9", &[("x", "10")]), "numeric, not lexical");
        assert!(label_match("x<1", &[("x", "-5")]));
        assert!(label_match("x>1", &[("x", "+5")]));
    }

    #[test]
    fn gt_and_lt_never_match_a_missing_or_non_integer_label() {
        assert!(!label_match("x>1", &[]));
        assert!(!label_match("x<1", &[]));
        assert!(!label_match("x>1", &[("x", "abc")]));
        assert!(!label_match("x<1", &[("x", "")]));
        assert!(!label_match("x>1", &[("x", "99999999999999999999")]));
    }

    #[test]
    fn requirements_are_anded() {
        assert!(label_match(
            "x=a,y!=b,z in (h,i)",
            &[("x", "a"), ("y", "c"), ("z", "i")]
        ));
        assert!(!label_match(
            "x=a,y!=b,z in (h,i)",
            &[("x", "a"), ("y", "b"), ("z", "i")]
        ));
        assert!(!label_match("x,y in (a)", &[("x", "1")]));
    }

    #[test]
    fn whitespace_around_tokens_is_ignored() {
        assert!(label_match(" x = a , y ", &[("x", "a"), ("y", "")]));
        assert!(label_match("foo  in\t (abc)", &[("foo", "abc")]));
        assert!(label_match("x notin\n (abc)", &[("x", "def")]));
        assert!(label_match("\rx", &[("x", "1")]));
        assert!(label_match("x in(a)", &[("x", "a")]));
    }

    #[test]
    fn empty_exact_value_selects_the_empty_label_value() {
        assert!(label_match("x=", &[("x", "")]));
        assert!(!label_match("x=", &[("x", "a")]));
        assert!(label_match("x= ,z= ", &[("x", ""), ("z", "")]));
        assert!(label_match("x!=", &[("x", "a")]));
        assert!(!label_match("x!=", &[("x", "")]));
        assert_eq!(equalities("x=,y=="), pairs(&[("x", ""), ("y", "")]));
    }

    #[test]
    fn empty_parentheses_mean_the_single_empty_value() {
        assert!(label_match("x in ()", &[("x", "")]));
        assert!(!label_match("x in ()", &[("x", "a")]));
        assert!(label_match("x notin ( )", &[("x", "a")]));
        assert!(!label_match("x notin ( )", &[("x", "")]));
    }

    #[test]
    fn missing_values_around_set_commas_are_the_empty_value() {
        for input in [
            "x in (abc,)",
            "x in (,abc)",
            "x in (abc,,)",
            "x in (a,,a,,abc,,)",
            "x in (,,abc)",
        ] {
            assert!(label_match(input, &[("x", "")]), "{input}");
            assert!(label_match(input, &[("x", "abc")]), "{input}");
            assert!(!label_match(input, &[("x", "b")]), "{input}");
        }
        assert!(label_match("x in (,)", &[("x", "")]));
        assert_eq!(equalities("x in (,)"), pairs(&[("x", "")]));
    }

    #[test]
    fn in_and_notin_are_plain_identifiers_outside_the_operator_position() {
        assert!(label_match("a in (x,in,notin)", &[("a", "notin")]));
        assert!(label_match("notin=in", &[("notin", "in")]));
        assert!(label_match("in", &[("in", "")]));
        assert!(label_match("in in (in)", &[("in", "in")]));
        assert!(label_match("!notin", &[]));
    }

    #[test]
    fn prefixed_keys_and_dotted_values_are_accepted() {
        assert!(label_match(
            "this-is-a-dns.domain.com/key-with-dash in (so,what)",
            &[("this-is-a-dns.domain.com/key-with-dash", "so")]
        ));
        assert!(label_match(
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            &[]
        ));
        assert!(label_match(
            "app.kubernetes.io/name=My_App.v1",
            &[("app.kubernetes.io/name", "My_App.v1")]
        ));
    }

    #[test]
    fn required_equalities_lists_single_value_equalities_sorted_by_key() {
        assert_eq!(
            equalities("z=1,y==2,x in (3),w in (4,5),v!=6,u notin (7),t,!s,r>8,q in (9,9)"),
            pairs(&[("q", "9"), ("x", "3"), ("y", "2"), ("z", "1")])
        );
        assert_eq!(equalities(""), pairs(&[]));
    }

    #[test]
    fn does_not_exist_followed_by_an_operator_fails_at_the_operator() {
        assert_eq!(
            label_error("!x=a"),
            "found '=', expected: ',' or 'end of string'"
        );
        assert_eq!(
            label_error("!x in (a)"),
            "found 'in', expected: ',' or 'end of string'"
        );
    }

    // --- label selectors: error messages ----------------------------------------------------

    #[test]
    fn trailing_comma_is_a_parse_error_with_the_real_message() {
        assert_eq!(
            label_error("a=b,"),
            "found '', expected: identifier after ','"
        );
        assert_eq!(
            label_error("a in (xyz),"),
            "found '', expected: identifier after ','"
        );
    }

    #[test]
    fn consecutive_commas_between_requirements_are_a_parse_error() {
        assert_eq!(
            label_error("x,,y"),
            "found ',', expected: identifier after ','"
        );
        assert_eq!(
            label_error("x,=y"),
            "found '=', expected: identifier after ','"
        );
    }

    #[test]
    fn a_selector_must_start_with_a_key_or_bang() {
        assert_eq!(
            label_error("=b"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            label_error(",x"),
            "found ',', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            label_error("("),
            "found '(', expected: !, identifier, or 'end of string'"
        );
    }

    #[test]
    fn junk_after_a_requirement_is_a_parse_error() {
        assert_eq!(
            label_error("a=b c"),
            "found 'c', expected: ',' or 'end of string'"
        );
        assert_eq!(
            label_error("x==a==b"),
            "found '==', expected: ',' or 'end of string'"
        );
        assert_eq!(
            label_error("a in (xyz)b notin ()"),
            "found 'b', expected: ',' or 'end of string'"
        );
    }

    #[test]
    fn unknown_operator_lists_the_binary_operators() {
        let expected = |lit: &str| {
            format!(
                "unable to parse requirement: found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
            )
        };
        assert_eq!(label_error("x nott in (y)"), expected("nott"));
        assert_eq!(label_error("x exists"), expected("exists"));
        assert_eq!(label_error("x gt 1"), expected("gt"));
        assert_eq!(label_error("x!y"), expected("!"));
        assert_eq!(label_error("x ("), expected("("));
        assert_eq!(label_error("x !!= y"), expected("!"));
    }

    #[test]
    fn unterminated_set_is_a_parse_error_with_the_real_message() {
        assert_eq!(
            label_error("x in (a"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            label_error("a in (xyz abc)"),
            "unable to parse requirement: found 'abc', expected: ',' or ')'"
        );
    }

    #[test]
    fn set_operator_needs_an_opening_parenthesis() {
        assert_eq!(
            label_error("x in a"),
            "unable to parse requirement: found 'a' expected: '('"
        );
        assert_eq!(
            label_error("x notin"),
            "unable to parse requirement: found '' expected: '('"
        );
    }

    #[test]
    fn set_must_start_with_a_value_comma_or_closing_parenthesis() {
        assert_eq!(
            label_error("a notin("),
            "unable to parse requirement: found '', expected: ',', ')' or identifier"
        );
        assert_eq!(
            label_error("x in (=)"),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier"
        );
    }

    #[test]
    fn set_comma_must_be_followed_by_a_value_or_comma() {
        assert_eq!(
            label_error("x in (a,=)"),
            "unable to parse requirement: found '=', expected: ',', or identifier"
        );
        assert_eq!(
            label_error("x in (a,"),
            "unable to parse requirement: found '', expected: ',', or identifier"
        );
    }

    #[test]
    fn a_key_is_required_after_bang() {
        assert_eq!(
            label_error("!"),
            "unable to parse requirement: found '', expected: identifier"
        );
        assert_eq!(
            label_error("!!a"),
            "unable to parse requirement: found '!', expected: identifier"
        );
        assert_eq!(
            label_error("a,!=b"),
            "found '!=', expected: identifier after ','"
        );
    }

    #[test]
    fn exact_match_value_must_be_an_identifier() {
        assert_eq!(
            label_error("x=("),
            "unable to parse requirement: found '(', expected: identifier"
        );
        assert_eq!(
            label_error("x!=!"),
            "unable to parse requirement: found '!', expected: identifier"
        );
    }

    #[test]
    fn gt_and_lt_require_an_integer_value() {
        assert_eq!(
            label_error("x<a"),
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            label_error("x>"),
            "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            label_error("x>9223372036854775808"),
            "unable to parse requirement: values[0]: Invalid value: \"9223372036854775808\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert!(LabelSelector::parse("x>9223372036854775807,y<0").is_ok());
    }

    #[test]
    fn negative_gt_bound_fails_label_value_validation() {
        assert_eq!(
            label_error("x>-1"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"-1\": {VALUE_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn several_requirement_errors_are_aggregated_in_brackets() {
        assert_eq!(
            label_error("x>-a"),
            format!(
                "unable to parse requirement: [values[0]: Invalid value: \"-a\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"-a\": {VALUE_REGEX_ERROR}]"
            )
        );
        // Values are validated in sorted order, which is what the indexes refer to.
        assert_eq!(
            label_error("x in (b/c,a/b)"),
            format!(
                "unable to parse requirement: [values[0][x]: Invalid value: \"a/b\": {VALUE_REGEX_ERROR}, values[1][x]: Invalid value: \"b/c\": {VALUE_REGEX_ERROR}]"
            )
        );
    }

    #[test]
    fn invalid_label_value_is_rejected_with_the_real_message() {
        assert_eq!(
            label_error("x=a||y=b"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": {VALUE_REGEX_ERROR}"
            )
        );
        assert_eq!(
            label_error("x!=-a"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"-a\": {VALUE_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn label_value_longer_than_63_bytes_is_rejected() {
        let long = "a".repeat(64);
        assert_eq!(
            label_error(&format!("x={long}")),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"{long}\": must be no more than 63 bytes"
            )
        );
        assert!(LabelSelector::parse(&format!("x={}", "a".repeat(63))).is_ok());
        let long_bad = format!("{}-", "a".repeat(63));
        assert_eq!(
            label_error(&format!("x in ({long_bad})")),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"{long_bad}\": must be no more than 63 bytes; {VALUE_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn invalid_key_name_is_rejected_with_a_nil_field_path() {
        assert_eq!(
            label_error("-a"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"-a\": name part {NAME_REGEX_ERROR}"
            )
        );
        assert_eq!(
            label_error("app:monolith"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": name part {NAME_REGEX_ERROR}"
            )
        );
        assert_eq!(
            label_error("!a_"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a_\": name part {NAME_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn key_name_longer_than_63_bytes_is_rejected() {
        let long = "k".repeat(64);
        assert_eq!(
            label_error(&long),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"{long}\": name part must be no more than 63 bytes"
            )
        );
        assert!(LabelSelector::parse(&"k".repeat(63)).is_ok());
    }

    #[test]
    fn empty_key_name_or_prefix_is_rejected() {
        assert_eq!(
            label_error("a/"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name part {NAME_REGEX_ERROR}"
            )
        );
        assert_eq!(
            label_error("/a"),
            "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"
        );
    }

    #[test]
    fn key_prefix_must_be_a_lowercase_dns_subdomain() {
        let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        assert_eq!(
            label_error("Example.com/a=b"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part {subdomain}"
            )
        );
        assert_eq!(
            label_error("app.kubernetes_io/name"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"app.kubernetes_io/name\": prefix part {subdomain}"
            )
        );
        assert_eq!(
            label_error("a..b/-"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a..b/-\": prefix part {subdomain}; name part {NAME_REGEX_ERROR}"
            )
        );
        let long = "a".repeat(254);
        assert_eq!(
            label_error(&format!("{long}/x")),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"{long}/x\": prefix part must be no more than 253 bytes"
            )
        );
        assert!(LabelSelector::parse(&format!("{}/x", "a".repeat(253))).is_ok());
    }

    #[test]
    fn key_with_two_slashes_gets_the_single_label_key_message() {
        assert_eq!(
            label_error("a/b/c"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key {NAME_REGEX_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )
        );
    }

    #[test]
    fn invalid_values_are_quoted_like_go_percent_q() {
        assert_eq!(
            label_error("x=a\"b"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"a\\\"b\": {VALUE_REGEX_ERROR}"
            )
        );
        assert_eq!(
            label_error("a\u{a0}b\u{1}\\é\u{1F600}\u{E0001}"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a\\u00a0b\\x01\\\\é\u{1F600}\\U000e0001\": name part {NAME_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn go_quote_follows_strconv_quote() {
        assert_eq!(
            go_quote("\u{7}\u{8}\u{c}\n\r\t\u{b}\u{7f}"),
            r#""\a\b\f\n\r\t\v\x7f""#
        );
        assert_eq!(
            go_quote("e\u{301}"),
            "\"e\u{301}\"",
            "combining marks are printable"
        );
        assert_eq!(
            go_quote("\u{200b}\u{2028}\u{e000}"),
            r#""\u200b\u2028\ue000""#
        );
    }

    #[test]
    fn nul_byte_ends_the_selector_where_a_token_would_start() {
        // Go's lexer reads NUL and end of input alike.
        assert_eq!(
            label_error("a=b, \0c"),
            "found '', expected: identifier after ','"
        );
        assert!(label_match("\0x=y", &[]));
        assert!(label_match("a \0=junk", &[("a", "1")]));
        // Right after a token it is swallowed with the byte that ended the token.
        assert!(label_match("a=b,\0c", &[("a", "b"), ("c", "")]));
        assert_eq!(
            label_error("a\0b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            label_error("a=\0=b"),
            "unable to parse requirement: found '=', expected: identifier"
        );
    }

    #[test]
    fn selector_error_displays_its_message() {
        let error = SelectorError("boom".to_owned());
        assert_eq!(error.to_string(), "boom");
        let as_error: &dyn std::error::Error = &error;
        assert_eq!(as_error.to_string(), "boom");
    }

    // --- field selectors --------------------------------------------------------------------

    fn fields(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        labels(pairs)
    }

    fn field_match(selector: &str, pairs: &[(&str, &str)]) -> bool {
        let set = fields(pairs);
        let parsed = FieldSelector::parse(selector).unwrap_or_else(|e| panic!("{selector:?}: {e}"));
        parsed.matches(|f| set.get(f).cloned())
    }

    fn field_error(selector: &str) -> String {
        match FieldSelector::parse(selector) {
            Ok(parsed) => panic!("{selector:?} parsed as {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn reqs(selector: &str) -> Vec<(String, FieldOp, String)> {
        let parsed = FieldSelector::parse(selector).unwrap_or_else(|e| panic!("{selector:?}: {e}"));
        parsed
            .requirements()
            .iter()
            .map(|r| (r.field.clone(), r.op, r.value.clone()))
            .collect()
    }

    fn req(field: &str, op: FieldOp, value: &str) -> (String, FieldOp, String) {
        (field.to_owned(), op, value.to_owned())
    }

    #[test]
    fn empty_field_selector_selects_everything() {
        assert!(reqs("").is_empty());
        assert!(reqs(",,").is_empty());
        assert!(field_match("", &[]));
    }

    #[test]
    fn field_equals_and_double_equals_match_the_exact_value() {
        assert_eq!(
            reqs("metadata.name=foo"),
            vec![req("metadata.name", FieldOp::Equals, "foo")]
        );
        assert_eq!(
            reqs("metadata.name==foo"),
            vec![req("metadata.name", FieldOp::Equals, "foo")]
        );
        assert!(field_match(
            "metadata.name=foo",
            &[("metadata.name", "foo")]
        ));
        assert!(!field_match(
            "metadata.name==foo",
            &[("metadata.name", "bar")]
        ));
    }

    #[test]
    fn field_not_equals_matches_other_values() {
        assert_eq!(
            reqs("status.phase!=Running"),
            vec![req("status.phase", FieldOp::NotEquals, "Running")]
        );
        assert!(field_match(
            "status.phase!=Running",
            &[("status.phase", "Pending")]
        ));
        assert!(!field_match(
            "status.phase!=Running",
            &[("status.phase", "Running")]
        ));
    }

    #[test]
    fn missing_field_compares_as_the_empty_string() {
        assert!(field_match("spec.nodeName=", &[]));
        assert!(!field_match("spec.nodeName!=", &[]));
        assert!(field_match("spec.nodeName!=n1", &[]));
        assert!(!field_match("spec.nodeName=n1", &[]));
    }

    #[test]
    fn field_terms_are_anded_and_sorted_with_empty_terms_skipped() {
        assert_eq!(
            reqs(",b=2,,a!=1,"),
            vec![
                req("a", FieldOp::NotEquals, "1"),
                req("b", FieldOp::Equals, "2")
            ]
        );
        assert!(field_match("a=1,b=2", &[("a", "1"), ("b", "2")]));
        assert!(!field_match("a=1,b=2", &[("a", "1"), ("b", "3")]));
    }

    #[test]
    fn backslash_escapes_comma_equals_and_backslash_in_values() {
        assert_eq!(
            reqs(r"a=x\,y\=z\\w"),
            vec![req("a", FieldOp::Equals, r"x,y=z\w")]
        );
        assert_eq!(
            reqs(r"a=\\,b=c"),
            vec![
                req("a", FieldOp::Equals, "\\"),
                req("b", FieldOp::Equals, "c")
            ]
        );
        assert!(field_match(r"a=1\,2", &[("a", "1,2")]));
    }

    #[test]
    fn the_first_operator_in_a_term_splits_it() {
        assert_eq!(reqs("a=!b"), vec![req("a", FieldOp::Equals, "!b")]);
        assert_eq!(reqs("a!b=c"), vec![req("a!b", FieldOp::Equals, "c")]);
        assert_eq!(reqs("a==b"), vec![req("a", FieldOp::Equals, "b")]);
        assert_eq!(reqs(r"a!=\=b"), vec![req("a", FieldOp::NotEquals, "=b")]);
        assert_eq!(
            field_error("a!==b"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            field_error("a===b"),
            "invalid field selector: unescaped character in value: 61"
        );
    }

    #[test]
    fn whitespace_is_part_of_field_and_value() {
        assert_eq!(reqs("a = b"), vec![req("a ", FieldOp::Equals, " b")]);
    }

    #[test]
    fn terms_with_empty_field_and_value_are_dropped() {
        assert!(reqs("=").is_empty());
        assert!(reqs("==,!=").is_empty());
        assert_eq!(reqs("=x"), vec![req("", FieldOp::Equals, "x")]);
        assert_eq!(reqs("x="), vec![req("x", FieldOp::Equals, "")]);
    }

    #[test]
    fn term_without_operator_is_an_error_with_the_real_message() {
        assert_eq!(
            field_error("metadata.name"),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
        assert_eq!(
            field_error("a=b,c"),
            "invalid selector: 'a=b,c'; can't understand 'c'"
        );
    }

    #[test]
    fn unknown_escape_sequence_is_an_error_with_the_real_message() {
        assert_eq!(
            field_error(r"a=\!"),
            r"invalid field selector: invalid escape sequence: \!"
        );
        assert_eq!(
            field_error(r"a=\n"),
            r"invalid field selector: invalid escape sequence: \n"
        );
    }

    #[test]
    fn trailing_backslash_is_an_invalid_escape_sequence() {
        assert_eq!(
            field_error(r"a=b\"),
            r"invalid field selector: invalid escape sequence: \"
        );
    }

    #[test]
    fn unescaped_equals_in_value_is_reported_by_code_point() {
        assert_eq!(
            field_error("a=b=c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            unescape_value("a,b"),
            Err("invalid field selector: unescaped character in value: 44".to_owned())
        );
    }

    #[test]
    fn field_errors_are_reported_for_the_first_term_in_sorted_order() {
        assert_eq!(
            field_error(r"z,a=\"),
            r"invalid field selector: invalid escape sequence: \"
        );
        assert_eq!(
            field_error(r"b=\!,a"),
            r"invalid selector: 'b=\!,a'; can't understand 'a'"
        );
    }
}
