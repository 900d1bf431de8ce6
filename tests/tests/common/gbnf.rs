//! A GBNF reader and a random deriver, for the grammar soundness property: parse the grammar a
//! schema compiles to, write random strings it derives, and check each with the validator.
//! Reads what the compiler writes (one rule a line, literals, classes, groups, `|`, `?`, `*`,
//! `+`, `{m}`, `{m,}`, `{m,n}`); anything else is a panic, so a new construct is noticed.

use std::collections::HashMap;

/// A small deterministic generator (xorshift), seeded per test.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `range` (inclusive).
    pub fn in_range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

#[derive(Debug, Clone)]
pub enum Expr {
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    Lit(String),
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Ref(String),
    Rep(Box<Expr>, usize, Option<usize>),
}

pub struct Gbnf {
    rules: HashMap<String, Expr>,
}

impl Gbnf {
    pub fn parse(text: &str) -> Gbnf {
        let mut rules = HashMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (name, body) = line
                .split_once(" ::= ")
                .unwrap_or_else(|| panic!("not a rule: {line}"));
            let chars: Vec<char> = body.chars().collect();
            let mut p = Parser { chars, at: 0 };
            let expr = p.alternatives();
            assert_eq!(p.at, p.chars.len(), "left over in {line}");
            assert!(
                rules.insert(name.to_owned(), expr).is_none(),
                "rule {name} twice"
            );
        }
        let g = Gbnf { rules };
        for expr in g.rules.values() {
            g.check_refs(expr);
        }
        g
    }

    fn check_refs(&self, e: &Expr) {
        match e {
            Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|x| self.check_refs(x)),
            Expr::Rep(x, _, _) => self.check_refs(x),
            Expr::Ref(name) => assert!(self.rules.contains_key(name), "undefined rule {name}"),
            _ => {}
        }
    }

    /// One random string derived from `root`; `None` when the walk went too deep.
    pub fn derive(&self, rng: &mut Rng) -> Option<String> {
        let mut out = String::new();
        let mut steps = 0usize;
        self.walk(&Expr::Ref("root".into()), rng, &mut out, 0, &mut steps)
            .then_some(out)
    }

    fn walk(
        &self,
        e: &Expr,
        rng: &mut Rng,
        out: &mut String,
        depth: usize,
        steps: &mut usize,
    ) -> bool {
        *steps += 1;
        if depth > 200 || *steps > 200_000 {
            return false;
        }
        match e {
            Expr::Lit(s) => out.push_str(s),
            Expr::Seq(parts) => {
                for p in parts {
                    if !self.walk(p, rng, out, depth + 1, steps) {
                        return false;
                    }
                }
            }
            Expr::Alt(branches) => {
                // Deep down, prefer the first branches (scalars come before containers in
                // the generic value rule), so recursive grammars end.
                let i = if depth > 60 {
                    0
                } else {
                    rng.in_range(0, branches.len() as u64 - 1) as usize
                };
                return self.walk(&branches[i], rng, out, depth + 1, steps);
            }
            Expr::Class { negated, ranges } => out.push(pick_char(*negated, ranges, rng)),
            Expr::Ref(name) => return self.walk(&self.rules[name], rng, out, depth + 1, steps),
            Expr::Rep(x, min, max) => {
                let max = max.unwrap_or(min + 4);
                let n = match rng.in_range(0, 3) {
                    0 => *min,
                    1 => max,
                    _ => rng.in_range(*min as u64, max.min(min + 6) as u64) as usize,
                };
                for _ in 0..n {
                    if !self.walk(x, rng, out, depth + 1, steps) {
                        return false;
                    }
                }
            }
        }
        true
    }
}

