//! The rule language's syntax: text → [`Expr`] with source spans.
//!
//! Precedence, loosest first: `or`, `and`, `not`, comparisons (one per
//! operand pair, no chains), `+ -`, `* /`, unary `-`, then numbers, names,
//! calls and parentheses. A quoted name appears only in `col("…")`, a data
//! column whatever its name.

use super::error::RuleError;

/// A byte range of the rule text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Number(f64),
    Bool(bool),
    Name(String),
    /// `col("Any Name")`: the data column of that name.
    Column(String),
    /// `tf("1d", x)` or `informative("btc", x)`: `x` on other bars; the
    /// quoted word and where it starts.
    On(OnKind, String, usize, Box<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

/// What an [`ExprKind::On`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnKind {
    /// `tf("4h", …)`: a higher timeframe of these bars.
    Timeframe,
    /// `informative("btc", …)`: another instrument's bars.
    Informative,
}

impl OnKind {
    pub fn name(self) -> &'static str {
        match self {
            OnKind::Timeframe => "tf",
            OnKind::Informative => "informative",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            OnKind::Timeframe => "tf takes a timeframe in quotes and an expression, e.g. tf(\"1d\", sma(close, 50))",
            OnKind::Informative => "informative takes the name of a data.informative instrument in quotes and an expression, e.g. informative(\"btc\", close > sma(close, 50))",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Number(f64),
    Ident(String),
    /// A quoted name: `"…"` or `'…'`.
    Str(String),
    Op(BinOp),
    Minus,
    LParen,
    RParen,
    Comma,
    End,
}

struct Token {
    tok: Tok,
    span: Span,
}

fn err(at: usize, message: impl Into<String>) -> RuleError {
    RuleError {
        at,
        message: message.into(),
    }
}

fn lex(text: &str) -> Result<Vec<Token>, RuleError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let single = |tok: Tok| Token {
            tok,
            span: Span {
                start,
                end: start + 1,
            },
        };
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'0'..=b'9' | b'.' => {
                while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                    i += 1;
                }
                // An exponent: 1e-3, 2E5.
                if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                    let mut j = i + 1;
                    if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                        j += 1;
                    }
                    if j < bytes.len() && bytes[j].is_ascii_digit() {
                        while j < bytes.len() && bytes[j].is_ascii_digit() {
                            j += 1;
                        }
                        i = j;
                    }
                }
                let s = &text[start..i];
                let v: f64 = s
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| err(start, format!("'{s}' is not a finite number")))?;
                out.push(Token {
                    tok: Tok::Number(v),
                    span: Span { start, end: i },
                });
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push(Token {
                    tok: Tok::Ident(text[start..i].to_string()),
                    span: Span { start, end: i },
                });
                continue;
            }
            b'"' | b'\'' => {
                // The quote doubled stands for itself (`col("say ""hi""")`),
                // so a name holding both kinds of quote can be written.
                let quote = c as char;
                let mut name = String::new();
                let mut from = start + 1;
                loop {
                    let Some(len) = text[from..].find(quote) else {
                        return Err(err(start, "unclosed quote"));
                    };
                    name.push_str(&text[from..from + len]);
                    i = from + len + 1;
                    if text[i..].starts_with(quote) {
                        name.push(quote);
                        from = i + 1;
                        continue;
                    }
                    break;
                }
                out.push(Token {
                    tok: Tok::Str(name),
                    span: Span { start, end: i },
                });
                continue;
            }
            b'+' => out.push(single(Tok::Op(BinOp::Add))),
            b'-' => out.push(single(Tok::Minus)),
            b'*' => out.push(single(Tok::Op(BinOp::Mul))),
            b'/' => out.push(single(Tok::Op(BinOp::Div))),
            b'(' => out.push(single(Tok::LParen)),
            b')' => out.push(single(Tok::RParen)),
            b',' => out.push(single(Tok::Comma)),
            b'<' | b'>' | b'=' | b'!' => {
                let eq = bytes.get(i + 1) == Some(&b'=');
                let op = match (c, eq) {
                    (b'<', true) => BinOp::Le,
                    (b'<', false) => BinOp::Lt,
                    (b'>', true) => BinOp::Ge,
                    (b'>', false) => BinOp::Gt,
                    (b'=', true) => BinOp::Eq,
                    (b'!', true) => BinOp::Ne,
                    (b'=', false) => {
                        return Err(err(start, "'=' is not an operator; compare with '=='"))
                    }
                    _ => {
                        return Err(err(
                            start,
                            "'!' is not an operator; use 'not' (or '!=' to compare)",
                        ))
                    }
                };
                i += 1 + eq as usize;
                out.push(Token {
                    tok: Tok::Op(op),
                    span: Span { start, end: i },
                });
                continue;
            }
            b'&' => return Err(err(start, "'&' is not an operator; use 'and'")),
            b'|' => return Err(err(start, "'|' is not an operator; use 'or'")),
            _ => {
                let ch = text[start..].chars().next().unwrap_or('?');
                return Err(err(start, format!("unexpected character '{ch}'")));
            }
        }
        i += 1;
    }
    out.push(Token {
        tok: Tok::End,
        span: Span {
            start: text.len(),
            end: text.len(),
        },
    });
    Ok(out)
}

