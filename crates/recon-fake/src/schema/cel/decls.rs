//! The functions of the CEL environment of CRD validation rules (Kubernetes 1.35
//! compatibility: cel-go's standard library, optionals, strings v2, sets, lists v3 and
//! two-variable comprehensions, and Kubernetes' URL, regex, lists, quantity, IP, CIDR, format,
//! semver and authorizer libraries), also those of admission policies (with their patch
//! types' `jsonpatch` library), as overload signatures for the type checker.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::LazyLock;

use super::types::Type;

/// One overload: receiver style, argument types (the receiver first) and result.
#[derive(Debug, Clone)]
pub(super) struct Overload {
    pub(super) member: bool,
    pub(super) args: Vec<Sig>,
    pub(super) result: Sig,
}

/// A type in a signature; `Param` names a type parameter.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sig {
    Named(&'static str, Vec<Sig>),
    Param(&'static str),
}

impl Sig {
    /// The type, its parameters renamed by `rename`.
    pub(super) fn to_type(&self, rename: &dyn Fn(&'static str) -> Type) -> Type {
        match self {
            Sig::Param(p) => rename(p),
            Sig::Named(name, params) => {
                let p: Vec<Type> = params.iter().map(|s| s.to_type(rename)).collect();
                let at = |i: usize| p.get(i).cloned().unwrap_or(Type::Dyn);
                match *name {
                    "null_type" => Type::Null,
                    "bool" => Type::Bool,
                    "int" => Type::Int,
                    "uint" => Type::Uint,
                    "double" => Type::Double,
                    "string" => Type::String,
                    "bytes" => Type::Bytes,
                    "duration" => Type::Duration,
                    "timestamp" => Type::Timestamp,
                    "dyn" => Type::Dyn,
                    "list" => Type::list(at(0)),
                    "map" => Type::map(at(0), at(1)),
                    "optional" => Type::optional(at(0)),
                    "type" => Type::type_of(at(0)),
                    other => Type::Opaque(library_type(other), p),
                }
            }
        }
    }

    pub(super) fn params(&self, out: &mut Vec<&'static str>) {
        match self {
            Sig::Param(p) => {
                if !out.contains(p) {
                    out.push(p);
                }
            }
            Sig::Named(_, params) => params.iter().for_each(|s| s.params(out)),
        }
    }
}

/// The full name of a Kubernetes library type.
fn library_type(short: &str) -> &'static str {
    match short {
        "Quantity" => "kubernetes.Quantity",
        "IP" => "net.IP",
        "CIDR" => "net.CIDR",
        "URL" => "kubernetes.URL",
        "Semver" => "kubernetes.Semver",
        "Format" => "kubernetes.NamedFormat",
        "Authorizer" => "kubernetes.authorization.Authorizer",
        "PathCheck" => "kubernetes.authorization.PathCheck",
        "GroupCheck" => "kubernetes.authorization.GroupCheck",
        "ResourceCheck" => "kubernetes.authorization.ResourceCheck",
        "Decision" => "kubernetes.authorization.Decision",
        _ => "unknown",
    }
}

/// The types usable in `min`, `max`, `isSorted` and `sort`.
const COMPARABLE: [&str; 8] = [
    "int",
    "uint",
    "double",
    "bool",
    "duration",
    "timestamp",
    "string",
    "bytes",
];

/// Named format constants (`format.dns1123Label()`, ...).
pub(super) const FORMATS: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

const TABLE: &str = "
_?_:_: (bool, A, A) -> A
!_: (bool) -> bool
-_: (int) -> int | (double) -> double
_==_: (A, A) -> bool
_!=_: (A, A) -> bool
_+_: (bytes, bytes) -> bytes | (double, double) -> double | (duration, duration) -> duration | (duration, timestamp) -> timestamp | (timestamp, duration) -> timestamp | (int, int) -> int | (list(A), list(A)) -> list(A) | (string, string) -> string | (uint, uint) -> uint
_-_: (double, double) -> double | (duration, duration) -> duration | (int, int) -> int | (timestamp, duration) -> timestamp | (timestamp, timestamp) -> duration | (uint, uint) -> uint
_*_: (double, double) -> double | (int, int) -> int | (uint, uint) -> uint
_/_: (double, double) -> double | (int, int) -> int | (uint, uint) -> uint
_%_: (int, int) -> int | (uint, uint) -> uint
_[_]: (list(A), int) -> A | (map(A, B), A) -> B | (optional(list(A)), int) -> optional(A) | (optional(map(A, B)), A) -> optional(B)
_[?_]: (list(A), int) -> optional(A) | (map(A, B), A) -> optional(B) | (optional(list(A)), int) -> optional(A) | (optional(map(A, B)), A) -> optional(B)
@in: (A, list(A)) -> bool | (A, map(A, B)) -> bool
size: (bytes) -> int | bytes.() -> int | (list(A)) -> int | list(A).() -> int | (map(A, B)) -> int | map(A, B).() -> int | (string) -> int | string.() -> int
type: (A) -> type(A)
bool: (bool) -> bool | (string) -> bool
bytes: (bytes) -> bytes | (string) -> bytes
double: (double) -> double | (int) -> double | (string) -> double | (uint) -> double
duration: (duration) -> duration | (string) -> duration
dyn: (A) -> dyn
int: (int) -> int | (double) -> int | (duration) -> int | (string) -> int | (timestamp) -> int | (uint) -> int
string: (string) -> string | (bool) -> string | (bytes) -> string | (double) -> string | (duration) -> string | (int) -> string | (timestamp) -> string | (uint) -> string | (IP) -> string | (CIDR) -> string
timestamp: (timestamp) -> timestamp | (int) -> timestamp | (string) -> timestamp
uint: (uint) -> uint | (double) -> uint | (int) -> uint | (string) -> uint
contains: string.(string) -> bool
endsWith: string.(string) -> bool
startsWith: string.(string) -> bool
matches: (string, string) -> bool | string.(string) -> bool
getFullYear: timestamp.() -> int | timestamp.(string) -> int
getMonth: timestamp.() -> int | timestamp.(string) -> int
getDayOfYear: timestamp.() -> int | timestamp.(string) -> int
getDayOfMonth: timestamp.() -> int | timestamp.(string) -> int
getDate: timestamp.() -> int | timestamp.(string) -> int
getDayOfWeek: timestamp.() -> int | timestamp.(string) -> int
getHours: timestamp.() -> int | timestamp.(string) -> int | duration.() -> int
getMinutes: timestamp.() -> int | timestamp.(string) -> int | duration.() -> int
getSeconds: timestamp.() -> int | timestamp.(string) -> int | duration.() -> int
getMilliseconds: timestamp.() -> int | timestamp.(string) -> int | duration.() -> int
optional.of: (A) -> optional(A)
optional.ofNonZeroValue: (A) -> optional(A)
optional.none: () -> optional(A)
hasValue: optional(A).() -> bool
value: optional(A).() -> A
or: optional(A).(optional(A)) -> optional(A)
orValue: optional(A).(A) -> A
charAt: string.(int) -> string
indexOf: string.(string) -> int | string.(string, int) -> int | list(A).(A) -> int
lastIndexOf: string.(string) -> int | string.(string, int) -> int | list(A).(A) -> int
lowerAscii: string.() -> string
upperAscii: string.() -> string
replace: string.(string, string) -> string | string.(string, string, int) -> string
split: string.(string) -> list(string) | string.(string, int) -> list(string)
substring: string.(int) -> string | string.(int, int) -> string
trim: string.() -> string
join: list(string).() -> string | list(string).(string) -> string
strings.quote: (string) -> string
format: string.(list(dyn)) -> string
sets.contains: (list(A), list(A)) -> bool
sets.equivalent: (list(A), list(A)) -> bool
sets.intersects: (list(A), list(A)) -> bool
sum: list(int).() -> int | list(uint).() -> uint | list(double).() -> double | list(duration).() -> duration
slice: list(A).(int, int) -> list(A)
flatten: list(list(A)).() -> list(A) | list(dyn).(int) -> list(dyn)
lists.range: (int) -> list(int)
distinct: list(A).() -> list(A)
reverse: list(A).() -> list(A)
first: list(A).() -> optional(A)
last: list(A).() -> optional(A)
find: string.(string) -> string
findAll: string.(string) -> list(string) | string.(string, int) -> list(string)
url: (string) -> URL
isURL: (string) -> bool
getScheme: URL.() -> string
getHost: URL.() -> string
getHostname: URL.() -> string
getPort: URL.() -> string
getEscapedPath: URL.() -> string
getQuery: URL.() -> map(string, list(string))
quantity: (string) -> Quantity
isQuantity: (string) -> bool
sign: (Quantity) -> int
isGreaterThan: Quantity.(Quantity) -> bool | Semver.(Semver) -> bool
isLessThan: Quantity.(Quantity) -> bool | Semver.(Semver) -> bool
compareTo: Quantity.(Quantity) -> int | Semver.(Semver) -> int
asApproximateFloat: Quantity.() -> double
asInteger: Quantity.() -> int
isInteger: Quantity.() -> bool
add: Quantity.(Quantity) -> Quantity | Quantity.(int) -> Quantity
sub: Quantity.(Quantity) -> Quantity | Quantity.(int) -> Quantity
ip: (string) -> IP | CIDR.() -> IP
family: IP.() -> int
ip.isCanonical: (string) -> bool
isUnspecified: IP.() -> bool
isLoopback: IP.() -> bool
isLinkLocalMulticast: IP.() -> bool
isLinkLocalUnicast: IP.() -> bool
isGlobalUnicast: IP.() -> bool
isIP: (string) -> bool
cidr: (string) -> CIDR
containsIP: CIDR.(string) -> bool | CIDR.(IP) -> bool
containsCIDR: CIDR.(string) -> bool | CIDR.(CIDR) -> bool
prefixLength: CIDR.() -> int
masked: CIDR.() -> CIDR
isCIDR: (string) -> bool
format.named: (string) -> optional(Format)
validate: Format.(string) -> optional(list(string))
semver: (string) -> Semver | (string, bool) -> Semver
isSemver: (string) -> bool | (string, bool) -> bool
major: Semver.() -> int
minor: Semver.() -> int
patch: Semver.() -> int
path: Authorizer.(string) -> PathCheck
group: Authorizer.(string) -> GroupCheck
serviceAccount: Authorizer.(string, string) -> Authorizer
resource: GroupCheck.(string) -> ResourceCheck
subresource: ResourceCheck.(string) -> ResourceCheck
namespace: ResourceCheck.(string) -> ResourceCheck
name: ResourceCheck.(string) -> ResourceCheck
check: PathCheck.(string) -> Decision | ResourceCheck.(string) -> Decision
errored: Decision.() -> bool
error: Decision.() -> string
allowed: Decision.() -> bool
reason: Decision.() -> string
fieldSelector: ResourceCheck.(string) -> ResourceCheck
labelSelector: ResourceCheck.(string) -> ResourceCheck
";

/// The functions only the environments with admission policies' patch types declare
/// (`library.JSONPatch`).
const PATCH_TABLE: &str = "
jsonpatch.escapeKey: (string) -> string
";

/// The overloads of each function of a table's lines (`name: sig | sig`).
fn parse_table(text: &str) -> HashMap<String, Vec<Overload>> {
    let mut table = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((name, sigs)) = line.split_once(": ") else {
            continue;
        };
        let overloads = sigs.split(" | ").filter_map(parse_overload).collect();
        table.insert(name.to_owned(), overloads);
    }
    table
}

