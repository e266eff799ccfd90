//! The estimated cost of a checked rule, as cel-go's `checker.Cost` computes it with the
//! Kubernetes estimators (`apiserver/pkg/cel/library/cost.go`, the sets and lists extensions)
//! and the sizes the schema allows.
//!
//! The macros are kept whole in recon's tree; each is costed as cel-go costs its expansion
//! (`all` is a fold whose step is `@result && p` and whose condition is
//! `@not_strictly_false(@result)`, `map` appends `[t]` to a list, ...).

use super::schema_size::size_at;
use super::{LIST_CREATE, MAP_CREATE, REGEX_LENGTH, Range, SELECT_AND_IDENT, STRING_TRAVERSAL};
use crate::schema::cel::check::{NodeTypes, node_key};
use crate::schema::cel::syntax::{Expr, Kind, Lit, Macro};
use crate::schema::cel::tree::SNode;
use crate::schema::cel::types::{OPTIONAL, Type};

/// The most an evaluation of `e` (checked, with the types of its nodes) may cost when `self`
/// is a value of `root`.
pub(crate) fn max_cost(e: &Expr, types: &NodeTypes, root: &SNode) -> u64 {
    max_cost_with(e, types, Sizes::Schema(root))
}

/// The most an evaluation of `e` may cost, the sizes of its variables' values told by `sizes`.
pub(crate) fn max_cost_with(e: &Expr, types: &NodeTypes, sizes: Sizes<'_>) -> u64 {
    let mut estimator = Estimator {
        types,
        sizes,
        locals: Vec::new(),
    };
    estimator.cost(e).cost.max
}

/// What tells the estimator the size of a value at a field path from a variable (the
/// environment's `SizeEstimator`).
#[derive(Clone, Copy)]
pub(crate) enum Sizes<'a> {
    /// A CRD rule's: `self` (and `oldSelf`) are values of this schema node.
    Schema(&'a SNode),
    /// A device selector's: `device`
    /// ([`crate::schema::cel::dra::device_size_at`]).
    Device,
}

impl Sizes<'_> {
    fn at(self, path: &[String]) -> Option<Range> {
        match self {
            Sizes::Schema(root) => size_at(root, path),
            Sizes::Device => crate::schema::cel::dra::device_size_at(path),
        }
    }
}

/// The sizes of a container's entries (`entrySizeEstimate`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entries {
    list: bool,
    key: Range,
    value: Range,
}

impl Entries {
    fn union(a: Option<Entries>, b: Option<Entries>) -> Option<Entries> {
        let (a, b) = (a?, b?);
        Some(Entries {
            list: a.list,
            key: a.key.union(b.key),
            value: a.value.union(b.value),
        })
    }
}

/// What the estimator knows about a node.
#[derive(Debug, Clone, Default)]
struct Node {
    cost: Range,
    /// Its computed size (`computedSizes`), when cel-go records one.
    size: Option<Range>,
    entries: Option<Entries>,
    /// Its field path from a variable (`exprPaths`).
    path: Option<Vec<String>>,
    ty: Option<Type>,
    /// The expression is a literal of this size (`computeExprSize`).
    literal_size: Option<Range>,
    /// An integer literal's value (`nodeAsIntValue`).
    int_literal: Option<i64>,
}

impl Default for Range {
    fn default() -> Range {
        Range::fixed(0)
    }
}

/// A variable in scope: a comprehension's, or one a macro's expansion binds.
struct Local {
    name: String,
    path: Option<Vec<String>>,
    size: Option<Range>,
    entries: Option<Entries>,
}

struct Estimator<'a> {
    types: &'a NodeTypes,
    sizes: Sizes<'a>,
    locals: Vec<Local>,
}

fn fixed(n: u64) -> Range {
    Range::fixed(n)
}

