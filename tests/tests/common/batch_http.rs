//! The batch fake (`batch_fake`) served on loopback as each API's HTTP endpoints, so a job runs
//! through `HttpProvider`'s own requests: OpenAI's `/v1/files` and `/v1/batches`, Anthropic's
//! `/v1/messages/batches` (its results URL rewritten to this server's origin unless told not
//! to), Gemini's `/v1beta/models/{model}:batchGenerateContent`, `/v1beta/batches` and Files
//! API. Every call must carry the API's key header.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use super::batch_fake::{FakeBatches, Reply, ANTHROPIC_ORIGIN};
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::TransportError;

/// The key every call must carry.
pub const KEY: &str = "sk-test";

/// Serves `fake` as `kind`'s batch API: the base URL to give `HttpProvider`. With
/// `rewrite_results`, Anthropic's results URLs point here; else at the real origin.
pub fn serve(fake: Arc<FakeBatches>, kind: ProviderKind, rewrite_results: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let base = match kind {
        ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => format!("{origin}/v1"),
        _ => origin.clone(),
    };
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let fake = fake.clone();
            let origin = origin.clone();
            std::thread::spawn(move || connection(stream, &fake, kind, &origin, rewrite_results));
        }
    });
    base
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A query parameter, decoded.
    fn param(&self, name: &str) -> Option<String> {
        let query = self.path.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == name).then(|| decode(v))
        })
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut start = String::new();
    if reader.read_line(&mut start).unwrap_or(0) == 0 {
        return None;
    }
    let mut parts = start.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
        if name == "content-length" {
            length = value.parse().ok()?;
        }
        headers.push((name, value));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8(body).ok()?,
    })
}

/// The file part of a multipart body.
fn file_part(request: &Request) -> String {
    let content_type = request.header("content-type").unwrap();
    let boundary = content_type.split("boundary=").nth(1).unwrap();
    request
        .body
        .split(&format!("--{boundary}"))
        .find(|part| part.contains("application/jsonl"))
        .and_then(|part| part.split_once("\r\n\r\n").map(|(_, content)| content))
        .map(|content| content.trim_end_matches("\r\n").to_owned())
        .unwrap()
}

fn route(fake: &FakeBatches, kind: ProviderKind, request: &Request) -> Reply<String> {
    let (method, path) = (request.method.as_str(), request.path.as_str());
    let bare = path.split('?').next().unwrap_or(path);
    let no_route = || {
        Reply::Now(Err(TransportError::Rejected {
            status: 404,
            body: format!("no route {method} {path}"),
        }))
    };
    match kind {
        ProviderKind::Anthropic => {
            assert_eq!(request.header("x-api-key"), Some(KEY), "{path}");
            assert!(request.header("anthropic-version").is_some(), "{path}");
            match (method, bare) {
                ("POST", "/v1/messages/batches") => fake.create_raw(&request.body),
                ("GET", "/v1/messages/batches") => {
                    fake.list_raw(request.param("after_id").as_deref())
                }
                ("GET", p) if p.ends_with("/results") => {
                    fake.download_raw(&format!("{ANTHROPIC_ORIGIN}{p}"))
                }
                ("GET", p) if p.starts_with("/v1/messages/batches/") => {
                    fake.get_raw(&p["/v1/messages/batches/".len()..])
                }
                _ => no_route(),
            }
        }
        ProviderKind::Gemini => {
            assert_eq!(request.header("x-goog-api-key"), Some(KEY), "{path}");
            match (method, bare) {
                ("POST", "/upload/v1beta/files") => {
                    assert_eq!(request.header("x-goog-upload-protocol"), Some("multipart"));
                    fake.upload_raw(&file_part(request))
                }
                ("POST", p)
                    if p.starts_with("/v1beta/models/") && p.ends_with(":batchGenerateContent") =>
                {
                    fake.create_raw(&request.body)
                }
                ("GET", "/v1beta/batches") => fake.list_raw(request.param("pageToken").as_deref()),
                ("GET", p) if p.starts_with("/v1beta/batches/") => {
                    fake.get_raw(&p["/v1beta/".len()..])
                }
                ("GET", p) if p.starts_with("/download/v1beta/") && p.ends_with(":download") => {
                    assert_eq!(request.param("alt").as_deref(), Some("media"));
                    fake.download_raw(&p["/download/v1beta/".len()..p.len() - ":download".len()])
                }
                _ => no_route(),
            }
        }
        _ => {
            assert_eq!(
                request.header("authorization"),
                Some("Bearer sk-test"),
                "{path}"
            );
            match (method, bare) {
                ("POST", "/v1/files") => {
                    assert!(request.body.contains("name=\"purpose\"\r\n\r\nbatch\r\n"));
                    fake.upload_raw(&file_part(request))
                }
                ("POST", "/v1/batches") => fake.create_raw(&request.body),
                ("GET", "/v1/batches") => fake.list_raw(request.param("after").as_deref()),
                ("GET", p) if p.starts_with("/v1/batches/") => {
                    fake.get_raw(&p["/v1/batches/".len()..])
                }
                ("GET", p) if p.starts_with("/v1/files/") && p.ends_with("/content") => {
                    fake.download_raw(&p["/v1/files/".len()..p.len() - "/content".len()])
                }
                _ => no_route(),
            }
        }
    }
}

fn connection(
    stream: TcpStream,
    fake: &FakeBatches,
    kind: ProviderKind,
    origin: &str,
    rewrite: bool,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader) {
        let reply = match route(fake, kind, &request) {
            Reply::Now(reply) => reply,
            // A job killed at this call: the connection hangs up unanswered.
            Reply::Never => return,
        };
        let (status, text) = match reply {
            Ok(text) if rewrite => ("200 OK", text.replace(ANTHROPIC_ORIGIN, origin)),
            Ok(text) => ("200 OK", text),
            Err(TransportError::RateLimited { .. }) => ("429 Too Many Requests", "{}".to_owned()),
            Err(TransportError::Rejected { body, .. }) => ("404 Not Found", body),
            Err(e) => ("500 Internal Server Error", e.to_string()),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}\r\n",
            text.len(),
            if status.starts_with("429") {
                "retry-after: 0\r\n"
            } else {
                ""
            }
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(text.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}
