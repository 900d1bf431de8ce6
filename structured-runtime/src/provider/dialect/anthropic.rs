//! Anthropic JSON outputs and strict tools: what anthropic-sdk-python's `transform_schema` does,
//! then the API's own refusals (recursion, external references, the optional and union caps).

use serde_json::Value;

use super::pass::{unresolved, Run};
use super::policy::{by_policy, in_order, Policy, Table, Written};
use crate::schema::dialect::{LowerError, LowerReport, SchemaTarget};
use crate::schema::node::{JsonType, Node, Types};
use crate::schema::Pointer;

/// Formats Anthropic's SDK keeps on a string (any other goes into `description`).
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// What Anthropic's SDK does with each keyword: the structure (`$defs`, `$ref`, unions, `type`,
/// an object's properties, an array's items) is rewritten by [`node`], a few keywords are
/// sent as written, and every other one is moved into `description`. `format` and `minItems`
/// depend on their value and the node's type ([`policy`]).
const TABLE: Table = Table {
    entries: &[
        ("$defs", Policy::Rewrite),
        ("$ref", Policy::Rewrite),
        ("anyOf", Policy::Rewrite),
        ("oneOf", Policy::Rewrite),
        ("allOf", Policy::Rewrite),
        ("type", Policy::Rewrite),
        ("properties", Policy::Rewrite),
        ("additionalProperties", Policy::Rewrite),
        ("required", Policy::Rewrite),
        ("items", Policy::Rewrite),
        ("enum", Policy::Keep),
        ("const", Policy::Keep),
        ("description", Policy::Keep),
        ("title", Policy::Keep),
        ("format", Policy::Rewrite),
        ("minItems", Policy::Rewrite),
    ],
    other: Policy::Move,
};

/// The order the SDK writes a node's keywords in.
const ORDER: &[&str] = &[
    "$defs",
    "anyOf",
    "allOf",
    "type",
    "enum",
    "const",
    "description",
    "title",
    "properties",
    "additionalProperties",
    "required",
    "format",
    "items",
    "minItems",
];

/// [`TABLE`]'s policy, refined: a supported `format` on a string is kept and another moved;
/// `minItems` 0 or 1 on an array is kept and a larger one moved; on other types both go.
fn policy(types: Types, keyword: &str, value: &Value) -> Policy {
    match keyword {
        "format" if types.contains(JsonType::String) => {
            match value.as_str().is_some_and(|f| FORMATS.contains(&f)) {
                true => Policy::Keep,
                false => Policy::Move,
            }
        }
        "minItems" if types.contains(JsonType::Array) => {
            match value.as_u64().is_some_and(|n| n <= 1) {
                true => Policy::Keep,
                false => Policy::Move,
            }
        }
        _ => TABLE.get(keyword),
    }
}

/// Optional properties and union-typed properties Anthropic accepts per request, across the
/// output format and every strict tool.
const MAX_OPTIONAL: usize = 24;
const MAX_UNIONS: usize = 16;
/// Strict tools Anthropic accepts per request.
const MAX_STRICT_TOOLS: usize = 20;

/// Anthropic's documented per-request caps, counted over the schemas of one request in the order
/// they are sent (the output format, then each strict tool): 20 strict tools, 24 optional
/// properties, 16 union-typed properties (`anyOf` or a type array). Each cap crossed is one
/// error at the place that crosses it, naming the schema, the count and the limit.
#[derive(Debug, Default)]
pub(crate) struct RequestCaps {
    optional: Count,
    unions: Count,
    strict_tools: Count,
}

/// How many of one thing a request holds, and where the one past the limit is.
#[derive(Debug, Default)]
struct Count {
    total: usize,
    over: Option<(String, Pointer)>,
}

impl Count {
    fn add(&mut self, limit: usize, owner: &str, at: &Pointer) {
        self.total += 1;
        if self.total == limit + 1 {
            self.over = Some((owner.to_owned(), at.clone()));
        }
    }
}

impl RequestCaps {
    /// Counts the properties of `schema` (as sent), owned by `owner` ("the output schema", "the
    /// caller's tool `x`").
    pub(crate) fn schema(&mut self, owner: &str, schema: &Value) {
        self.walk(owner, Node::root(schema), &mut Pointer::root());
    }

