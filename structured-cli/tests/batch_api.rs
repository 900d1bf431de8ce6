//! `structured batch run --batch-api` killed at 20 points of one job, against a fake OpenAI
//! Batch API on loopback (the batch fake of `tests/tests/common`, built from the documented
//! bodies): at a call that never answers (after an upload, after a create the provider made,
//! mid-download, mid-look) or after a pseudo-random time. The resumed job ends with every item
//! exactly once in its results, and the fake saw no request in two batches.

#[allow(dead_code)]
#[path = "../../tests/tests/common/batch_fake.rs"]
mod batch_fake;
#[allow(dead_code)]
#[path = "../../tests/tests/common/batch_http.rs"]
mod batch_http;

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use batch_fake::{FakeBatches, Script};
use batch_http::{serve, KEY};
use common::scratch;
use structured_runtime::provider::capabilities::ProviderKind;

/// The job made (when the store holds none yet) or resumed.
fn run(dir: &Path, url: &str) -> Child {
    let mut args = vec!["batch", "run", "--store", "job.db"];
    if !dir.join("job.db").exists() {
        args.extend([
            "--schema",
            "schema.json",
            "--input",
            "items.jsonl",
            "--prompt",
            "Read the total of {input}.",
            "--max-tokens",
            "16",
        ]);
    }
    args.extend([
        "--output",
        "out.jsonl",
        "--batch-api",
        "--poll",
        "0",
        "--in-flight",
        "20",
    ]);
    Command::new(env!("CARGO_BIN_EXE_structured"))
        .args(args)
        .current_dir(dir)
        .env("STRUCTURED_PROVIDER", "openai")
        .env("STRUCTURED_MODEL", "gpt-4o-mini")
        .env("STRUCTURED_BASE_URL", url)
        .env("STRUCTURED_API_KEY", KEY)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` to end within `limit`: whether it did.
fn ends(child: &mut Child, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn a_batch_api_job_killed_twenty_times_ends_with_every_item_exactly_once() {
    let dir = scratch("api-kill");
    let items = 400;
    let lines: Vec<String> = (0..items)
        .map(|i| format!(r#"{{"id": "inv-{i}", "input": "item-{i}"}}"#))
        .collect();
    std::fs::write(dir.join("items.jsonl"), lines.join("\n") + "\n").unwrap();
    let fake = Arc::new(FakeBatches::new(Script::default(), |n, _| {
        format!(r#"{{"total": {n}}}"#)
    }));
    let url = serve(fake.clone(), ProviderKind::OpenAiChat, true);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut killed = 0;
    for round in 0..20 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Even rounds: killed at a call that never answers (the 1st to 8th of this run);
        // odd ones: after 20 to 220 ms, wherever the job is.
        let stop = (round % 2 == 0).then_some(1 + (seed % 8) as usize);
        fake.rescript(Script {
            stop_at_call: stop,
            // One batch made in this run expires with half its requests not run.
            expire: vec![fake.batches() + 1],
            ..Script::default()
        });
        let mut child = run(&dir, &url);
        match stop {
            Some(stop) => {
                let started = Instant::now();
                while fake.calls() < stop && started.elapsed() < Duration::from_secs(20) {
                    if child.try_wait().unwrap().is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            None => std::thread::sleep(Duration::from_millis(20 + seed % 200)),
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
    }
    assert!(killed >= 10, "only {killed} runs were killed");
    fake.rescript(Script::default());
    let mut last = run(&dir, &url);
    assert!(
        ends(&mut last, Duration::from_secs(120)),
        "the resumed job never ends"
    );
    let out = last.wait_with_output().unwrap();
    // Items 99 are refused by the endpoint: the job ends, and says some failed.
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut ids: Vec<&str> = results.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), items, "one line per item");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), items, "each item exactly once");
    for line in &results {
        let n: u64 = line["id"].as_str().unwrap()[4..].parse().unwrap();
        if n % 100 == 99 {
            assert_eq!(line["error"]["kind"], "transport", "{line}");
        } else {
            assert_eq!(line["value"]["total"], n, "{line}");
        }
    }
    assert_eq!(
        fake.sent_twice(),
        Vec::<String>::new(),
        "no request in two batches"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
