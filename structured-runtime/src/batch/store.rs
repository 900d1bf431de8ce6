//! A job's durable state: one SQLite file holding what the job asks, every item with its state
//! and result, and how much of the output has been written.
//!
//! Every change is one transaction: an item is claimed (`pending` to `running`), finished
//! (`running` to `done` or `failed`, with its result line), or written to the output (with the
//! output's new length). A process killed anywhere leaves a state a resumed one continues from:
//! items left `running` were in flight and are read again; results are written from the store,
//! each once, the output cut back to the length the store says was written.

use std::fs::OpenOptions;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension};

use super::item::JobItem;
use crate::provider::wire::{Prices, Usage};
use crate::schema::ResponseSchema;

/// What a job asks of every item: the schema its answer is read into, the prompt its input goes
/// into, the answer's token limit.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// The schema each answer is read into and checked against (its validator of record).
    pub schema: ResponseSchema,
    /// The prompt an item's `input` goes into, where it says `{input}`.
    pub prompt: String,
    /// The answer's token limit, sent with every request.
    pub max_tokens: Option<u32>,
    /// The model's prices, to cost each item and the job (at batch prices through a batch
    /// API: [`Prices::batch`]).
    pub prices: Option<Prices>,
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Status {
    /// Items in the job.
    pub total: u64,
    /// Items not started.
    pub pending: u64,
    /// Items being read (or in flight when the job was stopped: read again on resume).
    pub running: u64,
    /// Items read into a valid value.
    pub done: u64,
    /// Items whose run ended in an error (its kind and ledger in the result).
    pub failed: u64,
    /// Results written to the output.
    pub written: u64,
    /// Runs started, resumed ones included (more than `done + failed` when a job was stopped
    /// with items in flight).
    pub runs: u64,
    /// Finished items whose run asked more than once (re-asked after an answer that did not
    /// fit, or sent again after a transport failure).
    pub reasked: u64,
    /// Tokens over every finished item.
    pub usage: Usage,
    /// What the finished items cost, when the job has prices ([`JobSpec::prices`]): each at
    /// the prices of the way it was read (half through a batch API).
    pub cost: Option<f64>,
}

impl Status {
    /// Items finished, valid or not.
    pub fn finished(&self) -> u64 {
        self.done + self.failed
    }
}

/// Why a job could not be made, read or written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The store could not be read or written.
    #[error("the job store: {0}")]
    Store(String),
    /// An item of the input is not one.
    #[error("item {line}: {message}")]
    Item {
        /// Its line, from 1.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Two items have one id.
    #[error("item {line}: the id `{id}` is given to an earlier item too")]
    DuplicateId {
        /// The later item's line, from 1.
        line: u64,
        /// The id.
        id: String,
    },
    /// A file the job is made from (its schema, prompt or items) could not be read, or is not
    /// what it should be.
    #[error("`{path}`: {message}")]
    Input {
        /// Its path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The output could not be written.
    #[error("the output `{path}`: {message}")]
    Output {
        /// Its path.
        path: String,
        /// What failed.
        message: String,
    },
    /// A new job was asked for in a store that holds one.
    #[error("`{0}` already holds a job: run it again to resume it, or give a new store")]
    Exists(String),
    /// A store was opened that holds no job.
    #[error("`{0}` holds no job")]
    NoJob(String),
}

impl From<rusqlite::Error> for BatchError {
    fn from(e: rusqlite::Error) -> Self {
        BatchError::Store(e.to_string())
    }
}

/// An item's state, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Pending = 0,
    Running = 1,
    Done = 2,
    Failed = 3,
}

/// An item's run as it ended: its result line, the tokens it took and what they cost.
pub(crate) struct Finished {
    pub(crate) state: State,
    /// Requests its run sent.
    pub(crate) attempts: u64,
    pub(crate) line: String,
    pub(crate) usage: Usage,
    pub(crate) cost: Option<f64>,
}

/// What the store knows of a request sent in a batch.
pub(crate) enum Sent {
    /// Its answer, as stored (see `batch::api`).
    Answered(String),
    /// In chunk `n`, not answered yet.
    Waiting,
}

/// A chunk of requests whose batch has not ended.
pub(crate) struct OpenChunk {
    /// Its number.
    pub(crate) n: i64,
    /// Its uploaded request file, once uploaded.
    pub(crate) file_id: Option<String>,
    /// Its batch, once made.
    pub(crate) batch_id: Option<String>,
}

