//! One read-only view of a JSON Schema node, used by everything that reads a schema as data: the
//! strict preflight, the keyword check at construction, the explanation of a refusal, coercion,
//! prompt guidance and the lowering to each provider's dialect.
//!
//! A [`Node`] is a sub-schema together with the document it belongs to (so a local `$ref`
//! resolves, through [`Node::resolve`] and nothing else) and its depth. Every step down — a child
//! or a `$ref` hop — adds one to the depth, and no walk goes deeper than [`MAX_DEPTH`]: a schema
//! built in code, or one that refers to itself, cannot run a walk off the stack or forever.

use serde_json::{Map, Value};

use super::pointer::Pointer;

/// The member `name` of `map`. A schema's node holds a few keywords, and an object a few
/// members: those are compared name by name (most differ in length, a one-word check), which
/// costs a fraction of hashing the name; a larger map is looked up by its hash.
pub(crate) fn entry<'m>(map: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
    if map.len() > SCANNED_ENTRIES {
        return map.get(name);
    }
    map.iter()
        .find(|(key, _)| key.len() == name.len() && key.as_bytes() == name.as_bytes())
        .map(|(_, value)| value)
}

/// The most entries [`entry`] compares one by one.
const SCANNED_ENTRIES: usize = 16;

/// Whether `keyword` is an extension annotation (`x-` and a name, as OpenAPI and code generators
/// write them), or OpenAPI's `discriminator` (which a schema is admitted with only where its
/// branches already say what it says): kept in the schema, ignored by validation, never sent
/// to a provider.
pub fn is_annotation(keyword: &str) -> bool {
    (keyword.len() > 2 && keyword.starts_with("x-")) || keyword == "discriminator"
}

/// Keywords that say nothing of a value: the drafts' meta-data, and `$comment`.
const META_DATA: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Whether `keyword` asserts nothing about a value: meta-data ([`META_DATA`]) or an extension
/// annotation ([`is_annotation`]). The one list every reader of schemas asks.
pub(crate) fn asserts_nothing(keyword: &str) -> bool {
    META_DATA.contains(&keyword) || is_annotation(keyword)
}

/// Steps (children and `$ref` hops) a walk takes from the root at most. Deeper than any answer
/// `serde_json` reads (128 levels) needs once `anyOf` and `$ref` hops are counted, and far less
/// than a thread's stack allows.
pub const MAX_DEPTH: usize = 192;

/// A JSON type a `type` keyword can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `null`
    Null,
    /// `boolean`
    Boolean,
    /// `integer`: a number with no fractional part.
    Integer,
    /// `number`
    Number,
    /// `string`
    String,
    /// `array`
    Array,
    /// `object`
    Object,
}

impl JsonType {
    /// The keyword's spelling.
    pub fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// The type a name spells, if any.
    pub fn from_name(name: &str) -> Option<JsonType> {
        Some(match name {
            "null" => JsonType::Null,
            "boolean" => JsonType::Boolean,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "string" => JsonType::String,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            _ => return None,
        })
    }

    /// Whether `value` is of this type, as JSON Schema counts (`1.0` is an integer).
    pub fn matches(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::Null, Value::Null)
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::String, Value::String(_))
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Object, Value::Object(_)) => true,
            (JsonType::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }

    /// The name with its article, as messages write it: `an integer`, `a string`, `null`.
    pub fn describe(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "a boolean",
            JsonType::Integer => "an integer",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        }
    }
}

/// What a node's `type` keyword says, in the order written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Types {
    list: [Option<JsonType>; 7],
    len: usize,
    declared: bool,
    malformed: bool,
}

impl Types {
    fn read(keyword: Option<&Value>) -> Types {
        let mut out = Types::default();
        let Some(keyword) = keyword else { return out };
        out.declared = true;
        let mut add = |name: Option<&str>| match name.and_then(JsonType::from_name) {
            Some(t) if !out.contains(t) => {
                if let Some(slot) = out.list.get_mut(out.len) {
                    *slot = Some(t);
                    out.len += 1;
                }
            }
            Some(_) => {}
            None => out.malformed = true,
        };
        match keyword {
            Value::String(name) => add(Some(name)),
            Value::Array(names) if !names.is_empty() => names.iter().for_each(|n| add(n.as_str())),
            _ => add(None),
        }
        out
    }