    /// Counts one strict tool, named `name`.
    pub(crate) fn strict_tool(&mut self, name: &str) {
        let owner = format!("the tool `{name}`");
        self.strict_tools
            .add(MAX_STRICT_TOOLS, &owner, &Pointer::root());
    }

    fn walk(&mut self, owner: &str, node: Node<'_>, path: &mut Pointer) {
        if node.map().is_none() || node.too_deep() {
            return;
        }
        for (name, p) in node.properties() {
            path.push("properties");
            path.push(name);
            if !node.is_required(name) {
                self.optional.add(MAX_OPTIONAL, owner, path);
            }
            if p.has("anyOf") || p.get("type").is_some_and(Value::is_array) {
                self.unions.add(MAX_UNIONS, owner, path);
            }
            path.pop();
            path.pop();
        }
        for child in node.children() {
            let depth = child.segments();
            child.push_to(path);
            self.walk(owner, child.node, path);
            for _ in 0..depth {
                path.pop();
            }
        }
    }

    /// Every cap crossed, as errors at the places that crossed them.
    pub(crate) fn errors(&self) -> Vec<(Pointer, String)> {
        let caps = [
            (&self.strict_tools, MAX_STRICT_TOOLS, "strict tools", ""),
            (
                &self.optional,
                MAX_OPTIONAL,
                "optional properties",
                " (make some required and nullable)",
            ),
            (
                &self.unions,
                MAX_UNIONS,
                "properties with union types (`anyOf` or a type array)",
                "",
            ),
        ];
        caps.into_iter()
            .filter_map(|(count, limit, what, advice)| {
                let (owner, at) = count.over.as_ref()?;
                Some((
                    at.clone(),
                    format!(
                        "{} {what} in the request, the one past the limit in {owner}; Anthropic accepts at most {limit} per request, across the output format and every strict tool{advice}",
                        count.total
                    ),
                ))
            })
            .collect()
    }

    /// [`RequestCaps::errors`] as a lowering report, for a request refused before it is sent.
    pub(crate) fn check(&self) -> Result<(), LowerReport> {
        let errors: Vec<LowerError> = self
            .errors()
            .into_iter()
            .map(|(path, reason)| LowerError {
                target: SchemaTarget::Anthropic,
                path,
                reason,
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(LowerReport {
                target: SchemaTarget::Anthropic,
                errors,
            })
        }
    }
}

/// What anthropic-sdk-python's `transform_schema` does, as data: `$defs` kept and transformed,
/// a `$ref` kept alone, `oneOf` read as `anyOf`, objects closed, supported `format`s and
/// `minItems` 0/1 kept, and every other keyword written into `description`. A node without
/// `type` (and no `$ref`, `anyOf` or `allOf`) is an error, as in the SDK.
/// [`lower`](super::lower) to [`SchemaTarget::Anthropic`] adds the API's own refusals
/// (recursion, external refs, the optional and union parameter caps).
#[cfg(test)]
pub fn anthropic_transform(schema: &Value) -> Result<Value, LowerReport> {
    let mut run = Run::new(SchemaTarget::Anthropic);
    let out = node(&mut run, Node::root(schema), &Pointer::root());
    run.finish(out).map(|lowered| lowered.schema)
}

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    let mut refs = Refs {
        stack: vec!["#".to_owned()],
        checked: Vec::new(),
    };
    refs.check(run, root, &Pointer::root());
    let out = node(run, root, &Pointer::root());
    let mut caps = RequestCaps::default();
    caps.schema("the output schema", &out);
    for (path, reason) in caps.errors() {
        run.fail(&path, reason);
    }
    out
}

