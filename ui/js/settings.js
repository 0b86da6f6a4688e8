// The settings window: backend, API key (write-only), characters, switches, relations slot, tools.

import { invoke } from "./ipc.js";
import { setStatus, wirePresets, wireSwitches } from "./panels.js";
import { mountSettings } from "./relations-panel.js";
import { mountCharacters } from "./characters-panel.js";
import { mountTools } from "./tools-panel.js";
import { mountNav } from "./settings-nav.js";
import { mountMemory } from "./memory-panel.js";
import { mountVoice } from "./voice-panel.js";
import { mountModel } from "./model-panel.js";

const backendForm = document.getElementById("backend-form");
const keyForm = document.getElementById("key-form");
const keyInput = document.getElementById("api-key");
const keyStatus = document.getElementById("key-status");

const modelList = document.getElementById("model-list");
const findButton = document.getElementById("backend-find");
const findStatus = document.getElementById("find-status");
const foundList = document.getElementById("found-list");
const testButton = document.getElementById("backend-test");
const testReport = document.getElementById("test-report");

async function loadBackend() {
  const b = await invoke("backend_get");
  for (const name of ["base_url", "model", "transport", "push_url", "realtime_url", "max_output_tokens", "temperature"]) {
    const el = backendForm.elements[name];
    if (el) el.value = b?.[name] ?? "";
  }
  keyStatus.textContent = b?.has_api_key ? `key stored (${b.api_key_storage})` : "no key stored";
  // The realtime panel (ui/js/realtime-panel.js) shows itself for the stored transport.
  document.dispatchEvent(new CustomEvent("yui:backend-loaded"));
  loadModels();
}

/** Fill the model suggestions from the server's /v1/models (free text stays allowed). */
async function loadModels(baseUrl) {
  try {
    const ids = await invoke("backend_models", { baseUrl: baseUrl ?? backendForm.elements.base_url.value.trim() });
    fillModels(ids);
  } catch (err) {
    fillModels([]);
    backendForm.dataset.modelsError = err.message;
  }
}

function fillModels(ids) {
  modelList.replaceChildren(...(ids ?? []).map((id) => Object.assign(document.createElement("option"), { value: id })));
  backendForm.dataset.models = (ids ?? []).join(" ");
}

backendForm.elements.base_url.addEventListener("change", () => loadModels());

/** "Find": probe the usual local servers and offer what answered; exactly one fills the form. */
findButton.addEventListener("click", async () => {
  findButton.disabled = true;
  findStatus.textContent = "Looking…";
  foundList.replaceChildren();
  try {
    const found = await invoke("backend_find");
    if (found.length === 0) {
      findStatus.textContent = "No model server answered on this computer. Install Ollama (ollama.com) and run “ollama pull llama3.2”, or type the address.";
    } else {
      findStatus.textContent = found.length === 1 ? "Found one:" : `Found ${found.length}; pick one:`;
      for (const f of found) foundList.append(foundItem(f));
      if (found.length === 1) useFound(found[0]);
    }
    foundList.hidden = found.length === 0;
  } catch (err) {
    findStatus.textContent = err.message;
  } finally {
    findButton.disabled = false;
  }
});

function foundItem(f) {
  const li = document.createElement("li");
  const name = Object.assign(document.createElement("span"), { className: "name" });
  const what = f.needs_key ? "wants an API key" : `${f.models.length} model(s)`;
  name.textContent = `${f.name} — ${f.base_url} (${what})`;
  const use = Object.assign(document.createElement("button"), { type: "button", textContent: "Use" });
  use.addEventListener("click", () => useFound(f));
  li.append(name, use);
  return li;
}

/** Put a found server into the form (saved with "Save backend"). */
function useFound(f) {
  const el = backendForm.elements;
  el.base_url.value = f.base_url;
  if (f.models.length && !f.models.includes(el.model.value)) el.model.value = f.models[0];
  el.transport.value = "chat_completions";
  fillModels(f.models);
  setStatus(`Using ${f.name}: press “Save backend” to keep it.`);
}

/** The form's values as a backend change. */
function formChange() {
  const f = backendForm.elements;
  const tokens = f.max_output_tokens.value.trim();
  const temp = f.temperature.value.trim();
  return {
    base_url: f.base_url.value.trim(),
    model: f.model.value.trim(),
    transport: f.transport.value,
    push_url: f.push_url.value.trim() || null,
    realtime_url: f.realtime_url.value.trim() || null,
    ...(tokens ? { max_output_tokens: Number(tokens) } : {}),
    temperature: temp === "" ? null : Number(temp),
  };
}

/** "Test connection": the same checks as `yui doctor`, against the form's values. */
testButton.addEventListener("click", async () => {
  const c = formChange();
  testButton.disabled = true;
  testReport.hidden = false;
  testReport.dataset.state = "running";
  document.getElementById("test-checks").replaceChildren();
  document.getElementById("test-summary").textContent = "Testing… (at most a minute)";
  try {
    const report = await invoke("backend_test", {
      overrides: {
        base_url: c.base_url,
        model: c.model,
        transport: c.transport === "push" ? null : c.transport,
        realtime_url: c.realtime_url,
      },
    });
    showReport(report);
  } catch (err) {
    document.getElementById("test-summary").textContent = err.message;
    testReport.dataset.state = "error";
  } finally {
    testButton.disabled = false;
  }
});

function showReport(r) {
  const items = r.checks.map((c) => {
    const li = document.createElement("li");
    li.className = c.ok ? "ok" : c.skipped ? "skip" : "fail";
    li.dataset.check = c.name;
    const v = Object.assign(document.createElement("span"), { className: "verdict", textContent: c.ok ? "ok" : c.skipped ? "skip" : "FAIL" });
    li.append(v, `${c.label}: ${c.detail}`);
    return li;
  });
  document.getElementById("test-checks").replaceChildren(...items);
  document.getElementById("test-summary").textContent = r.summary;
  testReport.dataset.state = "done";
  testReport.dataset.transport = r.transport ?? "";
  testReport.dataset.cues = String(r.cues);
}

backendForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  const change = formChange();
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
  // The section list, from the page's sections (each its own page; the address picks one).
  mountNav(document.getElementById("settings-nav"));
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
  await mountMemory(document.getElementById("memory")).catch((err) => setStatus(err.message, true));
  await mountVoice(document.getElementById("voice")).catch((err) => setStatus(err.message, true));
  await mountModel(document.getElementById("model-panel")).catch((err) => setStatus(err.message, true));
}

main();
