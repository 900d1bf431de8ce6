//! `structured batch` end to end against a chat endpoint on loopback: a job runs to its end with
//! every item accounted for, and a job killed 20 times at random points ends with every item
//! exactly once in its results and no finished item read again.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::scratch;

/// How many requests the server saw per item.
type Seen = Arc<Mutex<HashMap<usize, usize>>>;

/// An OpenAI-compatible chat endpoint answering after `delay`: `{"total": N}` for the item whose
/// input is `item-N`, an invalid total for every item N with N % 10 == 8.
fn serve(delay: Duration) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let counts = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counts = counts.clone();
            std::thread::spawn(move || answer(stream, &counts, delay));
        }
    });
    (url, seen)
}

/// Answers every request on one connection (kept alive).
fn answer(stream: TcpStream, seen: &Seen, delay: Duration) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(n) = lower.strip_prefix("content-length:") {
                length = n.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let text = body["messages"][0]["content"].as_str().unwrap_or_default();
        let n: usize = text
            .split("item-")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|d| d.parse().ok())
            .unwrap_or(usize::MAX);
        *seen.lock().unwrap().entry(n).or_default() += 1;
        std::thread::sleep(delay);
        let total = if n % 10 == 8 { -1 } else { n as i64 };
        let reply = serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": format!("{{\"total\": {total}}}")}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5}})
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(reply.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

fn write_items(dir: &Path, n: usize) {
    let lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id": "inv-{i}", "input": "item-{i}"}}"#))
        .collect();
    std::fs::write(dir.join("items.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn batch(dir: &Path, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_structured"));
    command
        .arg("batch")
        .args(args)
        .current_dir(dir)
        .env("STRUCTURED_PROVIDER", "openai")
        .env("STRUCTURED_MODEL", "local")
        .env("STRUCTURED_BASE_URL", url)
        .env_remove("STRUCTURED_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

const NEW_JOB: &[&str] = &[
    "run",
    "--store",
    "job.db",
    "--schema",
    "schema.json",
    "--input",
    "items.jsonl",
    "--prompt",
    "Read the total of {input}.",
    "--max-tokens",
    "16",
    "--output",
    "out.jsonl",
    "--concurrency",
    "2",
    "--price-input",
    "1",
    "--price-output",
    "2",
];

/// Each result line's id, and the lines.
fn results(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("out.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_job_runs_to_its_end_with_every_item_accounted_for() {
    let dir = scratch("end");
    write_items(&dir, 40);
    let (url, _) = serve(Duration::from_millis(1));
    let out = batch(&dir, &url, NEW_JOB).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Items 8, 18, 28, 38 never fit: the job ends, and says some failed.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("40 items: 36 done, 4 failed"), "{stderr}");
    let lines = results(&dir);
    assert_eq!(lines.len(), 40);
    for line in &lines {
        let n: usize = line["id"].as_str().unwrap()[4..].parse().unwrap();
        if n % 10 == 8 {
            assert_eq!(line["error"]["kind"], "retries_exhausted", "{line}");
        } else {
            assert_eq!(line["value"]["total"], n, "{line}");
        }
    }
    let status = batch(&dir, &url, &["status", "--store", "job.db"])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&status.stdout);
    assert!(
        printed.starts_with("40 items: 36 done, 4 failed, 0 running, 0 pending; 40 written"),
        "{printed}"
    );
    // The four that never fit were re-asked before they failed.
    assert!(printed.contains("; 4 re-asked;"), "{printed}");
    // Priced at 1 and 2 per million tokens: each line has its cost, the status their sum.
    assert!(
        lines.iter().all(|l| l["cost"].as_f64().unwrap() > 0.0),
        "{lines:?}"
    );
    let total: f64 = lines.iter().map(|l| l["cost"].as_f64().unwrap()).sum();
    assert!(
        printed.contains(&format!("; cost {total:.6}")),
        "{printed} {total}"
    );
    // A new job in the same store is refused; running it again is a resume with nothing left.
    let again = batch(&dir, &url, NEW_JOB).output().unwrap();
    assert_eq!(again.status.code(), Some(66));
    let resume = ["run", "--store", "job.db", "--output", "out.jsonl"];
    let resumed = batch(&dir, &url, &resume).output().unwrap();
    assert_eq!(resumed.status.code(), Some(2));
    assert_eq!(results(&dir).len(), 40);
    // (Kept when the test fails, for a look.)
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_killed_twenty_times_ends_with_every_item_exactly_once() {
    let dir = scratch("kill");
    let items = 200;
    write_items(&dir, items);
    let (url, seen) = serve(Duration::from_millis(15));
    let resume = [
        "run",
        "--store",
        "job.db",
        "--output",
        "out.jsonl",
        "--concurrency",
        "2",
    ];
    // Killed after a pseudo-random 30-330 ms each time: before the store exists, mid-run,
    // while results are written.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut kills = 0;
    for _ in 0..20 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let wait = 30 + seed % 300;
        // A run killed before it made the job leaves no store: the next run makes it (resuming
        // a store that is not there fails at once, and no later run would be killed mid-way).
        let args: &[&str] = if dir.join("job.db").exists() {
            &resume
        } else {
            NEW_JOB
        };
        let mut child = batch(&dir, &url, args).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(wait));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
    }
    let mut last = batch(
        &dir,
        &url,
        if dir.join("job.db").exists() {
            &resume
        } else {
            NEW_JOB
        },
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    // Whatever remains takes a few seconds: a job that never ends is a failure, not a hang.
    let mut status = None;
    for _ in 0..1200 {
        status = last.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if status.is_none() {
        let _ = last.kill();
        panic!("the resumed job did not end within 120 s");
    }
    assert_eq!(status.and_then(|s| s.code()), Some(2));
    let lines = results(&dir);
    let mut ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), items, "one line per item");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), items, "each item exactly once");
    // An item that fits is asked once per run; a kill orphans at most the two in flight, so
    // only those are asked again. Re-reading finished items would ask hundreds again.
    let seen = seen.lock().unwrap();
    let asked_again: usize = (0..items)
        .filter(|n| n % 10 != 8)
        .map(|n| seen.get(&n).copied().unwrap_or(0).saturating_sub(1))
        .sum();
    assert!(
        asked_again <= 2 * kills,
        "{asked_again} repeats over {kills} kills"
    );
    assert!(kills >= 10, "the job was killed mid-way ({kills} times)");
    // (Kept when the test fails, for a look.)
    let _ = std::fs::remove_dir_all(&dir);
}
