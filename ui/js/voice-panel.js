// The settings window's "Voice" section (docs/voice.md): the voice switch, engine and overlap,
// the OpenAI-compatible speech server (endpoint, model, default voice, format, instructions),
// the speech key of its own, each character's voice, the output device, and Test buttons that
// speak and listen. It renders and forwards; every rule lives in the core (src-tauri/src/commands/voice.rs
// → yui_core::voice::panel). The listening side (microphone, push-to-talk, hands-free) is the
// next section, `#voice-listen` (ui/js/voice-listen-panel.js).

import { invoke } from "./ipc.js";
import { el } from "./panels.js";

/** Mount the panel into `section` (<section id="voice">). */
export async function mountVoice(section) {
  if (!section) return;
  const $ = (id) => section.querySelector(`#${id}`);
  const status = el("p", { id: "voice-status", className: "muted small", role: "status" });
  const enabled = el("input", { type: "checkbox", id: "voice-enabled" });
  const engine = el("select", { id: "voice-engine", "aria-label": "Engine" });
  const overlap = el("input", { type: "checkbox", id: "voice-overlap" });
  const baseUrl = el("input", { type: "url", id: "voice-base-url", placeholder: "the chat backend's base URL", "aria-label": "Speech server base URL" });
  const model = el("input", { type: "text", id: "voice-model", "aria-label": "Speech model" });
  const defVoice = el("input", { type: "text", id: "voice-default-voice", "aria-label": "Default voice" });
  const format = el("select", { id: "voice-format", "aria-label": "Audio format" },
    el("option", { value: "wav" }, "wav"), el("option", { value: "pcm" }, "pcm (16-bit)"));
  const instructions = el("input", { type: "checkbox", id: "voice-instructions" });
  const useChatKey = el("input", { type: "checkbox", id: "voice-use-chat-key" });
  const key = el("input", { type: "password", id: "voice-key", placeholder: "paste a speech key to store it", autocomplete: "new-password", "aria-label": "Speech key" });
  const keyState = el("span", { id: "voice-key-state", className: "muted small" });
  const keyClear = el("button", { type: "button", id: "voice-key-clear" }, "Forget key");
  const device = el("select", { id: "voice-output-device", "aria-label": "Output device" });
  const voices = el("div", { id: "voice-characters", className: "voice-characters" });
  const testText = el("input", { type: "text", id: "voice-test-text", value: "Hello! This is how I sound.", "aria-label": "Test sentence" });
  const testWho = el("select", { id: "voice-test-preset", "aria-label": "Test with the voice of" });
  const testBtn = el("button", { type: "button", id: "voice-test" }, "Test");
  const testOut = el("span", { id: "voice-test-result", className: "muted small", role: "status" });
  const listenBtn = el("button", { type: "button", id: "voice-test-listen", title: "Records 4 seconds from the microphone and sends your words to the speech-to-text server" }, "Test listening");
  const sampleBtn = el("button", { type: "button", id: "voice-test-sample", title: "Sends a sentence made by the speech server to the speech-to-text server (no microphone needed)" }, "Check with a spoken sample");
  const listenOut = el("span", { id: "voice-test-listen-result", className: "muted small", role: "status" });
  const server = el("fieldset", { id: "voice-server", className: "voice-server" },
    el("legend", {}, "Speech server (OpenAI-compatible /audio/speech)"),
    el("label", {}, "Base URL ", baseUrl),
    el("label", {}, "Model ", model),
    el("label", {}, "Default voice ", defVoice),
    el("label", {}, "Format ", format),
    el("label", { className: "switch" }, instructions, el("span", {}, "The server takes tone instructions (gpt-4o-mini-tts)")),
    el("label", { className: "switch" }, useChatKey, el("span", {}, "Use the chat key when no speech key is stored")),
    el("form", { id: "voice-key-form", className: "row", autocomplete: "off" }, key, el("button", { type: "submit" }, "Store speech key"), keyClear, keyState));

  section.replaceChildren(
    el("h2", {}, "Voice"),
    el("p", { className: "muted small" },
      "Characters read their replies aloud, starting with the first sentence while the model still writes. Nothing opens an audio device while the voice is off."),
    el("label", { className: "switch" }, enabled, el("span", {}, "Speak replies")),
    el("div", { className: "row" }, el("label", {}, "Engine ", engine)),
    status,
    el("label", { className: "switch" }, overlap, el("span", {}, "Characters may talk at the same time")),
    el("p", { className: "muted small indent" }, "Off: a character waits until the one speaking has finished."),
    server,
    el("h3", {}, "Each character's voice"),
    voices,
    el("h3", {}, "Output"),
    el("div", { className: "row" }, el("label", {}, "Output device ", device)),
    el("div", { className: "row voice-test" }, testWho, testText, testBtn),
    testOut,
    el("div", { className: "row voice-test" }, listenBtn, sampleBtn),
    listenOut,
  );

  let panel = null;
  const say = (text, error = false) => {
    status.textContent = text;
    status.classList.toggle("error", error);
  };
  const fail = (err) => say(err?.message ?? String(err), true);

  function show(p) {
    panel = p;
    enabled.checked = !!p.status.enabled;
    engine.replaceChildren(...p.status.engines.map((e) => el("option", { value: e, selected: e === p.status.engine }, e)));
    say(p.status.status, !p.status.available);
    overlap.checked = !!p.overlap;
    baseUrl.value = p.tts.base_url ?? "";
    model.value = p.tts.model ?? "";
    defVoice.value = p.tts.voice ?? "";
    format.value = p.tts.response_format ?? "wav";
    instructions.checked = !!p.tts.instructions;
    useChatKey.checked = p.tts.use_backend_key !== false;
    keyState.textContent = p.speech_key === "none" ? "no speech key stored" : `speech key stored (${p.speech_key})`;
    server.hidden = p.status.engine !== "openai";
    voices.replaceChildren(...p.characters.map(characterRow));
    const who = testWho.value;
    testWho.replaceChildren(el("option", { value: "" }, "default voice"),
      ...p.characters.map((c) => el("option", { value: c.id, selected: c.id === who }, c.name)));
    section.dataset.voiceLoaded = "true";
  }

  function characterRow(c) {
    const name = el("input", { type: "text", value: c.voice ?? "", placeholder: panel?.tts.voice ?? "", "aria-label": `${c.name}'s voice name`, dataset: { preset: c.id } });
    const own = el("select", { "aria-label": `${c.name}'s engine`, dataset: { preset: c.id } },
      el("option", { value: "", selected: !c.engine }, "the engine above"),
      ...panel.status.engines.map((e) => el("option", { value: e, selected: e === c.engine }, e)));
    const save = () => invoke("voice_character_set", { preset: c.id, name: name.value, engine: own.value }).then(show, fail);
    name.addEventListener("change", save);
    own.addEventListener("change", save);
    return el("div", { className: "row voice-character", dataset: { preset: c.id } }, el("span", { className: "voice-who" }, c.name), name, own);
  }

  const set = (edit) => invoke("voice_panel_set", { edit }).then(show, (err) => { fail(err); refresh(); });
  const refresh = () => invoke("voice_panel_get").then(show, fail);
  const tts = () => ({
    ...panel.tts,
    base_url: baseUrl.value.trim() || null,
    model: model.value.trim(),
    voice: defVoice.value.trim(),
    response_format: format.value,
    instructions: instructions.checked,
    use_backend_key: useChatKey.checked,
  });

  enabled.addEventListener("change", () => set({ enabled: enabled.checked }));
  engine.addEventListener("change", () => set({ engine: engine.value }));
  overlap.addEventListener("change", () => set({ overlap: overlap.checked }));
  for (const input of [baseUrl, model, defVoice, format, instructions, useChatKey]) {
    input.addEventListener("change", () => set({ tts: tts() }));
  }
  device.addEventListener("change", () => set({ output_device: device.value }));
  $("voice-key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    if (!key.value.trim()) return;
    invoke("speech_key_set", { key: key.value }).then(() => { key.value = ""; refresh(); }, fail);
  });
  keyClear.addEventListener("click", () => invoke("speech_key_clear").then(refresh, fail));
  testBtn.addEventListener("click", async () => {
    testBtn.disabled = true;
    testOut.textContent = "speaking…";
    testOut.classList.remove("error");
    try {
      const r = await invoke("voice_test", { preset: testWho.value || null, text: testText.value });
      testOut.textContent = r.first_audio_ms == null
        ? `Spoken by ${r.engine}.`
        : `Spoken by ${r.engine}: first sound after ${r.first_audio_ms} ms, ${(r.played_ms / 1000).toFixed(1)} s of audio.`;
      section.dataset.testPlayedMs = String(r.played_ms);
    } catch (err) {
      testOut.textContent = err?.message ?? String(err);
      testOut.classList.add("error");
    } finally {
      testBtn.disabled = false;
    }
  });

  // The listening half: the core records (or fetches the sample) and transcribes; shown here.
  const testListen = async (source) => {
    listenBtn.disabled = sampleBtn.disabled = true;
    listenOut.classList.remove("error");
    listenOut.textContent = source === "microphone" ? "listening for 4 s: say something…" : "sending a spoken sample…";
    section.dataset.listenTest = "running";
    try {
      const r = await invoke("voice_test_listen", { source });
      listenOut.textContent = `Heard “${r.text}” (${(r.speech_ms / 1000).toFixed(1)} s of speech from ${r.source}, transcribed in ${r.transcribe_ms} ms).`;
      section.dataset.listenTest = "ok";
    } catch (err) {
      listenOut.textContent = err?.message ?? String(err);
      listenOut.classList.add("error");
      section.dataset.listenTest = "error";
    } finally {
      listenBtn.disabled = sampleBtn.disabled = false;
    }
  };
  listenBtn.addEventListener("click", () => testListen("microphone"));
  sampleBtn.addEventListener("click", () => testListen("sample"));

  await refresh();
  // The devices are listed only when the section is built (listing opens none).
  invoke("voice_devices").then((d) => {
    const chosen = panel?.output_device ?? "";
    const names = [...new Set([...(d.outputs ?? []), ...(chosen ? [chosen] : [])])];
    device.replaceChildren(el("option", { value: "", selected: !chosen }, `system default${d.default_output ? ` (${d.default_output})` : ""}`),
      ...names.map((n) => el("option", { value: n, selected: n === chosen }, n)));
  }, (err) => {
    device.replaceChildren(el("option", { value: "" }, "system default"));
    testOut.textContent = `No device list: ${err?.message ?? err}`;
  });
}
