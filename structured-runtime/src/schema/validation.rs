//! Run-time validation: a value against a schema given as data.
//!
//! The verdict is the `jsonschema` crate's, compiled once per schema ([`Compiled`]): it knows
//! every keyword of the drafts it implements. Our own walk ([`explain`]) only says why, in this
//! crate's words and with the pointer of each value that broke a rule (a missing property at the
//! property's own pointer, the inner violation of a `T or null`); whatever the validator refused
//! that the walk has no words for is reported from the validator's own error, so nothing it
//! refused goes unexplained. A derived type is checked by its strict reading and compiled
//! `Validate`; where that reading cannot vouch for a value as written (a set, a date, an enum
//! with data, a flattened field) the validator judges the value too, and the walk only explains.

use std::collections::HashSet;

use serde_json::Value;

use super::checks::asserts_nothing;
use super::node::{entry, Additional, Node, Types};
use super::pointer::{Path, Pointer};
use super::validate::{
    capped, preview_json, preview_str, Rule, Violation, Violations, MAX_VIOLATIONS,
};

/// Schema nodes the explanation visits at most for one value, at least ([`walk_budget`]): a
/// schema whose branches refer to each other can describe exponentially many paths, and an
/// explanation does not need them all.
const EXPLAIN_BUDGET: usize = 100_000;

/// Schema nodes the explanation may visit per JSON value of the value explained, when that is
/// more than [`EXPLAIN_BUDGET`]: enough for each branch of a few nested `anyOf`s to walk a long
/// answer to its end.
const EXPLAIN_PER_VALUE: usize = 32;

/// The schema nodes the explanation of `instance` may visit: [`EXPLAIN_PER_VALUE`] per value it
/// holds, and at least [`EXPLAIN_BUDGET`]. So a long answer is walked to its end (its report the
/// same as a short one's, in time linear in its size), and a schema describing exponentially
/// many paths is cut short on any answer.
fn walk_budget(instance: &Value) -> usize {
    weight(instance, usize::MAX)
        .saturating_mul(EXPLAIN_PER_VALUE)
        .max(EXPLAIN_BUDGET)
}

/// The JSON values in `value` (itself, and every member and item at any depth), counted up to
/// just past `limit`.
pub(crate) fn weight(value: &Value, limit: usize) -> usize {
    if !value.is_object() && !value.is_array() {
        // (A scalar is one value: counted without a stack, which a stream's check of each
        // value would allocate.)
        return 1;
    }
    let mut count = 0usize;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        count += 1;
        if count > limit {
            break;
        }
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    count
}

/// Violations taken from the validator at most, on top of the walk's own.
const MAX_VALIDATOR_ERRORS: usize = 200;

/// A schema compiled by the validator of record.
pub(crate) struct Compiled {
    validator: jsonschema::Validator,
    /// Every keyword of the schema is one the explanation walk judges as the validator does
    /// ([`walk_explains`]): where the walk names a violation it names them all, and the
    /// validator's own error list (which it builds whole, every `anyOf` branch's errors
    /// included) is not needed.
    explained: bool,
}

// The validator is never changed after it is compiled (what it fills in lazily, it fills in
// once and whole), so a panic elsewhere cannot leave it half-updated: a `&ResponseSchema` stays
// usable across `catch_unwind`, as it was before it held a validator.
impl std::panic::RefUnwindSafe for Compiled {}
impl std::panic::UnwindSafe for Compiled {}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

/// How the validator is configured: no network or file access (a reference outside the schema
/// is an error), `format` asserted, with an unknown format an error rather than ignored, and
/// patterns matched by the linear-time engine (see [`crate::schema::pattern`]).
pub(crate) fn options<'i>() -> jsonschema::ValidationOptions<'i> {
    jsonschema::options()
        .offline()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
}

/// Whether `text` is in the JSON Schema `format` named `format`, by the validator of record
/// (each format's check compiled once; at most [`MAX_CACHED_FORMATS`] kept, as a schema given
/// at run time may name any). An unknown format accepts nothing.
pub(crate) fn in_format(format: &str, text: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static CHECKS: OnceLock<Mutex<HashMap<String, Option<Arc<Compiled>>>>> = OnceLock::new();
    let compile = || {
        Compiled::new(&serde_json::json!({"type": "string", "format": format}))
            .ok()
            .map(Arc::new)
    };
    let check = {
        let mut checks = CHECKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match checks.get(format) {
            Some(check) => check.clone(),
            None if checks.len() < MAX_CACHED_FORMATS => {
                let check = compile();
                checks.insert(format.to_owned(), check.clone());
                check
            }
            None => compile(),
        }
    };
    check.is_some_and(|c| c.is_valid(&Value::String(text.to_owned())))
}

/// Formats whose compiled check [`in_format`] keeps.
const MAX_CACHED_FORMATS: usize = 64;

impl Compiled {
    /// Compiles `schema`; the validator's refusal, with the pointer it names, on failure.
    pub(crate) fn new(schema: &Value) -> Result<Compiled, (Pointer, String)> {
        options()
            .build(schema)
            .map(|validator| Compiled {
                validator,
                explained: walk_explains(Node::root(schema)),
            })
            .map_err(|e| (location(e.instance_path().as_str()), e.to_string()))
    }

    /// Compiles the node `node` of `document` (reached from its root through `path`, the
    /// keywords and names leading to it) alone: the document is registered whole, so every
    /// `$ref` inside the node resolves as it does in the document. For judging a part of a
    /// value by itself ([`crate::schema::parts`]).
    pub(crate) fn at(
        document: &Value,
        node: Node<'_>,
        pointer: &Pointer,
    ) -> Result<Compiled, String> {
        const DOCUMENT: &str = "urn:structured:schema";
        let registry = jsonschema::Registry::new()
            .add(DOCUMENT, document)
            .and_then(|builder| builder.prepare())
            .map_err(|e| e.to_string())?;
        let mut wrapper = serde_json::Map::new();
        if let Some(draft) = document.get("$schema") {
            wrapper.insert("$schema".into(), draft.clone());
        }
        wrapper.insert(
            "$ref".into(),
            Value::String(format!("{DOCUMENT}#{}", fragment(pointer))),
        );
        options()
            .with_registry(&registry)
            .build(&Value::Object(wrapper))
            .map(|validator| Compiled {
                validator,
                explained: walk_explains(node),
            })
            .map_err(|e| e.to_string())
    }

