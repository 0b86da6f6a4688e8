//! A tiny W3C WebDriver client (sessions, windows, scripts, elements) over reqwest: enough for
//! the E2E tests, without a browser-automation framework.

use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Driver {
    http: reqwest::Client,
    base: String,
}

pub struct Session {
    http: reqwest::Client,
    url: String,
    /// Set once the session was deleted, so `Drop` does not delete it again.
    closed: std::sync::atomic::AtomicBool,
}

impl Drop for Session {
    /// A failing test still ends its session (and so its app): otherwise the driver refuses the
    /// next test's session. Plain blocking HTTP on a thread, since this may run in async code.
    fn drop(&mut self) {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let url = self.url.clone();
        let _ = std::thread::spawn(move || delete_blocking(&url)).join();
    }
}

/// `DELETE <url>` over a raw HTTP/1.1 connection (url: `http://host:port/path`).
fn delete_blocking(url: &str) {
    use std::io::{Read, Write};
    let Some(rest) = url.strip_prefix("http://") else {
        return;
    };
    let Some((host, path)) = rest.split_once('/') else {
        return;
    };
    let Ok(mut sock) = std::net::TcpStream::connect(host) else {
        return;
    };
    let _ = sock.set_read_timeout(Some(Duration::from_secs(30)));
    let req = format!(
        "DELETE /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if sock.write_all(req.as_bytes()).is_ok() {
        let mut sink = Vec::new();
        let _ = sock.read_to_end(&mut sink);
    }
}

pub type Result<T> = std::result::Result<T, String>;

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
) -> Result<Value> {
    let mut req = http.request(method.clone(), url);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("{method} {url}: {e}"))?;
    let status = resp.status();
    let v: Value = resp
        .json()
        .await
        .map_err(|e| format!("{method} {url}: bad JSON: {e}"))?;
    if !status.is_success() {
        return Err(format!("{method} {url}: {status}: {}", v["value"]));
    }
    Ok(v["value"].clone())
}

