// Settings → Backend → Built-in model (docs/built-in-model.md): the catalog, what is installed
// and found on this machine with its state and size, a download's progress, use / remove, add
// a file, and the engine's idle stop, threads and download mirror. It renders and forwards: the
// view and every change come from the core (src-tauri/src/commands/model.rs →
// yui_core::stage's model_page.rs and model.rs); a download's progress is `yui://model-pull`.

import { invoke, listen, EVENTS } from "./ipc.js";
import { el } from "./panels.js";

const STATE_WORDS = {
  available: "available",
  downloading: "downloading",
  installed: "installed",
  in_use: "in use",
  found: "found on this computer",
};

/** Mount the panel into `box` (<div id="model-panel"> in the backend section). */
export async function mountModel(box) {
  if (!box) return;
  const list = el("ul", { className: "model-list", id: "model-list-rows" });
  const disk = el("span", { className: "muted small", id: "model-disk" });
  const engine = el("p", { className: "muted small", id: "model-engine" });
  const note = el("p", { className: "model-note small", id: "model-note", role: "status" });
  const add = el("button", { type: "button", id: "model-add" }, "Add a GGUF file…");
  const idle = el("input", { type: "number", id: "model-idle", min: 1, max: 86400, step: 1 });
  const threads = el("input", { type: "number", id: "model-threads", min: 1, max: 256, step: 1 });
  const mirror = el("input", { type: "url", id: "model-mirror", placeholder: "https://huggingface.co (the catalog's own hosts)", spellcheck: false });
  box.replaceChildren(
    el("fieldset", { className: "model-panel" },
      el("legend", {}, "Built-in model"),
      el("p", { className: "muted small" },
        "YUI can run a model itself, with no server and no internet after the download. Using one makes it the backend of every character."),
      list,
      el("div", { className: "row" }, add, disk),
      engine,
      el("div", { className: "model-settings" },
        el("label", {}, "Stop the engine after", idle, el("span", { className: "muted small" }, "seconds without a turn (frees its memory)")),
        el("label", {}, "Threads", threads, el("span", { className: "muted small", id: "model-threads-hint" }, "")),
        el("label", {}, "Download mirror", mirror)),
      note),
  );
  let page = null;
  const say = (text, error = false) => {
    note.textContent = text ?? "";
    note.classList.toggle("error", error);
  };
  const run = (p) => p.then((pg) => { if (pg) show(pg); if (pg?.note) say(pg.note); }).catch((e) => say(e.message, true));
  const refresh = () => run(invoke("model_page"));

  function bar(pull) {
    const b = el("progress", { className: "pull-bar", max: 100, value: pull.percent ?? 0 });
    b.setAttribute("aria-label", `Downloading ${pull.name}`);
    return el("span", { className: "model-progress" }, b,
      el("span", { className: "pull-pct" }, pull.state === "retrying" ? "retrying" : `${pull.percent ?? 0}%`));
  }

  function row(m) {
    const state = m.pull ? "downloading" : m.state;
    const actions = [];
    const act = (label, fn, cls = "") => {
      const b = el("button", { type: "button", className: cls }, label);
      b.addEventListener("click", fn);
      actions.push(b);
    };
    if (m.pull) act("Cancel", () => invoke("model_cancel", { name: m.name }).catch((e) => say(e.message, true)));
    else if (m.state === "available") {
      const part = m.partial ? ` (resume)` : "";
      act(`Download${part}`, () => invoke("model_pull", { name: m.name, after: "keep" }).then(refresh).catch((e) => say(e.message, true)));
    } else if (m.state === "installed") {
      act("Use", () => invoke("model_use", { name: m.name, greet: false }).then((t) => { say(t); refresh(); }).catch((e) => say(e.message, true)), "primary");
    }
    if (["installed", "in_use"].includes(m.state) || (m.state === "available" && m.partial)) {
      act("Remove", () => run(invoke("model_remove", { name: m.name })));
    }
    const facts = [m.size_text];
    if (m.ram_text) facts.push(`needs ${m.ram_text} of memory`);
    if (m.licence) facts.push(m.licence);
    if (m.source !== "catalog") facts.push(m.source === "added" ? "your file" : m.source);
    return el("li", { className: "model", dataset: { model: m.name, state } },
      el("div", { className: "model-head" },
        el("span", { className: "model-name" }, m.name),
        el("span", { className: `model-state state-${state}` }, STATE_WORDS[state] ?? state),
        el("span", { className: "model-actions" }, ...actions)),
      el("div", { className: "muted small model-facts" }, facts.join(" · ")),
      m.pull ? bar(m.pull) : null);
  }

  function show(p) {
    page = p;
    list.replaceChildren(...p.models.map(row));
    disk.textContent = `On disk: ${p.on_disk_text}`;
    engine.textContent = p.engine_pid
      ? `The engine is running (process ${p.engine_pid}).`
      : p.engine_program ? `Engine: ${p.engine_program} (starts with the first turn).` : "No engine program (llama-server) was found: set yui.model.engine_path.";
    const s = p.settings;
    idle.value = s["yui.model.idle_stop_s"] ?? 600;
    threads.value = s["yui.model.threads"] ?? "";
    threads.placeholder = String(p.threads_default);
    document.getElementById("model-threads-hint").textContent = `empty: ${p.threads_default} (the physical cores)`;
    mirror.value = s["yui.model.mirror"] ?? "";
    box.dataset.loaded = "true";
  }

  const store = (key, input, parse) => input.addEventListener("change", () => {
    const raw = input.value.trim();
    run(invoke("model_set", { key, value: raw === "" ? null : parse(raw) }).then((pg) => (say("Saved."), pg)));
  });
  store("yui.model.idle_stop_s", idle, Number);
  store("yui.model.threads", threads, Number);
  store("yui.model.mirror", mirror, String);
  add.addEventListener("click", () => run(invoke("model_add_file", { useIt: false })));
  listen(EVENTS.modelPull, (p) => {
    if (!page) return;
    const done = !["downloading", "retrying", "verifying"].includes(p.state);
    if (done) {
      refresh().then(() => say(p.message ?? "", p.state === "failed"));
      return;
    }
    const m = page.models.find((x) => x.name === p.name);
    if (!m) return refresh();
    m.pull = p;
    const old = list.querySelector(`[data-model="${CSS.escape(p.name)}"]`);
    if (old) old.replaceWith(row(m));
  }).catch((e) => console.warn("cannot listen for downloads", e));
  await refresh();
}