    /// Whether `instance` is valid.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// The verdict on `instance`, and on refusal every violation: the walk's, then each of the
    /// validator's errors at a place the walk said nothing about.
    pub(crate) fn check(&self, schema: &Value, instance: &Value) -> Result<(), Violations> {
        self.check_at(Node::root(schema), instance, &Path::root())
    }

    /// [`Compiled::check`] for a validator compiled for `node` ([`Compiled::at`]) and a value
    /// that sits at `path` in a larger one: each violation's pointer is from that value's root.
    pub(crate) fn check_at(
        &self,
        node: Node<'_>,
        instance: &Value,
        path: &Path<'_>,
    ) -> Result<(), Violations> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut violations = explain_at(node, instance, path);
        let base = path.to_pointer();
        if violations.is_empty() || !self.explained {
            let walked = violations.len();
            for error in self
                .validator
                .iter_errors(instance)
                .take(MAX_VALIDATOR_ERRORS)
            {
                let path = base.join(&location(error.instance_path().as_str()));
                let violation = from_validator(&error, path);
                let members = members_named(&error);
                let said = violations.get(..walked).unwrap_or_default();
                if !said
                    .iter()
                    .any(|walk| says_as_well(walk, &violation, &members))
                {
                    violations.push(violation);
                }
            }
        }
        if violations.is_empty() {
            // The validator refused without saying where (it always says; kept for safety).
            violations.push(Violation {
                path: base,
                rule: Rule::Schema,
                expected: "a value the schema accepts".into(),
                found: preview_json(instance),
            });
        }
        Err(Violations(violations))
    }

    /// The pointers of the values the validator refuses in `instance` (none when it is valid):
    /// where the walk explains every keyword of the schema, the walk's pointers.
    pub(crate) fn refused_at(&self, schema: &Value, instance: &Value) -> Vec<Pointer> {
        if self.validator.is_valid(instance) {
            return Vec::new();
        }
        if self.explained {
            let walked: Vec<Pointer> = explain(Node::root(schema), instance)
                .into_iter()
                .map(|v| v.path)
                .collect();
            if !walked.is_empty() {
                return walked;
            }
        }
        self.validator
            .iter_errors(instance)
            .take(MAX_VALIDATOR_ERRORS)
            .map(|e| location(e.instance_path().as_str()))
            .collect()
    }
}

/// Whether the walk's `walk` already says what the validator's `error` says: the same rule at
/// the same place or below it (the walk names a repeated item where the validator names the
/// list), at one of the members the validator names at the object (`members`: a `required` or
/// undeclared member, a refused name, each of which the walk reports at the member), or below
/// the place where the validator names an `anyOf` (`oneOf`) the walk explained by the branch
/// the value takes. A validator's error at a place the walk reported for another rule, or below
/// it, is a violation of its own (a member refused by a keyword the walk does not judge, inside a
/// map whose count the walk refused), and is kept; so is one naming a member the walk did not
/// name (a member a condition requires, beside another the object's own `required` names).
fn says_as_well(walk: &Violation, error: &Violation, members: &[String]) -> bool {
    match error.rule {
        Rule::AnyOf | Rule::OneOf => error.path.contains(&walk.path),
        rule if rule != walk.rule => false,
        _ if !members.is_empty() => {
            walk.path == error.path
                || members
                    .iter()
                    .any(|member| error.path.key(member) == walk.path)
        }
        // (The walk names the repeated item where the validator names the list.)
        _ => error.path.contains(&walk.path),
    }
}