    /// Whether the keyword is present.
    pub fn declared(&self) -> bool {
        self.declared
    }

    /// Whether the keyword holds something other than type names (then they are ignored).
    pub fn malformed(&self) -> bool {
        self.malformed
    }

    /// Whether `t` is listed.
    pub fn contains(&self, t: JsonType) -> bool {
        self.iter().any(|x| x == t)
    }

    /// The listed types, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = JsonType> + '_ {
        self.list.iter().take(self.len).flatten().copied()
    }

    /// How many types are listed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No type listed (the keyword is absent or malformed): anything goes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Exactly `t` and nothing else.
    pub fn is_only(&self, t: JsonType) -> bool {
        self.len == 1 && self.contains(t)
    }

    /// Whether `value` has one of the listed types (any value when none is listed).
    pub fn allows(&self, value: &Value) -> bool {
        self.is_empty() || self.iter().any(|t| t.matches(value))
    }

    /// In words: `an integer or null`.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.iter().map(JsonType::describe).collect();
        names.join(" or ")
    }
}

/// A `$ref` the view cannot follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefError {
    /// Not `#` or a `#/...` pointer (a remote document, an anchor), or not a string.
    NotLocal,
    /// A local pointer that names nothing in the document.
    Unresolved,
    /// The walk is already [`MAX_DEPTH`] steps deep (a reference cycle ends here).
    TooDeep,
}

/// What `additionalProperties` says.
#[derive(Debug, Clone, Copy)]
pub enum Additional<'s> {
    /// Not given: any other property is allowed.
    Absent,
    /// `true` or `false`.
    Allowed(bool),
    /// A schema every other property must match.
    Schema(Node<'s>),
}

/// A sub-schema of a node, and where it sits: `keyword`, then a name or an index when the
/// keyword holds several (`properties/name`, `anyOf/2`).
#[derive(Debug, Clone, Copy)]
pub struct Child<'s> {
    /// The keyword holding it.
    pub keyword: &'s str,
    /// The property or definition name, for keywords that map names to schemas.
    pub name: Option<&'s str>,
    /// The position, for keywords that list schemas.
    pub index: Option<usize>,
    /// The sub-schema.
    pub node: Node<'s>,
}

impl Child<'_> {
    /// Appends this child's place to `pointer` (the pointer of its parent).
    pub fn push_to(&self, pointer: &mut Pointer) {
        pointer.push(self.keyword);
        if let Some(name) = self.name {
            pointer.push(name);
        }
        if let Some(i) = self.index {
            pointer.push_index(i);
        }
    }

    /// How many segments [`Child::push_to`] appends.
    pub fn segments(&self) -> usize {
        1 + usize::from(self.name.is_some()) + usize::from(self.index.is_some())
    }
}

/// How a keyword holds sub-schemas: the one list every walk of a schema reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// One schema (`items`, `not`, `additionalProperties`, ...).
    One,
    /// Names mapped to schemas (`properties`, `$defs`, ...).
    Named,
    /// A list of schemas (`anyOf`, `prefixItems`, an old draft's `items` array).
    Listed,
}

/// What `keyword` holds when its value is `value`: sub-schemas, or (`None`) data (an `enum`, a
/// `default`, `required`). The only list of sub-schema keywords: the read-only walk
/// ([`Node::children`]) and the rewriting one ([`for_each_child_mut`]) both read it.
pub fn holds(keyword: &str, value: &Value) -> Option<Holds> {
    match keyword {
        "additionalProperties"
        | "propertyNames"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "additionalItems"
        | "contains"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contentSchema" => (value.is_object() || value.is_boolean()).then_some(Holds::One),
        "items" if value.is_array() => Some(Holds::Listed),
        "items" => (value.is_object() || value.is_boolean()).then_some(Holds::One),
        // `dependencies` maps a name to a schema or to a list of names; the lists are skipped
        // where the members are read.
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        | "dependencies" => value.is_object().then_some(Holds::Named),
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => value.is_array().then_some(Holds::Listed),
        _ => None,
    }
}

/// Whether a member of a [`Holds::Named`] keyword is a schema (a `dependencies` list of names is
/// not).
fn named_schema(keyword: &str, member: &Value) -> bool {
    !(keyword == "dependencies" && member.is_array())
}