impl Estimator<'_> {
    /// `computeSize`: the recorded size, the literal's, the schema's at the node's path, one
    /// for a scalar type, or a local variable's.
    fn size(&self, n: &Node, local: Option<&str>) -> Option<Range> {
        if let Some(s) = n.size {
            return Some(s);
        }
        if let Some(s) = n.literal_size {
            return Some(s);
        }
        if let Some(path) = n.path.as_deref().filter(|p| !p.is_empty())
            && let Some(s) = self.sizes.at(path)
        {
            return Some(s);
        }
        if n.ty.as_ref().is_some_and(is_scalar) {
            return Some(fixed(1));
        }
        let local = local.and_then(|name| self.local(name))?;
        local.size
    }

    fn size_or_unknown(&self, n: &Node, local: Option<&str>) -> Range {
        self.size(n, local).unwrap_or(Range::UNKNOWN)
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.iter().rev().find(|l| l.name == name)
    }

    fn ty(&self, e: &Expr) -> Option<Type> {
        self.types.get(&node_key(e)).cloned()
    }

    fn cost(&mut self, e: &Expr) -> Node {
        let ty = self.ty(e);
        let mut node = match &e.kind {
            Kind::Lit(lit) => Node {
                literal_size: Some(fixed(literal_size(lit))),
                int_literal: match lit {
                    Lit::Int(i) => Some(*i),
                    _ => None,
                },
                ..Node::default()
            },
            Kind::Ident(name) => {
                let local = self.local(name);
                Node {
                    cost: fixed(SELECT_AND_IDENT),
                    path: match local {
                        Some(l) => l.path.clone(),
                        None => Some(vec![name.clone()]),
                    },
                    size: None,
                    entries: local.and_then(|l| l.entries),
                    ..Node::default()
                }
            }
            Kind::Select {
                operand,
                field,
                test,
            } => {
                let operand = self.cost(operand);
                if *test {
                    // Kubernetes gives presence tests no cost of their own.
                    Node {
                        cost: operand.cost,
                        ..Node::default()
                    }
                } else {
                    let own = match &operand.ty {
                        Some(Type::Map(..) | Type::Object(_) | Type::Param(_)) => SELECT_AND_IDENT,
                        _ => 0,
                    };
                    Node {
                        cost: operand.cost.add(fixed(own)),
                        path: Some(extend(&operand.path, field)),
                        ..Node::default()
                    }
                }
            }
            Kind::Call {
                func, target, args, ..
            } => self.call(func, target.as_deref(), args),
            Kind::List(elems) => {
                let mut cost = fixed(LIST_CREATE);
                let mut item = if elems.is_empty() {
                    fixed(0)
                } else {
                    Range {
                        min: u64::MAX,
                        max: 0,
                    }
                };
                for (elem, _) in elems {
                    let n = self.cost(elem);
                    cost = cost.add(n.cost);
                    item = item.union(self.size_or_unknown(&n, ident(elem)));
                }
                Node {
                    cost,
                    literal_size: Some(fixed(elems.len() as u64)),
                    entries: Some(Entries {
                        list: true,
                        key: fixed(1),
                        value: item,
                    }),
                    ..Node::default()
                }
            }
            Kind::Map(entries) => {
                let mut cost = fixed(MAP_CREATE);
                let empty = if entries.is_empty() {
                    fixed(0)
                } else {
                    Range {
                        min: u64::MAX,
                        max: 0,
                    }
                };
                let (mut keys, mut values) = (empty, empty);
                for (k, v, _) in entries {
                    let kn = self.cost(k);
                    let vn = self.cost(v);
                    cost = cost.add(kn.cost).add(vn.cost);
                    keys = keys.union(self.size_or_unknown(&kn, ident(k)));
                    values = values.union(self.size_or_unknown(&vn, ident(v)));
                }
                Node {
                    cost,
                    literal_size: Some(fixed(entries.len() as u64)),
                    entries: Some(Entries {
                        list: false,
                        key: keys,
                        value: values,
                    }),
                    ..Node::default()
                }
            }
            // `common.StructCreateBaseCost`; never valid in a rule, kept for completeness.
            Kind::Struct { .. } => Node {
                cost: fixed(40),
                ..Node::default()
            },
            Kind::Comprehension {
                kind,
                range,
                var,
                var2,
                args,
            } => self.comprehension(*kind, range, var, var2.as_deref(), args),
        };
        node.ty = ty;
        node
    }

    fn call(&mut self, func: &str, target: Option<&Expr>, args: &[Expr]) -> Node {
        if func == "dyn"
            && let [arg] = args
        {
            let mut n = self.cost(arg);
            n.cost = n.cost.add(fixed(1));
            n.size = self.size(&n, ident(arg));
            n.path = None;
            return n;
        }
        if func == "_?._"
            && let [operand, _] = args
        {
            // `a.?b` is a call of its own in cel-go, costed as one.
            let op = self.cost(operand);
            return Node {
                cost: op.cost.add(fixed(1)),
                ..Node::default()
            };
        }
        let arg_nodes: Vec<Node> = args.iter().map(|a| self.cost(a)).collect();
        let arg_costs = arg_nodes.iter().fold(fixed(0), |sum, n| sum.add(n.cost));
        let target_node = target.map(|t| self.cost(t));
        let base = target_node.as_ref().map_or(fixed(0), |t| t.cost);
        let mut out = Node::default();
        let call = self.function_cost(
            func,
            target,
            target_node.as_ref(),
            args,
            &arg_nodes,
            &mut out,
        );
        let own = match call.cost {
            Some(c) => c.add(arg_costs),
            None => fixed(1).add(arg_costs),
        };
        out.cost = base.add(match func {
            "_&&_" | "_||_" | "_?_:_" => call.cost.unwrap_or(own),
            _ => own,
        });
        if out.size.is_none() {
            out.size = call.result_size;
        }
        out
    }

    /// The cost of the function itself (without its arguments', except for the logical
    /// operators and `?:`, whose cost is all their arguments'), and its result size.
    fn function_cost(
        &self,
        func: &str,
        target: Option<&Expr>,
        t: Option<&Node>,
        arg_exprs: &[Expr],
        args: &[Node],
        out: &mut Node,
    ) -> CallCost {
        let size = |i: usize| -> Range {
            match (args.get(i), arg_exprs.get(i)) {
                (Some(n), Some(e)) => self.size_or_unknown(n, ident(e)),
                _ => Range::UNKNOWN,
            }
        };
        let target_size = || match (t, target) {
            (Some(n), Some(e)) => self.size_or_unknown(n, ident(e)),
            _ => Range::UNKNOWN,
        };
        let arg_ty = |i: usize| args.get(i).and_then(|n| n.ty.clone());
        let target_ty = t.and_then(|n| n.ty.clone());
        let cost = |c: Range| CallCost::cost(c);
        let library_eq = match func {
            "_==_" => library_equality(
                arg_ty(0).as_ref(),
                arg_ty(1).as_ref(),
                args.get(1).and_then(|n| n.size),
            ),
            _ => None,
        };
        match func {
            // The lists and sets extensions' own estimators come first.
            "slice" if t.is_some() && args.len() == 2 => {
                let sz = target_size();
                let start = int_literal(args.first()).unwrap_or(0);
                let end = int_literal(args.get(1)).unwrap_or(sz.max);
                allocating_list(1.0, fixed(end.wrapping_sub(start)))
            }
            "lists.range" if t.is_none() && args.len() == 1 => {
                allocating_list(1.0, fixed(int_literal(args.first()).unwrap_or(u64::MAX)))
            }
            "reverse" if t.is_some() && args.is_empty() => allocating_list(1.0, target_size()),
            "flatten" if t.is_some() && args.len() <= 1 => {
                let depth = if args.is_empty() {
                    1
                } else {
                    int_literal(args.first()).unwrap_or(u64::MAX)
                };
                allocating_list(depth as f64, target_size())
            }
            "distinct" if t.is_some() && args.is_empty() => {
                let sz = target_size();
                allocating_list(2.0, sz.multiply(sz))
            }
            "sort" if t.is_some() && args.is_empty() => {
                let sz = target_size();
                let elem = target_ty.as_ref().and_then(list_element);
                allocating_list(sort_factor(elem.as_ref()), sz.multiply(sz))
            }
            "sets.contains" | "sets.intersects" | "sets.equivalent" if args.len() == 2 => {
                let factor = if func == "sets.equivalent" { 2.0 } else { 1.0 };
                cost(size(0).multiply(size(1)).times(factor).add(fixed(1)))
            }
            // The Kubernetes library.
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" if t.is_some() => {
                match target_ty.as_ref().and_then(list_element) {
                    Some(elem) => {
                        let mut per = fixed(1);
                        if matches!(elem, Type::String | Type::Bytes) {
                            let items = t.and_then(|n| n.path.as_ref()).map(|p| {
                                let mut p = p.clone();
                                p.push("@items".to_owned());
                                p
                            });
                            let sz = items
                                .as_deref()
                                .and_then(|p| self.sizes.at(p))
                                .unwrap_or(Range::UNKNOWN);
                            per = per.add(sz.times(STRING_TRAVERSAL));
                        }
                        cost(mul_cost(target_size(), per))
                    }
                    None => cost(target_size().times(STRING_TRAVERSAL)),
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let sz = size(0);
                CallCost::sized(sz.times(STRING_TRAVERSAL), sz)
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" if t.is_some() => {
                let sz = target_size();
                CallCost::sized(sz.times(STRING_TRAVERSAL), sz)
            }
            "replace" if t.is_some() && args.len() >= 2 => {
                let sz = target_size();
                CallCost::sized(
                    sz.times(2.0 * STRING_TRAVERSAL),
                    replaced_size(sz, size(0), size(1)),
                )
            }
            "split" if t.is_some() => {
                let sz = target_size();
                let max = if args.len() > 1 {
                    args.get(1)
                        .and_then(|n| n.int_literal)
                        .map_or(sz.max, |i| i as u64)
                } else {
                    sz.max
                };
                CallCost::sized(sz.times(2.0 * STRING_TRAVERSAL), Range { min: 0, max })
            }
            "join" if t.is_some() => {
                let list = target_size();
                let mut sz = fixed(0);
                if target_ty.as_ref().and_then(list_element).is_some() {
                    let items = t
                        .and_then(|n| n.path.as_ref())
                        .map(|p| extend(&Some(p.clone()), "@items"));
                    let elem = items
                        .as_deref()
                        .and_then(|p| self.sizes.at(p))
                        .unwrap_or(Range::UNKNOWN);
                    sz = list.multiply(elem);
                }
                if !args.is_empty() {
                    let separators = Range {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    sz = sz.add(size(0).multiply(separators));
                }
                CallCost::sized(sz.times(STRING_TRAVERSAL), sz)
            }
            "find" | "findAll" if t.is_some() && !args.is_empty() => {
                let sz = target_size();
                let text = sz.add(fixed(1)).times(STRING_TRAVERSAL);
                let regex = size(0).times(REGEX_LENGTH);
                CallCost::sized(
                    mul_cost(text, regex),
                    Range {
                        min: 0,
                        max: sz.max,
                    },
                )
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver"
                if !args.is_empty() && t.is_none() =>
            {
                cost(size(0).times(STRING_TRAVERSAL))
            }
            "ip" if t.is_some() => cost(fixed(1)),
            "ip" if !args.is_empty() => cost(size(0).times(STRING_TRAVERSAL)),
            "ip.isCanonical" if !args.is_empty() => cost(size(0).times(2.0 * STRING_TRAVERSAL)),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast"
            | "format.named"
            | "sign"
            | "asInteger"
            | "isInteger"
            | "asApproximateFloat"
            | "isGreaterThan"
            | "isLessThan"
            | "compareTo"
            | "add"
            | "sub"
            | "major"
            | "minor"
            | "patch"
            | "getScheme"
            | "getHostname"
            | "getHost"
            | "getPort"
            | "getEscapedPath"
            | "getQuery" => cost(fixed(1)),
            "containsIP" if !args.is_empty() => {
                let ip = Range { min: 4, max: 16 };
                let mut c = ip.add(ip).times(STRING_TRAVERSAL);
                if arg_ty(0) == Some(Type::String) {
                    c = c.add(size(0).times(STRING_TRAVERSAL));
                }
                cost(c)
            }
            "containsCIDR" if !args.is_empty() => {
                let ip = Range { min: 4, max: 16 };
                let mut c = ip
                    .add(ip)
                    .times(STRING_TRAVERSAL)
                    .add(ip.times(STRING_TRAVERSAL))
                    .add(fixed(1));
                if arg_ty(0) == Some(Type::String) {
                    c = c.add(size(0).times(STRING_TRAVERSAL));
                }
                cost(c)
            }
            "validate" if !args.is_empty() => {
                cost(size(0).times(STRING_TRAVERSAL).times(128.0 * REGEX_LENGTH))
            }
            "_==_" if library_eq.is_some() => cost(library_eq.unwrap_or(fixed(1))),
            // cel-go's own estimates.
            "format" if t.is_some() => cost(target_size().times(STRING_TRAVERSAL)),
            "bytes" if arg_ty(0) == Some(Type::String) => {
                let sz = size(0);
                CallCost::sized(
                    sz.times(STRING_TRAVERSAL),
                    Range {
                        min: sz.min,
                        max: sz.max.saturating_mul(4),
                    },
                )
            }
            "string" if arg_ty(0) == Some(Type::Bytes) => {
                let sz = size(0);
                CallCost::sized(
                    sz.times(STRING_TRAVERSAL),
                    Range {
                        min: sz.min / 4,
                        max: sz.max,
                    },
                )
            }
            "strings.quote" if args.len() == 1 => {
                let sz = size(0);
                CallCost::sized(
                    sz.times(STRING_TRAVERSAL),
                    Range {
                        min: sz.min.saturating_add(2),
                        max: sz.max.saturating_mul(2).saturating_add(2),
                    },
                )
            }
            "startsWith" | "endsWith" if t.is_some() && args.len() == 1 => {
                cost(size(0).times(STRING_TRAVERSAL))
            }
            "@in" if matches!(arg_ty(1), Some(Type::List(_))) => cost(size(1).times(1.0)),
            "matches" if t.is_some() && args.len() == 1 => {
                let text = target_size().add(fixed(1)).times(STRING_TRAVERSAL);
                let regex = size(0).times(REGEX_LENGTH);
                cost(mul_cost(text, regex))
            }
            "contains" if t.is_some() && args.len() == 1 => {
                let text = target_size().times(STRING_TRAVERSAL);
                let sub = size(0).times(STRING_TRAVERSAL);
                cost(mul_cost(text, sub))
            }
            "_&&_" | "_||_" if args.len() == 2 => {
                let (l, r) = (args[0].cost, args[1].cost);
                cost(Range {
                    min: l.min,
                    max: l.add(r).max,
                })
            }
            "_?_:_" if args.len() == 3 => {
                let sz = size(1).union(size(2));
                out.entries = Entries::union(args[1].entries, args[2].entries);
                CallCost::sized(args[0].cost.add(args[1].cost.union(args[2].cost)), sz)
            }
            "_+_" if args.len() == 2 => match arg_ty(0) {
                Some(Type::String | Type::Bytes | Type::List(_)) => {
                    let sum = size(0).add(size(1));
                    out.entries = Entries::union(args[0].entries, args[1].entries);
                    if matches!(arg_ty(0), Some(Type::List(_))) {
                        CallCost::sized(fixed(1), sum)
                    } else {
                        CallCost::sized(sum.times(STRING_TRAVERSAL), sum)
                    }
                }
                _ => CallCost::default(),
            },
            "_[_]" if args.len() == 2 => {
                let list = matches!(arg_ty(0), Some(Type::List(_)));
                let map = matches!(arg_ty(0), Some(Type::Map(..)));
                if list || map {
                    out.path = Some(extend(
                        &args[0].path,
                        if list { "@items" } else { "@values" },
                    ));
                    let entry_size = self
                        .entries_of(&args[0], arg_exprs.first())
                        .map(|e| e.value);
                    out.size = entry_size.or_else(|| {
                        let probe = Node {
                            path: out.path.clone(),
                            ty: None,
                            ..Node::default()
                        };
                        self.size(&probe, None)
                    });
                }
                CallCost::default()
            }
            "_<_" | "_<=_" | "_>_" | "_>=_"
                if matches!(arg_ty(0), Some(Type::String | Type::Bytes)) =>
            {
                cost(compare_cost(size(0), size(1)))
            }
            "_==_" | "_!=_" if args.len() == 2 => cost(compare_cost(size(0), size(1))),
            _ => CallCost::default(),
        }
    }

    fn entries_of(&self, n: &Node, e: Option<&Expr>) -> Option<Entries> {
        n.entries
            .or_else(|| e.and_then(ident).and_then(|name| self.local(name)?.entries))
    }

    /// A comprehension macro, costed as cel-go costs its expansion.
    fn comprehension(
        &mut self,
        kind: Macro,
        range: &Expr,
        var: &str,
        var2: Option<&str>,
        args: &[Expr],
    ) -> Node {
        let range_node = self.cost(range);
        if matches!(kind, Macro::OptMap | Macro::OptFlatMap) {
            return self.opt_map(kind, &range_node, var, args);
        }
        if kind == Macro::Bind {
            return self.bind(&range_node, range, var, args);
        }
        let range_size = self.size_or_unknown(&range_node, ident(range));
        let entries = self.entries_of(&range_node, Some(range));
        let is_list =
            entries.map_or_else(|| matches!(range_node.ty, Some(Type::List(_))), |e| e.list);
        let item_path = |sub: &str| Some(extend(&range_node.path, sub));
        let scope = self.locals.len();
        match var2 {
            None => self.locals.push(Local {
                name: var.to_owned(),
                path: item_path(if is_list { "@items" } else { "@keys" }),
                size: entries.map(|e| if is_list { e.value } else { e.key }),
                entries: None,
            }),
            Some(v2) => {
                self.locals.push(Local {
                    name: var.to_owned(),
                    path: item_path(if is_list { "@indices" } else { "@keys" }),
                    size: entries.map(|e| e.key),
                    entries: None,
                });
                self.locals.push(Local {
                    name: v2.to_owned(),
                    path: item_path(if is_list { "@items" } else { "@values" }),
                    size: entries.map(|e| e.value),
                    entries: None,
                });
            }
        }
        let var_probe = Node {
            path: self.local(var).and_then(|l| l.path.clone()),
            ty: range_node.ty.as_ref().and_then(list_element),
            ..Node::default()
        };
        let var_size = self.size_or_unknown(&var_probe, Some(var));
        let bodies: Vec<Node> = args.iter().map(|a| self.cost(a)).collect();
        let body_sizes: Vec<Range> = bodies
            .iter()
            .zip(args)
            .map(|(n, e)| self.size_or_unknown(n, ident(e)))
            .collect();
        self.locals.truncate(scope);
        let body = |i: usize| bodies.get(i).map_or(fixed(0), |n| n.cost);
        let last = bodies.len().saturating_sub(1);
        let filtered = matches!(
            kind,
            Macro::Map | Macro::TransformList | Macro::TransformMap | Macro::TransformMapEntry
        ) && bodies.len() > 1;
        // Each loop: the condition and the step of the expansion; `before`: the cost of the
        // accumulator's initial value and of the result expression.
        let appended = |elem: Range| fixed(1 + LIST_CREATE + 1).add(elem);
        let (per_item, before, container) = match kind {
            Macro::All => (fixed(2).add(and_or(body(0))), fixed(1), None),
            Macro::Exists => (fixed(3).add(and_or(body(0))), fixed(1), None),
            Macro::ExistsOne => (body(0).add(Range { min: 1, max: 2 }), fixed(2), None),
            Macro::Map | Macro::TransformList => {
                let step = appended(body(last));
                let step = if filtered {
                    body(0).add(step.union(fixed(1)))
                } else {
                    step
                };
                let value = body_sizes.get(last).copied().unwrap_or(Range::UNKNOWN);
                (step, fixed(LIST_CREATE + 1), Some((true, value)))
            }
            Macro::Filter => (
                body(0).add(appended(fixed(1)).union(fixed(1))),
                fixed(LIST_CREATE + 1),
                Some((true, var_size)),
            ),
            Macro::TransformMap | Macro::TransformMapEntry => {
                let insert = if kind == Macro::TransformMap { 3 } else { 2 };
                let step = fixed(insert).add(body(last));
                let step = if filtered {
                    body(0).add(step.union(fixed(1)))
                } else {
                    step
                };
                (step, fixed(MAP_CREATE + 1), None)
            }
            Macro::SortBy => {
                // `cel.bind(in, range, in.@sortByAssociatedKeys(in.map(x, key)))`.
                let keys = fixed(1 + LIST_CREATE + 1).add(mul_cost(range_size, appended(body(0))));
                let key_type = bodies.first().and_then(|n| n.ty.clone());
                let sort = allocating_list(
                    sort_factor(key_type.as_ref()),
                    range_size.multiply(range_size),
                );
                // The bind's empty range and the input's reference (recorded: the real
                // estimate of `self.ss.sortBy(x, x)` pins this part to eleven).
                let cost = range_node
                    .cost
                    .add(fixed(LIST_CREATE + 1))
                    .add(keys)
                    .add(sort.cost.unwrap_or(fixed(0)));
                return Node {
                    cost,
                    size: sort.result_size,
                    ..Node::default()
                };
            }
            Macro::OptMap | Macro::OptFlatMap | Macro::Bind => (fixed(0), fixed(0), None),
        };
        let loops = mul_cost(range_size, per_item);
        let mut node = Node {
            cost: range_node.cost.add(before).add(loops),
            ..Node::default()
        };
        match kind {
            Macro::All | Macro::Exists | Macro::ExistsOne => node.size = Some(fixed(1)),
            _ => {
                node.size = Some(range_size);
                if let Some((list, value)) = container {
                    node.entries = Some(Entries {
                        list,
                        key: fixed(1),
                        value: value.union(fixed(0)),
                    });
                }
            }
        }
        node
    }

    /// `cel.bind(v, init, t)` (`costBind` in cel-go's `checker/cost.go`): the empty range's
    /// list literal, `init`, and `t` with `v` standing for `init` (its path, size and entry
    /// sizes); the result has the size of `t`.
    fn bind(&mut self, init: &Node, init_expr: &Expr, var: &str, args: &[Expr]) -> Node {
        let local = Local {
            name: var.to_owned(),
            path: init.path.clone(),
            size: self.size(init, ident(init_expr)),
            entries: self.entries_of(init, Some(init_expr)),
        };
        self.locals.push(local);
        let result = args.first().map(|a| (self.cost(a), a));
        // cel-go copies the result's sizes once the variable is out of scope.
        self.locals.pop();
        match &result {
            Some((n, e)) => Node {
                cost: fixed(LIST_CREATE).add(init.cost).add(n.cost),
                size: self.size(n, ident(e)),
                entries: self.entries_of(n, Some(e)),
                ..Node::default()
            },
            None => Node {
                cost: fixed(LIST_CREATE).add(init.cost),
                ..Node::default()
            },
        }
    }

    /// `x.optMap(v, t)`: `x.hasValue() ? optional.of(cel.bind(v, x.value(), t)) :
    /// optional.none()` (`optFlatMap` without the `optional.of`).
    fn opt_map(&mut self, kind: Macro, range: &Node, var: &str, args: &[Expr]) -> Node {
        self.locals.push(Local {
            name: var.to_owned(),
            path: None,
            size: None,
            entries: None,
        });
        let body = args.first().map_or(fixed(0), |a| self.cost(a).cost);
        self.locals.pop();
        let of = u64::from(kind == Macro::OptMap);
        let bound = fixed(LIST_CREATE + 1 + of).add(range.cost).add(body);
        Node {
            cost: range.cost.add(fixed(1)).add(bound.union(fixed(1))),
            ..Node::default()
        }
    }
}

/// A function's own cost and result size (`CallEstimate`); `None` cost: cel-go's default of
/// one.
#[derive(Default)]
struct CallCost {
    cost: Option<Range>,
    result_size: Option<Range>,
}

impl CallCost {
    fn cost(c: Range) -> CallCost {
        CallCost {
            cost: Some(c),
            result_size: None,
        }
    }

    fn sized(c: Range, size: Range) -> CallCost {
        CallCost {
            cost: Some(c),
            result_size: Some(size),
        }
    }
}

/// `estimateAllocatingListCall`: a list built from `size` elements.
fn allocating_list(factor: f64, size: Range) -> CallCost {
    CallCost::sized(size.times(factor).add(fixed(1 + LIST_CREATE)), size)
}

/// The sorts' factor: two comparisons per pair, more for strings and bytes.
fn sort_factor(elem: Option<&Type>) -> f64 {
    match elem {
        Some(Type::String | Type::Bytes) => 2.0 + STRING_TRAVERSAL,
        _ => 2.0,
    }
}

/// `SizeEstimate.MultiplyByCost`.
fn mul_cost(size: Range, cost: Range) -> Range {
    size.multiply(cost)
}

/// `@result && p` (or `||`): the accumulator always, the predicate at most.
fn and_or(predicate: Range) -> Range {
    Range {
        min: 1,
        max: 1u64.saturating_add(predicate.max),
    }
}

/// Equality and the string orderings: a traversal of the shorter side.
fn compare_cost(l: Range, r: Range) -> Range {
    let smallest = l.max.min(r.max);
    Range {
        min: u64::from(smallest > 0),
        max: smallest,
    }
    .times(STRING_TRAVERSAL)
}

/// The Kubernetes library's equality of its own types; a URL's by the size of the right side
/// when it is computed.
fn library_equality(l: Option<&Type>, r: Option<&Type>, right: Option<Range>) -> Option<Range> {
    let (l, r) = (l?, r?);
    if l != r {
        return None;
    }
    match l {
        Type::Opaque(name, _) => match *name {
            "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver" => Some(fixed(1)),
            "kubernetes.NamedFormat" => Some(Range { min: 1, max: 64 }.times(STRING_TRAVERSAL)),
            "kubernetes.URL" => Some(
                Range {
                    min: 1,
                    max: right.map_or(1, |r| r.max),
                }
                .times(STRING_TRAVERSAL),
            ),
            _ => None,
        },
        _ => None,
    }
}

/// The size of `s.replace(old, new)` (the Kubernetes estimator's bounds).
fn replaced_size(sz: Range, old: Range, new: Range) -> Range {
    let (mut count, mut kept) = (fixed(0), fixed(0));
    if old.min == 0 {
        count.max = sz.max.saturating_add(u64::from(sz.max < u64::MAX));
        kept.max = sz.max;
    } else if new.max <= old.min {
        kept.max = sz.max;
    } else {
        count.max = (sz.max as f64 / old.min as f64).ceil() as u64;
    }
    if old.max == 0 {
        count.min = sz.min.saturating_add(u64::from(sz.min < u64::MAX));
        kept.min = sz.min;
    } else if old.max <= new.min {
        kept.min = sz.min;
    } else {
        count.min = (sz.min as f64 / old.max as f64).ceil() as u64;
    }
    count.multiply(new).add(kept)
}

fn literal_size(lit: &Lit) -> u64 {
    match lit {
        Lit::String(s) => s.chars().count() as u64,
        Lit::Bytes(b) => b.len() as u64,
        _ => 1,
    }
}

fn int_literal(n: Option<&Node>) -> Option<u64> {
    n?.int_literal.map(|i| u64::try_from(i).unwrap_or(0))
}

/// The name `e` refers to, when it is a variable.
fn ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        Kind::Ident(name) => Some(name),
        _ => None,
    }
}

/// `path` and one more step; a step below no known path is a path of its own, as cel-go's
/// `append(nil, step)` makes it (then measured from `self`).
fn extend(path: &Option<Vec<String>>, step: &str) -> Vec<String> {
    let mut p = path.clone().unwrap_or_default();
    p.push(step.to_owned());
    p
}

fn list_element(t: &Type) -> Option<Type> {
    match t {
        Type::List(e) => Some((**e).clone()),
        _ => None,
    }
}

/// `isScalar`: a type whose values have a constant size.
fn is_scalar(t: &Type) -> bool {
    match t {
        Type::Bool | Type::Double | Type::Duration | Type::Int | Type::Timestamp | Type::Uint => {
            true
        }
        Type::Opaque(name, params) if *name == OPTIONAL => params.first().is_some_and(is_scalar),
        _ => false,
    }
}