/// The members a validator's error at an object names, which the walk reports each at its own
/// pointer: a missing `required` property, undeclared members, a refused name.
fn members_named(error: &jsonschema::ValidationError<'_>) -> Vec<String> {
    use jsonschema::error::ValidationErrorKind as K;
    match error.kind() {
        K::Required { property } => property.as_str().map(str::to_owned).into_iter().collect(),
        K::AdditionalProperties { unexpected } => unexpected.clone(),
        K::PropertyNames { error } => error
            .instance()
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

fn location(pointer: &str) -> Pointer {
    Pointer::parse(pointer).unwrap_or_default()
}

/// Keywords the explanation walk judges exactly as the validator does, and annotations that
/// judge nothing. A schema using any other (`not`, `if`,
/// `prefixItems`, `contains`, `multipleOf`, `dependentRequired`, ...) has its refusals listed
/// by the validator too.
const WALK_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "anyOf",
    "allOf",
    // (only a `oneOf` no value can match two branches of: [`Node::any_of`] gives its branches)
    "oneOf",
    "$ref",
    "propertyNames",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "$defs",
    "definitions",
    "$schema",
    // and every keyword that asserts nothing (`checks::asserts_nothing`)
];

/// Whether the walk explains every refusal of the schema at `node`: each keyword is one it
/// judges as the validator does, in the form it reads (numeric exclusive bounds, `items` and
/// `additionalProperties` as schemas or `additionalProperties: false`). Walks each node once.
pub(crate) fn walk_explains(node: Node<'_>) -> bool {
    if node.too_deep() {
        return false;
    }
    let Some(map) = node.map() else {
        // `true` judges nothing; `false` is left to the validator.
        return node.value() == &Value::Bool(true);
    };
    let forms_read = map.iter().all(|(keyword, value)| {
        (WALK_KEYWORDS.contains(&keyword.as_str()) || asserts_nothing(keyword))
            && match keyword.as_str() {
                "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
                "items" | "patternProperties" => value.is_object(),
                "$ref" => value.as_str().is_some_and(|r| r.starts_with('#')),
                "oneOf" => node
                    .branches()
                    .is_some_and(|(keyword, _)| keyword == "oneOf"),
                _ => true,
            }
    });
    forms_read
        && node.children().into_iter().all(|child| {
            // `additionalProperties: false` is explained by the object's walk.
            (child.keyword == "additionalProperties" && child.node.value() == &Value::Bool(false))
                || walk_explains(child.node)
        })
}

/// What a list refused by `contains` (or its bounds, `minContains` and `maxContains`) was
/// expected to hold.
pub(crate) const CONTAINS: &str = "an item matching `contains`";

/// One of the validator's errors in this crate's terms.
fn from_validator(error: &jsonschema::ValidationError<'_>, path: Pointer) -> Violation {
    use jsonschema::error::ValidationErrorKind as K;
    let found = preview_json(error.instance());
    let (rule, expected) = match error.kind() {
        K::Pattern { pattern } => (Rule::Pattern, format!("a string matching {pattern:?}")),
        K::Format { format } => (Rule::Format, format!("a string in format {format:?}")),
        K::MultipleOf { .. } => (Rule::MultipleOf, error.to_string()),
        K::UniqueItems => (Rule::UniqueItems, "items that are all different".into()),
        K::Contains => (Rule::Contains, CONTAINS.into()),
        K::Not { schema } => (Rule::Not, format!("a value not matching {schema}")),
        K::OneOfNotValid { .. } => (Rule::OneOf, "a value matching one `oneOf` branch".into()),
        K::OneOfMultipleValid { .. } => (
            Rule::OneOf,
            "a value matching exactly one `oneOf` branch".into(),
        ),
        K::AnyOf { .. } => (Rule::AnyOf, "a value matching an `anyOf` branch".into()),
        K::FalseSchema => (Rule::Schema, "nothing (the schema is `false`)".into()),
        K::PropertyNames { .. } => (Rule::PropertyNames, error.to_string()),
        K::MinProperties { limit } => (Rule::Properties, format!("at least {limit} properties")),
        K::MaxProperties { limit } => (Rule::Properties, format!("at most {limit} properties")),
        K::UnevaluatedItems { .. } | K::UnevaluatedProperties { .. } => {
            (Rule::Unevaluated, error.to_string())
        }
        K::Required { property } => (Rule::Required, format!("property {property}")),
        K::AdditionalProperties { .. } => (Rule::AdditionalProperty, error.to_string()),
        K::Type { .. } => (Rule::Type, error.to_string()),
        K::Enum { .. } | K::Constant { .. } => (Rule::Enum, error.to_string()),
        K::Minimum { .. }
        | K::Maximum { .. }
        | K::ExclusiveMinimum { .. }
        | K::ExclusiveMaximum { .. } => (Rule::Range, error.to_string()),
        K::MinLength { .. } | K::MaxLength { .. } => (Rule::Length, error.to_string()),
        K::MinItems { .. } | K::MaxItems { .. } | K::AdditionalItems { .. } => {
            (Rule::Items, error.to_string())
        }
        _ => (Rule::Schema, error.to_string()),
    };
    Violation {
        path,
        rule,
        expected: capped(expected),
        found: capped(found),
    }
}

/// Every violation of `instance` against `node` that the walk can name, each with its pointer.
/// Covers `type`, `enum`, `const`, the bounds, the lengths, `properties`, `required`,
/// `additionalProperties`, `items`, the item counts, `anyOf`, `allOf`, `format`, `pattern` and
/// local `$ref`s; the rest is left to the validator.
pub(crate) fn explain(node: Node<'_>, instance: &Value) -> Vec<Violation> {
    explain_at(node, instance, &Path::root())
}

/// [`explain`] for a value that sits at `path` in a larger one.
fn explain_at(node: Node<'_>, instance: &Value, path: &Path<'_>) -> Vec<Violation> {
    let mut walk = Explain::new(false);
    walk.budget = walk_budget(instance);
    walk.allowed = walk.budget;
    walk.node(node, instance, path);
    walk.finish(instance, path)
}

/// The violations of `instance`'s own keywords at `node` (its type, enum, counts, `required`,
/// undeclared keys, repeated items, ...), not its members' nor their names (`propertyNames`):
/// for a container whose members were each checked as they completed, so closing it costs its
/// own size, not its whole depth. `node` must not choose among `anyOf` branches (a branch is
/// judged by the whole value). `dropped`: items of a list (members of an object) counted but
/// not held (a stream reader keeping no value), added to its count.
pub(crate) fn explain_own(node: Node<'_>, instance: &Value, dropped: usize) -> Vec<Violation> {
    let mut walk = Explain::new(true);
    walk.dropped = dropped;
    walk.node(node, instance, &Path::root());
    walk.finish(instance, &Path::root())
}

struct Explain {
    out: Vec<Violation>,
    /// Nodes left to visit.
    budget: usize,
    /// Nodes it was allowed to visit.
    allowed: usize,
    /// (schema node, value) pairs being checked, outermost first: meeting one again is a
    /// reference cycle that makes no progress. A stack searched in place, not a hashed set: it
    /// is as deep as the walk (bounded by the node depth limit), and most walks are shallow.
    active: Vec<(usize, usize)>,
    /// Only the value's own keywords: its members are not visited.
    own_only: bool,
    /// The budget ran out with nodes left to visit.
    spent: bool,
    /// Items of the list (members of the object) being judged, own keywords only, not held:
    /// added to its count.
    dropped: usize,
}

impl Explain {
    fn new(own_only: bool) -> Explain {
        Explain {
            out: Vec::new(),
            budget: EXPLAIN_BUDGET,
            allowed: EXPLAIN_BUDGET,
            active: Vec::new(),
            own_only,
            spent: false,
            dropped: 0,
        }
    }

    /// Why `key` is not a name the `propertyNames` schema `names` accepts, as the walk words it:
    /// what was expected and what was found (`None` when the walk finds no reason).
    fn name(&mut self, names: Node<'_>, key: &str, path: &Path<'_>) -> Option<(String, String)> {
        self.node(names, &Value::String(key.to_owned()), path);
        let first = std::mem::take(&mut self.out).into_iter().next()?;
        Some((
            format!("a property name that is {}", first.expected),
            format!("property {}", preview_str(key)),
        ))
    }

    fn push(&mut self, path: &Path<'_>, rule: Rule, expected: String, found: String) {
        if self.out.len() >= MAX_VIOLATIONS {
            // Enough to act on: the walk stops here.
            self.budget = 0;
            return;
        }
        self.out.push(Violation {
            path: path.to_pointer(),
            rule,
            expected: capped(expected),
            found: capped(found),
        });
    }

    /// What the walk found; when its budget ran out before it was done, a last violation says
    /// the rest was not looked at, so the list is never mistaken for the whole story.
    fn finish(mut self, instance: &Value, path: &Path<'_>) -> Vec<Violation> {
        if self.spent && !self.out.is_empty() && self.out.len() < MAX_VIOLATIONS {
            self.out.push(Violation {
                path: path.to_pointer(),
                rule: Rule::Schema,
                expected: format!(
                    "a value the schema accepts (the {} violations above are the first found: explaining stops after {} schema nodes)",
                    self.out.len(),
                    self.allowed
                ),
                found: preview_json(instance),
            });
        }
        self.out
    }

    fn node(&mut self, node: Node<'_>, value: &Value, path: &Path<'_>) {
        let Some(s) = node.map() else { return };
        if node.too_deep() {
            return;
        }
        if self.budget == 0 {
            self.spent = self.out.len() < MAX_VIOLATIONS;
            return;
        }
        self.budget -= 1;
        let key = (
            node.value() as *const Value as usize,
            value as *const Value as usize,
        );
        if self.active.contains(&key) {
            return;
        }
        self.active.push(key);
        self.keywords(node, s, value, path);
        self.active.pop();
    }

    fn keywords(
        &mut self,
        node: Node<'_>,
        s: &serde_json::Map<String, Value>,
        value: &Value,
        path: &Path<'_>,
    ) {
        if let Some(target) = node.reference().and_then(|r| node.lookup(r).ok()) {
            self.node(target, value, path);
        }
        // Every schema of an `allOf` judges the value: its violations are all of theirs.
        for schema in entry(s, "allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.node(node.child(schema), value, path);
        }
        if let Some(branches) = node.any_of() {
            let branches: Vec<Node<'_>> = branches.collect();
            self.any_of(node, &branches, value, path);
        }
        let types = node.types();
        if !types.allows(value) {
            self.push(path, Rule::Type, types.describe(), preview_json(value));
            return;
        }
        if let Some(allowed) = node.enum_values() {
            if !allowed.iter().any(|a| json_eq(a, value)) {
                let shown: Vec<String> = allowed.iter().take(10).map(Value::to_string).collect();
                let mut expected = format!("one of {}", shown.join(", "));
                if allowed.len() > shown.len() {
                    expected.push_str(&format!(" (and {} more)", allowed.len() - shown.len()));
                }
                self.push(path, Rule::Enum, expected, preview_json(value));
            }
        }
        if let Some(c) = entry(s, "const") {
            if !json_eq(c, value) {
                self.push(
                    path,
                    Rule::Enum,
                    format!("exactly {c}"),
                    preview_json(value),
                );
            }
        }
        match value {
            Value::Number(n) => self.number(s, n.as_f64().unwrap_or(f64::NAN), value, path),
            Value::String(text) => self.string(s, text, value, path),
            Value::Array(items) => self.array(node, s, items, path),
            Value::Object(map) => self.object(node, map, path),
            _ => {}
        }
    }

    /// Why no branch took `value` ([`refusal_of_branches`], each branch walked in turn). Only
    /// the best report so far is kept, so a wide `anyOf` costs one branch's report in memory,
    /// however many branches it has.
    fn any_of(&mut self, node: Node<'_>, branches: &[Node<'_>], value: &Value, path: &Path<'_>) {
        let refusal = refusal_of_branches(branches, value, |branch| {
            let mut sub = Explain {
                out: Vec::new(),
                budget: self.budget,
                allowed: self.allowed,
                active: std::mem::take(&mut self.active),
                own_only: false,
                spent: false,
                dropped: 0,
            };
            sub.node(branch, value, path);
            self.budget = sub.budget;
            self.active = sub.active;
            self.spent |= sub.spent;
            // (Empty also where the budget ran out before the walk found anything: then nothing
            // is claimed of the `anyOf`.)
            sub.out
        });
        match refusal {
            Refusal::Taken => {}
            Refusal::Branch(mut violations) => self.out.append(&mut violations),
            Refusal::NoBranch => {
                let (rule, expected) = no_branch(node);
                self.push(path, rule, expected, preview_json(value))
            }
        }
    }

    fn number(
        &mut self,
        s: &serde_json::Map<String, Value>,
        n: f64,
        value: &Value,
        path: &Path<'_>,
    ) {
        if Bounds::of(s).break_by(n) {
            let mut parts = Vec::new();
            if let Some(m) = entry(s, "minimum") {
                parts.push(format!(">= {m}"));
            }
            if let Some(m) = entry(s, "exclusiveMinimum") {
                parts.push(format!("> {m}"));
            }
            if let Some(m) = entry(s, "maximum") {
                parts.push(format!("<= {m}"));
            }
            if let Some(m) = entry(s, "exclusiveMaximum") {
                parts.push(format!("< {m}"));
            }
            let expected = match (entry(s, "minimum"), entry(s, "maximum"), parts.len()) {
                (Some(lo), Some(hi), 2) => format!("a number in [{lo}, {hi}]"),
                _ => format!("a number {}", parts.join(" and ")),
            };
            self.push(path, Rule::Range, expected, preview_json(value));
        }
    }

    fn string(
        &mut self,
        s: &serde_json::Map<String, Value>,
        text: &str,
        value: &Value,
        path: &Path<'_>,
    ) {
        if let Some(format) = entry(s, "format").and_then(Value::as_str) {
            if !in_format(format, text) {
                self.push(
                    path,
                    Rule::Format,
                    format!("a string in format {format:?}"),
                    preview_json(value),
                );
            }
        }
        if let Some(pattern) = entry(s, "pattern").and_then(Value::as_str) {
            if !crate::schema::pattern::pattern_matches(pattern, text) {
                self.push(
                    path,
                    Rule::Pattern,
                    format!("a string matching {pattern:?}"),
                    preview_json(value),
                );
            }
        }
        let chars = || text.chars().count() as u64;
        if let Some((span, len)) = outside(s, "minLength", "maxLength", chars) {
            self.push(
                path,
                Rule::Length,
                format!("a string of {span} characters"),
                format!("{len} characters: {}", preview_json(value)),
            );
        }
    }

    fn array(
        &mut self,
        node: Node<'_>,
        s: &serde_json::Map<String, Value>,
        items: &[Value],
        path: &Path<'_>,
    ) {
        let count = items.len() + if self.own_only { self.dropped } else { 0 };
        if let Some((expected, found)) = item_count(s, count) {
            self.push(path, Rule::Items, expected, found);
        }
        if entry(s, "uniqueItems") == Some(&Value::Bool(true)) {
            if let Some(i) = first_repeat(items) {
                let repeat = items.get(i).map(repeat_of).unwrap_or_default();
                self.push(&path.index(i), Rule::UniqueItems, repeat.0, repeat.1);
            }
        }
        for (i, item) in items.iter().enumerate() {
            if self.own_only {
                break;
            }
            if let Some(item_schema) = node.item(i) {
                self.node(item_schema, item, &path.index(i));
            }
        }
    }

    fn object(&mut self, node: Node<'_>, map: &serde_json::Map<String, Value>, path: &Path<'_>) {
        let count = map.len() + if self.own_only { self.dropped } else { 0 };
        if let Some((expected, found)) = node.map().and_then(|k| property_count(k, count)) {
            self.push(path, Rule::Properties, expected, found);
        }
        // (Its own keywords only: each member's name was judged as the member completed.)
        let names = node.get("propertyNames").filter(|_| !self.own_only);
        if let Some(names) = names.map(|n| node.child(n)) {
            for key in map.keys() {
                let mut sub = Explain::new(false);
                sub.budget = self.budget;
                let found = sub.name(names, key, path);
                self.budget = sub.budget;
                self.spent |= sub.spent;
                if let Some((expected, found)) = found {
                    self.push(&path.key(key), Rule::PropertyNames, expected, found);
                }
            }
        }
        for name in node.required() {
            if entry(map, name).is_none() {
                let at = path.key(name);
                self.push(
                    &at,
                    Rule::Required,
                    format!("property `{name}`"),
                    "nothing".into(),
                );
            }
        }
        // Each member by its declared property, every `patternProperties` schema whose
        // pattern matches its name (matched as the validator matches), and by
        // `additionalProperties` when neither names it.
        let patterned = node.has("patternProperties");
        let additional = node.additional();
        // Named once per object, and only the first few: the list is the same for every key.
        let mut declared: Option<String> = None;
        for (key, item) in map {
            let path = &path.key(key);
            let mut matched = false;
            let matching = patterned.then(|| node.patterns_matching(key));
            for schema in matching.into_iter().flatten() {
                matched = true;
                if !self.own_only {
                    self.node(schema, item, path);
                }
            }
            match node.property(key) {
                Some(_) if self.own_only => {}
                Some(sub) => self.node(sub, item, path),
                None if matched => {}
                None => match additional {
                    Additional::Allowed(false) => {
                        let expected = declared.get_or_insert_with(|| only_declared(node));
                        let expected = expected.clone();
                        self.push(
                            path,
                            Rule::AdditionalProperty,
                            expected,
                            undeclared_found(key),
                        );
                    }
                    Additional::Schema(_) if self.own_only => {}
                    Additional::Schema(sub) => self.node(sub, item, path),
                    _ => {}
                },
            }
        }
    }
}

