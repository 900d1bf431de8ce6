//! The `structured` binary: output, stderr and exit codes.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_structured"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // A usage error exits before reading stdin: the pipe may be closed by then, which is fine.
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    let out = child.wait_with_output().expect("the binary ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn schema_file() -> tempfile_path::Path {
    tempfile_path::write(
        r#"{"type": "object", "properties": {
            "level": {"type": "string", "enum": ["low", "high"]},
            "score": {"type": "number", "minimum": 0, "maximum": 1}},
           "required": ["level", "score"], "additionalProperties": false}"#,
    )
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
    assert!(err.lines().count() <= 51, "{} lines", err.lines().count());
    assert!(err.lines().last().unwrap().contains("more"), "{err}");
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
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let last = lines.last().unwrap();
        assert_eq!(
            last,
            &serde_json::json!({"level": "high", "note": "rates — up", "score": 0.9})
        );
        // The enum value appears whole; the note grows; no partial line repeats the one
        // before (the final line may equal the last partial one).
        assert!(lines
            .iter()
            .all(|l| l.get("level").is_none_or(|v| v == "high")));
        let partial = &lines[..lines.len() - 1];
        assert!(
            partial.windows(2).all(|w| w[0] != w[1]),
            "--every {every}: {out}"
        );
        if every != "64" {
            assert!(partial.len() > 3, "--every {every}: {out}");
        }
        assert!(err.contains("fenced block"), "{err}");
    }
    let (code, out, err) = run(
        &["stream", "--schema", path, "--every", "3"],
        "{\"level\": \"low\", \"score\": 4",
    );
    assert_eq!(code, 3, "{err}");
    assert_eq!(out.lines().last(), Some(r#"{"level":"low"}"#));
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
