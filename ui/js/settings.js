// The settings window: backend, API key (write-only), characters, switches, relations slot, tools.

import { invoke } from "./ipc.js";
import { setStatus, wirePresets, wireSwitches } from "./panels.js";
import { mountSettings } from "./relations-panel.js";
import { mountCharacters } from "./characters-panel.js";
import { mountTools } from "./tools-panel.js";

const backendForm = document.getElementById("backend-form");
const keyForm = document.getElementById("key-form");
const keyInput = document.getElementById("api-key");
const keyStatus = document.getElementById("key-status");

async function loadBackend() {
  const b = await invoke("backend_get");
  for (const name of ["base_url", "model", "transport", "push_url"]) {
    const el = backendForm.elements[name];
    if (el) el.value = b?.[name] ?? "";
  }
  keyStatus.textContent = b?.has_api_key ? `key stored (${b.api_key_storage})` : "no key stored";
}

backendForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = backendForm.elements;
  const change = {
    base_url: f.base_url.value.trim(),
    model: f.model.value.trim(),
    transport: f.transport.value,
    push_url: f.push_url.value.trim() || null,
  };
  try {
    await invoke("backend_set", { change });
    setStatus("Backend saved.");
  } catch (err) {
    setStatus(err.message, true);
  }
});

keyForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = keyInput.value;
  keyInput.value = ""; // the key leaves the page at once; it is never read back
  if (!key.trim()) return;
  try {
    const where = await invoke("backend_set_key", { key });
    keyStatus.textContent = `key stored (${where})`;
    setStatus("");
  } catch (err) {
    keyStatus.textContent = "";
    setStatus(err.message, true);
  }
});

async function main() {
  // Before the rows are drawn: the panel adds its buttons to each row as it is rendered.
  mountCharacters(document.getElementById("characters"), document.getElementById("preset-list"));
  try {
    await Promise.all([
      wireSwitches(),
      wirePresets(document.getElementById("preset-list")),
      loadBackend(),
    ]);
  } catch (err) {
    setStatus(err.message, true);
  }
  // After wireSwitches: the panel moves the wired Relations switch into its section.
  await mountSettings(document.getElementById("relations")).catch((err) => setStatus(err.message, true));
  await mountTools(document.getElementById("tools")).catch((err) => setStatus(err.message, true));
}

main();
