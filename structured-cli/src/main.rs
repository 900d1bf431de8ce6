//! `structured`: repair a model's JSON answer, check it against a JSON Schema, or follow it as
//! it streams, from the shell.

use std::io::{Read, Write};
use std::process::ExitCode;

mod batch;

use serde_json::Value;
use structured_runtime::read::parts::{parse_value_json_within, MAX_WHOLE};
use structured_runtime::read::repair::{repair_text_json, RepairError};
use structured_runtime::read::MAX_STREAM_DEPTH;
use structured_runtime::schema::{LimitProfile, Markdown};
use structured_runtime::{
    ParseError, ParseOptions, Provenance, ResponseSchema, SchemaLimits, StreamReader, StreamStatus,
};

const HELP: &str = "\
structured: read the JSON in a model's answer

USAGE:
    structured repair [--pretty] < answer.txt
    structured check --schema schema.json [--strict] [--pretty] [--limits NAME]
                     [--max-whole BYTES] < answer.txt
    structured check --schema schema.json --markdown FIELD [--title FIELD] < answer.md
    structured stream --schema schema.json [--every BYTES] [--strict] < answer.txt
    structured grammar --schema schema.json [--max-tokens N]
    structured batch run --store job.db --schema schema.json --input items.jsonl [...]

COMMANDS:
    repair    Find the JSON in the answer (prose, markdown fences and all), repair its
              syntax, and print it. Each repair is listed on stderr.
    check     Like repair, then fit the value to the JSON Schema (unknown keys dropped,
              numbers read from strings, enum values matched ignoring case, ...) and
              validate it. Prints the value; warnings and violations go to stderr.
    stream    Read the answer as it arrives and print each change to the value so far,
              one JSON line each: {\"op\":\"set\",\"path\":\"/a\",\"value\":1} when a value
              appears (an object or list opened, a value complete, free text begun) and
              {\"op\":\"append\",\"path\":\"/note\",\"text\":\"..\"} as free text grows. Applied in
              order they build the value; the output grows with the answer, not with the
              value. A rule broken by a completed value goes to stderr at once. When the
              answer ends, print the value as check does, with its status.
    grammar   Print the GBNF grammar a llama.cpp server is sent for the schema (its
              `grammar` field): what it leaves to the validator and the limits it adds
              where the schema sets none go to stderr, by path.
    batch     Read many items into the schema through a chat endpoint, resumably, their
              state in a SQLite store (`structured batch --help`).

OPTIONS:
    --schema FILE   The JSON Schema to check against (check only).
    --strict        Accept the JSON only as written: no syntax repair, no coercion
                    (and, with --markdown, no plain-text answer).
    --markdown FIELD
                    The schema is a markdown wrapper: an answer that is not JSON for it
                    fills the string property FIELD whole (trimmed), every other property
                    null. JSON quoted inside the markdown stays part of it; the answer is
                    read as JSON only when it opens with `{` (or a fence holding one), or
                    ends with an object that fits after at most one line of lead-in.
    --title FIELD   With --markdown: the answer's first line fills FIELD, the rest the
                    markdown field.
    --every BYTES   With stream: read BYTES at a time (for testing how an answer cut
                    anywhere reads); without it, whatever has arrived is read.
    --max-tokens N  With grammar: the answer's token limit the budget for free text is
                    derived from (4096 when not given).
    --limits NAME   The limits the schema is held to: `default` (1 MiB, any root) or
                    `gateway` (16 KiB, an object root, as a gateway's HTTP layer takes
                    a client's schema). The file is not read past the limit.
    --max-whole BYTES
                    With check and stream: the longest JSON held as one value where the
                    schema judges it only whole (an enum of objects, a oneOf whose
                    branches only the whole value tells apart, ...), or a longer one of
                    no more values (a long string is one); past that it is refused
                    (status 10). 524288 when not given: a value held whole
                    takes up to about forty-five times its text; every other shape is
                    read in parts, in memory about three times the answer.
    --pretty        Print the value indented (the final value, with stream).
    -h, --help      Show this help.

EXIT STATUS:
    0   a value was printed, and it is the answer exactly as written
    5   a value was printed, read as written from prose or a fence around it (where
        is on stderr)
    6   a value was printed after syntax repairs (each on stderr)
    7   a value was printed after changes to fit the schema (check; each on stderr)
    8   a value was printed from a markdown answer taken whole (check --markdown)
    9   --strict: reading the answer needed changes (each on stderr); nothing printed
    1   the answer holds no JSON
    2   the JSON does not fit the schema (check)
    3   the answer was cut off before the JSON ended (check; repair prints the closed
        value with a warning)
    4   the JSON is nested too deeply to read
    10  the schema judges the JSON only as one whole value, and it is longer than
        --max-whole
    64  bad usage
    66  the schema file cannot be read or is not a JSON Schema (every keyword must be
        one the validator implements; `$ref` must stay inside the file)

EXAMPLES:
    echo \"{name: 'Ada', tags: ['x',],}\" | structured repair
    my-model-client | structured stream --schema person.json
    structured check --schema person.json < answer.txt
    structured check --schema review.json --markdown content < review.md
";

const NOT_FOUND: u8 = 1;
const INVALID: u8 = 2;
const TRUNCATED: u8 = 3;
const TOO_DEEP: u8 = 4;
const NOT_EXACT: u8 = 9;
const TOO_LARGE: u8 = 10;

/// The exit status of a printed value: 0 only for the answer exactly as written.
fn printed(provenance: Provenance) -> u8 {
    match provenance {
        Provenance::Clean => 0,
        Provenance::Extracted => 5,
        Provenance::Repaired => 6,
        Provenance::Recovered => 7,
        Provenance::Heuristic => 8,
    }
}
const USAGE: u8 = 64;
const NO_INPUT: u8 = 66;

struct Args {
    command: String,
    schema: Option<String>,
    markdown: Option<String>,
    title: Option<String>,
    strict: bool,
    pretty: bool,
    /// `stream --every BYTES`.
    every: Option<usize>,
    /// `grammar --max-tokens N`.
    max_tokens: Option<u32>,
    /// `--limits NAME`: the schema's limit profile.
    limits: LimitProfile,
    /// `--max-whole BYTES`: the longest JSON held as one value.
    max_whole: usize,
    /// Whether `--max-whole` was given (it belongs to `check` and `stream`).
    max_whole_given: bool,
}

/// Keeps glibc's allocator mapping every buffer of 128 KiB or more on its own, so that one
/// freed goes back to the system at once. By default glibc raises that threshold to the size of
/// each such buffer freed (up to 32 MiB): after `stream` lets go of what its reader held (the
/// sorted names of a wide object: 8 MB of room for a 10 MB answer of them), the final reading's
/// growing buffers were taken from the heap instead, and a buffer outgrowing it left its old
/// room there, resident: the 10 MB answer of 700,000 members peaked at 32.7 MB through `stream`
/// against 28.9 MB through `check`, and at 28.8 MB with the threshold kept
/// (`scripts/cli-memory`; the time the same, and the same for every other shape at 10 and 100
/// MB). `MALLOC_MMAP_THRESHOLD_=131072` in the
/// environment does the same; this is that setting, made by the program.
fn give_back_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const THRESHOLD: libc::c_int = 128 * 1024;
        // SAFETY: `mallopt` sets one of the allocator's parameters and touches no memory of
        // ours; it is called first thing in `main`, before any other thread exists.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD);
        }
    }
}

