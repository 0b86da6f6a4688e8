//! Finding a model server on this computer: the usual local OpenAI-compatible servers are probed
//! in parallel, each with a short timeout, by reading `GET /v1/models`.
//!
//! Used at first run (`firstrun.rs`: exactly one found → it becomes the backend) and by "Find" in
//! Settings → Backend. The ports are a parameter ([`Candidate`]) so tests choose their own;
//! `YUI_DISCOVER_PORTS` replaces the list for a run (`11434,LM Studio=1234`, or `none`).

use crate::turn::error::BackendError;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// Environment variable that replaces the probed ports: `port` or `name=port`, comma separated;
/// `none` (or empty) probes nothing.
pub const PORTS_ENV: &str = "YUI_DISCOVER_PORTS";

/// How long one probe may take (connect + answer).
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(800);

use crate::backend::server_on_port;
use crate::backend::LOCAL_SERVERS;

/// A port to probe on 127.0.0.1 and the server usually found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub port: u16,
}

impl Candidate {
    pub fn new(name: &str, port: u16) -> Self {
        Self {
            name: name.to_string(),
            port,
        }
    }
}

/// The default candidates ([`LOCAL_SERVERS`]).
pub fn default_candidates() -> Vec<Candidate> {
    LOCAL_SERVERS
        .iter()
        .map(|(n, p)| Candidate::new(n, *p))
        .collect()
}

/// The candidates for this run: `YUI_DISCOVER_PORTS` when set, else the defaults.
pub fn candidates() -> Vec<Candidate> {
    match std::env::var(PORTS_ENV) {
        Ok(v) => parse_ports(&v),
        Err(_) => default_candidates(),
    }
}

/// Parse `11434,LM Studio=1234`; entries that are not ports are skipped.
pub fn parse_ports(spec: &str) -> Vec<Candidate> {
    spec.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty() && !e.eq_ignore_ascii_case("none"))
        .filter_map(|e| {
            let (name, port) = match e.split_once('=') {
                Some((n, p)) => (Some(n.trim().to_string()), p.trim()),
                None => (None, e),
            };
            let port: u16 = port.parse().ok()?;
            let name = name
                .filter(|n| !n.is_empty())
                .or_else(|| server_on_port(port).map(str::to_string))
                .unwrap_or_else(|| format!("a server on port {port}"));
            Some(Candidate { name, port })
        })
        .collect()
}

/// A server that answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// e.g. `Ollama`.
    pub name: String,
    /// e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub port: u16,
    /// The ids `/v1/models` listed, in its order.
    pub models: Vec<String>,
    /// The server answered 401/403: it is there but wants an API key before it lists models.
    pub needs_key: bool,
}

/// Probe every candidate at once (one port once, even if listed twice); the ones that answered
/// like an OpenAI-compatible server, in candidate order.
pub async fn discover(
    http: &reqwest::Client,
    candidates: &[Candidate],
    timeout: Duration,
) -> Vec<Found> {
    let mut seen = Vec::new();
    let unique: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| {
            let fresh = !seen.contains(&c.port);
            seen.push(c.port);
            fresh
        })
        .collect();
    let probes = unique.iter().map(|c| probe(http, c, timeout));
    futures_util::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Discover with a fresh client and the default timeout (the app's "Find" and first run).
pub async fn discover_local(candidates: &[Candidate]) -> Vec<Found> {
    match probe_client() {
        Ok(http) => discover(&http, candidates, PROBE_TIMEOUT).await,
        Err(e) => {
            tracing::warn!(error = %e, "cannot build the discovery client");
            Vec::new()
        }
    }
}

fn probe_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .connect_timeout(PROBE_TIMEOUT)
        // Local servers only: a system proxy must not see (or answer for) 127.0.0.1.
        .no_proxy()
        .build()
}

