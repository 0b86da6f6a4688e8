//! The round-trip rules, written once for the request transports: when results go back, the
//! round-trip cap, the retries a refused request gets, and what each transport appends for the
//! next request ([`Conversation`]; each request transport's own is in its folder under
//! `transport/`).

use super::dispatch::{spoke, Answered, Dispatch, End, Round};
use super::error::BackendError;
use super::model::Mapper;
use super::read::{read, SseSource};
use super::request::{TurnDeps, TurnRequest};
use super::sse::{self, SseEvent, SseStream};
use super::MAX_TOOL_ROUND_TRIPS;
use serde_json::Value;

/// Whether the results of one response go back to the model: a question tool ran, or only
/// cue-only tools ran and the model stopped to wait for them (no text, and on Chat Completions
/// `finish_reason: "tool_calls"`, which `waited` carries).
pub(crate) fn results_go_back(answered: &[Answered], text: &str, waited: bool) -> bool {
    answered.iter().any(|a| !a.one_way) || (!answered.is_empty() && !spoke(text) && waited)
}

/// What a request transport keeps between the requests of one turn.
pub(crate) trait Conversation: Send + Sync {
    fn url(&self) -> String;
    /// The next request's body.
    fn body(&self) -> Value;
    fn mapper(&self) -> Box<dyn Mapper<Frame = SseEvent>>;
    /// Whether the model stopped to wait for its calls' results.
    fn waited(&self, round: &Round) -> bool;
    /// A request the server refused: adjust and answer `true` to send it again (at most once).
    fn retry(&mut self, deps: &TurnDeps, err: &BackendError) -> Result<bool, End>;
    /// The turn ends on this response.
    fn close(&mut self, deps: &TurnDeps, round: &Round) -> Result<(), End>;
    /// Ask the next request to call the tool `name` (`tool_choice`), or stop asking. Turns never
    /// do; the doctor's tool check does, where the server takes it. A round trip stops asking.
    fn force_tool(&mut self, name: Option<&str>);
    /// Results go back: append this response's exchange for the next request.
    fn append(&mut self, round: Round);
}

/// Run a request turn: request, read, dispatch, and round trips while the rules say so.
pub(crate) async fn request_turn(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    conv: &mut dyn Conversation,
) -> Result<(), End> {
    let url = conv.url();
    let mut round_trips = 0;
    loop {
        let body = conv.body();
        let stream = match open(d, deps, req, &url, &body).await {
            Err(End::Backend(e)) if conv.retry(deps, &e)? => continue,
            r => r?,
        };
        let mut mapper = conv.mapper();
        let cancel = d.cancel;
        let mut round = read(d, cancel, &mut SseSource::new(stream), mapper.as_mut()).await?;
        if round.response_id.is_none() {
            // A server that sends no id on a later response: the turn's last id chains.
            round.response_id = d.response_id.clone();
        }
        if !results_go_back(&round.answered, &round.text, conv.waited(&round))
            || round_trips >= MAX_TOOL_ROUND_TRIPS
        {
            return conv.close(deps, &round);
        }
        round_trips += 1;
        conv.append(round);
    }
}

async fn open(
    d: &Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    url: &str,
    body: &Value,
) -> Result<SseStream, End> {
    let key = req.backend.api_key.as_deref();
    tokio::select! {
        biased;
        _ = d.cancel.cancelled() => Err(End::Stopped),
        r = sse::post_sse(&deps.http, url, key, body, &req.timeouts) => r.map_err(End::from),
    }
}

pub(crate) fn store_failed(what: &str) -> impl Fn(crate::error::CoreError) -> End + '_ {
    move |e| End::Failed(format!("{what}: {e}"))
}
