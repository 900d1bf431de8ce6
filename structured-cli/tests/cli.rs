//! The `structured` binary: output, stderr and exit codes.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let (code, out, err) = run_bytes(args, stdin.as_bytes().to_vec());
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// The binary on `stdin`, written from a thread so a large input and a large output cannot
/// wait on each other.
fn run_bytes(args: &[&str], stdin: Vec<u8>) -> (i32, Vec<u8>, Vec<u8>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_structured"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut pipe = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || pipe.write_all(&stdin));
    let out = child.wait_with_output().expect("the binary ends");
    // A usage error exits before reading stdin: the pipe may be closed by then, which is fine.
    if let Err(e) = writer.join().expect("the writer ends") {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    (out.status.code().unwrap_or(-1), out.stdout, out.stderr)
}

fn schema_file() -> tempfile_path::Path {
    tempfile_path::write(
        r#"{"type": "object", "properties": {
            "level": {"type": "string", "enum": ["low", "high"]},
            "score": {"type": "number", "minimum": 0, "maximum": 1}},
           "required": ["level", "score"], "additionalProperties": false}"#,
    )
}

/// `stream`'s output: each change line applied in turn (the value after each), and the last
/// line (the final value `check` prints). `None` when a line before the last is not a change.
fn replay(out: &str) -> (Option<Vec<serde_json::Value>>, serde_json::Value) {
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let (last, changes) = lines.split_last().expect("a line");
    (apply_all(changes), last.clone())
}

/// The value after each change line, applied in turn to `null`.
fn apply_all(changes: &[serde_json::Value]) -> Option<Vec<serde_json::Value>> {
    let mut value = serde_json::Value::Null;
    let mut shown = Vec::new();
    for change in changes {
        let path = change["path"].as_str()?;
        let (parent, key) = match path.rfind('/') {
            Some(i) => (
                &path[..i],
                Some(path[i + 1..].replace("~1", "/").replace("~0", "~")),
            ),
            None => ("", None),
        };
        match (change["op"].as_str()?, key) {
            ("set", None) => value = change["value"].clone(),
            ("set", Some(key)) => match value.pointer_mut(parent)? {
                serde_json::Value::Object(map) => {
                    map.insert(key, change["value"].clone());
                }
                serde_json::Value::Array(items) => items.push(change["value"].clone()),
                _ => return None,
            },
            ("append", _) => match value.pointer_mut(path)? {
                serde_json::Value::String(s) => s.push_str(change["text"].as_str()?),
                _ => return None,
            },
            _ => return None,
        }
        shown.push(value.clone());
    }
    Some(shown)
}

