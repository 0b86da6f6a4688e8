//! The doctor's report: each check's verdict, the JSON `--json` prints (`{checks, transport,
//! cues}`), what "Test connection" shows, and the plain text `yui doctor` prints.

use super::*;

/// The label a check has in the text report.
pub fn label(name: &str) -> &'static str {
    match name {
        REACHABLE => "Reachable",
        AUTH => "Auth accepted",
        MODEL => "Model exists",
        CHAT_STREAM => "Streamed reply, Chat Completions",
        RESPONSES_STREAM => "Streamed reply, Responses",
        CHAT_TOOL => "Tool call, Chat Completions",
        RESPONSES_TOOL => "Tool call, Responses",
        ROUND_TRIP => "Round trip (request 2)",
        RT_SESSION => "Realtime session",
        RT_TEXT => "Text reply, realtime",
        RT_TOOL => "Tool call, realtime",
        _ => "Check",
    }
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    /// Not run (an earlier check failed, or time ran out): `ok` is false.
    #[serde(skip)]
    pub skipped: bool,
}

/// The whole report. Serializes as exactly `{"checks", "transport", "cues"}`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// The transport to use; `None` when neither streams a reply.
    pub transport: Option<Transport>,
    /// Whether expression cues will arrive on that transport.
    pub cues: bool,
    /// The summary line (what to do if something does not work).
    #[serde(skip)]
    pub summary: String,
    /// What was checked: `http://…/v1, model "m"`.
    #[serde(skip)]
    pub target: String,
}

impl Report {
    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// What "Test connection" shows: the JSON fields plus each check's label and whether it was
    /// skipped, the summary and the text.
    pub fn for_ui(&self) -> Value {
        let checks: Vec<Value> = self
            .checks
            .iter()
            .map(|c| {
                json!({"name": c.name, "label": label(&c.name), "ok": c.ok,
                       "skipped": c.skipped, "detail": c.detail})
            })
            .collect();
        json!({"checks": checks, "transport": self.transport, "cues": self.cues,
               "summary": self.summary, "target": self.target})
    }

    /// The report as plain lines: one per check with its verdict, then the summary.
    pub fn text(&self) -> String {
        let mut out = format!("YUI doctor: {}\n", self.target);
        for c in &self.checks {
            let verdict = match (c.ok, c.skipped) {
                (true, _) => "ok  ",
                (false, true) => "skip",
                (false, false) => "FAIL",
            };
            out.push_str(&format!(
                "{verdict}  {:<33} {}\n",
                format!("{}:", label(&c.name)),
                c.detail
            ));
        }
        out.push_str(&format!("Summary: {}\n", self.summary));
        out
    }
}