/// What an object at `node` allowing no member it does not declare expected: its declared names,
/// the first ten.
fn only_declared(node: Node<'_>) -> String {
    let total = node.properties().count();
    let shown: Vec<String> = node
        .properties()
        .take(10)
        .map(|(k, _)| format!("`{k}`"))
        .collect();
    let more = total - shown.len();
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("only the declared properties ({}{more})", shown.join(", "))
}

/// What was found: member `key`, which the object does not declare.
fn undeclared_found(key: &str) -> String {
    format!("property {}", preview_str(key))
}

/// What an `anyOf` (or `oneOf`, [`Node::any_of`]) says of a value, from its branches' reports.
pub(crate) enum Refusal {
    /// A branch takes the value.
    Taken,
    /// The report of the branch that explains the refusal.
    Branch(Vec<Violation>),
    /// No branch explains it: the `anyOf`'s one violation ([`no_branch`]).
    NoBranch,
}

/// Why no branch of `branches` takes `value`, each branch's own report asked in order (`report`;
/// an empty one: that branch takes the value, and no other is asked): the report of the branch
/// the value names by its tag ([`Node::tagged_for`]), else of the one branch taking its kind of
/// value, else (untagged) of the closest such branch, the others counted in its words;
/// otherwise none explains it. Of an object, `value` may hold only its members some branch
/// declares, each container empty: nothing else is looked at here.
pub(crate) fn refusal_of_branches<'n>(
    branches: &[Node<'n>],
    value: &Value,
    mut report: impl FnMut(Node<'n>) -> Vec<Violation>,
) -> Refusal {
    let tagged = Node::has_tags(branches);
    let mut named: Option<Vec<Violation>> = None;
    let mut same_type = 0usize;
    let mut closest: Option<Vec<Violation>> = None;
    for branch in branches {
        let out = report(*branch);
        if out.is_empty() {
            return Refusal::Taken;
        }
        if named.is_none() && branch.tagged_for(value) {
            named = Some(out);
            continue;
        }
        if branch.target().types().allows(value) {
            same_type += 1;
            if closest.as_ref().is_none_or(|c| out.len() < c.len()) {
                closest = Some(out);
            }
        }
    }
    let among_several = named.is_none() && same_type > 1;
    let pick = match (named, same_type, closest) {
        (Some(named), _, _) => Some(named),
        (None, 1, closest) => closest,
        (None, n, closest) if n > 1 && !tagged => closest,
        _ => None,
    };
    match pick {
        Some(mut violations) => {
            if among_several {
                // The closest of several: the others are counted, not explained.
                for v in &mut violations {
                    v.expected = capped(format!(
                        "{} (the closest of {} branches that take this kind of value)",
                        v.expected, same_type
                    ));
                }
            }
            Refusal::Branch(violations)
        }
        None => Refusal::NoBranch,
    }
}

/// What the `anyOf` (or `oneOf`, [`Node::any_of`]) at `node` reports of a value no branch takes
/// and none names: its rule, and what it expected.
pub(crate) fn no_branch(node: Node<'_>) -> (Rule, String) {
    let (keyword, branches) = node.branches().unwrap_or(("anyOf", &[]));
    let rule = match keyword {
        "oneOf" => Rule::OneOf,
        _ => Rule::AnyOf,
    };
    (
        rule,
        format!("a value matching one of {} schemas", branches.len()),
    )
}

/// What a violation of `additionalProperties: false` at `node` says of member `key`: what was
/// expected and what was found.
pub(crate) fn undeclared_member(node: Node<'_>, key: &str) -> (String, String) {
    (only_declared(node), undeclared_found(key))
}

/// What a `uniqueItems` violation says of `item`, a repeat of an earlier one: what was expected
/// and what was found.
pub(crate) fn repeat_of(item: &Value) -> (String, String) {
    (
        "items that are all different".into(),
        format!("a repeat of an earlier item: {}", preview_json(item)),
    )
}

/// The index of the first item equal (as JSON Schema compares: `1` and `1.0` alike, keys in any
/// order) to an earlier one. Each item is written once in a canonical form: linear in the array.
fn first_repeat(items: &[Value]) -> Option<usize> {
    let mut seen = HashSet::with_capacity(items.len());
    items
        .iter()
        .position(|item| !seen.insert(canonical(item, 0)))
}

/// `value` written with sorted keys and numbers by their value: two items are repeats for
/// `uniqueItems` when these are equal.
pub(crate) fn canonical(value: &Value, depth: usize) -> String {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.is_finite() => format!("{f:?}"),
            _ => n.to_string(),
        },
        Value::Array(items) if depth < crate::schema::node::MAX_DEPTH => {
            let parts: Vec<String> = items.iter().map(|v| canonical(v, depth + 1)).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) if depth < crate::schema::node::MAX_DEPTH => {
            let mut parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), canonical(v, depth + 1)))
                .collect();
            parts.sort_unstable();
            format!("{{{}}}", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// A length or count keyword: a non-negative integer, written `2` or `2.0`.
/// When `count` items break the item counts of the node `s` (`minItems`, `maxItems`): what was
/// expected and what was found, in the walk's words.
/// When `count` members break the property counts of the node `s` (`minProperties`,
/// `maxProperties`): what was expected and what was found.
pub(crate) fn property_count(
    s: &serde_json::Map<String, Value>,
    count: usize,
) -> Option<(String, String)> {
    outside(s, "minProperties", "maxProperties", || count as u64)
        .map(|(span, len)| (format!("{span} entries"), format!("{len} entries")))
}

/// Why member `key` of an object is refused by its `propertyNames` (at `names`), in the walk's
/// words, at `path` (the member's); `None` when the walk finds no reason.
pub(crate) fn name_violation(names: Node<'_>, key: &str, path: &Path<'_>) -> Option<Violation> {
    let (expected, found) = Explain::new(false).name(names, key, path)?;
    Some(Violation {
        path: path.to_pointer(),
        rule: Rule::PropertyNames,
        expected: capped(expected),
        found: capped(found),
    })
}

pub(crate) fn item_count(
    s: &serde_json::Map<String, Value>,
    count: usize,
) -> Option<(String, String)> {
    outside(s, "minItems", "maxItems", || count as u64)
        .map(|(span, len)| (format!("{span} items"), format!("{len} items")))
}

/// The fragment of a URI that names `pointer` (its segments percent-encoded where a URI needs it).
fn fragment(pointer: &Pointer) -> String {
    let mut out = String::with_capacity(pointer.as_str().len());
    for byte in pointer.as_str().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'~' | b'-' | b'.' | b'_' => {
                out.push(char::from(byte))
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// When a count breaks the bounds `min_key` / `max_key` of the node `s`: the span allowed
/// (`"2 to 5"`, `"0 to any number of"`) and the count. The count is taken only when there is
/// a bound.
fn outside(
    s: &serde_json::Map<String, Value>,
    min_key: &str,
    max_key: &str,
    count: impl FnOnce() -> u64,
) -> Option<(String, u64)> {
    let min = entry(s, min_key).and_then(as_count);
    let max = entry(s, max_key).and_then(as_count);
    if min.is_none() && max.is_none() {
        return None;
    }
    let n = count();
    let broken = min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m);
    broken.then(|| {
        let max = max.map_or("any number of".to_owned(), |m| m.to_string());
        (format!("{} to {max}", min.unwrap_or(0)), n)
    })
}

fn as_count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
            .map(|f| f as u64)
    })
}