/// One node as the SDK writes it: the structural rewrites, then every other keyword through
/// [`policy`].
fn node(run: &mut Run, node: Node<'_>, path: &Pointer) -> Value {
    let Some(map) = node.map() else {
        return node.value().clone();
    };
    if run.stop(path, node) {
        return node.value().clone();
    }
    let mut written = Written::default();
    let out = &mut written.out;
    if let Some(Value::Object(defs)) = map.get("$defs") {
        let defs = defs
            .iter()
            .map(|(k, d)| {
                let at = path.key("$defs").key(k);
                (k.clone(), self::node(run, node.child(d), &at))
            })
            .collect();
        out.insert("$defs".into(), Value::Object(defs));
    }
    if let Some(reference) = map.get("$ref") {
        out.insert("$ref".into(), reference.clone());
        return Value::Object(written.out);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            let branches = branches
                .iter()
                .enumerate()
                .map(|(i, b)| self::node(run, node.child(b), &path.key(key).index(i)))
                .collect();
            out.insert("anyOf".into(), Value::Array(branches));
        }
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        let all = all
            .iter()
            .enumerate()
            .map(|(i, b)| self::node(run, node.child(b), &path.key("allOf").index(i)))
            .collect();
        out.insert("allOf".into(), Value::Array(all));
    }
    let ty = map.get("type");
    if ty.is_none() && out.is_empty() {
        run.fail(
            path,
            "no `type` (nor `$ref`, `anyOf` or `allOf`): say what the value is",
        );
        return node.value().clone();
    }
    if let Some(ty) = ty {
        out.insert("type".into(), ty.clone());
    }
    let types = node.types();
    // Objects closed, every property lowered.
    if types.contains(JsonType::Object) {
        // Anthropic takes closed objects only: one the schema leaves open is said to be closed
        // (outermost first).
        if !node.closed() {
            run.closed.push(path.clone());
        }
        let props = node
            .properties()
            .map(|(k, p)| {
                let at = path.key("properties").key(k);
                (k.to_owned(), self::node(run, p, &at))
            })
            .collect();
        out.insert("properties".into(), Value::Object(props));
        out.insert("additionalProperties".into(), Value::Bool(false));
        if let Some(required) = map.get("required") {
            out.insert("required".into(), required.clone());
        }
    }
    if types.contains(JsonType::Array) {
        if let Some(items) = map.get("items") {
            let lowered = self::node(run, node.child(items), &path.key("items"));
            out.insert("items".into(), lowered);
        }
    }
    by_policy(
        run,
        node,
        map,
        path,
        &|keyword, value| policy(types, keyword, value),
        &mut self::node,
        &mut written,
    );
    in_order(&mut written.out, ORDER, &[]);
    in_order(&mut written.moved, &["format", "minItems"], &[]);
    run.describe(path, &mut written.out, &written.moved);
    Value::Object(written.out)
}

/// Anthropic's refusals the SDK transform does not check: external refs, refs that do not
/// resolve, and recursion. Each definition is walked in full once: a second reference to it is
/// shared, not recursive.
struct Refs {
    /// References being followed, outermost first.
    stack: Vec<String>,
    /// References whose targets were walked in full without meeting themselves.
    checked: Vec<String>,
}

impl Refs {
    fn check(&mut self, run: &mut Run, node: Node<'_>, path: &Pointer) {
        if node.map().is_none() || node.too_deep() {
            return;
        }
        if let Some(reference) = node.reference() {
            let reference = reference.to_owned();
            if !reference.starts_with('#') {
                run.fail(
                    path,
                    format!(
                        "external `$ref` {reference:?}: Anthropic accepts local references only"
                    ),
                );
            } else if self.stack.contains(&reference) {
                run.fail(path, format!("recursive schema (through {reference:?}): Anthropic rejects recursion; bound the depth with a separate type per level"));
            } else if !self.checked.contains(&reference) {
                match node.lookup(&reference) {
                    Ok(target) => {
                        self.stack.push(reference.clone());
                        self.check(run, target, path);
                        self.stack.pop();
                        self.checked.push(reference);
                    }
                    Err(e) => run.fail(path, unresolved(&reference, e)),
                }
            }
        }
        // Definitions are walked where they are referenced, so a cycle is reported at the
        // reference that closes it (and an unused definition costs nothing).
        for child in node.children() {
            if matches!(child.keyword, "$defs" | "definitions") {
                continue;
            }
            let mut at = path.clone();
            child.push_to(&mut at);
            self.check(run, child.node, &at);
        }
    }
}