fn main() -> ExitCode {
    give_back_large_buffers();
    if std::env::args().nth(1).as_deref() == Some("batch") {
        return ExitCode::from(batch::main(std::env::args().skip(2)));
    }
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("structured: {message}\nRun `structured --help` for usage.");
            return ExitCode::from(USAGE);
        }
    };
    if args.command == "stream" {
        return ExitCode::from(stream(&args));
    }
    if args.command == "grammar" {
        return ExitCode::from(print_grammar(&args));
    }
    let mut input = String::with_capacity(stdin_len());
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("structured: cannot read the answer from stdin: {e}");
        return ExitCode::from(NO_INPUT);
    }
    // Read from a pipe, the answer's room doubled as it came: what it does not use is given
    // back before the reading holds its own copies.
    input.shrink_to_fit();
    let code = match args.command.as_str() {
        "repair" => repair(&input, &args),
        _ => check(&input, &args),
    };
    ExitCode::from(code)
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parsed = Args {
        command: String::new(),
        schema: None,
        markdown: None,
        title: None,
        strict: false,
        pretty: false,
        every: None,
        max_tokens: None,
        limits: LimitProfile::Default,
        max_whole: MAX_WHOLE,
        max_whole_given: false,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" | "help" => return Ok(None),
            "--strict" => parsed.strict = true,
            "--pretty" => parsed.pretty = true,
            "--schema" => match args.next() {
                Some(path) => parsed.schema = Some(path),
                None => return Err("`--schema` needs a file: `--schema schema.json`".into()),
            },
            "--markdown" => match args.next() {
                Some(field) => parsed.markdown = Some(field),
                None => return Err("`--markdown` needs a property: `--markdown content`".into()),
            },
            "--every" => match args.next().map(|n| n.parse::<usize>()) {
                Some(Ok(n)) if n > 0 => parsed.every = Some(n),
                _ => return Err("`--every` needs a number of bytes above 0: `--every 1`".into()),
            },
            "--max-tokens" => match args.next().map(|n| n.parse::<u32>()) {
                Some(Ok(n)) if n > 0 => parsed.max_tokens = Some(n),
                _ => return Err("`--max-tokens` needs a number above 0: `--max-tokens 512`".into()),
            },
            "--max-whole" => match args.next().map(|n| n.parse::<usize>()) {
                Some(Ok(n)) => {
                    parsed.max_whole = n;
                    parsed.max_whole_given = true;
                }
                _ => {
                    return Err(
                        "`--max-whole` needs a number of bytes: `--max-whole 8388608`".into(),
                    )
                }
            },
            "--limits" => match args.next().map(|n| n.parse::<LimitProfile>()) {
                Some(Ok(profile)) => parsed.limits = profile,
                Some(Err(e)) => return Err(format!("`--limits`: {e}")),
                None => return Err("`--limits` needs a name: `--limits gateway`".into()),
            },
            "--title" => match args.next() {
                Some(field) => parsed.title = Some(field),
                None => return Err("`--title` needs a property: `--title title`".into()),
            },
            "repair" | "check" | "stream" | "grammar" if parsed.command.is_empty() => {
                parsed.command = arg
            }
            other if other.starts_with('-') => return Err(format!("unknown option `{other}`")),
            other => {
                return Err(format!(
                    "unknown command `{other}`: expected `repair`, `check`, `stream` or `grammar`"
                ))
            }
        }
    }
    match (parsed.command.as_str(), &parsed.schema) {
        ("", _) => Err("no command: expected `repair`, `check`, `stream` or `grammar`".into()),
        ("check", None) => Err("`check` needs `--schema schema.json`".into()),
        ("stream", None) => Err("`stream` needs `--schema schema.json`".into()),
        ("grammar", None) => Err("`grammar` needs `--schema schema.json`".into()),
        (command, _) if command != "grammar" && parsed.max_tokens.is_some() => {
            Err("`--max-tokens` belongs to `grammar`".into())
        }
        ("stream", _) if parsed.markdown.is_some() => {
            Err("`--markdown` belongs to `check`: `stream` reads JSON answers".into())
        }
        (command, _) if command != "stream" && parsed.every.is_some() => {
            Err("`--every` belongs to `stream`".into())
        }
        (command, _) if !matches!(command, "check" | "stream") && parsed.max_whole_given => {
            Err("`--max-whole` belongs to `check` and `stream`".into())
        }
        ("repair", Some(_)) => {
            Err("`--schema` belongs to `check`; `repair` needs no schema".into())
        }
        ("repair", _) if parsed.strict => Err("`--strict` belongs to `check`".into()),
        ("repair", _) if parsed.markdown.is_some() => {
            Err("`--markdown` belongs to `check`, with a schema".into())
        }
        _ if parsed.title.is_some() && parsed.markdown.is_none() => Err(
            "`--title` goes with `--markdown FIELD`: the rest of the answer needs a property"
                .into(),
        ),
        _ => Ok(Some(parsed)),
    }
}