/// A number's bounds at a node (`minimum`, `maximum` and their exclusive forms).
#[derive(Clone, Copy)]
struct Bounds {
    min: Option<f64>,
    max: Option<f64>,
    xmin: Option<f64>,
    xmax: Option<f64>,
}

impl Bounds {
    fn of(s: &serde_json::Map<String, Value>) -> Bounds {
        let bound = |k: &str| entry(s, k).and_then(Value::as_f64);
        Bounds {
            min: bound("minimum"),
            max: bound("maximum"),
            xmin: bound("exclusiveMinimum"),
            xmax: bound("exclusiveMaximum"),
        }
    }

    /// Whether `n` is out of them.
    fn break_by(self, n: f64) -> bool {
        self.min.is_some_and(|m| n < m)
            || self.max.is_some_and(|m| n > m)
            || self.xmin.is_some_and(|m| n <= m)
            || self.xmax.is_some_and(|m| n >= m)
    }
}

/// What a scalar is held to at a node whose rules are its `type`, an `enum` and a number's
/// bounds alone (every other keyword an annotation, no reference of its own): worked out once
/// per node, so a scalar that keeps them passes without [`explain`]'s walk, which finds
/// nothing there; one that breaks them is walked as before, for its report. A node asserting
/// anything else has none.
#[derive(Clone, Copy)]
pub(crate) struct ScalarRules<'s> {
    types: Types,
    allowed: Option<&'s [Value]>,
    bounds: Bounds,
}

