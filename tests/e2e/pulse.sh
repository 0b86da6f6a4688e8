# Sourced by tests/e2e/run.sh and idle_cpu.sh: a PulseAudio of its own for one run.
# start_pulse DIR: a PulseAudio with its runtime dir and home under DIR and a null sink whose
# monitor is the default source, so what is played into the sink is what the app's microphone
# hears, and runs side by side never hear each other. Sets PULSE_ENV to the environment that
# finds it (PULSE_SERVER=…), or to nothing when it did not start (its log: DIR/pulse.log); adds
# its pid to PIDS.
start_pulse() {
  local dir=$1
  PULSE_ENV=()
  command -v pulseaudio >/dev/null || return 0
  mkdir -p "$dir/pulse-rt" "$dir/pulse-home"
  XDG_RUNTIME_DIR="$dir/pulse-rt" HOME="$dir/pulse-home" pulseaudio --daemonize=no -n \
    --exit-idle-time=-1 --disable-shm=yes --load="module-null-sink sink_name=yuisink" \
    --load="module-native-protocol-unix auth-anonymous=1" >"$dir/pulse.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -S "$dir/pulse-rt/pulse/native" ] && break; sleep 0.1; done
  local env=(PULSE_SERVER="unix:$dir/pulse-rt/pulse/native")
  if env "${env[@]}" pactl set-default-sink yuisink && env "${env[@]}" pactl set-default-source yuisink.monitor; then
    PULSE_ENV=("${env[@]}")
  fi
}