fn pick_char(negated: bool, ranges: &[(char, char)], rng: &mut Rng) -> char {
    if !negated {
        let (a, b) = ranges[rng.in_range(0, ranges.len() as u64 - 1) as usize];
        let c = rng.in_range(a as u64, b as u64) as u32;
        return char::from_u32(c).unwrap_or(a);
    }
    const POOL: &[char] = &[
        'a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\u{1}', 'é', '€', '😀', '\u{7f}', '{', '}', ',',
        ':',
    ];
    loop {
        let c = POOL[rng.in_range(0, POOL.len() as u64 - 1) as usize];
        if !ranges.iter().any(|&(a, b)| a <= c && c <= b) {
            return c;
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek() == Some(' ') {
            self.at += 1;
        }
    }

    fn alternatives(&mut self) -> Expr {
        let mut branches = vec![self.sequence()];
        while self.peek() == Some('|') {
            self.at += 1;
            branches.push(self.sequence());
        }
        if branches.len() == 1 {
            branches.pop().unwrap()
        } else {
            Expr::Alt(branches)
        }
    }

    fn sequence(&mut self) -> Expr {
        let mut parts = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None | Some('|') | Some(')') => break,
                _ => {
                    let atom = self.atom();
                    parts.push(self.postfix(atom));
                }
            }
        }
        Expr::Seq(parts)
    }

    fn postfix(&mut self, mut atom: Expr) -> Expr {
        loop {
            match self.peek() {
                Some('?') => atom = Expr::Rep(Box::new(atom), 0, Some(1)),
                Some('*') => atom = Expr::Rep(Box::new(atom), 0, None),
                Some('+') => atom = Expr::Rep(Box::new(atom), 1, None),
                Some('{') => {
                    self.at += 1;
                    let min = self.number();
                    let max = match self.peek() {
                        Some(',') => {
                            self.at += 1;
                            (self.peek() != Some('}')).then(|| self.number())
                        }
                        _ => Some(min),
                    };
                    assert_eq!(self.peek(), Some('}'));
                    atom = Expr::Rep(Box::new(atom), min, max);
                }
                _ => return atom,
            }
            self.at += 1;
        }
    }

    fn number(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.chars[start..self.at]
            .iter()
            .collect::<String>()
            .parse()
            .unwrap()
    }

    fn escaped(&mut self) -> char {
        let c = self.chars[self.at];
        self.at += 1;
        if c != '\\' {
            return c;
        }
        let e = self.chars[self.at];
        self.at += 1;
        let hex = |p: &mut Parser, n: usize| {
            let s: String = p.chars[p.at..p.at + n].iter().collect();
            p.at += n;
            char::from_u32(u32::from_str_radix(&s, 16).unwrap()).unwrap()
        };
        match e {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'x' => hex(self, 2),
            'u' => hex(self, 4),
            'U' => hex(self, 8),
            other => other,
        }
    }

    fn atom(&mut self) -> Expr {
        match self.peek() {
            Some('"') => {
                self.at += 1;
                let mut s = String::new();
                while self.peek() != Some('"') {
                    s.push(self.escaped());
                }
                self.at += 1;
                Expr::Lit(s)
            }
            Some('[') => {
                self.at += 1;
                let negated = self.peek() == Some('^');
                if negated {
                    self.at += 1;
                }
                let mut ranges = Vec::new();
                while self.peek() != Some(']') {
                    let a = self.escaped();
                    let b = if self.peek() == Some('-') && self.chars.get(self.at + 1) != Some(&']')
                    {
                        self.at += 1;
                        self.escaped()
                    } else {
                        a
                    };
                    ranges.push((a, b));
                }
                self.at += 1;
                Expr::Class { negated, ranges }
            }
            Some('(') => {
                self.at += 1;
                let inner = self.alternatives();
                self.skip_space();
                assert_eq!(self.peek(), Some(')'), "unclosed group");
                self.at += 1;
                inner
            }
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                {
                    self.at += 1;
                }
                assert!(
                    self.at > start,
                    "unexpected {:?} at {}",
                    self.peek(),
                    self.at
                );
                Expr::Ref(self.chars[start..self.at].iter().collect())
            }
        }
    }
}