async fn probe(http: &reqwest::Client, c: &Candidate, timeout: Duration) -> Option<Found> {
    let base_url = format!("http://127.0.0.1:{}/v1", c.port);
    let answer = tokio::time::timeout(timeout, async {
        let resp = http.get(format!("{base_url}/models")).send().await.ok()?;
        let status = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        Some((status, body))
    })
    .await
    .ok()
    .flatten();
    let (status, body) = answer?;
    let found = |models: Vec<String>, needs_key: bool, json: Option<&Value>| Found {
        name: name_for(c, json),
        base_url: base_url.clone(),
        port: c.port,
        models,
        needs_key,
    };
    match status {
        200 => {
            let v: Value = serde_json::from_str(&body).ok()?;
            let models = model_ids(&v)?;
            tracing::info!(port = c.port, models = models.len(), "found a model server");
            Some(found(models, false, Some(&v)))
        }
        401 | 403 => Some(found(Vec::new(), true, None)),
        // Something else listens here (a web app, say): not a model server.
        _ => None,
    }
}

/// The `id`s of an OpenAI `/models` list (`{"data": [{"id": …}]}`); `None` when it is not one.
pub fn model_ids(v: &Value) -> Option<Vec<String>> {
    let data = v.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
    )
}

/// Name the server: llama.cpp says `owned_by: "llamacpp"`; on 8080 anything else is LocalAI.
fn name_for(c: &Candidate, json: Option<&Value>) -> String {
    let owned_by = json
        .and_then(|v| v.get("data"))
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|m| m.get("owned_by"))
        .and_then(Value::as_str);
    if c.port == 8080 && c.name == "llama.cpp" {
        if let Some(o) = owned_by {
            if o != "llamacpp" {
                return "LocalAI".to_string();
            }
        }
    }
    c.name.clone()
}

/// `GET {base_url}/models`: the model ids a server offers (Settings → Backend's model list).
pub async fn list_models(
    http: &reqwest::Client,
    base_url: &str,
    api_key: Option<&str>,
    timeout: Duration,
) -> Result<Vec<String>, BackendError> {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let mut req = http.get(&url);
    if let Some(k) = api_key.filter(|k| !k.is_empty()) {
        req = req.bearer_auth(k);
    }
    let resp = match tokio::time::timeout(timeout, req.send()).await {
        Err(_) => {
            return Err(BackendError::Stall {
                waited_ms: timeout.as_millis() as u64,
            })
        }
        Ok(Err(e)) => {
            return Err(BackendError::Connect {
                url,
                message: crate::turn::sse::error_chain(&e),
            })
        }
        Ok(Ok(r)) => r,
    };
    let status = resp.status().as_u16();
    let body = match tokio::time::timeout(timeout, resp.text()).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    if !(200..300).contains(&status) {
        return Err(BackendError::Http {
            status,
            body: crate::turn::error::evidence(body.trim()),
        });
    }
    let v: Value = serde_json::from_str(&body).map_err(|e| BackendError::Parse {
        line: crate::turn::error::evidence(&body),
        message: e.to_string(),
    })?;
    model_ids(&v).ok_or_else(|| BackendError::Parse {
        line: crate::turn::error::evidence(&body),
        message: "no \"data\" list of models".into(),
    })
}

/// The models of the configured backend (or of `base_url`), with the stored key: Settings →
/// Backend's model list. A failure is the plain sentence (turn/wording.rs).
pub async fn configured_models(
    store: &crate::Store,
    paths: &crate::paths::Paths,
    base_url: Option<&str>,
) -> crate::error::Result<Vec<String>> {
    let o = crate::backend::Overrides {
        base_url: base_url.map(str::to_string),
        ..Default::default()
    };
    let b = crate::backend::resolve(store, paths, &o)?;
    let http = probe_client().map_err(|e| crate::CoreError::internal(e.to_string()))?;
    list_models(
        &http,
        &b.base_url,
        b.api_key.as_deref(),
        Duration::from_secs(5),
    )
    .await
    .map_err(|e| {
        tracing::info!(error = %e, "listing models failed");
        crate::CoreError::new(
            crate::ErrorCode::Backend,
            crate::turn::wording::plain(&e, &b),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_from_the_environment_format() {
        assert_eq!(
            parse_ports("11434, My server=9000 ,x,none"),
            vec![
                Candidate::new("Ollama", 11434),
                Candidate::new("My server", 9000)
            ]
        );
        assert_eq!(
            parse_ports("4242"),
            vec![Candidate::new("a server on port 4242", 4242)]
        );
        assert!(parse_ports("none").is_empty());
        assert!(parse_ports("").is_empty());
    }
}