/// An item claimed for a run.
pub(crate) struct Claimed {
    pub(crate) seq: i64,
    pub(crate) id: String,
    pub(crate) item: JobItem,
}

/// A job's store: one SQLite file holding what the job asks, every item with its state and
/// result, and how much of the output has been written. Every change is one transaction (an
/// item claimed, finished, or written out), so a process killed anywhere leaves a state a
/// resumed one continues from: items left running were in flight and are read again; results
/// are written from the store, each once. A `status` may read it beside a running job.
pub struct Store {
    conn: Connection,
    path: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

const TABLES: &str = "
    CREATE TABLE IF NOT EXISTS job (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS item (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        item TEXT NOT NULL,
        state INTEGER NOT NULL DEFAULT 0,
        runs INTEGER NOT NULL DEFAULT 0,
        result TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cached_input_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL,
        written INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS item_state ON item (state, seq);
    CREATE INDEX IF NOT EXISTS item_unwritten ON item (seq) WHERE state >= 2 AND written IS NULL;
    CREATE TABLE IF NOT EXISTS request (
        custom_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        chunk INTEGER NOT NULL,
        answer TEXT
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS request_chunk ON request (chunk);
    CREATE INDEX IF NOT EXISTS request_seq ON request (seq);
    CREATE TABLE IF NOT EXISTS chunk (
        n INTEGER PRIMARY KEY,
        file_id TEXT,
        batch_id TEXT,
        closed INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS output (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        bytes INTEGER NOT NULL,
        lines INTEGER NOT NULL
    );
";

/// Results written to the output per transaction, at most (what is held at once).
const WRITE_CHUNK: usize = 1000;

impl Store {
    /// A new job in a new store at `path`: `spec`, and `items` in order (each an item, or the
    /// reason its line is not one). Items are stored as they come, so memory does not grow with
    /// the job. Refused when the store already holds a job, when an item is not one (naming its
    /// line), or when two items share an id.
    pub fn create(
        path: impl AsRef<Path>,
        spec: &JobSpec,
        items: impl IntoIterator<Item = Result<JobItem, BatchError>>,
    ) -> Result<Store, BatchError> {
        let path = path.as_ref();
        if path.exists() {
            let store = Store::connect(path, false)?;
            if store.has_job()? {
                return Err(BatchError::Exists(store.path.clone()));
            }
            // A store without its job (as a run stopped while making one used to leave it):
            // it holds nothing, and the new one takes its place.
            drop(store);
            remove_store_files(path);
        }
        // Made beside it, under a name of its own, and put in its place whole: a run stopped
        // while making it leaves no store without its job (a later run makes it again).
        let making = making_path(path);
        remove_store_files(&making);
        let made = Store::fill(&making, spec, items).and_then(|store| {
            // Closed first: its log is written into the file, which then holds everything.
            store.conn.close().map_err(|(_, e)| BatchError::from(e))?;
            place(&making, path)
        });
        if made.is_err() {
            remove_store_files(&making);
        }
        made?;
        Store::open(path)
    }

    /// A store at `path` (new) holding the job: what it asks and its items.
    fn fill(
        path: &Path,
        spec: &JobSpec,
        items: impl IntoIterator<Item = Result<JobItem, BatchError>>,
    ) -> Result<Store, BatchError> {
        let mut store = Store::connect(path, true)?;
        let tx = store.conn.transaction()?;
        {
            let mut put = tx.prepare("INSERT INTO job (key, value) VALUES (?1, ?2)")?;
            let schema = serde_json::to_string(&spec.schema)
                .map_err(|e| BatchError::Store(e.to_string()))?;
            put.execute(params!["schema", schema])?;
            put.execute(params!["prompt", spec.prompt])?;
            if let Some(max) = spec.max_tokens {
                put.execute(params!["max_tokens", max.to_string()])?;
            }
            if let Some(prices) = &spec.prices {
                let prices =
                    serde_json::to_string(prices).map_err(|e| BatchError::Store(e.to_string()))?;
                put.execute(params!["prices", prices])?;
            }
            let mut insert = tx.prepare("INSERT INTO item (seq, id, item) VALUES (?1, ?2, ?3)")?;
            for (line, item) in (1u64..).zip(items) {
                let mut item = item?;
                if let Some(message) = item.problem() {
                    return Err(BatchError::Item {
                        line,
                        message: message.into(),
                    });
                }
                let id = item.id.take().unwrap_or_else(|| line.to_string());
                let text =
                    serde_json::to_string(&item).map_err(|e| BatchError::Store(e.to_string()))?;
                match insert.execute(params![line as i64, id, text]) {
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.code == ErrorCode::ConstraintViolation =>
                    {
                        return Err(BatchError::DuplicateId { line, id });
                    }
                    other => other?,
                };
            }
        }
        tx.commit()?;
        Ok(store)
    }

    /// The job in the store at `path`, as it was left.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, BatchError> {
        let store = Store::connect(path.as_ref(), false)?;
        if !store.has_job()? {
            return Err(BatchError::NoJob(store.path.clone()));
        }
        Ok(store)
    }

    /// The store at `path`, made when `create` (else a missing file is no job).
    fn connect(path: &Path, create: bool) -> Result<Store, BatchError> {
        use rusqlite::OpenFlags;
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        } else if !path.exists() {
            return Err(BatchError::NoJob(path.display().to_string()));
        }
        let conn = Connection::open_with_flags(path, flags)?;
        // The write-ahead log: a killed process loses nothing committed, and a reader (a
        // `status` beside a running job) does not wait for the writer.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(TABLES)?;
        // A store made before items kept their attempts gains the column.
        let has_attempts: i64 = conn.query_row(
            "SELECT COUNT(*) FROM pragma_table_info('item') WHERE name = 'attempts'",
            [],
            |r| r.get(0),
        )?;
        if has_attempts == 0 {
            conn.execute_batch("ALTER TABLE item ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0")?;
        }
        Ok(Store {
            conn,
            path: path.display().to_string(),
        })
    }

    fn has_job(&self) -> Result<bool, BatchError> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM job WHERE key = 'schema'", [], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// What the job asks.
    pub fn spec(&self) -> Result<JobSpec, BatchError> {
        let get = |key: &str| -> Result<Option<String>, BatchError> {
            Ok(self
                .conn
                .query_row("SELECT value FROM job WHERE key = ?1", [key], |r| r.get(0))
                .optional()?)
        };
        let schema = get("schema")?.ok_or_else(|| BatchError::NoJob(self.path.clone()))?;
        let schema: ResponseSchema = serde_json::from_str(&schema)
            .map_err(|e| BatchError::Store(format!("the job's schema: {e}")))?;
        Ok(JobSpec {
            schema,
            prompt: get("prompt")?.unwrap_or_default(),
            max_tokens: get("max_tokens")?.and_then(|m| m.parse().ok()),
            prices: match get("prices")? {
                Some(prices) => Some(
                    serde_json::from_str(&prices)
                        .map_err(|e| BatchError::Store(format!("the job's prices: {e}")))?,
                ),
                None => None,
            },
        })
    }

    /// Where the job stands.
    pub fn status(&self) -> Result<Status, BatchError> {
        let mut status = Status::default();
        let mut counts = self.conn.prepare(
            "SELECT state, COUNT(*), SUM(runs), SUM(input_tokens), SUM(output_tokens),
                    SUM(cached_input_tokens), COUNT(written), SUM(cost), SUM(attempts > 1)
             FROM item GROUP BY state",
        )?;
        let rows = counts.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<f64>>(7)?,
                r.get::<_, Option<i64>>(8)?,
            ))
        })?;
        let n = |v: Option<i64>| u64::try_from(v.unwrap_or(0)).unwrap_or(0);
        for row in rows {
            let (state, count, runs, input, output, cached, written, cost, reasked) = row?;
            status.reasked += n(reasked);
            if let Some(cost) = cost {
                status.cost = Some(status.cost.unwrap_or(0.0) + cost);
            }
            let count = n(Some(count));
            status.total += count;
            status.runs += n(runs);
            status.written += n(Some(written));
            status.usage = status.usage.plus(Usage {
                input_tokens: n(input),
                output_tokens: n(output),
                cached_input_tokens: n(cached),
            });
            match state {
                0 => status.pending += count,
                1 => status.running += count,
                2 => status.done += count,
                _ => status.failed += count,
            }
        }
        Ok(status)
    }

    /// Items left in flight by a stopped job, back to pending.
    pub(crate) fn requeue_running(&self) -> Result<usize, BatchError> {
        Ok(self.conn.execute(
            "UPDATE item SET state = ?1 WHERE state = ?2",
            params![State::Pending as i64, State::Running as i64],
        )?)
    }

    /// Up to `n` pending items, in order, now running.
    pub(crate) fn claim(&mut self, n: usize) -> Result<Vec<Claimed>, BatchError> {
        let tx = self.conn.transaction()?;
        let claimed = {
            let mut pick = tx
                .prepare("SELECT seq, id, item FROM item WHERE state = ?1 ORDER BY seq LIMIT ?2")?;
            let rows = pick.query_map(params![State::Pending as i64, n as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            let mut claimed = Vec::with_capacity(n);
            for row in rows {
                let (seq, id, text) = row?;
                let item: JobItem = serde_json::from_str(&text)
                    .map_err(|e| BatchError::Store(format!("item {id}: {e}")))?;
                claimed.push(Claimed { seq, id, item });
            }
            let mut start =
                tx.prepare("UPDATE item SET state = ?1, runs = runs + 1 WHERE seq = ?2")?;
            for c in &claimed {
                start.execute(params![State::Running as i64, c.seq])?;
            }
            claimed
        };
        tx.commit()?;
        Ok(claimed)
    }

    /// Item `seq` finished: its state, result line, tokens and cost. Its batch requests are
    /// dropped: a finished item is never run again.
    pub(crate) fn finish(&self, seq: i64, result: &Finished) -> Result<(), BatchError> {
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        // One transaction: a request is never dropped for an item left unfinished.
        let tx = self.conn.unchecked_transaction()?;
        tx.execute("DELETE FROM request WHERE seq = ?1", [seq])?;
        tx.execute(
            "UPDATE item SET state = ?1, result = ?2, input_tokens = ?3, output_tokens = ?4,
                    cached_input_tokens = ?5, cost = ?6, attempts = ?7
             WHERE seq = ?8 AND state = ?9",
            params![
                result.state as i64,
                result.line,
                as_i64(result.usage.input_tokens),
                as_i64(result.usage.output_tokens),
                as_i64(result.usage.cached_input_tokens),
                result.cost,
                as_i64(result.attempts),
                seq,
                State::Running as i64
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The job's key: how its batches are told apart from others at the provider.
    pub(crate) fn job_key(&self) -> Result<String, BatchError> {
        let key: Option<String> = self
            .conn
            .query_row("SELECT value FROM job WHERE key = 'job_key'", [], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(key) = key {
            return Ok(key);
        }
        // Made once, from the time and the process: unique enough to find this job's batches.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let key = format!("{nanos:x}-{:x}", std::process::id());
        self.conn.execute(
            "INSERT OR IGNORE INTO job (key, value) VALUES ('job_key', ?1)",
            [&key],
        )?;
        Ok(self
            .conn
            .query_row("SELECT value FROM job WHERE key = 'job_key'", [], |r| {
                r.get(0)
            })?)
    }

    /// What the store knows of request `custom_id`: its answer, or that it waits in a batch;
    /// `None` when it was never sent.
    pub(crate) fn request(&self, custom_id: &str) -> Result<Option<Sent>, BatchError> {
        let answer: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT answer FROM request WHERE custom_id = ?1",
                [custom_id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(answer.map(|answer| match answer {
            Some(answer) => Sent::Answered(answer),
            None => Sent::Waiting,
        }))
    }

    /// A new chunk of requests, `(custom_id, seq, body)` each, recorded before anything is sent:
    /// its number.
    pub(crate) fn record_chunk(
        &mut self,
        requests: &[(String, i64, String)],
    ) -> Result<i64, BatchError> {
        let tx = self.conn.transaction()?;
        let n = {
            tx.execute(
                "INSERT INTO chunk (file_id, batch_id) VALUES (NULL, NULL)",
                [],
            )?;
            let n = tx.last_insert_rowid();
            let mut put = tx.prepare(
                "INSERT OR REPLACE INTO request (custom_id, seq, body, chunk) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (custom_id, seq, body) in requests {
                put.execute(params![custom_id, seq, body, n])?;
            }
            n
        };
        tx.commit()?;
        Ok(n)
    }

    /// Chunk `n`'s requests, `(custom_id, body)` each.
    pub(crate) fn chunk_requests(&self, n: i64) -> Result<Vec<(String, String)>, BatchError> {
        let mut pick = self.conn.prepare(
            "SELECT custom_id, body FROM request WHERE chunk = ?1 ORDER BY seq, custom_id",
        )?;
        let rows = pick.query_map([n], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many requests chunk `n` holds.
    pub(crate) fn chunk_len(&self, n: i64) -> Result<usize, BatchError> {
        let count: i64 =
            self.conn
                .query_row("SELECT COUNT(*) FROM request WHERE chunk = ?1", [n], |r| {
                    r.get(0)
                })?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// Chunks not closed, in order.
    pub(crate) fn open_chunks(&self) -> Result<Vec<OpenChunk>, BatchError> {
        let mut pick = self
            .conn
            .prepare("SELECT n, file_id, batch_id FROM chunk WHERE closed = 0 ORDER BY n")?;
        let rows = pick.query_map([], |r| {
            Ok(OpenChunk {
                n: r.get(0)?,
                file_id: r.get(1)?,
                batch_id: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Chunk `n`'s request file was uploaded as `file_id`.
    pub(crate) fn set_chunk_file(&self, n: i64, file_id: &str) -> Result<(), BatchError> {
        self.conn.execute(
            "UPDATE chunk SET file_id = ?1 WHERE n = ?2",
            params![file_id, n],
        )?;
        Ok(())
    }

    /// Chunk `n` runs as batch `batch_id`: its bodies are no longer needed.
    pub(crate) fn set_chunk_batch(&mut self, n: i64, batch_id: &str) -> Result<(), BatchError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE chunk SET batch_id = ?1 WHERE n = ?2",
            params![batch_id, n],
        )?;
        tx.execute("UPDATE request SET body = '' WHERE chunk = ?1", [n])?;
        tx.commit()?;
        Ok(())
    }

    /// Whether a chunk of the job was made batch `batch_id`.
    pub(crate) fn batch_known(&self, batch_id: &str) -> Result<bool, BatchError> {
        let known: Option<i64> = self
            .conn
            .query_row("SELECT n FROM chunk WHERE batch_id = ?1", [batch_id], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(known.is_some())
    }

    /// Chunk `n` ended: each request's answer (`answers`, by custom_id), and for every request
    /// without one, `missing`. Returns every request's custom_id and answer.
    pub(crate) fn close_chunk(
        &mut self,
        n: i64,
        answers: &std::collections::HashMap<String, String>,
        missing: &str,
    ) -> Result<Vec<(String, String)>, BatchError> {
        let tx = self.conn.transaction()?;
        let all = {
            let ids: Vec<String> = {
                let mut pick = tx.prepare("SELECT custom_id FROM request WHERE chunk = ?1")?;
                let rows = pick.query_map([n], |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let mut set = tx.prepare("UPDATE request SET answer = ?1 WHERE custom_id = ?2")?;
            let mut all = Vec::with_capacity(ids.len());
            for id in ids {
                let answer = answers.get(&id).map_or(missing, String::as_str).to_owned();
                set.execute(params![answer, id])?;
                all.push((id, answer));
            }
            tx.execute("UPDATE chunk SET closed = 1 WHERE n = ?1", [n])?;
            all
        };
        tx.commit()?;
        Ok(all)
    }

    /// The store file's size in bytes (pages in use).
    pub fn size(&self) -> Result<u64, BatchError> {
        let pages: i64 = self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let size: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(u64::try_from(pages * size).unwrap_or(0))
    }

    /// Appends to the output at `path` every finished result not written yet, in the order the
    /// items came, each once: the output is first cut to the length the store says was
    /// written (a writer killed after writing, before saying so, wrote nothing that stays).
    /// How many lines were written now.
    pub fn write_results(&mut self, path: impl AsRef<Path>) -> Result<u64, BatchError> {
        let path = path.as_ref();
        let failed = |e: std::io::Error| BatchError::Output {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let (mut bytes, mut lines): (i64, i64) = self
            .conn
            .query_row("SELECT bytes, lines FROM output WHERE one = 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?
            .unwrap_or((0, 0));
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(failed)?;
        file.set_len(u64::try_from(bytes).unwrap_or(0))
            .map_err(failed)?;
        file.seek(SeekFrom::End(0)).map_err(failed)?;
        let mut out = BufWriter::new(file);
        let mut now = 0u64;
        loop {
            let chunk: Vec<(i64, String)> = {
                let mut pick = self.conn.prepare(
                    "SELECT seq, result FROM item
                     WHERE state >= 2 AND written IS NULL ORDER BY seq LIMIT ?1",
                )?;
                let rows = pick.query_map(params![WRITE_CHUNK as i64], |r| {
                    Ok((
                        r.get(0)?,
                        r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    ))
                })?;
                rows.collect::<Result<_, _>>()?
            };
            if chunk.is_empty() {
                break;
            }
            for (_, line) in &chunk {
                out.write_all(line.as_bytes()).map_err(failed)?;
                out.write_all(b"\n").map_err(failed)?;
                bytes += i64::try_from(line.len() + 1).unwrap_or(i64::MAX);
            }
            // On disk (in the system's hands) before the store says so.
            out.flush().map_err(failed)?;
            let tx = self.conn.transaction()?;
            {
                let mut mark = tx.prepare("UPDATE item SET written = ?1 WHERE seq = ?2")?;
                for (seq, _) in &chunk {
                    lines += 1;
                    mark.execute(params![lines, seq])?;
                }
                tx.execute(
                    "INSERT INTO output (one, bytes, lines) VALUES (1, ?1, ?2)
                     ON CONFLICT (one) DO UPDATE SET bytes = ?1, lines = ?2",
                    params![bytes, lines],
                )?;
            }
            tx.commit()?;
            now += chunk.len() as u64;
        }
        Ok(now)
    }
}

/// Where a store for `path` is made before it is put in place: `path` with `.making` after it.
fn making_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".making");
    name.into()
}

/// Removes a store file and the files SQLite keeps beside it (its log and shared memory), where
/// they are.
fn remove_store_files(path: &Path) {
    for end in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(end);
        let _ = std::fs::remove_file(std::path::PathBuf::from(name));
    }
}

/// Puts the store made at `made` at `path`, unless a store has appeared there meanwhile (then
/// that one is kept): linked in place, which fails where a file is, then its making name
/// removed. Where links are not had, moved in place.
fn place(made: &Path, path: &Path) -> Result<(), BatchError> {
    let placed = match std::fs::hard_link(made, path) {
        Ok(()) => {
            let _ = std::fs::remove_file(made);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(BatchError::Exists(path.display().to_string()));
        }
        Err(_) => std::fs::rename(made, path),
    };
    placed.map_err(|e| BatchError::Store(format!("`{}`: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory of this test run's own, named `name`.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("structured-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A job reading a count.
    fn spec() -> JobSpec {
        JobSpec {
            schema: crate::ResponseSchema::new(
                "n",
                serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}},
                                   "required": ["n"], "additionalProperties": false}),
            )
            .unwrap(),
            prompt: "{input}".into(),
            max_tokens: None,
            prices: None,
        }
    }

    #[test]
    fn a_store_made_before_items_kept_their_attempts_opens_and_counts_them() {
        let dir = scratch("store");
        let path = dir.join("old.db");
        let spec = spec();
        let item = crate::batch::JobItem {
            input: Some("x".into()),
            ..Default::default()
        };
        let store = Store::create(&path, &spec, std::iter::once(Ok(item))).unwrap();
        // As an earlier version left it: no `attempts` column.
        store
            .conn
            .execute_batch("ALTER TABLE item DROP COLUMN attempts")
            .unwrap();
        drop(store);
        let mut store = Store::open(&path).unwrap();
        let claimed = store.claim(1).unwrap();
        let seq = claimed.first().unwrap().seq;
        let finished = Finished {
            state: State::Done,
            attempts: 2,
            line: "{}".into(),
            usage: Usage::default(),
            cost: None,
        };
        store.finish(seq, &finished).unwrap();
        assert_eq!(store.status().unwrap().reasked, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A store is there with its job or not at all: a job whose items cannot all be read
    /// leaves no file (a run stopped while making one leaves only the file it was made in,
    /// which the next run makes again); a store left without its job is made again in place.
    #[test]
    fn a_store_is_made_whole_or_not_at_all() {
        let dir = scratch("whole");
        let path = dir.join("job.db");
        let spec = spec();
        let item = |input: Option<&str>| {
            Ok(crate::batch::JobItem {
                input: input.map(str::to_owned),
                ..Default::default()
            })
        };
        // The second item has no input: refused, and nothing is left.
        let refused = Store::create(&path, &spec, [item(Some("x")), item(None)]);
        assert!(
            matches!(refused, Err(BatchError::Item { line: 2, .. })),
            "{refused:?}"
        );
        assert!(!path.exists());
        assert!(!making_path(&path).exists());
        // What a stopped run leaves: its making file, half made; and a store without its job.
        std::fs::write(making_path(&path), b"half a store").unwrap();
        drop(Store::connect(&path, true).unwrap());
        assert!(matches!(Store::open(&path), Err(BatchError::NoJob(_))));
        let store = Store::create(&path, &spec, [item(Some("x"))]).unwrap();
        assert_eq!(store.status().unwrap().total, 1);
        assert!(!making_path(&path).exists());
        drop(store);
        assert!(matches!(
            Store::create(&path, &spec, [item(Some("y"))]),
            Err(BatchError::Exists(_))
        ));
        assert_eq!(Store::open(&path).unwrap().status().unwrap().total, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