static PATCH_FUNCTIONS: LazyLock<HashMap<String, Vec<Overload>>> =
    LazyLock::new(|| parse_table(PATCH_TABLE));

static FUNCTIONS: LazyLock<HashMap<String, Vec<Overload>>> = LazyLock::new(|| {
    let mut table = parse_table(TABLE);
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        let pairs = [
            ("bool", "bool"),
            ("int", "int"),
            ("int", "double"),
            ("int", "uint"),
            ("uint", "uint"),
            ("uint", "double"),
            ("uint", "int"),
            ("double", "double"),
            ("double", "int"),
            ("double", "uint"),
            ("string", "string"),
            ("bytes", "bytes"),
            ("timestamp", "timestamp"),
            ("duration", "duration"),
        ];
        let overloads = pairs
            .iter()
            .map(|(a, b)| Overload {
                member: false,
                args: vec![named(a), named(b)],
                result: named("bool"),
            })
            .collect();
        table.insert(op.to_owned(), overloads);
    }
    let list_of = |t: &'static str| Sig::Named("list", vec![named(t)]);
    for (name, result) in [
        ("isSorted", None),
        ("min", Some(())),
        ("max", Some(())),
        ("sort", Some(())),
    ] {
        let overloads = COMPARABLE
            .iter()
            .map(|t| Overload {
                member: true,
                args: vec![list_of(t)],
                result: match (name, result) {
                    ("sort", _) => list_of(t),
                    (_, Some(())) => named(t),
                    (_, None) => named("bool"),
                },
            })
            .collect();
        table.insert(name.to_owned(), overloads);
    }
    for f in FORMATS {
        table.insert(
            format!("format.{f}"),
            vec![Overload {
                member: false,
                args: Vec::new(),
                result: named("Format"),
            }],
        );
    }
    table
});