/// Lines printed per kind of report at most; the rest are counted.
const MAX_REPORT_LINES: usize = 50;

/// [`report`] for repairs: the count of repairs the list left out (its last entry, when the
/// list is capped) is always printed.
fn report_repairs<T: std::fmt::Display>(kind: &str, items: &[T], unlisted: impl Fn(&T) -> bool) {
    match items.split_last() {
        Some((last, rest)) if unlisted(last) && rest.len() > MAX_REPORT_LINES => {
            report(kind, rest);
            eprintln!("{kind}: {last}");
        }
        _ => report(kind, items),
    }
}

/// Whether `w` counts the repairs or the changes the list left out.
fn unlisted_warning(w: &structured_runtime::Warning) -> bool {
    use structured_runtime::read::coerce::RecoveryKind;
    use structured_runtime::read::repair::RepairKind;
    use structured_runtime::Warning;
    matches!(w, Warning::Repair(r) if r.kind == RepairKind::Unlisted)
        || matches!(w, Warning::Recovery(r) if r.kind == RecoveryKind::Unlisted)
}

/// One stderr line per item, `kind: item`, at most [`MAX_REPORT_LINES`], then how many more.
fn report<T: std::fmt::Display>(kind: &str, items: &[T]) {
    let mut err = std::io::stderr().lock();
    for item in items.iter().take(MAX_REPORT_LINES) {
        let _ = writeln!(err, "{kind}: {item}");
    }
    if items.len() > MAX_REPORT_LINES {
        let _ = writeln!(err, "{kind}: and {} more", items.len() - MAX_REPORT_LINES);
    }
}