/// `stream` on adversarial answers a byte at a time: the output grows with the input (a change
/// per line, never the value so far), and nesting past the reader's limit is refused where it
/// is crossed. Each shape at two sizes: twice the input, at most a little over twice the output.
#[test]
fn stream_output_grows_with_the_answer_whatever_its_shape() {
    let schema =
        tempfile_path::write(r#"{"type": "object", "properties": {"note": {"type": "string"}}}"#);
    let path = schema.0.to_str().unwrap();
    type Shape = fn(usize) -> String;
    let shapes: [(&str, Shape); 5] = [
        ("deep nesting", |n| {
            let k = n / 6;
            format!("{}1{}", "{\"a\":".repeat(k), "}".repeat(k))
        }),
        ("one long string", |n| {
            format!("{{\"note\": \"{}\"}}", "x".repeat(n))
        }),
        ("many small keys", |n| {
            let keys: Vec<String> = (0..n / 10).map(|i| format!("\"k{i}\":1")).collect();
            format!("{{{}}}", keys.join(","))
        }),
        ("broken brackets", |n| {
            format!("{{\"a\": [{}", "{\"b\": 1]".repeat(n / 9))
        }),
        ("many top-level values", |n| "{\"a\": 1}\n".repeat(n / 9)),
    ];
    for (name, shape) in shapes {
        let mut sizes = Vec::new();
        for n in [20_000, 40_000] {
            let input = shape(n);
            let (code, out, err) = run_bytes(
                &["stream", "--schema", path, "--every", "1"],
                input.into_bytes(),
            );
            assert_ne!(code, -1, "{name}: killed");
            assert!(
                out.len() <= 64 * n + 4096,
                "{name}: {} bytes out for {n} in",
                out.len()
            );
            if name == "deep nesting" {
                let err = String::from_utf8_lossy(&err);
                assert!(err.contains("nested deeper than 126 levels"), "{err}");
                assert_eq!(code, 4, "{err}");
            }
            sizes.push(out.len());
        }
        assert!(
            sizes[1] <= 2 * sizes[0] + 4096,
            "{name}: {} then {} bytes",
            sizes[0],
            sizes[1]
        );
    }
}

/// A schema that keeps coming (a pipe) is read only up to the cap: the writer is cut off a
/// little past 1 MiB, not after everything it had to send.
#[test]
fn a_schema_from_a_pipe_is_read_only_up_to_the_cap() {
    use std::io::Write as _;
    let fifo = std::env::temp_dir().join(format!("cli-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here: nothing to show
    }
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut pipe = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let chunk = vec![b' '; 64 * 1024];
        let mut written = 0usize;
        while written < 64 << 20 {
            if pipe.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    let (code, _, err) = run(&["check", "--schema", fifo.to_str().unwrap()], "{}");
    let written = writer.join().unwrap();
    let _ = std::fs::remove_file(&fifo);
    assert_eq!(code, 66, "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
    assert!(written < 8 << 20, "{written} bytes were taken");
}

/// A schema file far above the size cap is refused, with the cap in the message (that it is
/// not read first is shown by the pipe test above).
#[test]
fn a_schema_file_above_the_cap_is_refused_unread() {
    let big = format!(
        r#"{{"type": "object", "description": "{}"}}"#,
        "x".repeat(2 << 20)
    );
    let schema = tempfile_path::write(&big);
    let (code, _, err) = run(&["check", "--schema", schema.0.to_str().unwrap()], "{}");
    assert_eq!(code, 66, "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
}

/// Limits as the documents state them: `--limits gateway` holds the schema to a gateway's
/// 16 KiB (the file not read past it) and an object root; the default takes it.
#[test]
fn limit_profiles_are_chosen_on_the_command_line() {
    let mid = format!(
        r#"{{"type": "object", "description": "{}"}}"#,
        "x".repeat(20 << 10)
    );
    let schema = tempfile_path::write(&mid);
    let path = schema.0.to_str().unwrap();
    let (code, _, err) = run(&["check", "--schema", path, "--limits", "gateway"], "{}");
    assert_eq!(code, 66, "{err}");
    assert!(err.contains("larger than 16384 bytes"), "{err}");
    let (code, _, err) = run(&["check", "--schema", path], "{}");
    assert_eq!(code, 0, "{err}");
    // The gateway takes an object root only.
    let list = tempfile_path::write(r#"{"type": "array", "items": {"type": "integer"}}"#);
    let list = list.0.to_str().unwrap();
    let (code, _, err) = run(&["check", "--schema", list, "--limits", "gateway"], "[1]");
    assert_ne!(code, 0, "{err}");
    assert_eq!(run(&["check", "--schema", list], "[1]").0, 0);
    let (code, _, err) = run(&["check", "--schema", list, "--limits", "strictest"], "[1]");
    assert_eq!(code, 64, "a usage error: {err}");
    assert!(err.contains("unknown limit profile"), "{err}");
}

/// A schema file in the target directory, removed when dropped.
mod tempfile_path {
    pub struct Path(pub std::path::PathBuf);
    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    pub fn write(text: &str) -> Path {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "cli-schema-{}-{}.json",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).expect("write schema");
        Path(path)
    }
}

#[test]
fn repair_prints_the_json_and_lists_repairs() {
    let (code, out, err) = run(
        &["repair"],
        "Sure!\n```json\n{name: 'Ada', tags: ['x',],}\n```",
    );
    assert_eq!(code, 6, "repaired: {err}");
    assert_eq!(out.trim(), r#"{"name":"Ada","tags":["x"]}"#);
    assert!(err.contains("removed a trailing comma"), "{err}");
}

/// `repair` writes the value as text without building it; compact and `--pretty` it prints what
/// `serde_json` prints for the value the library reads.
#[test]
fn repair_prints_what_serde_json_prints_for_the_value() {
    for input in [
        r#"{"a": {}, "b": [], "c": [{"d": "x, y: {z}", "e": "q\"uo\\te"}], "f": -0.5e-3}"#,
        "{name: 'Ada', tags: ['x',], nested: {deep: [[], [1, {}]]},}",
        "[1, 2] [3]",
        r#"{"unicode": "caf\u00e9 \ud83d\ude00", "tab": "a\tb"}"#,
        "\"just a string\" {x: 1}",
        r#"{"k": 1, "k": 2}"#,
    ] {
        let value = structured_runtime::read::repair::repair_text(input)
            .unwrap()
            .value;
        let (_, out, err) = run(&["repair"], input);
        assert_eq!(out.trim_end(), value.to_string(), "{input}: {err}");
        let (_, out, _) = run(&["repair", "--pretty"], input);
        assert_eq!(
            out.trim_end(),
            serde_json::to_string_pretty(&value).unwrap(),
            "{input}"
        );
    }
}

#[test]
fn repair_exits_1_without_json() {
    let (code, out, err) = run(&["repair"], "I would rather not.");
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("no JSON value found"), "{err}");
}

#[test]
fn repair_warns_about_truncation() {
    let (code, out, err) = run(&["repair"], r#"{"a": [1, 2"#);
    assert_eq!(code, 6);
    assert_eq!(out.trim(), r#"{"a":[1,2]}"#);
    assert!(err.contains("cut off"), "{err}");
}

#[test]
fn check_fits_and_validates() {
    let schema = schema_file();
    let path = schema.0.to_str().unwrap();
    let (code, out, err) = run(
        &["check", "--schema", path],
        r#"{"level": "HIGH", "score": "0.5", "x": 1}"#,
    );
    assert_eq!(code, 7, "recovered: {err}");
    assert_eq!(out.trim(), r#"{"level":"high","score":0.5}"#);
    assert!(err.contains("/x: dropped a key"), "{err}");

    let (code, _, err) = run(
        &["check", "--schema", path],
        r#"{"level": "mid", "score": 2}"#,
    );
    assert_eq!(code, 2);
    assert!(err.contains("/level") && err.contains("/score"), "{err}");

    let (code, _, _) = run(&["check", "--schema", path], "no json");
    assert_eq!(code, 1);
    let (code, _, _) = run(
        &["check", "--schema", path],
        r#"{"level": "low", "score": 0."#,
    );
    assert_eq!(code, 3);
}

#[test]
fn strict_check_takes_the_json_as_written() {
    let schema = schema_file();
    let path = schema.0.to_str().unwrap();
    let (code, _, _) = run(
        &["check", "--schema", path, "--strict"],
        r#"{"level": "HIGH", "score": 0.5}"#,
    );
    assert_eq!(code, 2);
    let (code, out, _) = run(
        &["check", "--schema", path, "--strict"],
        "ok: {\"level\": \"low\", \"score\": 0.5}",
    );
    assert_eq!((code, out.trim()), (9, ""));
    let (code, out, _) = run(
        &["check", "--schema", path, "--strict"],
        "{\"level\": \"low\", \"score\": 0.5}\n",
    );
    assert_eq!((code, out.trim()), (0, r#"{"level":"low","score":0.5}"#));
    // A duplicated key is refused, with what it was.
    let (code, _, err) = run(
        &["check", "--schema", path, "--strict"],
        r#"{"level": "low", "score": 0.5, "score": 0.7}"#,
    );
    assert_eq!(code, 9, "{err}");
    assert!(err.contains("duplicated key"), "{err}");
}

#[test]
fn the_exit_status_tells_clean_from_changed() {
    let schema = schema_file();
    let path = schema.0.to_str().unwrap();
    for (answer, status) in [
        (r#"{"level": "low", "score": 0.5}"#, 0),
        ("Here: {\"level\": \"low\", \"score\": 0.5} done", 5),
        (r#"{level: "low", score: 0.5}"#, 6),
        (r#"{"level": "LOW", "score": 0.5}"#, 7),
    ] {
        let (code, out, err) = run(&["check", "--schema", path], answer);
        assert_eq!(code, status, "{answer}: {err}");
        assert!(!out.is_empty());
    }
    for (answer, status) in [("[1, 2]", 0), ("x [1, 2] y", 5), ("[1, 2,]", 6)] {
        assert_eq!(run(&["repair"], answer).0, status, "{answer}");
    }
}

#[test]
fn check_reads_a_markdown_wrapper() {
    let schema = tempfile_path::write(
        r#"{"type": "object", "properties": {
            "title": {"type": "string", "maxLength": 72},
            "message": {"type": "string"},
            "emoji": {"type": ["string", "null"]}},
           "required": ["title", "message", "emoji"], "additionalProperties": false}"#,
    );
    let path = schema.0.to_str().unwrap();
    let wrapper = [
        "check",
        "--schema",
        path,
        "--markdown",
        "message",
        "--title",
        "title",
    ];
    let (code, out, err) = run(
        &wrapper,
        "Fix the parser\n\nIt dropped `{\"a\": 1}` keys.\n",
    );
    assert_eq!(code, 8, "{err}");
    assert_eq!(
        out.trim(),
        r#"{"title":"Fix the parser","message":"It dropped `{\"a\": 1}` keys.","emoji":null}"#
    );
    assert!(
        err.contains("not JSON") && err.contains("Heuristic"),
        "{err}"
    );
    // The JSON, when the answer is JSON.
    let (code, out, err) = run(&wrapper, r#"{"title": "t", "message": "m", "emoji": "x"}"#);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out.trim(), r#"{"title":"t","message":"m","emoji":"x"}"#);
    // Strict mode refuses plain text; a schema that cannot hold it is refused.
    let mut strict = wrapper.to_vec();
    strict.push("--strict");
    assert_eq!(run(&strict, "Fix the parser").0, 1);
    let (code, _, err) = run(&["check", "--schema", path, "--markdown", "emoji"], "x");
    assert_eq!(code, 66);
    assert!(err.contains("cannot hold a plain-text answer"), "{err}");
    let (code, _, err) = run(&["check", "--schema", path, "--title", "title"], "x");
    assert_eq!(code, 64);
    assert!(err.contains("`--title` goes with `--markdown"), "{err}");
}

#[test]
fn usage_errors_say_what_is_wrong() {
    let (code, out, _) = run(&["--help"], "");
    assert_eq!(code, 0);
    assert!(out.contains("EXIT STATUS"));
    for (args, says) in [
        (vec![], "no command"),
        (vec!["check"], "needs `--schema"),
        (vec!["frobnicate"], "unknown command `frobnicate`"),
        (vec!["repair", "--bogus"], "unknown option `--bogus`"),
    ] {
        let (code, _, err) = run(&args, "");
        assert_eq!(code, 64, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, _, err) = run(&["check", "--schema", "/nonexistent/schema.json"], "{}");
    assert_eq!(code, 66);
    assert!(err.contains("cannot read the schema"), "{err}");
}

#[test]
fn stderr_reports_are_capped() {
    let answer = format!("[{}]", "{a \"x\" junk }, ".repeat(2000));
    let (code, out, err) = run(&["repair"], &answer);
    assert_eq!(code, 6);
    assert!(!out.is_empty());
    // 50 repairs, how many more are listed, and how many more were made beyond the list.
    assert!(err.lines().count() <= 52, "{} lines", err.lines().count());
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[lines.len() - 2].contains("and 950 more"), "{err}");
    assert!(
        lines[lines.len() - 1].contains("more repairs of the kinds listed"),
        "{err}"
    );
}

/// `stream`: one line per change of the value so far, a broken rule on stderr when its value
/// completes, then the final value with `check`'s exit status; the lines only grow, whatever
/// the chunk size.
#[test]
fn stream_prints_the_value_as_it_grows_then_the_final_one() {
    let schema = tempfile_path::write(
        r#"{"type": "object", "properties": {
            "level": {"type": "string", "enum": ["low", "high"]},
            "note": {"type": "string"},
            "score": {"type": "number", "minimum": 0, "maximum": 1}},
           "required": ["level", "note", "score"], "additionalProperties": false}"#,
    );
    let path = schema.0.to_str().unwrap();
    let answer = "Here:\n```json\n{\"level\": \"high\", \"note\": \"rates \\u2014 up\", \"score\": 0.9}\n```";
    for every in ["1", "2", "5", "64"] {
        let (code, out, err) = run(&["stream", "--schema", path, "--every", every], answer);
        assert_eq!(code, 5, "--every {every}: {err}");
        let (shown, last) = replay(&out);
        assert_eq!(
            last,
            serde_json::json!({"level": "high", "note": "rates — up", "score": 0.9})
        );
        // The changes rebuild the final value; the enum value appears whole, the note grows.
        let shown = shown.expect("changes");
        assert_eq!(shown.last(), Some(&last), "--every {every}: {out}");
        assert!(shown
            .iter()
            .all(|v| v.get("level").is_none_or(|v| v == "high")));
        if every != "64" {
            assert!(shown.len() > 3, "--every {every}: {out}");
        }
        assert!(err.contains("fenced block"), "{err}");
    }
    let (code, out, err) = run(
        &["stream", "--schema", path, "--every", "3"],
        "{\"level\": \"low\", \"score\": 4",
    );
    assert_eq!(code, 3, "{err}");
    let (shown, _) = replay(&format!("{out}null\n"));
    assert_eq!(
        shown.and_then(|s| s.last().cloned()),
        Some(serde_json::json!({"level": "low"}))
    );
    let (code, _, err) = run(
        &["stream", "--schema", path],
        r#"{"level": "low", "note": "", "score": 4}"#,
    );
    assert_eq!(code, 2);
    // Said when the value completed, then again by the final reading.
    assert_eq!(err.matches("/score").count(), 2, "{err}");
    for (args, says) in [
        (vec!["stream"], "needs `--schema"),
        (vec!["stream", "--schema", path, "--every", "0"], "above 0"),
        (
            vec!["check", "--schema", path, "--every", "4"],
            "belongs to `stream`",
        ),
    ] {
        let (code, _, err) = run(&args, "");
        assert_eq!(code, 64, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn grammar_prints_the_gbnf_and_says_what_it_leaves_and_adds() {
    let schema = schema_file();
    let path = schema.0.to_str().unwrap();
    let (code, out, err) = run(&["grammar", "--schema", path, "--max-tokens", "256"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("root ::= "), "{out}");
    assert!(out.contains("\\\"score\\\""), "{out}");
    assert!(out.lines().any(|l| l.starts_with("ws ::= ")), "{out}");
    assert!(err.is_empty(), "nothing left, nothing added: {err}");
    let open = tempfile_path::write(
        r#"{"type": "object", "properties": {"note": {"type": "string"}, "n": {"type": "integer", "multipleOf": 2}},
           "required": ["note", "n"], "additionalProperties": false}"#,
    );
    let (code, _, err) = run(
        &[
            "grammar",
            "--schema",
            open.0.to_str().unwrap(),
            "--max-tokens",
            "256",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("limit added: /properties/note maxLength 64"),
        "{err}"
    );
    assert!(
        err.contains("left to the validator: /properties/n multipleOf"),
        "{err}"
    );
    let (code, _, err) = run(&["grammar"], "");
    assert_eq!(code, 64, "{err}");
}

/// A value the schema judges only whole (here an `enum` of objects) is held up to `--max-whole`
/// bytes of its text: past it `check` refuses with status 10 and says where and why, and
/// `stream` says its checks were left to the final reading; within it, the verdict.
#[test]
fn a_value_judged_only_whole_is_refused_past_max_whole() {
    let schema = tempfile_path::write(r#"{"enum": [{"a": [1, 2]}, {"a": [3]}]}"#);
    let path = schema.0.to_str().unwrap();
    let within = |command: &str, answer: &str| {
        run(&[command, "--schema", path, "--max-whole", "64"], answer)
    };
    let answer = format!(r#"{{"a": [{}3]}}"#, "1, ".repeat(100));
    let (code, out, err) = within("check", &answer);
    assert_eq!(code, 10, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("the JSON at (root) (310 bytes)"), "{err}");
    assert!(err.contains("--max-whole"), "{err}");
    let (code, _, err) = run(&["check", "--schema", path], &answer);
    assert_eq!(code, 2, "the enum refuses it: {err}");
    let (code, out, _) = within("check", r#"{"a": [3]}"#);
    assert_eq!((code, out.trim()), (0, r#"{"a":[3]}"#));
    let (code, _, err) = within("stream", &answer);
    assert_eq!(code, 10, "{err}");
    assert!(
        err.contains("note: the value at (root) outgrew the 64 bytes"),
        "{err}"
    );
    let (code, _, err) = run(&["repair", "--max-whole", "64"], "{}");
    assert_eq!(code, 64, "{err}");
}
