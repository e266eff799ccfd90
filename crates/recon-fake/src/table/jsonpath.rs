//! The JSONPath of kubectl (client-go/util/jsonpath), as far as CRD printer columns use it:
//! a template `{...}` holding one path of fields (`.spec.size`, a dot inside a name escaped
//! `\.`), array indexes (`[0]`, `[-1]`), every item (`[*]`) and quoted keys (`['a.b']`), read
//! with missing keys allowed (`AllowMissingKeys(true)`). Filters, slices, unions and recursive
//! descent are not read: such a path finds nothing.

use recon_apimachinery::json::Value;

use crate::gotype::encode::write_value;

/// Why client-go's JSONPath parser refuses `template` (`Parser.Parse`), for the errors of an
/// action's brackets: `unterminated array` (a `[` without its `]`), `unclosed action` (a `{`
/// without its `}`). `None` otherwise: the parser's other errors (quotes, filters, numbers,
/// keywords) are not found, and where it reads a field it accepts most characters.
pub(crate) fn parse_error(template: &str) -> Option<String> {
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let mut chars = rest.char_indices();
        loop {
            let Some((i, c)) = chars.next() else {
                return Some("unclosed action".to_owned());
            };
            match c {
                '}' => {
                    rest = &rest[i + 1..];
                    break;
                }
                '\n' => return Some("unclosed action".to_owned()),
                '[' => match rest[i..].find([']', '\n']) {
                    Some(end) if rest[i + end..].starts_with(']') => {
                        let skip = rest[i..i + end].chars().count();
                        for _ in 0..skip {
                            chars.next();
                        }
                    }
                    _ => return Some("unterminated array".to_owned()),
                },
                _ => {}
            }
        }
    }
    None
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(i64),
    Every,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses a column's `jsonPath` as the convertor does: wrapped in `{}`
    /// (apiextensions-apiserver/pkg/registry/customresource/tableconvertor, `New`). `None` when
    /// it is outside what is read here.
    pub(crate) fn parse(path: &str) -> Option<Self> {
        let mut steps = Vec::new();
        let mut rest = path.trim();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']')?;
                let inner = after[..end].trim();
                steps.push(bracket(inner)?);
                rest = &after[end + 1..];
            } else if let Some(after) = rest.strip_prefix('.') {
                if after.starts_with('.') {
                    return None;
                }
                let mut name = String::new();
                let mut chars = after.char_indices().peekable();
                let mut consumed = after.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            Some((_, escaped)) => name.push(escaped),
                            None => return None,
                        },
                        '.' | '[' => {
                            consumed = i;
                            break;
                        }
                        c if c.is_whitespace() || matches!(c, '(' | ')' | '{' | '}' | '?') => {
                            return None;
                        }
                        c => name.push(c),
                    }
                }
                if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
                rest = &after[consumed..];
            } else {
                return None;
            }
        }
        Some(JsonPath { steps })
    }

    /// The first value the path finds in `data`, as `FindResults(...)[0][0]`.
    pub(crate) fn first<'a>(&self, data: &'a Value) -> Option<&'a Value> {
        let mut current: Vec<&Value> = vec![data];
        for step in &self.steps {
            let mut next = Vec::new();
            for value in current {
                match (step, value) {
                    (Step::Field(name), Value::Object(map)) => next.extend(map.get(name)),
                    (Step::Index(i), Value::Array(items)) => {
                        let len = i64::try_from(items.len()).ok()?;
                        let at = if *i < 0 { len + i } else { *i };
                        // Out of bounds is an error, and the cell is empty.
                        let at = usize::try_from(at).ok().filter(|&a| a < items.len())?;
                        next.push(&items[at]);
                    }
                    (Step::Every, Value::Array(items)) => next.extend(items.iter()),
                    (Step::Every, Value::Object(map)) => next.extend(map.values()),
                    _ => return None,
                }
            }
            current = next;
        }
        current.into_iter().next()
    }
}

fn bracket(inner: &str) -> Option<Step> {
    if inner == "*" {
        return Some(Step::Every);
    }
    for quote in ['\'', '"'] {
        if let Some(key) = inner
            .strip_prefix(quote)
            .and_then(|k| k.strip_suffix(quote))
        {
            return Some(Step::Field(key.to_owned()));
        }
    }
    inner.parse().ok().map(Step::Index)
}

/// A value as `PrintResults` writes it: a string as it is, a map or list as JSON, a number as
/// Go's `fmt.Fprint` prints it, and JSON `null` as text/template's `<no value>`.
pub(crate) fn print(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "<no value>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => go_print_float(f),
            (None, None) => n.to_string(),
        },
        Value::Object(_) | Value::Array(_) => {
            let mut out = String::new();
            write_value(None, value, &mut out);
            out
        }
    }
}

/// A float64 as `fmt` prints it with `%v`: the shortest digits, with an exponent (two digits
/// at least) below 1e-4 or from 1e6 up.
fn go_print_float(f: f64) -> String {
    let scientific = format!("{f:e}");
    let Some((mantissa, exp)) = scientific.split_once('e') else {
        return scientific;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return scientific;
    };
    if f != 0.0 && !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn fields_indexes_and_quoted_keys() {
        let doc = json!({
            "spec": {"size": 3, "items": [{"n": "a"}, {"n": "b"}]},
            "metadata": {"labels": {"app.kubernetes.io/name": "web"}}
        });
        let find = |p: &str| JsonPath::parse(p).unwrap().first(&doc).cloned();
        assert_eq!(find(".spec.size"), Some(json!(3)));
        assert_eq!(find(".spec.items[1].n"), Some(json!("b")));
        assert_eq!(find(".spec.items[-1].n"), Some(json!("b")));
        assert_eq!(find(".spec.items[*].n"), Some(json!("a")));
        assert_eq!(
            find(r".metadata.labels.app\.kubernetes\.io/name"),
            Some(json!("web"))
        );
        assert_eq!(
            find(".metadata.labels['app.kubernetes.io/name']"),
            Some(json!("web"))
        );
        assert_eq!(find(".spec.missing"), None);
        assert_eq!(find(".spec.items[5].n"), None);
        assert_eq!(find(".spec.size.deeper"), None);
        assert_eq!(JsonPath::parse("..spec"), None);
        assert_eq!(JsonPath::parse(".items[?(@.n)]"), None);
    }

    #[test]
    fn parse_errors_of_brackets() {
        assert_eq!(parse_error("{.spec.a[0].b}"), None);
        assert_eq!(
            parse_error("{spec.validations[0}").as_deref(),
            Some("unterminated array")
        );
        assert_eq!(
            parse_error("{.a['b}").as_deref(),
            Some("unterminated array")
        );
        // Recorded: kube-apiserver accepts these field references.
        assert_eq!(parse_error("{spec.x!}"), None);
        assert_eq!(parse_error("{spec.'a}"), None);
        assert_eq!(parse_error("{.a").as_deref(), Some("unclosed action"));
    }

    #[test]
    fn printed_as_go_prints_them() {
        assert_eq!(print(&json!("x")), "x");
        assert_eq!(print(&json!(7)), "7");
        assert_eq!(print(&json!(1.5)), "1.5");
        assert_eq!(print(&json!(1234567.5)), "1.2345675e+06");
        assert_eq!(print(&json!(0.00001)), "1e-05");
        assert_eq!(print(&json!(true)), "true");
        assert_eq!(print(&json!(null)), "<no value>");
        assert_eq!(print(&json!({"b": 1, "a": "<"})), r#"{"a":"\u003c","b":1}"#);
    }
}