/// Prints compact JSON text (as `serde_json` writes it: no space outside strings), indented
/// when `pretty`, as `serde_json`'s pretty printer writes the same value, without reading it
/// into a value.
fn print_json(json: &str, pretty: bool) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = if pretty {
        write_pretty(json, &mut out)
    } else {
        out.write_all(json.as_bytes())
    };
    let _ = writeln!(out);
}

/// `json` (compact) indented by two spaces a level, `": "` after each key, empty containers
/// kept as `[]` and `{}`: `serde_json::to_writer_pretty`'s layout.
fn write_pretty(json: &str, out: &mut impl Write) -> std::io::Result<()> {
    let bytes = json.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut dyn Write, depth: usize| -> std::io::Result<()> {
        out.write_all(b"\n")?;
        for _ in 0..depth {
            out.write_all(b"  ")?;
        }
        Ok(())
    };
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                // A string, escapes and all, as written.
                let start = i;
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    i += 1;
                    match c {
                        b'\\' => i += 1,
                        b'"' => break,
                        _ => {}
                    }
                }
                out.write_all(bytes.get(start..i).unwrap_or_default())?;
                continue;
            }
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                if bytes.get(i + 1) == Some(&close) {
                    out.write_all(&[b, close])?;
                    i += 2;
                    continue;
                }
                out.write_all(&[b])?;
                depth += 1;
                newline(out, depth)?;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(out, depth)?;
                out.write_all(&[b])?;
            }
            b',' => {
                out.write_all(b",")?;
                newline(out, depth)?;
            }
            b':' => out.write_all(b": ")?,
            _ => {
                // A number or a literal: up to the next byte with a layout of its own.
                let run = bytes
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .position(|c| b"\"{}[],:".contains(c))
                    .map_or(bytes.len(), |n| i + n);
                out.write_all(bytes.get(i..run).unwrap_or_default())?;
                i = run;
                continue;
            }
        }
        i += 1;
    }
    Ok(())
}

fn repair(input: &str, args: &Args) -> u8 {
    // Written as text as it is read: memory about the answer's size, whatever its shape.
    match repair_text_json(input) {
        Ok(fixed) => {
            report_repairs("warning", &fixed.repairs, |r| {
                r.kind == structured_runtime::read::repair::RepairKind::Unlisted
            });
            if fixed.truncated {
                eprintln!("warning: the answer was cut off; the value was closed where it stopped");
            }
            print_json(&fixed.value, args.pretty);
            if fixed.is_clean() {
                printed(Provenance::Clean)
            } else if fixed.is_extracted_only() {
                printed(Provenance::Extracted)
            } else {
                printed(Provenance::Repaired)
            }
        }
        Err(e @ RepairError::TooDeep { .. }) => {
            eprintln!("error: {e}");
            TOO_DEEP
        }
        Err(e) => {
            eprintln!("error: {e}");
            NOT_FOUND
        }
    }
}