/// Parses one rule or definition.
pub fn parse(text: &str) -> Result<Expr, RuleError> {
    let tokens = lex(text)?;
    if tokens.len() > MAX_TOKENS {
        return Err(err(
            tokens[MAX_TOKENS].span.start,
            format!(
                "the rule is too long (over {MAX_TOKENS} tokens); split it with [strategy.define]"
            ),
        ));
    }
    if matches!(tokens[0].tok, Tok::End) {
        return Err(err(0, "the rule is empty"));
    }
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let e = p.or_expr()?;
    match &p.peek().tok {
        Tok::End => Ok(e),
        Tok::RParen => Err(err(p.peek().span.start, "unmatched ')'")),
        _ => Err(err(
            p.peek().span.start,
            format!(
                "expected an operator or the end of the rule, found {}",
                p.describe()
            ),
        )),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Nesting so far: refused past [`MAX_DEPTH`] (no stack overflow).
    depth: usize,
}

const MAX_DEPTH: usize = 200;
/// Longest rule: bounds the depth of a long `a + b + …` chain too.
const MAX_TOKENS: usize = 2000;

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> &Token {
        let i = self.pos.min(self.tokens.len() - 1);
        self.pos += 1;
        &self.tokens[i]
    }

    fn describe(&self) -> String {
        match &self.peek().tok {
            Tok::Number(v) => format!("the number {v}"),
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Str(s) => format!("the quoted name \"{s}\""),
            Tok::Op(op) => format!("'{}'", op.symbol()),
            Tok::Minus => "'-'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::Comma => "','".into(),
            Tok::End => "the end of the rule".into(),
        }
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == word)
    }

    fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        let span = Span {
            start: a.span.start,
            end: b.span.end,
        };
        Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            span,
        }
    }

    fn or_expr(&mut self) -> Result<Expr, RuleError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(err(self.peek().span.start, "the rule is nested too deeply"));
        }
        let e = self.or_chain();
        self.depth -= 1;
        e
    }

    fn or_chain(&mut self) -> Result<Expr, RuleError> {
        let mut e = self.and_expr()?;
        while self.is_word("or") {
            self.next();
            let rhs = self.and_expr()?;
            e = Self::binary(BinOp::Or, e, rhs);
        }
        Ok(e)
    }

    fn and_expr(&mut self) -> Result<Expr, RuleError> {
        let mut e = self.not_expr()?;
        while self.is_word("and") {
            self.next();
            let rhs = self.not_expr()?;
            e = Self::binary(BinOp::And, e, rhs);
        }
        Ok(e)
    }

    fn not_expr(&mut self) -> Result<Expr, RuleError> {
        if self.is_word("not") {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(err(self.peek().span.start, "the rule is nested too deeply"));
            }
            let start = self.next().span.start;
            let inner = self.not_expr()?;
            self.depth -= 1;
            let end = inner.span.end;
            return Ok(Expr {
                kind: ExprKind::Not(Box::new(inner)),
                span: Span { start, end },
            });
        }
        self.comparison()
    }

    fn comparison_op(&self) -> Option<BinOp> {
        match self.peek().tok {
            Tok::Op(op) if op.is_comparison() => Some(op),
            _ => None,
        }
    }

    fn comparison(&mut self) -> Result<Expr, RuleError> {
        let lhs = self.additive()?;
        let Some(op) = self.comparison_op() else {
            return Ok(lhs);
        };
        self.next();
        let rhs = self.additive()?;
        if self.comparison_op().is_some() {
            return Err(err(
                self.peek().span.start,
                "comparisons cannot be chained; join them with 'and'",
            ));
        }
        Ok(Self::binary(op, lhs, rhs))
    }

    fn additive(&mut self) -> Result<Expr, RuleError> {
        let mut e = self.multiplicative()?;
        loop {
            let op = match self.peek().tok {
                Tok::Op(BinOp::Add) => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => return Ok(e),
            };
            self.next();
            let rhs = self.multiplicative()?;
            e = Self::binary(op, e, rhs);
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, RuleError> {
        let mut e = self.unary()?;
        while let Tok::Op(op @ (BinOp::Mul | BinOp::Div)) = self.peek().tok {
            self.next();
            let rhs = self.unary()?;
            e = Self::binary(op, e, rhs);
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, RuleError> {
        if matches!(self.peek().tok, Tok::Minus) {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(err(self.peek().span.start, "the rule is nested too deeply"));
            }
            let start = self.next().span.start;
            let inner = self.unary()?;
            self.depth -= 1;
            let end = inner.span.end;
            return Ok(Expr {
                kind: ExprKind::Neg(Box::new(inner)),
                span: Span { start, end },
            });
        }
        self.primary()
    }

    /// The rest of `col("name")`, after `col`.
    fn quoted_column(&mut self, at: Span) -> Result<Expr, RuleError> {
        const USE: &str = "col takes a column's name in quotes, e.g. col(\"My Signal\")";
        if !matches!(self.next().tok, Tok::LParen) {
            return Err(err(at.start, USE));
        }
        let Tok::Str(name) = self.peek().tok.clone() else {
            return Err(err(self.peek().span.start, USE));
        };
        self.next();
        if !matches!(self.peek().tok, Tok::RParen) {
            return Err(err(self.peek().span.start, USE));
        }
        let end = self.next().span.end;
        if name.trim().is_empty() {
            return Err(err(at.start, "col needs a column name, not an empty one"));
        }
        Ok(Expr {
            kind: ExprKind::Column(name.trim().to_string()),
            span: Span {
                start: at.start,
                end,
            },
        })
    }

    /// The rest of `tf("1d", x)` / `informative("btc", x)`, after the name.
    fn on(&mut self, kind: OnKind, at: Span) -> Result<Expr, RuleError> {
        if !matches!(self.next().tok, Tok::LParen) {
            return Err(err(at.start, kind.usage()));
        }
        let Tok::Str(word) = self.peek().tok.clone() else {
            return Err(err(self.peek().span.start, kind.usage()));
        };
        let word_at = self.next().span.start;
        if !matches!(self.next().tok, Tok::Comma) {
            return Err(err(word_at, kind.usage()));
        }
        let inner = self.or_expr()?;
        match self.peek().tok {
            Tok::RParen => {}
            Tok::End => return Err(err(at.start, "unclosed '('")),
            _ => {
                return Err(err(
                    self.peek().span.start,
                    format!("expected ')', found {}: {}", self.describe(), kind.usage()),
                ))
            }
        }
        let end = self.next().span.end;
        Ok(Expr {
            kind: ExprKind::On(kind, word.trim().to_string(), word_at, Box::new(inner)),
            span: Span {
                start: at.start,
                end,
            },
        })
    }

    fn primary(&mut self) -> Result<Expr, RuleError> {
        let at = self.peek().span;
        match self.peek().tok.clone() {
            Tok::Number(v) => {
                self.next();
                Ok(Expr {
                    kind: ExprKind::Number(v),
                    span: at,
                })
            }
            Tok::Ident(name) => {
                if matches!(name.as_str(), "and" | "or" | "not") {
                    return Err(err(at.start, format!("expected a value before '{name}'")));
                }
                self.next();
                if name == "col" {
                    return self.quoted_column(at);
                }
                match name.as_str() {
                    "tf" => return self.on(OnKind::Timeframe, at),
                    "informative" => return self.on(OnKind::Informative, at),
                    _ => {}
                }
                if !matches!(self.peek().tok, Tok::LParen) {
                    let kind = match name.as_str() {
                        "true" => ExprKind::Bool(true),
                        "false" => ExprKind::Bool(false),
                        _ => ExprKind::Name(name),
                    };
                    return Ok(Expr { kind, span: at });
                }
                let open = self.next().span.start;
                let mut args = Vec::new();
                if !matches!(self.peek().tok, Tok::RParen) {
                    loop {
                        args.push(self.or_expr()?);
                        match self.peek().tok {
                            Tok::Comma => {
                                self.next();
                                if matches!(self.peek().tok, Tok::RParen) {
                                    return Err(err(
                                        self.peek().span.start,
                                        "an argument is missing after ','",
                                    ));
                                }
                            }
                            Tok::RParen => break,
                            Tok::End => return Err(err(open, "unclosed '('")),
                            _ => {
                                return Err(err(
                                    self.peek().span.start,
                                    format!("expected ',' or ')', found {}", self.describe()),
                                ))
                            }
                        }
                    }
                }
                let end = self.next().span.end;
                Ok(Expr {
                    kind: ExprKind::Call(name, args),
                    span: Span {
                        start: at.start,
                        end,
                    },
                })
            }
            Tok::LParen => {
                self.next();
                let inner = self.or_expr()?;
                match self.peek().tok {
                    Tok::RParen => {
                        let end = self.next().span.end;
                        Ok(Expr {
                            kind: inner.kind,
                            span: Span {
                                start: at.start,
                                end,
                            },
                        })
                    }
                    Tok::End => Err(err(at.start, "unclosed '('")),
                    _ => Err(err(
                        self.peek().span.start,
                        format!("expected ')', found {}", self.describe()),
                    )),
                }
            }
            Tok::RParen => Err(err(at.start, "unmatched ')'")),
            Tok::Str(name) => Err(err(
                at.start,
                format!("a quoted name is a data column only inside col(…): col(\"{name}\")"),
            )),
            Tok::End => Err(err(at.start, "the rule ends where a value is expected")),
            _ => Err(err(
                at.start,
                format!("expected a value, found {}", self.describe()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Number(v) => format!("{v}"),
            ExprKind::Bool(b) => format!("{b}"),
            ExprKind::Name(n) => n.clone(),
            ExprKind::Column(n) => format!("col[{n}]"),
            ExprKind::On(k, w, _, x) => format!("{}[{w}]({})", k.name(), show(x)),
            ExprKind::Neg(x) => format!("(-{})", show(x)),
            ExprKind::Not(x) => format!("(not {})", show(x)),
            ExprKind::Binary(op, a, b) => format!("({} {} {})", show(a), op.symbol(), show(b)),
            ExprKind::Call(f, args) => {
                let a: Vec<String> = args.iter().map(show).collect();
                format!("{f}({})", a.join(", "))
            }
        }
    }

    #[test]
    fn precedence_is_the_usual_one() {
        let e = parse("not a + b * -c > 1e-3 and x or y").unwrap();
        assert_eq!(show(&e), "(((not ((a + (b * (-c))) > 0.001)) and x) or y)");
        assert_eq!(show(&parse("a - b - c").unwrap()), "((a - b) - c)");
        assert_eq!(
            show(&parse("(a - (b - c)) / 2").unwrap()),
            "((a - (b - c)) / 2)"
        );
        assert_eq!(show(&parse("f(x, g(1, 2))").unwrap()), "f(x, g(1, 2))");
    }

    #[test]
    fn errors_point_at_the_column() {
        let at = |t: &str| parse(t).unwrap_err().at;
        assert_eq!(at("sma(close, 3"), 3);
        assert_eq!(at("(a > b"), 0);
        assert_eq!(at("a > b)"), 5);
        assert_eq!(at("a < b < c"), 6);
        assert_eq!(at("a = b"), 2);
        assert_eq!(at("   "), 0);
        assert_eq!(at("a >"), 3);
        assert!(parse("").unwrap_err().message.contains("empty"));
        assert_eq!(at("sma(close, 3,)"), 13);
        assert!(parse("sma(close, 3,)")
            .unwrap_err()
            .message
            .contains("missing after ','"));
        assert_eq!(at("close > 1e400"), 8);
    }

    #[test]
    fn quoted_names_are_columns_inside_col_only() {
        let e = parse("col(\"My Signal\") > col('x') + close").unwrap();
        assert_eq!(show(&e), "(col[My Signal] > (col[x] + close))");
        assert_eq!(show(&parse("col(\" padded \")").unwrap()), "col[padded]");
        // A doubled quote stands for itself: a name with both kinds.
        assert_eq!(
            show(&parse(r#"col("it's ""q""") > 1"#).unwrap()),
            r#"(col[it's "q"] > 1)"#
        );
        assert_eq!(
            show(&parse(r#"col('it''s "q"')"#).unwrap()),
            r#"col[it's "q"]"#
        );
        assert!(parse(r#"col("a"" > 1"#)
            .unwrap_err()
            .message
            .contains("unclosed quote"));
        let at = |t: &str| parse(t).unwrap_err().at;
        assert_eq!(at("close > \"x\""), 8);
        assert_eq!(at("col(x) > 1"), 4);
        assert_eq!(at("col(\"x\", 2)"), 7);
        assert_eq!(at("col > 1"), 0);
        assert_eq!(at("col(\"\")"), 0);
        assert_eq!(at("col(\"x) > 1"), 4);
        assert!(parse("col(\"x) > 1")
            .unwrap_err()
            .message
            .contains("unclosed quote"));
    }
}