impl Driver {
    /// tauri-driver at `TAURI_DRIVER_URL`, default `http://127.0.0.1:4444`.
    pub fn from_env() -> Self {
        let base =
            std::env::var("TAURI_DRIVER_URL").unwrap_or_else(|_| "http://127.0.0.1:4444".into());
        Self {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(90))
                .build()
                .expect("http client"),
            base,
        }
    }

    pub async fn new_session(&self, app: &Path, args: &[String]) -> Result<Session> {
        let caps = json!({"capabilities": {"alwaysMatch": {
            "tauri:options": {"application": app.display().to_string(), "args": args}
        }}});
        let v = call(
            &self.http,
            reqwest::Method::POST,
            &format!("{}/session", self.base),
            Some(caps),
        )
        .await?;
        let id = v["sessionId"].as_str().ok_or("no sessionId")?;
        Ok(Session {
            http: self.http.clone(),
            url: format!("{}/session/{id}", self.base),
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

impl Session {
    async fn get(&self, path: &str) -> Result<Value> {
        call(
            &self.http,
            reqwest::Method::GET,
            &format!("{}{path}", self.url),
            None,
        )
        .await
    }
    async fn post(&self, path: &str, body: Value) -> Result<Value> {
        call(
            &self.http,
            reqwest::Method::POST,
            &format!("{}{path}", self.url),
            Some(body),
        )
        .await
    }

    pub async fn delete(&self) -> Result<Value> {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        call(&self.http, reqwest::Method::DELETE, &self.url, None).await
    }

    pub async fn handles(&self) -> Result<Vec<String>> {
        let v = self.get("/window/handles").await?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|h| h.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default())
    }

    pub async fn switch_to(&self, handle: &str) -> Result<()> {
        self.post("/window", json!({"handle": handle}))
            .await
            .map(|_| ())
    }

    pub async fn exec(&self, script: &str, args: Value) -> Result<Value> {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
    }

    pub async fn exec_async(&self, script: &str, args: Value) -> Result<Value> {
        self.post("/execute/async", json!({"script": script, "args": args}))
            .await
    }

    /// Call a Tauri command from the current window: `{ok: true, value}` or `{ok: false, error}`.
    pub async fn invoke(&self, cmd: &str, args: Value) -> Result<Value> {
        self.exec_async(
            "const done = arguments[arguments.length - 1];
             window.__TAURI__.core.invoke(arguments[0], arguments[1])
               .then((value) => done({ok: true, value: value ?? null}))
               .catch((error) => done({ok: false, error: error ?? null}));",
            json!([cmd, args]),
        )
        .await
    }

    /// The Tauri label of the current window.
    pub async fn label(&self) -> Result<Option<String>> {
        let v = self
            .exec(
                "return window.__TAURI__ ? window.__TAURI__.window.getCurrentWindow().label : null",
                json!([]),
            )
            .await?;
        Ok(v.as_str().map(String::from))
    }

    /// Labels of every window WebDriver sees (switching through them).
    pub async fn labels(&self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for h in self.handles().await? {
            // A window closed since `handles` answered ("no such window") is simply not there.
            if self.switch_to(&h).await.is_err() {
                continue;
            }
            if let Ok(Some(l)) = self.label().await {
                out.push((l, h));
            }
        }
        Ok(out)
    }

    /// Labels of every window WebDriver sees.
    pub async fn label_names(&self) -> Result<Vec<String>> {
        Ok(self.labels().await?.into_iter().map(|(l, _)| l).collect())
    }

    pub async fn wait_for_labels(&self, want: &[&str], timeout: Duration) -> Result<Vec<String>> {
        let start = Instant::now();
        loop {
            let have = self.label_names().await.unwrap_or_default();
            if want.iter().all(|w| have.iter().any(|h| h == w)) {
                return Ok(have);
            }
            if start.elapsed() > timeout {
                return Err(format!("windows {want:?} not all present; have {have:?}"));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    pub async fn wait_for_label(&self, label: &str, timeout: Duration) -> Result<()> {
        self.wait_for_labels(&[label], timeout).await?;
        self.switch_to_label(label).await
    }

    pub async fn switch_to_label(&self, label: &str) -> Result<()> {
        for (l, h) in self.labels().await? {
            if l == label {
                return self.switch_to(&h).await;
            }
        }
        Err(format!("no window labelled {label}"))
    }

    /// Poll a script until it returns `true`.
    pub async fn wait_script(&self, script: &str, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            let last = self.exec(script, json!([])).await;
            if matches!(last, Ok(Value::Bool(true))) {
                return Ok(());
            }
            if start.elapsed() > timeout {
                return Err(format!("timed out waiting for `{script}` (last: {last:?})"));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub async fn find(&self, css: &str) -> Result<String> {
        let v = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await?;
        v[ELEMENT_KEY]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("no element id for {css}: {v}"))
    }

    pub async fn click(&self, el: &str) -> Result<()> {
        self.post(&format!("/element/{el}/click"), json!({}))
            .await
            .map(|_| ())
    }

    /// The current window's `{x, y, width, height}`.
    pub async fn rect(&self) -> Result<Value> {
        self.get("/window/rect").await
    }

    pub async fn set_position(&self, x: i64, y: i64) -> Result<Value> {
        self.post("/window/rect", json!({"x": x, "y": y})).await
    }

    /// Type `text` into an element (`\u{E007}` is Enter).
    pub async fn send_keys(&self, el: &str, text: &str) -> Result<()> {
        self.post(&format!("/element/{el}/value"), json!({"text": text}))
            .await
            .map(|_| ())
    }

    pub async fn property(&self, el: &str, name: &str) -> Result<Value> {
        self.get(&format!("/element/{el}/property/{name}")).await
    }

    /// A PNG of the current window's viewport, base64-encoded (W3C Take Screenshot).
    pub async fn screenshot(&self) -> Result<String> {
        let v = self.get("/screenshot").await?;
        v.as_str()
            .map(String::from)
            .ok_or_else(|| format!("screenshot is not a string: {v}"))
    }
}
