//! A recursive-descent parser of CEL, run on sources the ANTLR parser accepted: it builds the
//! tree cel-go builds (logical chains balanced, a `-` glued to a number literal, macros as
//! nodes of their own) with each node at the offset cel-go reports it at.

use super::lex::{Tok, Token};
use super::syntax::{Expr, FieldInit, Issue, Kind, Lit, MAX_DEPTH, Macro, NO_POS, Op};

/// Parses the tokens of a source `end` bytes long.
pub(super) fn parse(tokens: Vec<Token>, end: usize) -> Result<Expr, Issue> {
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
        end,
    };
    let expr = parser.expr()?;
    if parser.at < parser.tokens.len() {
        return Err(Issue {
            pos: parser.pos(),
            message: "Syntax error: extraneous input".to_owned(),
        });
    }
    Ok(expr)
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

    /// A chain (`a + b + c`, `a.b.c`) grows the tree one level per link without recursing, and
    /// cel-go's visitor counts every link (see `syntax::visit_depth`, which decides): a chain
    /// longer than the limit is refused as soon as it is, before the tree grows further.
    fn chain(&self, links: usize) -> Result<(), Issue> {
        if links > MAX_DEPTH {
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
            let op = match self.peek() {
                Some(Tok::Punct(p @ ("<" | "<=" | ">" | ">=" | "==" | "!=" | "in"))) => *p,
                _ => return Ok(lhs),
            };
            links += 1;
            self.chain(links)?;
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
            let op = match (level, self.peek()) {
                (0, Some(Tok::Punct(p @ ("+" | "-"))))
                | (1, Some(Tok::Punct(p @ ("*" | "/" | "%")))) => *p,
                _ => return Ok(lhs),
            };
            links += 1;
            self.chain(links)?;
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
            // No nesting of its own: ANTLR reads `!!!x` as one rule, and cel-go's visitor
            // passes negations through uncounted.
            let operand = self.member()?;
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
        // The links formed so far.
        let mut links = 0;
        loop {
            self.chain(links)?;
            links += 1;
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
            let mut fields = Vec::new();
            while !self.peek_punct("}") {
                let optional = self.eat("?").is_some();
                let (field, _) = self.ident()?;
                let colon = self.expect(":")?;
                let value = self.expr()?;
                fields.push(FieldInit {
                    pos: colon,
                    name: field,
                    value,
                    optional,
                });
                if self.eat(",").is_none() {
                    break;
                }
            }
            self.expect("}")?;
            return Ok(Expr {
                pos: open,
                kind: Kind::Struct {
                    name: parts.join("."),
                    fields,
                },
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
            op: Op::of(func),
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
