//! `structured batch`: a job of many items, each read into one schema through a chat endpoint,
//! its state in a SQLite store so a job stopped at any point resumes where it stood.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use structured_runtime::batch::{
    run_on_batch_api, run_on_chat, BatchError, BatchOptions, JobItem, JobSpec, Status, Store,
};
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::wire::Prices;
use structured_runtime::schema::SchemaLimits;
use structured_runtime::RunConfig;

pub const HELP: &str = "\
structured batch: read many items into one JSON Schema, resumably

USAGE:
    structured batch run --store job.db --schema schema.json --input items.jsonl
                         [--prompt TEXT | --prompt-file FILE] [--max-tokens N]
                         [--output results.jsonl] [--concurrency N]
    structured batch run --store job.db [--output results.jsonl] [--concurrency N]
    structured batch run ... --batch-api [--poll SECONDS] [--in-flight N]
    structured batch status --store job.db
    structured batch results --store job.db --output results.jsonl

COMMANDS:
    run       Make the job (when the store holds none: --schema and --input needed),
              or resume it, and read every item not finished through the chat endpoint
              named by STRUCTURED_PROVIDER, STRUCTURED_MODEL, STRUCTURED_BASE_URL and
              STRUCTURED_API_KEY (a local model, a server without a batch API), at most
              --concurrency at once (4). Each answer is read, fitted, validated and
              re-asked as one run is. Results are appended to --output (the store's path
              with .jsonl) as they finish, each item exactly once even across a killed
              run. Killed or stopped at any point, run it again to go on.
              With --batch-api, the requests go through the provider's batch API
              instead (STRUCTURED_PROVIDER=openai or openai-responses: OpenAI's Batch
              API; anthropic: Message Batches; gemini: batch mode; half the price, a 24 h
              window): split into batches within its limits, looked at every --poll
              seconds (30), re-asks in follow-up batches; killed at any point, run again
              and no request is given to two batches (Anthropic's batches keep no tag: a
              batch lost to a kill is known again by its size and its results).
    status    Where the job stands: items pending, running, done, failed, written,
              re-asked, and the cost when the job has prices.
    results   Append the finished results not written yet to --output.