fn named(name: &str) -> Sig {
    Sig::Named(intern(name), Vec::new())
}

/// The static name of a type in the table.
fn intern(name: &str) -> &'static str {
    const NAMES: [&str; 26] = [
        "null_type",
        "bool",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "duration",
        "timestamp",
        "dyn",
        "list",
        "map",
        "optional",
        "type",
        "Quantity",
        "IP",
        "CIDR",
        "URL",
        "Semver",
        "Format",
        "Authorizer",
        "PathCheck",
        "GroupCheck",
        "ResourceCheck",
        "Decision",
        "A",
    ];
    NAMES.iter().find(|n| **n == name).copied().unwrap_or("dyn")
}

/// `recv.(a, b) -> r` or `(a, b) -> r`.
fn parse_overload(text: &str) -> Option<Overload> {
    let (lhs, result) = text.split_once(" -> ")?;
    let (member, args) = match lhs.split_once(".(") {
        Some((recv, rest)) => (true, format!("{recv}, {}", rest.strip_suffix(')')?)),
        None => (false, lhs.strip_prefix('(')?.strip_suffix(')')?.to_owned()),
    };
    let args = split_top(&args)
        .into_iter()
        .filter(|a| !a.is_empty())
        .map(parse_sig)
        .collect::<Option<Vec<_>>>()?;
    Some(Overload {
        member,
        args,
        result: parse_sig(result)?,
    })
}

fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

fn parse_sig(s: &str) -> Option<Sig> {
    let s = s.trim();
    if let Some((name, rest)) = s.split_once('(') {
        let inner = rest.strip_suffix(')')?;
        let params = split_top(inner)
            .into_iter()
            .map(parse_sig)
            .collect::<Option<Vec<_>>>()?;
        return Some(Sig::Named(intern(name), params));
    }
    match s {
        "A" => Some(Sig::Param("A")),
        "B" => Some(Sig::Param("B")),
        _ => Some(named(s)),
    }
}

/// The overloads of a function, if it is declared.
pub(super) fn function(name: &str) -> Option<&'static [Overload]> {
    FUNCTIONS.get(name).map(Vec::as_slice)
}

/// [`function`], with the patch types' functions when `patch_types`.
pub(super) fn function_with(name: &str, patch_types: bool) -> Option<&'static [Overload]> {
    function(name).or_else(|| {
        patch_types
            .then(|| PATCH_FUNCTIONS.get(name).map(Vec::as_slice))
            .flatten()
    })
}

/// The type of a type identifier (`int`, `google.protobuf.Timestamp`, ...).
pub(super) fn type_ident(name: &str) -> Option<Type> {
    let t = match name {
        "bool" => Type::Bool,
        "bytes" => Type::Bytes,
        "double" => Type::Double,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "string" => Type::String,
        "null_type" => Type::Null,
        "dyn" => Type::Dyn,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "type" => Type::Meta(None),
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "optional_type" => Type::optional(Type::Dyn),
        "kubernetes.Quantity"
        | "net.IP"
        | "net.CIDR"
        | "kubernetes.URL"
        | "kubernetes.Semver"
        | "kubernetes.NamedFormat" => Type::Opaque(
            library_type(name.rsplit('.').next().map_or("", |n| match n {
                "NamedFormat" => "Format",
                other => other,
            })),
            Vec::new(),
        ),
        _ => return None,
    };
    Some(Type::type_of(t))
}

/// A fresh name for a type parameter.
pub(super) fn param_name(n: usize) -> Rc<str> {
    Rc::from(format!("_var{n}"))
}