fn check(input: &str, args: &Args) -> u8 {
    match load_schema(args) {
        Ok(schema) => read_whole(input, &schema, args),
        Err(message) => {
            eprintln!("error: {message}");
            NO_INPUT
        }
    }
}

/// Reads the answer from stdin as it arrives (`--every` bytes at a time when given), printing
/// the value so far each time it changes, then the whole answer read as `check` reads it.
fn stream(args: &Args) -> u8 {
    let schema = match load_schema(args) {
        Ok(schema) => schema,
        Err(message) => {
            eprintln!("error: {message}");
            return NO_INPUT;
        }
    };
    // The changes are all this prints: the reader keeps no value so far, so its memory stays
    // about the answer's size.
    let mut reader = StreamReader::changes_only(&schema).max_whole(args.max_whole);
    let mut stdin = std::io::stdin().lock();
    let mut buffer = vec![0u8; args.every.unwrap_or(8192)];
    // One line per change, never the value so far: the output grows with the answer, whatever
    // its shape or the size of its pieces.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut status = StreamStatus::Waiting;
    loop {
        let read = match args.every {
            Some(_) => read_up_to(&mut stdin, &mut buffer),
            None => stdin.read(&mut buffer),
        };
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("structured: cannot read the answer from stdin: {e}");
                return NO_INPUT;
            }
        };
        let progress = reader.feed(buffer.get(..n).unwrap_or_default());
        report("invalid", progress.violations);
        for change in progress.changes {
            let _ = writeln!(out, "{}", change.to_json());
        }
        if progress.status != status && progress.status == StreamStatus::TooDeep {
            let _ = out.flush();
            eprintln!("error: nested deeper than {MAX_STREAM_DEPTH} levels; the rest is not read");
        }
        status = progress.status;
        // Shown as it arrives: each piece's changes reach the reader before the next piece.
        let _ = out.flush();
    }
    drop(out);
    if let Some(at) = reader.unjudged() {
        eprintln!(
            "note: the value at {at} outgrew the {} bytes held whole as it streamed; its checks \
             are the final reading's",
            args.max_whole
        );
    }
    match reader.into_text() {
        Some(text) => read_whole(&text, &schema, args),
        None => {
            eprintln!("structured: the answer is not UTF-8 (cut inside a character?)");
            NO_INPUT
        }
    }
}

/// How long the answer on stdin is when it is a file (one more byte, to see its end), so it is
/// read into room of its size; 0 when that cannot be told (a pipe).
fn stdin_len() -> usize {
    std::fs::metadata("/dev/stdin")
        .ok()
        .filter(std::fs::Metadata::is_file)
        .and_then(|m| usize::try_from(m.len()).ok())
        .map_or(0, |len| len.saturating_add(1))
}

