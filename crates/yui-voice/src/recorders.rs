//! Who records from a microphone right now: the sound server's source outputs (PulseAudio, or
//! PipeWire through pipewire-pulse, which answers the same native protocol), asked once over its
//! socket with the `pulseaudio` crate. The manners' microphone probe uses it: a character keeps
//! quiet while another program (a call, a voice recorder) has the microphone open.
//!
//! What counts: a running (not corked) stream on a source that is not a sink's monitor (a screen
//! recorder taking the desktop's sound is not the microphone), other than a level meter
//! (PulseAudio gives peak-detect streams the `peaks` resampler: pavucontrol's meters). The
//! caller leaves out its own process.
//!
//! Synchronous and bounded: one connection, three requests, each read with a 500 ms timeout, so
//! a hung sound server costs at most a second and a half, once per proactive turn.

use pulseaudio::protocol::{self, Prop};
use std::ffi::CString;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one request may wait for the sound server.
pub const REPLY_TIMEOUT: Duration = Duration::from_millis(500);

/// A program recording from a source that is not a monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorder {
    /// `application.name` (or the binary's name), when the stream says.
    pub name: Option<String>,
    /// `application.process.id`, when the stream says.
    pub pid: Option<u32>,
}

/// Why the sound server could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum RecordersError {
    #[error("no PulseAudio or PipeWire sound server socket was found")]
    NoServer,
    #[error("could not connect to the sound server at {path}: {source}")]
    Connect {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the sound server did not answer as expected: {0}")]
    Protocol(#[from] protocol::ProtocolError),
}

/// The recorders of the sound server the environment names (`PULSE_SERVER`, `XDG_RUNTIME_DIR`).
pub fn recorders() -> Result<Vec<Recorder>, RecordersError> {
    let path = pulseaudio::socket_path_from_env().ok_or(RecordersError::NoServer)?;
    recorders_at(&path)
}

/// The recorders of the sound server listening at `socket`.
pub fn recorders_at(socket: &Path) -> Result<Vec<Recorder>, RecordersError> {
    let connect = |source| RecordersError::Connect {
        path: socket.to_path_buf(),
        source,
    };
    let stream = UnixStream::connect(socket).map_err(connect)?;
    stream
        .set_read_timeout(Some(REPLY_TIMEOUT))
        .map_err(connect)?;
    stream
        .set_write_timeout(Some(REPLY_TIMEOUT))
        .map_err(connect)?;
    let mut sock = BufReader::new(stream);
    // The cookie is needed by servers that check it; an anonymous server ignores it.
    let cookie = pulseaudio::cookie_path_from_env()
        .and_then(|p| std::fs::read(p).ok())
        .unwrap_or_default();
    let auth = protocol::AuthParams {
        version: protocol::MAX_VERSION,
        supports_shm: false,
        supports_memfd: false,
        cookie,
    };
    protocol::write_command_message(
        sock.get_mut(),
        0,
        &protocol::Command::Auth(auth),
        protocol::MAX_VERSION,
    )?;
    let (_, reply) =
        protocol::read_reply_message::<protocol::AuthReply>(&mut sock, protocol::MAX_VERSION)?;
    let version = protocol::MAX_VERSION.min(reply.version);
    let mut props = protocol::Props::new();
    props.set(Prop::ApplicationName, CString::from(c"YUI probe"));
    protocol::write_command_message(
        sock.get_mut(),
        1,
        &protocol::Command::SetClientName(props),
        version,
    )?;
    protocol::read_reply_message::<protocol::SetClientNameReply>(&mut sock, version)?;
    protocol::write_command_message(
        sock.get_mut(),
        2,
        &protocol::Command::GetSourceInfoList,
        version,
    )?;
    let (_, sources) =
        protocol::read_reply_message::<protocol::SourceInfoList>(&mut sock, version)?;
    protocol::write_command_message(
        sock.get_mut(),
        3,
        &protocol::Command::GetSourceOutputInfoList,
        version,
    )?;
    let (_, outputs) =
        protocol::read_reply_message::<protocol::SourceOutputInfoList>(&mut sock, version)?;
    let monitors: Vec<u32> = sources
        .iter()
        .filter(|s| s.monitor_of_sink_index.is_some())
        .map(|s| s.index)
        .collect();
    Ok(outputs
        .iter()
        .filter(|o| !o.corked && !monitors.contains(&o.source_index))
        .filter(|o| {
            o.resample_method
                .as_ref()
                .is_none_or(|m| m.as_bytes() != b"peaks")
        })
        .map(|o| Recorder {
            name: text(&o.props, Prop::ApplicationName)
                .or_else(|| text(&o.props, Prop::ApplicationProcessBinary)),
            pid: text(&o.props, Prop::ApplicationProcessId).and_then(|p| p.parse().ok()),
        })
        .collect())
}

/// A property as text: the protocol keeps strings NUL-terminated.
fn text(props: &protocol::Props, prop: Prop) -> Option<String> {
    let bytes = props.get(prop)?;
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    let s = String::from_utf8_lossy(bytes).trim().to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_nobody_listens_on_is_a_plain_connect_error() {
        let dir = std::env::temp_dir().join(format!("yui-rec-{}", std::process::id()));
        let e = recorders_at(&dir.join("native")).unwrap_err();
        assert!(matches!(e, RecordersError::Connect { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with("could not connect to the sound server at "));
    }

    #[test]
    fn properties_lose_their_terminating_nul() {
        let mut props = protocol::Props::new();
        props.set(Prop::ApplicationName, CString::from(c"parecord"));
        assert_eq!(
            text(&props, Prop::ApplicationName).as_deref(),
            Some("parecord")
        );
        assert_eq!(text(&props, Prop::ApplicationProcessId), None);
    }
}
