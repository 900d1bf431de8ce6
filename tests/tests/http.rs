//! The HTTP provider against a server on 127.0.0.1 started by each test, replaying the recorded
//! bodies of `tests/data/providers/`: success, rate limit, server error, a connection
//! cut mid-response, a rejected request, and each provider's path and headers.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::ChatRequest;
use structured_runtime::run::{run_structured, RunConfig, RunError, RunErrorKind, TransportError};
use structured_runtime::StructuredOutput;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The type openai-python's recorded answers hold.
#[derive(Debug, Deserialize, StructuredOutput)]
struct Location {
    city: String,
    temperature: f64,
    #[enum_values("c", "f")]
    units: String,
}

/// The type anthropic-sdk-python's recorded answer holds.
#[derive(Debug, Deserialize, StructuredOutput)]
struct OrderItem {
    product_name: String,
    price: f64,
    quantity: i64,
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/providers")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// One scripted reply.
enum Reply {
    /// Status, extra headers, body.
    Http(u16, &'static str, String),
    /// Read the request, then close the connection halfway through the response.
    Cut,
}

/// What the server saw: each request's head and body.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Serves `script` one connection per reply; returns the base URL and the requests seen.
async fn serve(script: Vec<Reply>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        for reply in script {
            let (mut socket, _) = listener.accept().await.unwrap();
            let (head, body) = read_request(&mut socket).await;
            log.lock().unwrap().push((head, body));
            match reply {
                Reply::Http(status, headers, body) => {
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
                        body.len()
                    );
                    socket.write_all(response.as_bytes()).await.unwrap();
                }
                Reply::Cut => {
                    let partial = "HTTP/1.1 200 OK\r\ncontent-length: 500\r\nconnection: close\r\n\r\n{\"choices\": [";
                    socket.write_all(partial.as_bytes()).await.unwrap();
                }
            }
            socket.shutdown().await.ok();
        }
    });
    (url, seen)
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> (String, String) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = socket.read(&mut buf).await.unwrap();
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let head = text[..end].to_owned();
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if data.len() >= end + 4 + length || n == 0 {
                return (head, text[end + 4..].to_owned());
            }
        }
        if n == 0 {
            return (text, String::new());
        }
    }
}

fn quick() -> RunConfig {
    RunConfig {
        backoff: Duration::from_millis(1),
        ..RunConfig::default()
    }
}