ITEMS (one JSON object per line of --input):
    {\"id\": \"a1\", \"input\": \"...\"}     the input goes into the prompt where it says
                                      {input} (after it, on a new line, otherwise)
    {\"id\": \"a2\", \"system\": \"...\", \"messages\": [{\"role\": \"user\", \"text\": \"...\"}]}
    An item without an id takes its line number.

RESULTS (one JSON object per line of --output):
    {\"id\", \"value\", \"provenance\", \"warnings\", \"attempts\", \"usage\"}, or
    {\"id\", \"error\": {\"kind\", \"message\"}, \"ledger\", \"attempts\", \"usage\"}
    with \"cost\" when the job was made with --price-input and --price-output (per
    million tokens; a batch API's requests at half).

EXIT STATUS:
    0   every item was read into a valid value
    2   the job ended, and some items failed (their errors are in the results)
    64  bad usage
    66  the store, the schema, the input or the output cannot be read or written
    69  the provider is not configured
";

const FAILED_ITEMS: u8 = 2;
const USAGE: u8 = 64;
const NO_INPUT: u8 = 66;
const UNAVAILABLE: u8 = 69;

#[derive(Default)]
struct Args {
    command: String,
    store: Option<PathBuf>,
    schema: Option<PathBuf>,
    input: Option<PathBuf>,
    prompt: Option<String>,
    prompt_file: Option<PathBuf>,
    max_tokens: Option<u32>,
    output: Option<PathBuf>,
    concurrency: Option<usize>,
    batch_api: bool,
    poll: Option<u64>,
    in_flight: Option<usize>,
    price_input: Option<f64>,
    price_output: Option<f64>,
}

/// `structured batch ...`: its exit status.
pub fn main(args: impl Iterator<Item = String>) -> u8 {
    let args = match parse(args) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{HELP}");
            return 0;
        }
        Err(message) => {
            eprintln!("structured batch: {message}\nRun `structured batch --help` for usage.");
            return USAGE;
        }
    };
    let store_path = args.store.clone().unwrap_or_default();
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| store_path.with_extension("jsonl"));
    let outcome = match args.command.as_str() {
        "status" => Store::open(&store_path)
            .and_then(|s| s.status())
            .map(|status| {
                println!("{}", status_line(&status));
                0
            }),
        "results" => Store::open(&store_path).and_then(|mut store| {
            let written = store.write_results(&output)?;
            eprintln!("{written} result(s) written to {}", output.display());
            Ok(0)
        }),
        _ => run(&args, &store_path, &output),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("structured batch: {e}");
            NO_INPUT
        }
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parsed = Args::default();
    let path = |value: Option<String>, flag: &str| {
        value
            .map(PathBuf::from)
            .ok_or_else(|| format!("`{flag}` needs a file"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" | "help" => return Ok(None),
            "--store" => parsed.store = Some(path(args.next(), "--store")?),
            "--schema" => parsed.schema = Some(path(args.next(), "--schema")?),
            "--input" => parsed.input = Some(path(args.next(), "--input")?),
            "--output" => parsed.output = Some(path(args.next(), "--output")?),
            "--prompt-file" => parsed.prompt_file = Some(path(args.next(), "--prompt-file")?),
            "--prompt" => match args.next() {
                Some(text) => parsed.prompt = Some(text),
                None => return Err("`--prompt` needs a text: `--prompt 'Read {input}'`".into()),
            },
            "--max-tokens" => match args.next().map(|n| n.parse::<u32>()) {
                Some(Ok(n)) if n > 0 => parsed.max_tokens = Some(n),
                _ => return Err("`--max-tokens` needs a number above 0".into()),
            },
            "--concurrency" => match args.next().map(|n| n.parse::<usize>()) {
                Some(Ok(n)) if (1..=256).contains(&n) => parsed.concurrency = Some(n),
                _ => return Err("`--concurrency` needs a number from 1 to 256".into()),
            },
            "--batch-api" => parsed.batch_api = true,
            "--poll" => match args.next().map(|n| n.parse::<u64>()) {
                Some(Ok(n)) => parsed.poll = Some(n),
                _ => return Err("`--poll` needs a number of seconds".into()),
            },
            "--in-flight" => match args.next().map(|n| n.parse::<usize>()) {
                Some(Ok(n)) if n > 0 => parsed.in_flight = Some(n),
                _ => return Err("`--in-flight` needs a number above 0".into()),
            },
            "--price-input" | "--price-output" => match args.next().map(|n| n.parse::<f64>()) {
                Some(Ok(p)) if p >= 0.0 && p.is_finite() => match arg.as_str() {
                    "--price-input" => parsed.price_input = Some(p),
                    _ => parsed.price_output = Some(p),
                },
                _ => return Err(format!("`{arg}` needs a price per million tokens")),
            },
            "run" | "status" | "results" if parsed.command.is_empty() => parsed.command = arg,
            other if other.starts_with('-') => return Err(format!("unknown option `{other}`")),
            other => {
                return Err(format!(
                    "unknown command `{other}`: expected `run`, `status` or `results`"
                ))
            }
        }
    }
    let creates = parsed.schema.is_some() || parsed.input.is_some();
    match parsed.command.as_str() {
        "" => Err("no command: expected `run`, `status` or `results`".into()),
        _ if parsed.store.is_none() => Err("a job needs `--store job.db`".into()),
        "run" if creates && (parsed.schema.is_none() || parsed.input.is_none()) => {
            Err("a new job needs both `--schema schema.json` and `--input items.jsonl`".into())
        }
        "run" if parsed.prompt.is_some() && parsed.prompt_file.is_some() => {
            Err("give the prompt once: `--prompt` or `--prompt-file`".into())
        }
        "status" | "results" if creates || parsed.concurrency.is_some() => Err(format!(
            "`{}` reads the store only: it takes `--store`{}",
            parsed.command,
            if parsed.command == "results" {
                " and `--output`"
            } else {
                ""
            }
        )),
        "results" if parsed.output.is_none() => Err("`results` needs `--output`".into()),
        _ if parsed.price_input.is_some() != parsed.price_output.is_some() => {
            Err("give both `--price-input` and `--price-output`".into())
        }
        _ if parsed.price_input.is_some() && !creates => {
            Err("prices are set when the job is made (with `--schema` and `--input`)".into())
        }
        _ if !parsed.batch_api && (parsed.poll.is_some() || parsed.in_flight.is_some()) => {
            Err("`--poll` and `--in-flight` go with `--batch-api`".into())
        }
        _ if parsed.batch_api && parsed.concurrency.is_some() => Err(
            "`--concurrency` is for the chat endpoint; with `--batch-api`, `--in-flight`".into(),
        ),
        _ => Ok(Some(parsed)),
    }
}

/// Makes or resumes the job, then reads every item not finished.
fn run(args: &Args, store_path: &Path, output: &Path) -> Result<u8, BatchError> {
    let mut store = match (&args.schema, &args.input) {
        (Some(schema), Some(input)) if !has_job(store_path) => create(args, schema, input)?,
        (Some(_), _) | (_, Some(_)) => {
            return Err(BatchError::Exists(store_path.display().to_string()))
        }
        _ => Store::open(store_path)?,
    };
    let provider = match HttpProvider::from_env() {
        Ok(provider) => provider,
        Err(e) => {
            eprintln!("structured batch: the provider: {e}");
            return Ok(UNAVAILABLE);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BatchError::Store(format!("the async runtime: {e}")))?;
    let config = RunConfig::default();
    let mut bar = Progress::new(store.status()?);
    let status = if args.batch_api {
        let options = BatchOptions {
            poll_every: Duration::from_secs(args.poll.unwrap_or(30)),
            in_flight: args.in_flight.unwrap_or(BatchOptions::default().in_flight),
            ..BatchOptions::default()
        };
        runtime.block_on(run_on_batch_api(
            &mut store,
            &provider,
            &config,
            &options,
            Some(output),
            |status| bar.show(status),
        ))?
    } else {
        runtime.block_on(run_on_chat(
            &mut store,
            &provider,
            &config,
            args.concurrency.unwrap_or(4),
            Some(output),
            |status| bar.show(status),
        ))?
    };
    bar.finish(&status);
    Ok(if status.failed > 0 { FAILED_ITEMS } else { 0 })
}

fn has_job(path: &Path) -> bool {
    path.exists() && Store::open(path).is_ok()
}

/// A new job from the schema file, the items file and the prompt.
fn create(args: &Args, schema: &Path, input: &Path) -> Result<Store, BatchError> {
    let unread = |path: &Path, message: String| BatchError::Input {
        path: path.display().to_string(),
        message,
    };
    let limits = SchemaLimits {
        object_root: false,
        ..SchemaLimits::default()
    };
    // Read as `check` reads a schema: refused past its size before it is read.
    let schema = crate::schema_file(&schema.display().to_string(), &limits)
        .map_err(|message| unread(schema, message))?;
    let prompt = match (&args.prompt, &args.prompt_file) {
        (Some(text), _) => text.clone(),
        (_, Some(path)) => {
            crate::read_capped("prompt", &path.display().to_string(), limits.max_bytes)
                .map_err(|message| unread(path, message))?
        }
        _ => String::new(),
    };
    let spec = JobSpec {
        schema,
        prompt,
        max_tokens: args.max_tokens,
        prices: args
            .price_input
            .zip(args.price_output)
            .map(|(input, output)| Prices {
                input,
                output,
                cached_input: None,
                batch: None,
            }),
    };
    let file = std::fs::File::open(input).map_err(|e| unread(input, e.to_string()))?;
    // Read a line at a time: the job's size is the store's, not memory's.
    let items = BufReader::new(file)
        .lines()
        .zip(1u64..)
        .filter(|(line, _)| line.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .map(|(line, n)| {
            let line = line.map_err(|e| BatchError::Item {
                line: n,
                message: e.to_string(),
            })?;
            serde_json::from_str::<JobItem>(&line).map_err(|e| BatchError::Item {
                line: n,
                message: e.to_string(),
            })
        });
    Store::create(args.store.clone().unwrap_or_default(), &spec, items)
}

fn status_line(status: &Status) -> String {
    let cost = status
        .cost
        .map(|c| format!("; cost {c:.6}"))
        .unwrap_or_default();
    format!(
        "{} items: {} done, {} failed, {} running, {} pending; {} written; {} re-asked; {} runs; {} input and {} output tokens{cost}",
        status.total,
        status.done,
        status.failed,
        status.running,
        status.pending,
        status.written,
        status.reasked,
        status.runs,
        status.usage.input_tokens,
        status.usage.output_tokens
    )
}

/// A progress bar on stderr when it is a terminal: items finished of all, done, failed,
/// re-asked, in flight, and the time left at the pace so far. Quiet otherwise, but for the last line.
struct Progress {
    terminal: bool,
    started: Instant,
    finished_at_start: u64,
    last: Option<Instant>,
}

impl Progress {
    fn new(status: Status) -> Progress {
        Progress {
            terminal: std::io::stderr().is_terminal(),
            started: Instant::now(),
            finished_at_start: status.finished(),
            last: None,
        }
    }

    fn show(&mut self, status: &Status) {
        if !self.terminal
            || self
                .last
                .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(Instant::now());
        let done_now = status.finished().saturating_sub(self.finished_at_start);
        let left = status.total.saturating_sub(status.finished());
        let eta = match done_now {
            0 => "?".to_owned(),
            n => {
                let per_item = self.started.elapsed().as_secs_f64() / n as f64;
                format!("{:.0}s", per_item * left as f64)
            }
        };
        let width = 30usize;
        let filled = (status.finished() as usize * width)
            .checked_div(status.total as usize)
            .unwrap_or(0);
        let bar: String = "#".repeat(filled) + &".".repeat(width - filled.min(width));
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r[{bar}] {}/{} · {} done · {} failed · {} re-asked · {} running · {eta} left ",
            status.finished(),
            status.total,
            status.done,
            status.failed,
            status.reasked,
            status.running
        );
        let _ = err.flush();
    }

    fn finish(&self, status: &Status) {
        if self.terminal {
            eprintln!();
        }
        eprintln!("{}", status_line(status));
    }
}