/// Applies `f` to every sub-schema of a node being rewritten in place, with each one's pointer
/// (`path` is the node's), in the order the keywords are written: the rewriting twin of
/// [`Node::children`], over the same list ([`holds`]). What `f` does below is its own; every
/// rewriting walk bounds its depth by [`MAX_DEPTH`] as the read-only one does.
pub fn for_each_child_mut(
    map: &mut Map<String, Value>,
    path: &Pointer,
    f: &mut dyn FnMut(&mut Value, &Pointer),
) {
    for (keyword, value) in map.iter_mut() {
        let Some(holds) = holds(keyword, value) else {
            continue;
        };
        let at = path.key(keyword);
        match (holds, value) {
            (Holds::One, child) => f(child, &at),
            (Holds::Named, Value::Object(children)) => {
                for (name, child) in children.iter_mut() {
                    if named_schema(keyword, child) {
                        f(child, &at.key(name));
                    }
                }
            }
            (Holds::Listed, Value::Array(children)) => {
                for (i, child) in children.iter_mut().enumerate() {
                    f(child, &at.index(i));
                }
            }
            _ => {}
        }
    }
}

/// A schema node, with the document it belongs to and its depth.
#[derive(Debug, Clone, Copy)]
pub struct Node<'s> {
    root: &'s Value,
    value: &'s Value,
    depth: usize,
}

impl<'s> Node<'s> {
    /// The root node of a schema document.
    pub fn root(document: &'s Value) -> Node<'s> {
        Node {
            root: document,
            value: document,
            depth: 0,
        }
    }

    /// The node's JSON (an object, or `true`/`false`).
    pub fn value(self) -> &'s Value {
        self.value
    }

    /// Steps taken from the root to get here.
    pub fn depth(self) -> usize {
        self.depth
    }

    /// Deeper than a walk may go: the walker stops here.
    pub fn too_deep(self) -> bool {
        self.depth > MAX_DEPTH
    }