/// Fills `buffer` unless the input ends first; how many bytes it holds.
fn read_up_to(input: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buffer.get_mut(filled..).filter(|r| !r.is_empty()) {
        match input.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The whole answer read against the schema: the value printed with its status, or why not.
fn read_whole(input: &str, schema: &ResponseSchema, args: &Args) -> u8 {
    let options = if args.strict {
        ParseOptions::strict()
    } else {
        ParseOptions::default()
    };
    // The library is the validator of record: its verdict is the schema's, every keyword
    // included, and nothing is checked here a second time. Read in parts where the schema
    // allows (a long list an item at a time), so a long answer is never held as one `Value`.
    match parse_value_json_within(input, schema, &options, args.max_whole) {
        Ok(parsed) => {
            report_repairs("warning", &parsed.warnings, unlisted_warning);
            if parsed.provenance != Provenance::Clean {
                eprintln!("note: value {:?}", parsed.provenance);
            }
            print_json(&parsed.value, args.pretty);
            printed(parsed.provenance)
        }
        Err(ParseError::NotExact { warnings }) => {
            report("refused", &warnings);
            eprintln!("error: --strict takes the answer only as written");
            NOT_EXACT
        }
        Err(ParseError::Invalid {
            violations,
            warnings,
            ..
        }) => {
            report_repairs("warning", &warnings, unlisted_warning);
            report("invalid", violations.as_slice());
            INVALID
        }
        Err(e @ ParseError::Truncated { .. }) => {
            eprintln!("error: {e}");
            TRUNCATED
        }
        Err(e @ ParseError::TooDeep(_)) => {
            eprintln!("error: {e}");
            TOO_DEEP
        }
        Err(e @ ParseError::TooLarge { .. }) => {
            eprintln!("error: {e} (--max-whole raises the limit)");
            TOO_LARGE
        }
        Err(e) => {
            eprintln!("error: {e}");
            NOT_FOUND
        }
    }
}

/// The schema file, checked and compiled. Any root is taken (an answer may be an array or a
/// scalar); the other checks apply as to every schema given at run time.
/// `grammar`: the GBNF for the schema, and what it leaves and adds.
fn print_grammar(args: &Args) -> u8 {
    use structured_runtime::provider::dialect::{grammar, GrammarBudget};
    let schema = match load_schema(args) {
        Ok(schema) => schema,
        Err(message) => {
            eprintln!("error: {message}");
            return NO_INPUT;
        }
    };
    let budget = GrammarBudget::for_max_tokens(args.max_tokens.unwrap_or(4096));
    match grammar(schema.schema(), budget) {
        Ok(g) => {
            let not_enforced: Vec<String> = g
                .unenforced
                .iter()
                .map(|u| format!("{} {}: {}", u.path, u.keyword, u.reason))
                .collect();
            report("left to the validator", &not_enforced);
            let budgets: Vec<String> = g
                .budgets
                .iter()
                .map(|b| format!("{} {} {}", b.path, b.keyword, b.limit))
                .collect();
            report("limit added", &budgets);
            print!("{}", g.text);
            0
        }
        Err(report_) => {
            for e in report_.errors.iter().take(MAX_REPORT_LINES) {
                eprintln!("error: {}: {}", e.path, e.reason);
            }
            INVALID
        }
    }
}

fn load_schema(args: &Args) -> Result<ResponseSchema, String> {
    let path = args.schema.as_deref().unwrap_or_default();
    let limits = match args.limits {
        // The command line takes any root by default: a prompt-guided answer may be a list.
        LimitProfile::Default => SchemaLimits {
            object_root: false,
            ..SchemaLimits::default()
        },
        profile => profile.limits(),
    };
    let schema = schema_file(path, &limits)?;
    let Some(content) = &args.markdown else {
        return Ok(schema);
    };
    let markdown = match &args.title {
        Some(title) => Markdown::content(content).with_title(title),
        None => Markdown::content(content),
    };
    schema
        .with_markdown(markdown)
        .map_err(|e| format!("`{path}` cannot hold a plain-text answer: {e}"))
}

/// The file at `path` as text, refused as soon as it is found longer than `max` bytes: its size
/// is looked at first, and no more than `max + 1` bytes are ever read (a file that grows while
/// it is read, or a pipe, is cut there).
/// The JSON Schema file at `path`, refused past `limits`' size before it is read, and checked
/// against them.
fn schema_file(path: &str, limits: &SchemaLimits) -> Result<ResponseSchema, String> {
    let text = read_capped("schema", path, limits.max_bytes)?;
    let schema: Value =
        serde_json::from_str(&text).map_err(|e| format!("the schema `{path}` is not JSON: {e}"))?;
    ResponseSchema::with_limits("schema", schema, limits)
        .map_err(|e| format!("`{path}` is not a schema this tool can use: {e}"))
}

/// The file at `path` (the `what`, for messages), refused past `max` bytes before it is read.
fn read_capped(what: &str, path: &str, max: usize) -> Result<String, String> {
    let cannot = |e: std::io::Error| format!("cannot read the {what} `{path}`: {e}");
    let file = std::fs::File::open(path).map_err(cannot)?;
    let too_large = || format!("the {what} `{path}` is larger than {max} bytes");
    if file.metadata().map_err(cannot)?.len() > max as u64 {
        return Err(too_large());
    }
    let mut text = String::new();
    file.take(max as u64 + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    if text.len() > max {
        return Err(too_large());
    }
    Ok(text)
}