impl<'s> ScalarRules<'s> {
    pub(crate) fn of(node: Node<'s>) -> Option<ScalarRules<'s>> {
        if node.map().is_none_or(|own| own.contains_key("$ref")) {
            return None;
        }
        let target = node.target();
        let keywords = target.map()?;
        let simple = keywords.keys().all(|k| {
            matches!(
                k.as_str(),
                "type" | "enum" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
            ) || asserts_nothing(k)
        });
        simple.then(|| ScalarRules {
            types: target.types(),
            allowed: target.enum_values(),
            bounds: Bounds::of(keywords),
        })
    }

    /// Whether `value` (a scalar) keeps every rule: [`explain`] at the node finds nothing.
    pub(crate) fn kept_by(&self, value: &Value) -> bool {
        self.types.allows(value)
            && self
                .allowed
                .is_none_or(|allowed| allowed.iter().any(|a| json_eq(a, value)))
            && match value {
                Value::Number(n) => !self.bounds.break_by(n.as_f64().unwrap_or(f64::NAN)),
                _ => true,
            }
    }
}

/// JSON equality where `1` equals `1.0`, as JSON Schema compares numbers.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A scalar passed by [`ScalarRules`] is one [`explain`] finds nothing in, and one it does
    /// not pass is one it finds something in: for every combination of a type, an enum and
    /// bounds (alone, with an annotation, or as an `allOf` of one), against scalars on and
    /// around each bound.
    #[test]
    fn scalar_rules_pass_what_the_walk_passes() {
        let types = [
            None,
            Some(json!("number")),
            Some(json!("integer")),
            Some(json!("string")),
            Some(json!(["string", "null"])),
            Some(json!("boolean")),
        ];
        let enums = [
            None,
            Some(json!(["a", "b"])),
            Some(json!([1, 2.5, null])),
            Some(json!([true])),
        ];
        let bounds = [
            json!({}),
            json!({"minimum": 0}),
            json!({"maximum": 1}),
            json!({"exclusiveMinimum": 0}),
            json!({"exclusiveMaximum": 1.0}),
            json!({"minimum": 0, "maximum": 1, "description": "a share"}),
        ];
        let values = [
            json!(0),
            json!(1),
            json!(0.5),
            json!(-1),
            json!(2),
            json!(1.0),
            json!(2.5),
            json!(-0.0),
            json!(1e308),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("a"),
            json!("c"),
            json!(null),
            json!(true),
            json!(false),
        ];
        let mut checked = 0;
        for t in &types {
            for e in &enums {
                for b in &bounds {
                    let mut schema = b.clone();
                    if let Some(t) = t {
                        schema["type"] = t.clone();
                    }
                    if let Some(e) = e {
                        schema["enum"] = e.clone();
                    }
                    for schema in [schema.clone(), json!({"allOf": [schema]})] {
                        let node = Node::root(&schema);
                        let rules = ScalarRules::of(node).expect("a type, an enum and bounds");
                        for v in &values {
                            let walked = explain(node, v).is_empty();
                            assert_eq!(rules.kept_by(v), walked, "{schema} {v}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 6 * 4 * 6 * 2 * 16);
        // Anything else asserted: no rules, the walk judges.
        for schema in [
            json!({"type": "string", "pattern": "^a"}),
            json!({"const": 1}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "integer"}}}),
            json!({"allOf": [{"type": "integer"}, {"minimum": 0}]}),
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
            json!({"type": "string", "maxLength": 3}),
        ] {
            assert!(ScalarRules::of(Node::root(&schema)).is_none(), "{schema}");
        }
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "level": {"type": "number", "minimum": 0.0, "maximum": 1.0},
                "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
                "count": {"type": "integer", "minimum": 0}
            },
            "required": ["level", "kind", "items", "count"],
            "additionalProperties": false,
            "$defs": {"item": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}}
        })
    }

    fn report(instance: Value) -> Vec<(String, Rule, String, String)> {
        explain(Node::root(&schema()), &instance)
            .into_iter()
            .map(|v| (v.path.as_str().to_owned(), v.rule, v.expected, v.found))
            .collect()
    }

    #[test]
    fn valid_value_has_no_violation() {
        assert_eq!(
            report(json!({"level": 0.5, "kind": null, "items": [{"n": 2.0}], "count": 3})),
            vec![]
        );
    }

    #[test]
    fn every_violation_is_reported_in_document_order() {
        let found = report(
            json!({"level": 1.5, "kind": "c", "items": [{"n": 1}, {"m": 1}, 7], "extra": 1}),
        );
        let s = |x: &str| x.to_owned();
        assert_eq!(
            found,
            vec![
                (
                    s("/count"),
                    Rule::Required,
                    s("property `count`"),
                    s("nothing")
                ),
                (
                    s("/level"),
                    Rule::Range,
                    s("a number in [0.0, 1.0]"),
                    s("1.5")
                ),
                (
                    s("/kind"),
                    Rule::Enum,
                    s("one of \"a\", \"b\", null"),
                    s("\"c\"")
                ),
                (
                    s("/items/1/n"),
                    Rule::Required,
                    s("property `n`"),
                    s("nothing")
                ),
                (
                    s("/items/1/m"),
                    Rule::AdditionalProperty,
                    s("only the declared properties (`n`)"),
                    s("property \"m\"")
                ),
                (s("/items/2"), Rule::Type, s("an object"), s("7")),
                (
                    s("/extra"),
                    Rule::AdditionalProperty,
                    s("only the declared properties (`level`, `kind`, `items`, `count`)"),
                    s("property \"extra\"")
                ),
            ]
        );
    }

    #[test]
    fn a_violation_the_walk_cannot_word_is_kept_below_one_it_words() {
        // The walk refuses the map's count; the validator alone judges `multipleOf` in a member.
        // Both are in the report (the member's was dropped before, as lying inside the map).
        let schema = json!({"type": "object", "properties": {"m": {
            "type": "object",
            "additionalProperties": {"type": "integer", "multipleOf": 2},
            "minProperties": 3
        }}});
        let compiled = Compiled::new(&schema).unwrap();
        let found = |instance: Value| {
            let mut found: Vec<(String, String)> = compiled
                .check(&schema, &instance)
                .unwrap_err()
                .0
                .into_iter()
                .map(|v| (v.path.as_str().to_owned(), format!("{:?}", v.rule)))
                .collect();
            found.sort();
            found
        };
        assert_eq!(
            found(json!({"m": {"a": 3, "b": 4}})),
            vec![
                ("/m".to_owned(), "Properties".to_owned()),
                ("/m/a".to_owned(), "MultipleOf".to_owned())
            ]
        );
        // What the walk says is not said twice: the count once, a member refused by its type
        // once.
        assert_eq!(
            found(json!({"m": {"a": "x"}})),
            vec![
                ("/m".to_owned(), "Properties".to_owned()),
                ("/m/a".to_owned(), "Type".to_owned())
            ]
        );
        // A `required` member the walk names, the validator names at the object: once.
        let schema = json!({"properties": {"o": {"required": ["k"], "not": {"const": {}}}}});
        let compiled = Compiled::new(&schema).unwrap();
        let refused = compiled
            .check(&schema, &json!({"o": {"j": 1}}))
            .unwrap_err()
            .0;
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(
            (refused[0].path.as_str(), refused[0].rule),
            ("/o/k", Rule::Required)
        );
    }

    #[test]
    fn nullable_any_of_reports_the_inner_violation() {
        let schema = json!({"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"], "additionalProperties": false}, {"type": "null"}]});
        let out = explain(Node::root(&schema), &json!({"x": 1}));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].path.as_str(), out[0].rule), ("/x", Rule::Type));
        let out = explain(Node::root(&schema), &json!(true));
        assert_eq!(out[0].rule, Rule::AnyOf);
        assert!(explain(Node::root(&schema), &Value::Null).is_empty());
    }

    #[test]
    fn branches_that_refer_to_themselves_stop_at_the_cycle() {
        let schema = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}], "type": "string"});
        let out = explain(Node::root(&schema), &json!(1));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].rule, Rule::Type);
    }

    /// Sixty definitions, each an `anyOf` of the next one twice: 2^60 paths to the last. The
    /// walk's budget ends the explanation long before, and what it found is kept.
    #[test]
    fn exponentially_many_paths_are_cut_by_the_budget() {
        let mut defs = serde_json::Map::new();
        for i in 0..60 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d60".into(), json!({"type": "string"}));
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}, "b": {"type": "integer"}},
            "$defs": defs});
        let out = explain(Node::root(&schema), &json!({"b": "x", "a": 1}));
        assert!(out.iter().any(|v| v.path == "/b"), "{out:?}");
    }

    /// An answer longer than the least budget, under an untagged `anyOf`: every branch is walked
    /// to its end, so the report is the closest branch's, as for a short answer. (Before, the
    /// first branch spent the budget, the second was taken as accepting the value, and the walk
    /// said nothing: the validator's error list was asked for instead, which holds a copy of the
    /// value for each branch's error, 1.1 GB for a 9.9 MB answer through `structured check`.)
    #[test]
    fn a_long_answer_is_walked_to_its_end_against_every_branch() {
        let closed = |properties: Value, required: Value| {
            json!({"type": "object", "properties": properties,
                "required": required, "additionalProperties": false})
        };
        let ints = json!({"type": "array", "items": {"type": "integer", "minimum": 0}});
        let schema = json!({"anyOf": [
            closed(json!({"rows": ints, "title": {"type": "string"}}), json!(["rows", "title"])),
            closed(json!({"rows": ints, "count": {"type": "integer"}}), json!(["rows", "count"]))
        ]});
        let mut rows = vec![json!(1); EXPLAIN_BUDGET + 10];
        rows[3] = json!(-1);
        let out = explain(Node::root(&schema), &json!({"rows": rows, "title": "t"}));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].path, "/rows/3");
        assert!(out[0].expected.contains("the closest of 2"), "{out:?}");
        assert!(explain(Node::root(&schema), &json!({"rows": [1, 2], "title": "t"})).is_empty());
    }

    #[test]
    fn self_referencing_schema_terminates() {
        let schema = json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(explain(Node::root(&schema), &json!(1)).is_empty());
    }
}
