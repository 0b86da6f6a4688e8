//! Whether the sound server cancels echo: PulseAudio's `module-echo-cancel`, or PipeWire's
//! echo-cancel (`libpipewire-module-echo-cancel`, whose source is named `echo-cancel-source`),
//! seen through `pactl` (which pipewire-pulse answers too). Only then may the microphone listen
//! while a character speaks (full duplex); otherwise listening pauses while one does (half
//! duplex), so a character never hears itself and interrupts its own reply.

use serde::Serialize;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What was found, for the stage and for Settings → Voice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EchoCancel {
    pub found: bool,
    /// One line for the user: what was found, or why listening is half duplex.
    pub detail: String,
}

/// Whether `pactl list short modules` / `pactl list short sources` output names an echo
/// canceller; the name found.
pub fn found_in(modules: &str, sources: &str) -> Option<String> {
    let module = modules.lines().find_map(|l| {
        l.split_whitespace()
            .find(|w| w.contains("echo-cancel"))
            .map(str::to_string)
    });
    module.or_else(|| {
        sources.lines().find_map(|l| {
            l.split_whitespace()
                .nth(1)
                .filter(|name| name.contains("echo-cancel") || name.contains("echo_cancel"))
                .map(str::to_string)
        })
    })
}

async fn pactl(args: &[&str]) -> Option<String> {
    let program = yui_base::paths::find_program("pactl", std::env::var_os("PATH").as_deref())?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    let spec = yui_base::process::RunSpec::new(Duration::from_secs(3), 256 * 1024);
    let ran = yui_base::process::run(cmd, spec, &CancellationToken::new())
        .await
        .ok()?;
    (ran.status.is_some_and(|s| s.success()) && !ran.timed_out)
        .then(|| String::from_utf8_lossy(&ran.stdout).into_owned())
}

/// Ask the sound server (bounded: 3 s per `pactl` call).
pub async fn detect() -> EchoCancel {
    let Some(modules) = pactl(&["list", "short", "modules"]).await else {
        return EchoCancel {
            found: false,
            detail: "no echo cancellation (pactl did not answer): the microphone pauses while a character speaks".into(),
        };
    };
    let sources = pactl(&["list", "short", "sources"])
        .await
        .unwrap_or_default();
    match found_in(&modules, &sources) {
        Some(name) => EchoCancel {
            found: true,
            detail: format!(
                "echo cancellation found ({name}): the microphone listens while characters speak"
            ),
        },
        None => EchoCancel {
            found: false,
            detail: "no echo cancellation (load module-echo-cancel to talk over a character): the microphone pauses while a character speaks".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pulseaudio_and_pipewire_echo_cancellers_are_found_and_nothing_else() {
        let pulse = "0\tmodule-device-restore\t\t\n23\tmodule-echo-cancel\taec_method=webrtc\t\n";
        assert_eq!(found_in(pulse, "").as_deref(), Some("module-echo-cancel"));
        let pipewire_sources = "48\techo-cancel-source\tPipeWire\tfloat32le 1ch 48000Hz\tIDLE\n";
        assert_eq!(
            found_in(
                "536870912\tlibpipewire-module-protocol-pulse\t\t\n",
                pipewire_sources
            )
            .as_deref(),
            Some("echo-cancel-source")
        );
        assert_eq!(
            found_in(
                "0\tmodule-null-sink\tsink_name=yui\t\n",
                "1\tyui.monitor\tmodule-null-sink.c\ts16le 2ch 44100Hz\tIDLE\n"
            ),
            None
        );
    }
}