#[tokio::test]
async fn openai_success_after_a_rate_limit_a_server_error_and_a_cut_connection() {
    let (url, seen) = serve(vec![
        Reply::Http(
            429,
            "retry-after: 0\r\n",
            r#"{"error": {"message": "slow down"}}"#.into(),
        ),
        Reply::Http(503, "", "busy".into()),
        Reply::Cut,
        Reply::Http(200, "", fixture("openai_chat_structured_success.json")),
    ])
    .await;
    let provider = HttpProvider::new(
        ProviderKind::OpenAiChat,
        url,
        Some("sk-test".into()),
        "gpt-4o",
    )
    .unwrap();
    let out =
        run_structured::<Location, _>(&provider, &ChatRequest::user("Weather in SF?"), &quick())
            .await
            .unwrap();
    assert_eq!(out.value.city, "San Francisco");
    assert_eq!(out.attempts, 4);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4);
    let (head, body) = &seen[3];
    assert!(
        head.starts_with("POST /chat/completions HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("authorization: bearer sk-test"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["response_format"]["json_schema"]["name"], "location");
}

#[tokio::test]
async fn a_rejected_request_is_not_sent_again() {
    let (url, seen) = serve(vec![
        Reply::Http(
            400,
            "",
            r#"{"error": {"message": "Invalid schema"}}"#.into(),
        ),
        Reply::Http(200, "", fixture("openai_chat_structured_success.json")),
    ])
    .await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind,
            RunErrorKind::Transport {
                error: TransportError::Rejected { status: 400, .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn recorded_refusal_and_truncation_end_the_run() {
    let (url, _) = serve(vec![Reply::Http(
        200,
        "",
        fixture("openai_chat_structured_refusal.json"),
    )])
    .await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(matches!(err.kind, RunErrorKind::Refused { .. }), "{err:?}");
    let (url, _) = serve(vec![Reply::Http(
        200,
        "",
        fixture("openai_chat_structured_truncated_length.json"),
    )])
    .await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::Truncated { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn anthropic_gets_its_path_headers_and_native_json_outputs() {
    let (url, seen) = serve(vec![Reply::Http(
        200,
        "",
        fixture("anthropic_structured_output_success.response.json"),
    )])
    .await;
    let provider = HttpProvider::new(
        ProviderKind::Anthropic,
        url,
        Some("key-a".into()),
        "claude-sonnet-4-5",
    )
    .unwrap();
    let out = run_structured::<OrderItem, _>(
        &provider,
        &ChatRequest::user("Extract: 2 Green Tea at $5.50"),
        &quick(),
    )
    .await
    .unwrap();
    assert_eq!(
        (out.value.product_name.as_str(), out.value.quantity),
        ("Green Tea", 2)
    );
    let seen = seen.lock().unwrap();
    let head = seen[0].0.to_ascii_lowercase();
    assert!(head.starts_with("post /v1/messages http/1.1"), "{head}");
    assert!(
        head.contains("x-api-key: key-a") && head.contains("anthropic-version: 2023-06-01"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(&seen[0].1).unwrap();
    assert_eq!(body["output_config"]["format"]["type"], "json_schema");
}

#[tokio::test]
async fn gemini_posts_to_the_models_generate_content() {
    let (url, seen) = serve(vec![Reply::Http(
        200,
        "",
        fixture("gemini_finish_reason_safety.json"),
    )])
    .await;
    let provider = HttpProvider::new(
        ProviderKind::Gemini,
        url,
        Some("g-key".into()),
        "gemini-2.5-flash",
    )
    .unwrap();
    let err = run_structured::<OrderItem, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(matches!(err.kind, RunErrorKind::Filtered { .. }), "{err:?}");
    let seen = seen.lock().unwrap();
    let head = seen[0].0.to_ascii_lowercase();
    assert!(
        head.starts_with("post /v1beta/models/gemini-2.5-flash:generatecontent http/1.1"),
        "{head}"
    );
    assert!(head.contains("x-goog-api-key: g-key"), "{head}");
}

#[tokio::test]
async fn nothing_listening_is_a_connection_error_after_the_retries() {
    // Bind then drop: the port is closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let provider = HttpProvider::new(
        ProviderKind::OpenAiChat,
        format!("http://127.0.0.1:{port}"),
        None,
        "gpt-4o",
    )
    .unwrap();
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    match err {
        RunError {
            kind:
                RunErrorKind::Transport {
                    error: TransportError::Connection(_),
                },
            ledger,
        } => assert_eq!(ledger.len(), 4),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout_after_the_retries() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // Accept and read, never answer.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = read_request(&mut socket).await;
            held.push(socket);
        }
    });
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o")
        .unwrap()
        .with_timeout(Duration::from_millis(150))
        .unwrap();
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    match err {
        RunError {
            kind:
                RunErrorKind::Transport {
                    error: TransportError::Timeout,
                },
            ledger,
        } => assert_eq!(ledger.len(), 4),
        other => panic!("{other:?}"),
    }
}

// What the transport lets through: no credential to another origin, no unbounded body, no
// unbounded wait, and `Debug` that keeps the key to itself.

#[test]
fn debug_does_not_print_the_api_key() {
    let provider = HttpProvider::new(
        ProviderKind::Anthropic,
        "https://api.anthropic.com",
        Some("sk-ant-secret-123".into()),
        "claude-sonnet-4-5",
    )
    .unwrap();
    let shown = format!("{provider:?}");
    assert!(!shown.contains("sk-ant-secret-123"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_the_key_stays_home() {
    for kind in [
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::OpenAiChat,
    ] {
        // The other origin would answer as the model; it must never be asked.
        let (elsewhere, seen_elsewhere) = serve(vec![Reply::Http(
            200,
            "",
            fixture("openai_chat_structured_success.json"),
        )])
        .await;
        let location = format!("location: {elsewhere}/steal\r\n");
        let location: &'static str = Box::leak(location.into_boxed_str());
        let (url, seen) = serve(vec![Reply::Http(307, location, String::new())]).await;
        let provider = HttpProvider::new(kind, url, Some("secret-key-1".into()), "gpt-4o").unwrap();
        let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
            .await
            .unwrap_err();
        match &err {
            RunError {
                kind:
                    RunErrorKind::Transport {
                        error: TransportError::Redirect(reason),
                    },
                ledger,
            } => {
                assert!(reason.contains(&elsewhere), "{reason}");
                assert_eq!(ledger.len(), 1, "a refused redirect is not retried");
            }
            other => panic!("{kind:?}: {other:?}"),
        }
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert!(seen_elsewhere.lock().unwrap().is_empty(), "{kind:?}");
    }
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let body = fixture("openai_chat_structured_success.json");
    tokio::spawn(async move {
        for reply in 0..2 {
            let (mut socket, _) = listener.accept().await.unwrap();
            let _ = read_request(&mut socket).await;
            let response = if reply == 0 {
                "HTTP/1.1 307 X\r\nlocation: /v2/chat/completions\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
            } else {
                format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
            };
            socket.write_all(response.as_bytes()).await.unwrap();
            socket.shutdown().await.ok();
        }
    });
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let out = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap();
    assert_eq!(out.value.city, "San Francisco");
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_declared_or_not() {
    let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(5000));
    // Declared with content-length.
    let (url, _) = serve(vec![Reply::Http(200, "", big.clone())]).await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o")
        .unwrap()
        .with_max_body_bytes(1000);
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RunError { kind: RunErrorKind::Transport { error: TransportError::TooLarge { limit: 1000 } }, ledger } if ledger.len() == 1),
        "{err:?}"
    );

    // Undeclared: a body that never ends (streamed until the client hangs up).
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let written = Arc::new(Mutex::new(0usize));
    let count = written.clone();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let _ = read_request(&mut socket).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let chunk = vec![b' '; 64 << 10];
        while socket.write_all(&chunk).await.is_ok() {
            *count.lock().unwrap() += chunk.len();
        }
    });
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o")
        .unwrap()
        .with_max_body_bytes(1 << 20);
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind,
            RunErrorKind::Transport {
                error: TransportError::TooLarge { .. },
                ..
            }
        ),
        "{err:?}"
    );
    // The client stopped reading near the cap (socket buffers hold a few MiB at most).
    assert!(*written.lock().unwrap() < 64 << 20);
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_ends_the_run_with_the_servers_wait() {
    let (url, seen) = serve(vec![
        Reply::Http(429, "retry-after: 999999\r\n", "{}".into()),
        Reply::Http(200, "", fixture("openai_chat_structured_success.json")),
    ])
    .await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let started = std::time::Instant::now();
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30));
    match err {
        RunError {
            kind:
                RunErrorKind::Transport {
                    error: TransportError::RateLimited { retry_after },
                },
            ledger,
        } => {
            assert_eq!(retry_after, Some(Duration::from_secs(999999)));
            assert_eq!(ledger.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn the_run_deadline_ends_a_request_that_never_answers() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = read_request(&mut socket).await;
            held.push(socket);
        }
    });
    // The request timeout alone would wait 120 s, four times.
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let config = RunConfig {
        deadline: Some(Duration::from_millis(300)),
        ..quick()
    };
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &config)
        .await
        .unwrap_err();
    match err {
        RunError {
            kind: RunErrorKind::DeadlineExceeded { deadline },
            ledger,
        } => {
            assert_eq!(deadline, Duration::from_millis(300));
            assert_eq!(ledger.len(), 1);
            assert_eq!(
                ledger[0].result,
                structured_runtime::run::AttemptResult::Transport(TransportError::Timeout)
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_fallback_chain_over_http_moves_on_when_the_first_endpoint_is_down() {
    use structured_runtime::run::{Ask, DynProvider};
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = HttpProvider::new(
        ProviderKind::OpenAiChat,
        format!("http://127.0.0.1:{port}"),
        None,
        "gpt-4o",
    )
    .unwrap();
    let (url, seen) = serve(vec![Reply::Http(
        200,
        "",
        fixture("openai_chat_structured_success.json"),
    )])
    .await;
    let up = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o").unwrap();
    let chain: Vec<Box<dyn DynProvider>> = vec![Box::new(down), Box::new(up)];
    let out = Ask::fallback(&chain, &ChatRequest::user("x"))
        .config(&quick())
        .typed::<Location>()
        .await
        .unwrap();
    assert_eq!(out.value.city, "San Francisco");
    assert_eq!(
        out.attempts, 5,
        "four to the endpoint that is down, one to the next"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn extra_headers_and_a_caller_built_client() {
    let (url, seen) = serve(vec![
        Reply::Http(200, "", fixture("openai_chat_structured_success.json")),
        Reply::Http(200, "", fixture("openai_chat_structured_success.json")),
    ])
    .await;
    let client = structured_runtime::http::client_builder(Duration::from_secs(5))
        .user_agent("acme-gateway/1.0")
        .build()
        .unwrap();
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, Some("k".into()), "gpt-4o")
        .unwrap()
        .with_header("x-org", "acme")
        .unwrap()
        .with_client(client);
    assert!(
        !format!("{provider:?}").contains("acme\""),
        "header values are not printed"
    );
    for _ in 0..2 {
        run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
            .await
            .unwrap();
    }
    let seen = seen.lock().unwrap();
    for (head, _) in seen.iter() {
        let head = head.to_ascii_lowercase();
        assert!(head.contains("x-org: acme"), "{head}");
        assert!(head.contains("user-agent: acme-gateway/1.0"), "{head}");
        assert!(head.contains("authorization: bearer k"), "{head}");
    }
    assert!(
        HttpProvider::new(ProviderKind::OpenAiChat, "http://x", None, "m")
            .unwrap()
            .with_header("bad header", "v")
            .is_err()
    );
}

#[tokio::test]
async fn a_caller_client_that_follows_any_redirect_still_gets_no_answer_from_elsewhere() {
    let (elsewhere, _) = serve(vec![Reply::Http(
        200,
        "",
        fixture("openai_chat_structured_success.json"),
    )])
    .await;
    let location: &'static str = Box::leak(format!("location: {elsewhere}/x\r\n").into_boxed_str());
    let (url, _) = serve(vec![Reply::Http(307, location, String::new())]).await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, url, None, "gpt-4o")
        .unwrap()
        .with_client(structured_runtime::http::reqwest::Client::new());
    let err = run_structured::<Location, _>(&provider, &ChatRequest::user("x"), &quick())
        .await
        .unwrap_err();
    match err {
        RunError {
            kind:
                RunErrorKind::Transport {
                    error: TransportError::Redirect(reason),
                    ..
                },
            ..
        } => assert!(reason.contains("the answer came from"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// A provider, its model, a recorded answer, and what its request body must hold.
type BodyCase = (
    ProviderKind,
    &'static str,
    &'static str,
    fn(&serde_json::Value) -> bool,
);

/// An invoice scan and a PDF, in each provider's own body format, as the server receives them.
#[tokio::test]
async fn images_and_pdfs_go_in_each_providers_format() {
    use structured_runtime::provider::wire::{Attachment, ChatMessage};
    let mut request = ChatRequest::user("");
    request.messages = vec![ChatMessage::user("Extract the order.")
        .with(Attachment::image_base64("image/png", "iVBORw0KGgo="))
        .with(Attachment::pdf_base64("JVBERi0xLjQK"))];
    let cases: [BodyCase; 4] = [
        (
            ProviderKind::OpenAiChat,
            "gpt-4o",
            "openai_chat_structured_success.json",
            |b| {
                let parts = &b["messages"][0]["content"];
                parts[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
                    && parts[2]["file"]["file_data"] == "data:application/pdf;base64,JVBERi0xLjQK"
            },
        ),
        (
            ProviderKind::OpenAiResponses,
            "gpt-4o",
            "openai_responses_output_text.json",
            |b| {
                let parts = &b["input"][0]["content"];
                parts[1]["type"] == "input_image" && parts[2]["type"] == "input_file"
            },
        ),
        (
            ProviderKind::Anthropic,
            "claude-sonnet-4-5",
            "anthropic_structured_output_success.response.json",
            |b| {
                let blocks = &b["messages"][0]["content"];
                blocks[0]["source"]["media_type"] == "image/png"
                    && blocks[1]["type"] == "document"
                    && blocks[2]["text"] == "Extract the order."
            },
        ),
        (
            ProviderKind::Gemini,
            "gemini-2.5-flash",
            "gemini_structured_json_success.json",
            |b| {
                let parts = &b["contents"][0]["parts"];
                parts[1]["inlineData"]["mimeType"] == "image/png"
                    && parts[2]["inlineData"]["mimeType"] == "application/pdf"
            },
        ),
    ];
    for (kind, model, answer, holds) in cases {
        let (url, seen) = serve(vec![Reply::Http(200, "", fixture(answer))]).await;
        let provider = HttpProvider::new(kind, url, Some("k".into()), model).unwrap();
        let config = RunConfig {
            transport_retries: 0,
            ..quick()
        };
        let _ = run_structured::<OrderItem, _>(&provider, &request, &config).await;
        let seen = seen.lock().unwrap();
        let body: serde_json::Value = serde_json::from_str(&seen[0].1).unwrap();
        assert!(holds(&body), "{kind:?}: {body}");
    }
}

#[tokio::test]
async fn what_a_provider_cannot_take_is_refused_before_any_request() {
    use structured_runtime::provider::wire::{Attachment, ChatMessage};
    let mut request = ChatRequest::user("");
    request.messages = vec![
        ChatMessage::user("Read it.").with(Attachment::image_url("https://example.com/a.png"))
    ];
    let (url, seen) = serve(vec![]).await;
    let provider = HttpProvider::new(ProviderKind::Gemini, url, None, "gemini-2.5-flash").unwrap();
    let err = run_structured::<OrderItem, _>(&provider, &request, &quick())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RunError { kind: RunErrorKind::UnsupportedInput { reason }, .. } if reason.contains("Gemini")),
        "{err}"
    );
    assert!(seen.lock().unwrap().is_empty());
}

/// Serves each body as a stream: `text/event-stream`, no length, written `piece` bytes at a time
/// with a pause between (a realistic pace for a model's tokens), one connection per body.
async fn serve_streams(bodies: Vec<String>, piece: usize) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        for body in bodies {
            let (mut socket, _) = listener.accept().await.unwrap();
            let (head, request) = read_request(&mut socket).await;
            log.lock().unwrap().push((head, request));
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                continue;
            }
            for chunk in body.as_bytes().chunks(piece) {
                // The reader may stop and close early: the rest is not sent.
                if socket.write_all(chunk).await.is_err() {
                    break;
                }
                socket.flush().await.ok();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            socket.shutdown().await.ok();
        }
    });
    (url, seen)
}

/// What the Gemini and Responses streams written for this project hold.
#[derive(Debug, Deserialize, StructuredOutput)]
struct Weather {
    city: String,
    temperature: f64,
    #[enum_values("c", "f")]
    units: String,
    note: String,
}

#[tokio::test]
async fn recorded_streams_arrive_as_partial_values_then_the_final_one() {
    use structured_runtime::run::{Ask, StreamEvent};
    use structured_runtime::Provenance;
    // OpenAI Chat (recorded), Gemini (its own URL) and OpenAI Responses, each at a pace.
    let cases = [
        (
            ProviderKind::OpenAiChat,
            "openai_chat_stream_structured_success.sse",
            "/chat/completions",
        ),
        (
            ProviderKind::Gemini,
            "gemini_stream_structured_json.sse",
            ":streamGenerateContent?alt=sse",
        ),
        (
            ProviderKind::OpenAiResponses,
            "openai_responses_stream_structured_success.sse",
            "/responses",
        ),
    ];
    for (kind, file, path) in cases {
        let (url, seen) = serve_streams(vec![fixture(file)], 37).await;
        let provider = HttpProvider::new(kind, &url, Some("k".into()), "m").unwrap();
        let mut values: Vec<serde_json::Value> = Vec::new();
        let mut attempts = 0;
        let on_event = |event: StreamEvent<'_>| match event {
            StreamEvent::Partial { value, .. } => values.push(value.clone()),
            StreamEvent::Attempt { .. } => attempts += 1,
            _ => {}
        };
        let request = ChatRequest::user("Weather in the city?");
        let (city, provenance) = if kind == ProviderKind::OpenAiChat {
            let out = Ask::new(&provider, &request)
                .config(&quick())
                .stream(on_event)
                .typed::<Location>()
                .await
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            (out.value.city, out.provenance)
        } else {
            let out = Ask::new(&provider, &request)
                .config(&quick())
                .stream(on_event)
                .typed::<Weather>()
                .await
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            (out.value.city, out.provenance)
        };
        assert_eq!(attempts, 1, "{file}");
        assert!(values.len() > 3, "{file}: {values:?}");
        assert_eq!(
            values.last().unwrap()["city"],
            serde_json::Value::from(city.clone()),
            "{file}"
        );
        assert_eq!(provenance, Provenance::Clean, "{file}");
        let (head, body) = seen.lock().unwrap()[0].clone();
        assert!(head.contains(path), "{file}: {head}");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        if kind != ProviderKind::Gemini {
            assert_eq!(body["stream"], true, "{file}");
        }
    }
}

#[tokio::test]
async fn a_broken_rule_can_stop_the_stream_and_re_ask_at_once() {
    use structured_runtime::run::{Ask, AttemptResult, StreamEvent};
    /// The same answer, with a rule it breaks early (the temperature comes second).
    #[derive(Debug, Deserialize, StructuredOutput)]
    struct Cold {
        city: String,
        #[range(max = 10.0)]
        temperature: f64,
        units: String,
        note: String,
    }
    // 18.5 becomes 1.5 (the number is cut across two deltas: `: 18` then `.5`).
    let good = fixture("openai_responses_stream_structured_success.sse").replace(": 18", ": 1");
    let bad = fixture("openai_responses_stream_structured_success.sse");
    let (url, seen) = serve_streams(vec![bad, good], 23).await;
    let provider =
        HttpProvider::new(ProviderKind::OpenAiResponses, &url, Some("k".into()), "m").unwrap();
    let config = RunConfig {
        stop_stream_on_violation: true,
        ..quick()
    };
    let mut early = Vec::new();
    let out = Ask::new(&provider, &ChatRequest::user("Weather?"))
        .config(&config)
        .stream(|event| {
            if let StreamEvent::Violations(v) = event {
                early.extend(v.iter().map(|v| v.path.to_string()));
            }
        })
        .typed::<Cold>()
        .await
        .unwrap();
    assert_eq!(out.value.temperature, 1.5);
    assert_eq!(early, ["/temperature"]);
    assert!(matches!(
        out.ledger[0].result,
        AttemptResult::StreamStopped(_)
    ));
    // Its usage never came: its cost is unknown, not 0.
    let mut prices = structured_runtime::run::PriceTable::new();
    prices.set(
        "m",
        structured_runtime::provider::wire::Prices {
            input: 1.0,
            output: 1.0,
            cached_input: None,
            batch: None,
        },
    );
    assert_eq!(prices.attempt_cost(&out.ledger[0]), None);
    // The first answer was not read to its end.
    let first = out.ledger[0].received.as_deref().unwrap();
    assert!(!first.contains("response.completed"), "{first}");
    let reask = &seen.lock().unwrap()[1].1;
    assert!(reask.contains("/temperature"), "{reask}");
}

#[tokio::test]
async fn a_refusal_a_truncation_and_a_cut_stream_end_the_streaming_run_as_typed_errors() {
    use structured_runtime::run::Ask;
    let cases = [
        ("openai_chat_stream_refusal.sse", "refused"),
        ("openai_chat_stream_truncated_length.sse", "truncated"),
    ];
    for (file, expected) in cases {
        let (url, _) = serve_streams(vec![fixture(file)], 50).await;
        let provider = HttpProvider::new(ProviderKind::OpenAiChat, &url, None, "gpt-4o").unwrap();
        let result = Ask::new(&provider, &ChatRequest::user("Weather?"))
            .config(&quick())
            .stream(|_| {})
            .typed::<Location>()
            .await;
        let ok = matches!(
            (&result, expected),
            (
                Err(RunError {
                    kind: RunErrorKind::Refused { .. },
                    ..
                }),
                "refused"
            ) | (
                Err(RunError {
                    kind: RunErrorKind::Truncated { .. },
                    ..
                }),
                "truncated"
            )
        );
        assert!(ok, "{file}: {result:?}");
    }
    // Cut before `data: [DONE]`: an error, never the complete-looking value before it.
    let whole = fixture("openai_chat_stream_structured_success.sse");
    let cut = whole[..whole.rfind("data: [DONE]").unwrap()].to_owned();
    let (url, _) = serve_streams(vec![cut], 50).await;
    let provider = HttpProvider::new(ProviderKind::OpenAiChat, &url, None, "gpt-4o").unwrap();
    let result = Ask::new(&provider, &ChatRequest::user("Weather?"))
        .config(&quick())
        .stream(|_| {})
        .typed::<Location>()
        .await;
    match result {
        Err(RunError {
            kind: RunErrorKind::Provider { error, .. },
            ..
        }) => {
            assert!(error.to_string().contains("cut"), "{error}")
        }
        other => panic!("{other:?}"),
    }
}