    /// The node's keywords; `None` for a boolean schema (or a value that is not a schema).
    pub fn map(self) -> Option<&'s Map<String, Value>> {
        self.value.as_object()
    }

    /// A keyword's value.
    pub fn get(self, keyword: &str) -> Option<&'s Value> {
        entry(self.map()?, keyword)
    }

    /// Whether the node has `keyword`.
    pub fn has(self, keyword: &str) -> bool {
        self.get(keyword).is_some()
    }

    /// What `type` says.
    pub fn types(self) -> Types {
        Types::read(self.get("type"))
    }

    /// A node one step below this one (for a sub-schema the caller found itself).
    pub fn child(self, value: &'s Value) -> Node<'s> {
        Node {
            root: self.root,
            value,
            depth: self.depth + 1,
        }
    }

    /// The node a reference names in this document: `#` or a `#/...` pointer. One step deeper.
    pub fn lookup(self, reference: &str) -> Result<Node<'s>, RefError> {
        if self.depth >= MAX_DEPTH {
            return Err(RefError::TooDeep);
        }
        let pointer = Pointer::from_fragment(reference).ok_or(RefError::NotLocal)?;
        let target = pointer.get(self.root).ok_or(RefError::Unresolved)?;
        Ok(self.child(target))
    }

    /// The `$ref` string, if the node has one.
    pub fn reference(self) -> Option<&'s str> {
        self.get("$ref").and_then(Value::as_str)
    }

    /// The node that says what the value is: `$ref`s followed, and each `allOf` of one schema
    /// beside nothing that asserts (`{"allOf": [{"$ref": ..}], "description": ..}`, as code
    /// generators wrap a reference), to a node that is neither. Any other node is itself.
    /// Cycles stop at [`MAX_DEPTH`].
    pub fn resolve(self) -> Result<Node<'s>, RefError> {
        let mut node = self;
        while let Some(next) = node.step() {
            node = next?;
        }
        Ok(node)
    }

    /// One step of [`Node::resolve`]: the node this one's `$ref` names, or its `allOf`'s one
    /// schema; `None` when it is neither.
    fn step(self) -> Option<Result<Node<'s>, RefError>> {
        if let Some(reference) = self.get("$ref") {
            let reference = reference.as_str().ok_or(RefError::NotLocal);
            return Some(reference.and_then(|r| self.lookup(r)));
        }
        let only = self.sole_all_of()?;
        Some(if self.depth >= MAX_DEPTH {
            Err(RefError::TooDeep)
        } else {
            Ok(self.child(only))
        })
    }

    /// The one schema of an `allOf` of one, when nothing beside it asserts (the document's
    /// definitions and draft may be there): the node says exactly what that schema says.
    pub fn sole_all_of(self) -> Option<&'s Value> {
        let [only] = self.get("allOf")?.as_array()?.as_slice() else {
            return None;
        };
        self.alone("allOf").then_some(only)
    }

    /// Whether nothing beside `keyword` in this node asserts anything: its other keywords are
    /// words about the value, or the document's definitions and draft.
    pub fn alone(self, keyword: &str) -> bool {
        self.map().is_some_and(|map| {
            map.keys().all(|k| {
                k == keyword
                    || matches!(k.as_str(), "$defs" | "definitions" | "$schema")
                    || asserts_nothing(k)
            })
        })
    }

    /// This node and each one its `$ref`s (and `allOf`s of one schema) lead to, down to its
    /// [`Node::target`]: every node whose keywords judge a value here (a reference's siblings
    /// judge beside its target). Ends where a reference cannot be followed, and at
    /// [`MAX_DEPTH`].
    pub(crate) fn chain(self) -> impl Iterator<Item = Node<'s>> {
        std::iter::successors(Some(self), |node| node.step()?.ok())
    }

    /// [`Node::resolve`], or the node itself when a reference cannot be followed.
    pub fn target(self) -> Node<'s> {
        self.resolve().unwrap_or(self)
    }

    /// The schema of property `name`.
    pub fn property(self, name: &str) -> Option<Node<'s>> {
        let schema = entry(self.get("properties")?.as_object()?, name)?;
        Some(self.child(schema))
    }

    /// Every declared property and its schema, in the order written.
    pub fn properties(self) -> impl Iterator<Item = (&'s str, Node<'s>)> {
        self.get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(move |(name, schema)| (name.as_str(), self.child(schema)))
    }

    /// Every name listed in `required`.
    pub fn required(self) -> impl Iterator<Item = &'s str> {
        self.get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// Whether `required` lists `name`.
    pub fn is_required(self, name: &str) -> bool {
        self.required().any(|r| r == name)
    }

    /// The one schema member `key` of an object here must match beside the object's own
    /// keywords, as far as one says: its declared property's; else the schema of the
    /// `patternProperties` pattern matching `key` (matched as the validator matches it); else,
    /// when no pattern matches, `additionalProperties` as a schema. `None` when none does, or
    /// when several patterns match (no one schema says what the member is).
    pub fn member(self, key: &str) -> Option<Node<'s>> {
        if let Some(declared) = self.property(key) {
            return Some(declared);
        }
        let mut matched = self.patterns_matching(key);
        match (matched.next(), matched.next(), self.additional()) {
            (Some(one), None, _) => Some(one),
            (None, _, Additional::Schema(additional)) => Some(additional),
            _ => None,
        }
    }

    /// The schemas of the `patternProperties` patterns member name `key` matches (matched as
    /// the validator matches), in the order written: each judges that member.
    pub fn patterns_matching<'k>(self, key: &'k str) -> impl Iterator<Item = Node<'s>> + 'k
    where
        's: 'k,
    {
        self.get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(move |(pattern, _)| super::pattern::pattern_matches(pattern, key))
            .map(move |(_, schema)| self.child(schema))
    }

    /// Whether member `key` of an object here is one `additionalProperties` judges: no declared
    /// property names it and no `patternProperties` pattern matches it.
    pub fn is_additional(self, key: &str) -> bool {
        self.property(key).is_none() && self.patterns_matching(key).next().is_none()
    }

    /// What `additionalProperties` says.
    pub fn additional(self) -> Additional<'s> {
        match self.get("additionalProperties") {
            None => Additional::Absent,
            Some(Value::Bool(b)) => Additional::Allowed(*b),
            Some(schema) => Additional::Schema(self.child(schema)),
        }
    }

    /// Whether the node forbids properties it does not declare (`additionalProperties: false`).
    pub fn closed(self) -> bool {
        matches!(self.additional(), Additional::Allowed(false))
    }

    /// The schema every array item must match (`items` as one schema).
    pub fn items(self) -> Option<Node<'s>> {
        match self.get("items")? {
            items @ (Value::Object(_) | Value::Bool(_)) => Some(self.child(items)),
            _ => None,
        }
    }

    /// The schema of the array item at `index`: its `prefixItems` entry (a tuple's position),
    /// else `items`.
    pub fn item(self, index: usize) -> Option<Node<'s>> {
        match self.get("prefixItems").and_then(Value::as_array) {
            Some(prefix) if index < prefix.len() => prefix.get(index).map(|p| self.child(p)),
            _ => self.items(),
        }
    }

    /// The branches a value must match one of: the `anyOf`'s, or the `oneOf`'s when no value
    /// can match two of them ([`Node::exclusive`]: then `oneOf` says what `anyOf` would, as
    /// schemas written for enums with data use it).
    pub fn any_of(self) -> Option<impl Iterator<Item = Node<'s>>> {
        let (_, branches) = self.branches()?;
        Some(branches.iter().map(move |b| self.child(b)))
    }

    /// The keyword [`Node::any_of`]'s branches are listed under (`anyOf` or `oneOf`), and the
    /// list.
    pub fn branches(self) -> Option<(&'static str, &'s [Value])> {
        match self.get("anyOf") {
            Some(any) => Some(("anyOf", any.as_array()?.as_slice())),
            None => {
                let one = self.get("oneOf")?.as_array()?;
                Node::exclusive(one.iter().map(|b| self.child(b))).then_some(("oneOf", one))
            }
        }
    }

    /// Whether no value can match two of `branches`: each declares its `type` (references
    /// followed), no two take one kind of scalar (an integer is a number), at most one takes
    /// lists, and at most one takes objects or each of those names its variant
    /// ([`Node::names_variants`]).
    pub fn exclusive(branches: impl Iterator<Item = Node<'s>>) -> bool {
        let mut taken: Vec<JsonType> = Vec::new();
        let mut objects = Vec::new();
        for branch in branches {
            let target = branch.target();
            let types = target.types();
            if !types.declared() || types.malformed() {
                return false;
            }
            let mut kinds: Vec<JsonType> = types
                .iter()
                .filter(|t| *t != JsonType::Object)
                .map(|t| match t {
                    JsonType::Integer => JsonType::Number,
                    t => t,
                })
                .collect();
            kinds.sort_unstable_by_key(|t| t.name());
            kinds.dedup();
            if kinds.iter().any(|k| taken.contains(k)) {
                return false;
            }
            taken.extend(kinds);
            if types.contains(JsonType::Object) {
                objects.push(target);
            }
        }
        objects.len() <= 1 || Node::names_variants(&objects)
    }

    /// Whether the object branches `objects` (two or more) each name their variant, so no object
    /// is named by two that could both take it: each allows only objects and no
    /// `patternProperties`, and either each requires one property allowing one string, the same
    /// property with a different string in each (a tag), or each allows exactly one key,
    /// required, a different one in each.
    pub fn names_variants(objects: &[Node<'s>]) -> bool {
        let (mut tag, mut by_key) = (None::<&str>, false);
        let mut named: Vec<&str> = Vec::with_capacity(objects.len());
        for target in objects {
            if !target.types().is_only(JsonType::Object) || target.has("patternProperties") {
                return false;
            }
            let mut tags = target
                .required()
                .filter_map(|name| Some((name, target.property(name)?.single_value()?)));
            let name = match (tags.next(), tags.next()) {
                (Some((name, Value::String(value))), None) => {
                    if by_key || tag.is_some_and(|t| t != name) {
                        return false;
                    }
                    tag = Some(name);
                    value.as_str()
                }
                (None, _) => {
                    let mut required = target.required();
                    let (Some(only), None) = (required.next(), required.next()) else {
                        return false;
                    };
                    if tag.is_some()
                        || !target.closed()
                        || target.properties().count() != 1
                        || target.property(only).is_none()
                    {
                        return false;
                    }
                    by_key = true;
                    only
                }
                _ => return false,
            };
            named.push(name);
        }
        let count = named.len();
        named.sort_unstable();
        named.dedup();
        count >= 2 && named.len() == count
    }

    /// The one value a node allows (`const`, or an `enum` of one): a variant's tag.
    pub fn single_value(self) -> Option<&'s Value> {
        let node = self.target();
        match node.enum_values() {
            Some([only]) => Some(only),
            _ => node.get("const"),
        }
    }

    /// Whether this branch of an `anyOf` is the one `value` names by a tag: an object whose
    /// required property allowing one value holds that value (`{"kind": "refund", ..}`), an
    /// object of one required property that `value` has (`{"Refund": {..}}`), or a string enum
    /// holding the string. The one rule by which both coercion and reports pick a variant.
    pub fn tagged_for(self, value: &Value) -> bool {
        let node = self.target();
        match value {
            Value::String(_) => {
                node.types().is_only(JsonType::String)
                    && node.enum_values().is_some_and(|e| e.contains(value))
            }
            Value::Object(map) => {
                let by_tag = node
                    .required()
                    .any(|name| node.tag(name).is_some_and(|tag| map.get(name) == Some(tag)));
                let by_key = node.key().is_some_and(|only| map.contains_key(only));
                by_tag || by_key
            }
            _ => false,
        }
    }

    /// Whether one member of an object, `name` holding `value` (`None`: its value not read
    /// yet), is enough for this branch to be the one the object names ([`Node::tagged_for`]):
    /// `name` is its tag and `value` the tag's value, or `name` is its one key. A reader that
    /// sees an object's members one at a time (the stream) learns its variant from it.
    pub fn named_by_member(self, name: &str, value: Option<&Value>) -> bool {
        let node = self.target();
        if !node.types().is_only(JsonType::Object) {
            return false;
        }
        match value {
            Some(value) => {
                node.tag(name).is_some_and(|tag| tag == value) && node.required().any(|r| r == name)
            }
            None => node.key() == Some(name),
        }
    }

    /// The one value property `name` allows, when it is a tag (of this object node, followed).
    fn tag(self, name: &str) -> Option<&'s Value> {
        self.property(name).and_then(Node::single_value)
    }

    /// The one key of a closed object requiring exactly that key, whose value is data, not a
    /// tag (`{"Refund": {..}}`).
    fn key(self) -> Option<&'s str> {
        let mut names = self.required();
        match (names.next(), names.next()) {
            (Some(only), None) => (self.closed()
                && self
                    .property(only)
                    .is_some_and(|p| p.single_value().is_none()))
            .then_some(only),
            _ => None,
        }
    }

    /// The branch of an `anyOf` (`Option<Struct>`, an enum with data) a value belongs to: the
    /// variant it names by its tag ([`Node::tagged_for`]), else a branch of its type (among
    /// objects, the one declaring most of its keys), else the only branch that is not `null`.
    /// The one rule coercion and the reading back of reshaped answers pick a branch by.
    pub fn branch_for(branches: impl Iterator<Item = Node<'s>>, value: &Value) -> Option<Node<'s>> {
        if value.is_null() {
            return None;
        }
        let branches: Vec<Node<'s>> = branches.collect();
        if let Some(b) = branches.iter().find(|b| b.tagged_for(value)) {
            return Some(*b);
        }
        // An integer branch takes integers as written (`3`, not `3.0`).
        let type_is = |t: JsonType| match (t, value) {
            (JsonType::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (t, value) => t.matches(value),
        };
        let declared = |b: &Node<'s>| match value {
            Value::Object(map) => map
                .keys()
                .filter(|k| b.target().property(k).is_some())
                .count(),
            _ => 0,
        };
        let mut best: Option<(usize, Node<'s>)> = None;
        for b in branches
            .iter()
            .filter(|b| b.target().types().iter().any(type_is))
        {
            let d = declared(b);
            if best.is_none_or(|(most, _)| d > most) {
                best = Some((d, *b));
            }
        }
        if let Some((_, b)) = best {
            return Some(b);
        }
        let mut non_null = branches
            .iter()
            .filter(|b| !b.target().types().is_only(JsonType::Null));
        match (non_null.next(), non_null.next()) {
            (Some(b), None) => Some(*b),
            _ => None,
        }
    }

    /// Whether some branch of this `anyOf` can be named by a tag ([`Node::tagged_for`] on a
    /// value of its own shape): an enum written with tags, as opposed to an untagged one.
    pub fn has_tags(branches: &[Node<'s>]) -> bool {
        branches.iter().any(|b| {
            let b = b.target();
            b.single_value().is_some()
                || b.required()
                    .any(|name| b.property(name).is_some_and(|p| p.single_value().is_some()))
                || (b.closed() && b.required().count() == 1 && b.properties().count() == 1)
        })
    }

    /// The `enum` values.
    pub fn enum_values(self) -> Option<&'s [Value]> {
        self.get("enum")?.as_array().map(Vec::as_slice)
    }

    /// Whether `null` is allowed by the node's `type`, its `enum`, or a branch of its `anyOf`
    /// that is only `null` (references followed).
    pub fn allows_null(self) -> bool {
        let node = self.target();
        node.types().contains(JsonType::Null)
            || node.enum_values().is_some_and(|e| e.contains(&Value::Null))
            || node
                .any_of()
                .is_some_and(|mut bs| bs.any(|b| b.target().types().is_only(JsonType::Null)))
    }

    /// Every sub-schema of this node, in the order its keywords are written. Values that are
    /// not schemas (an `enum`, a `default`, an `items` written as an array in an old draft is
    /// listed schema by schema) are not children.
    pub fn children(self) -> Vec<Child<'s>> {
        let mut out = Vec::new();
        let Some(map) = self.map() else { return out };
        for (keyword, value) in map {
            let keyword = keyword.as_str();
            match holds(keyword, value) {
                Some(Holds::One) => out.push(Child {
                    keyword,
                    name: None,
                    index: None,
                    node: self.child(value),
                }),
                Some(Holds::Named) => {
                    for (name, schema) in value.as_object().into_iter().flatten() {
                        if named_schema(keyword, schema) {
                            out.push(Child {
                                keyword,
                                name: Some(name),
                                index: None,
                                node: self.child(schema),
                            });
                        }
                    }
                }
                Some(Holds::Listed) => {
                    for (i, schema) in value.as_array().into_iter().flatten().enumerate() {
                        out.push(Child {
                            keyword,
                            name: None,
                            index: Some(i),
                            node: self.child(schema),
                        });
                    }
                }
                None => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_keep_their_order_and_flag_nonsense() {
        let doc = json!({"type": ["string", "null"]});
        let t = Node::root(&doc).types();
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            [JsonType::String, JsonType::Null]
        );
        assert_eq!(t.describe(), "a string or null");
        assert!(t.allows(&json!(null)) && !t.allows(&json!(1)));
        let doc = json!({"type": ["string", 3]});
        assert!(Node::root(&doc).types().malformed());
        let doc = json!({"type": "integer"});
        assert!(Node::root(&doc).types().allows(&json!(2.0)));
    }

    #[test]
    fn references_resolve_through_one_resolver() {
        let doc = json!({
            "$defs": {"a b": {"$ref": "#/$defs/c"}, "c": {"type": "string"}},
            "properties": {"x": {"$ref": "#/$defs/a%20b"}, "y": {"$ref": "other.json"}}
        });
        let root = Node::root(&doc);
        let x = root.property("x").unwrap().resolve().unwrap();
        assert_eq!(x.value(), &json!({"type": "string"}));
        assert_eq!(x.depth(), 3);
        let y = root.property("y").unwrap().resolve();
        assert_eq!(y.unwrap_err(), RefError::NotLocal);
    }

    #[test]
    fn a_member_is_read_by_its_property_its_pattern_or_the_others_schema() {
        let schema = json!({
            "properties": {"id": {"type": "integer"}},
            "patternProperties": {"^x-": {"type": "string"}, "^x-n": {"type": "number"}, "^\\d+$": {"const": 1}},
            "additionalProperties": {"type": "boolean"}
        });
        let node = Node::root(&schema);
        let type_of = |key| node.member(key).map(|m| m.value().clone());
        assert_eq!(type_of("id"), Some(json!({"type": "integer"})));
        assert_eq!(type_of("x-a"), Some(json!({"type": "string"})));
        assert_eq!(type_of("ok"), Some(json!({"type": "boolean"})));
        // Two patterns: no one schema.
        assert_eq!(type_of("x-n1"), None);
        // Matched as the validator matches (ECMA-262: `\d` is an ASCII digit).
        assert_eq!(type_of("42"), Some(json!({"const": 1})));
        assert_eq!(type_of("\u{663}"), Some(json!({"type": "boolean"})));
        assert!(node.is_additional("ok") && node.is_additional("\u{663}"));
        assert!(!node.is_additional("id") && !node.is_additional("x-a"));
        let plain = json!({"additionalProperties": false});
        assert!(Node::root(&plain).member("a").is_none());
    }

    #[test]
    fn an_all_of_of_one_schema_beside_words_is_that_schema() {
        let doc = json!({
            "$defs": {"n": {"type": "integer"}},
            "properties": {
                "a": {"allOf": [{"$ref": "#/$defs/n"}], "description": "wrapped"},
                "b": {"allOf": [{"$ref": "#/$defs/n"}], "minimum": 1},
                "c": {"allOf": [{"type": "string"}, {"maxLength": 2}]}
            }
        });
        let root = Node::root(&doc);
        let target = |name: &str| root.property(name).unwrap().target().value().clone();
        assert_eq!(target("a"), json!({"type": "integer"}));
        // Beside an assertion, or of two schemas: the node itself.
        assert!(target("b").get("minimum").is_some());
        assert!(target("c").get("allOf").is_some());
        let cycle =
            json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"});
        assert_eq!(Node::root(&cycle).resolve().unwrap_err(), RefError::TooDeep);
    }

    #[test]
    fn a_one_of_reads_as_an_any_of_when_no_value_matches_two_branches() {
        let branches = |one_of: Value| {
            let doc = json!({"oneOf": one_of, "$defs": {"n": {"type": "integer"}}});
            Node::root(&doc).any_of().map(Iterator::count)
        };
        let tagged = |kind: &str| json!({"type": "object", "properties": {"kind": {"const": kind}}, "required": ["kind"]});
        // Kinds apart, one taking objects; variants named by their tags; a reference.
        assert_eq!(
            branches(json!([{"type": "string"}, {"type": "object"}, {"type": "null"}])),
            Some(3)
        );
        assert_eq!(
            branches(json!([tagged("a"), tagged("b"), {"$ref": "#/$defs/n"}])),
            Some(3)
        );
        for overlapping in [
            // Two taking strings, or numbers (an integer is a number), or lists, or objects
            // not named apart; a branch of no declared type.
            json!([{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}]),
            json!([{"type": "integer"}, {"type": "number"}]),
            json!([{"$ref": "#/$defs/n"}, {"type": ["number", "null"]}]),
            json!([{"type": "array"}, {"type": "array", "items": {"type": "string"}}]),
            json!([tagged("a"), {"type": "object"}]),
            json!([tagged("a"), tagged("a")]),
            json!([{"type": "string"}, {"minimum": 1}]),
        ] {
            assert_eq!(branches(overlapping.clone()), None, "{overlapping}");
        }
        // An `anyOf` beside it is the one read.
        let both = json!({"anyOf": [{"type": "null"}], "oneOf": [{"type": "string"}]});
        assert_eq!(Node::root(&both).branches().map(|(k, _)| k), Some("anyOf"));
    }

    #[test]
    fn a_reference_cycle_stops_at_the_depth_limit() {
        let doc = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "$ref": "#/$defs/a"});
        assert_eq!(Node::root(&doc).resolve().unwrap_err(), RefError::TooDeep);
    }

    #[test]
    fn children_are_every_sub_schema_in_order() {
        let doc = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "anyOf": [true, {"not": {}}],
            "enum": [{"type": "not a schema"}],
            "items": [{}, {}],
            "dependencies": {"a": ["b"], "c": {}}
        });
        let places: Vec<String> = Node::root(&doc)
            .children()
            .iter()
            .map(|c| {
                let mut p = Pointer::root();
                c.push_to(&mut p);
                p.as_str().to_owned()
            })
            .collect();
        assert_eq!(
            places,
            [
                "/properties/a",
                "/anyOf/0",
                "/anyOf/1",
                "/items/0",
                "/items/1",
                "/dependencies/c"
            ]
        );
    }

    #[test]
    fn null_is_allowed_three_ways() {
        for doc in [
            json!({"type": ["integer", "null"]}),
            json!({"enum": ["a", null]}),
            json!({"anyOf": [{"$ref": "#/$defs/n"}, {"type": "string"}], "$defs": {"n": {"type": "null"}}}),
        ] {
            assert!(Node::root(&doc).allows_null(), "{doc}");
        }
        assert!(!Node::root(&json!({"type": "string"})).allows_null());
    }
}
