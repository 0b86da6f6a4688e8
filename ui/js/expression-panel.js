// The settings window's Expression panel: which voice engine is in use (switched in Settings →
// Voice), the expression-motion selection (which body motions the model is offered), and the
// vocabulary editor (emotions, motions with their flags, the voice engine's tag table). Mounts
// itself into <section id="expression">. All checks and storage are the core's (vocab_* commands,
// voice_get); an edit reaches the schema of the next turn with no restart.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";

const TRIGGERS = ["clicked", "dragged"];

/** Mount the panel into `section`. Returns {reload()} for tests and the shell. */
export async function mountExpression(section) {
  if (!section) return null;
  let saved = null; // the vocabulary as stored
  let draft = null; // the vocabulary being edited
  let dirty = false;
  let outputEngine = null; // yui.voice's engine; the vocabulary's voice engine follows it

  const voiceBox = el("div", { className: "expr-voice" });
  const selectionBox = el("div", { className: "expr-selection", id: "expr-selection" });
  const emotionsBox = el("div", { className: "expr-table", id: "expr-emotions" });
  const motionsBox = el("div", { className: "expr-table", id: "expr-motions" });
  const tagsBox = el("div", { className: "expr-table", id: "expr-tags" });
  const saveBtn = el("button", { type: "button", className: "primary", id: "expr-save", textContent: "Save expression" });
  const revertBtn = el("button", { type: "button", id: "expr-revert", textContent: "Discard changes" });
  const resetBtn = el("button", { type: "button", id: "expr-reset", textContent: "Restore defaults" });
  const dirtyNote = el("span", { className: "muted small", id: "expr-dirty" });

  section.replaceChildren(
    el("h2", { textContent: "Expression" }),
    el("h3", { textContent: "Voice" }),
    voiceBox,
    el("h3", { textContent: "Body motions offered to the model" }),
    el("p", {
      className: "muted small",
      textContent: "Unticked motions are not offered; with none ticked the model is offered no body motion. Reactive, ambient and app-only motions are never offered.",
    }),
    selectionBox,
    el("h3", { textContent: "Emotions" }),
    emotionsBox,
    el("h3", { textContent: "Motions" }),
    motionsBox,
    el("h3", { textContent: "Voice tone tags" }),
    tagsBox,
    el("div", { className: "row expr-actions" }, saveBtn, revertBtn, resetBtn, dirtyNote),
  );

  const markDirty = (on = true) => {
    dirty = on;
    dirtyNote.textContent = on ? "unsaved changes" : "";
    saveBtn.disabled = !on;
    revertBtn.disabled = !on;
    section.dataset.dirty = String(on);
  };

  // --- voice: shown, not switched here ----------------------------------------------------------
  // The switch and engine live in Settings → Voice alone (one control for `yui.voice`); this line
  // says what is in use, because the tone tags below belong to that engine.
  function renderVoice(status) {
    outputEngine = status.engine;
    const state = status.enabled ? `on, ${status.engine}` : `off (${status.engine} when on)`;
    voiceBox.replaceChildren(
      el("p", {
        id: "expr-voice-status",
        className: `small ${status.available ? "muted" : "warning-line"}`,
        textContent: `Speaking replies: ${state}. ${status.status}`,
      }),
      el("p", { className: "small" },
        el("a", { href: "#voice", id: "expr-voice-link", textContent: "Switch the voice and choose its engine in Settings → Voice" })),
    );
  }

  // --- selection -------------------------------------------------------------------------------
  // Which motions may be offered is the core's rule (vocab::offerable), asked for the draft.
  let asked = 0;
  async function renderSelection() {
    const mine = ++asked;
    let ids;
    try {
      ids = await invoke("vocab_offerable", { motions: draft.motions });
    } catch (err) {
      setStatus(err.message, true);
      return;
    }
    if (mine !== asked) return; // a later edit asked again
    const offer = ids.map((id) => draft.motions.find((m) => m.id === id)).filter(Boolean);
    if (offer.length === 0) {
      selectionBox.replaceChildren(el("p", { className: "muted small", textContent: "No motion can be offered." }));
      return;
    }
    selectionBox.replaceChildren(
      ...offer.map((m) => {
        const box = el("input", {
          type: "checkbox",
          checked: draft.motion_selection.includes(m.id),
          dataset: { motion: m.id },
        });
        box.addEventListener("change", () => {
          const rest = draft.motion_selection.filter((id) => id !== m.id);
          draft.motion_selection = box.checked ? [...rest, m.id] : rest;
          markDirty();
        });
        return el("label", { className: "expr-check", title: m.description || "" }, box, ` ${m.label || m.id}`);
      }),
    );
  }

  // --- tables ------------------------------------------------------------------------------------
  /** A text input bound to `obj[key]`. */
  function text(obj, key, placeholder, after = () => {}) {
    const input = el("input", { type: "text", value: obj[key] ?? "", placeholder, dataset: { field: key } });
    input.addEventListener("input", () => {
      obj[key] = input.value;
      markDirty();
      after();
    });
    return input;
  }

  function check(obj, key, label, after = () => {}) {
    const box = el("input", { type: "checkbox", checked: key === "broker_publish" ? obj[key] !== false : !!obj[key], dataset: { field: key } });
    box.addEventListener("change", () => {
      obj[key] = box.checked;
      markDirty();
      after();
    });
    return el("label", { className: "expr-flag" }, box, ` ${label}`);
  }

  function removeBtn(list, item, rerender) {
    const b = el("button", { type: "button", className: "expr-remove", textContent: "Remove", title: "Remove" });
    b.addEventListener("click", () => {
      list.splice(list.indexOf(item), 1);
      markDirty();
      rerender();
    });
    return b;
  }

  function renderEmotions() {
    const rows = draft.emotions.map((e) =>
      el("div", { className: "expr-row", dataset: { emotion: e.id } },
        text(e, "id", "id"), text(e, "label", "label"), text(e, "description", "what it means (the model reads this)"),
        removeBtn(draft.emotions, e, renderEmotions)));
    const add = el("button", { type: "button", id: "expr-add-emotion", textContent: "Add emotion" });
    add.addEventListener("click", () => {
      draft.emotions.push({ id: "", label: "", description: "" });
      markDirty();
      renderEmotions();
      emotionsBox.querySelector(".expr-row:last-of-type input")?.focus();
    });
    emotionsBox.replaceChildren(...rows, add);
  }

  function renderMotions() {
    const rows = draft.motions.map((m) => {
      const trigger = el("select", { dataset: { field: "trigger" }, disabled: !m.reactive },
        el("option", { value: "", textContent: "trigger…" }),
        ...TRIGGERS.map((t) => el("option", { value: t, textContent: t, selected: m.trigger === t })));
      trigger.addEventListener("change", () => {
        m.trigger = trigger.value || undefined;
        markDirty();
      });
      const flagsChanged = () => {
        trigger.disabled = !m.reactive;
        if (m.reactive && !m.trigger) m.trigger = trigger.value = "clicked";
        if (!m.reactive) delete m.trigger;
        renderSelection();
      };
      return el("div", { className: "expr-row", dataset: { motion: m.id } },
        text(m, "id", "id", renderSelection), text(m, "label", "label", renderSelection), text(m, "description", "what it means"),
        el("span", { className: "expr-flags" },
          check(m, "reactive", "reactive", flagsChanged), trigger,
          check(m, "ambient", "ambient", flagsChanged), check(m, "broker_publish", "published", flagsChanged)),
        removeBtn(draft.motions, m, () => {
          draft.motion_selection = draft.motion_selection.filter((id) => id !== m.id);
          renderMotions();
          renderSelection();
        }));
    });
    const add = el("button", { type: "button", id: "expr-add-motion", textContent: "Add motion" });
    add.addEventListener("click", () => {
      draft.motions.push({ id: "", label: "", description: "", reactive: false, ambient: false, broker_publish: true });
      markDirty();
      renderMotions();
    });
    motionsBox.replaceChildren(...rows, add);
  }

  function renderTags() {
    const voice = draft.voice;
    const mode = el("select", { id: "expr-voice-mode" },
      el("option", { value: "free", textContent: "free text", selected: voice.mode !== "enum" }),
      el("option", { value: "enum", textContent: "tags from this table", selected: voice.mode === "enum" }));
    mode.addEventListener("change", () => {
      voice.mode = mode.value;
      markDirty();
      renderTags();
    });
    const head = el("div", { className: "row" },
      el("label", { className: "expr-inline" }, "Voice tone is ", mode));
    if (voice.mode !== "enum") {
      tagsBox.replaceChildren(head, el("p", { className: "muted small", textContent: "The model describes the tone in its own words." }));
      return;
    }
    const rows = voice.tags.map((t) =>
      el("div", { className: "expr-row" }, text(t, "tag", "tag"), text(t, "meaning", "meaning"), removeBtn(voice.tags, t, renderTags)));
    const add = el("button", { type: "button", id: "expr-add-tag", textContent: "Add tag" });
    add.addEventListener("click", () => {
      voice.tags.push({ tag: "", meaning: "" });
      markDirty();
      renderTags();
    });
    tagsBox.replaceChildren(head, ...rows, add);
  }

  function renderAll(vocab) {
    saved = vocab;
    draft = structuredClone(vocab);
    draft.emotions ??= [];
    draft.motions ??= [];
    draft.motion_selection ??= [];
    draft.voice ??= { engine: "speech-dispatcher", mode: "free", tags: [] };
    draft.voice.tags ??= [];
    renderSelection();
    renderEmotions();
    renderMotions();
    renderTags();
    markDirty(false);
  }

  saveBtn.addEventListener("click", async () => {
    saveBtn.disabled = true;
    // Ids the user left empty in a brand-new row are dropped rather than refused.
    const clean = structuredClone(draft);
    clean.emotions = clean.emotions.filter((e) => e.id.trim() || e.label.trim() || e.description.trim());
    clean.motions = clean.motions.filter((m) => m.id.trim() || m.label.trim() || m.description.trim());
    clean.voice.tags = clean.voice.tags.filter((t) => t.tag.trim() || t.meaning.trim());
    const ids = new Set(clean.motions.map((m) => m.id));
    clean.motion_selection = clean.motion_selection.filter((id) => ids.has(id));
    if (outputEngine) clean.voice.engine = outputEngine;
    try {
      renderAll(await invoke("vocab_set", { vocab: clean }));
      setStatus("Expression saved. The next turn uses it.");
    } catch (err) {
      setStatus(err.message, true);
      saveBtn.disabled = false;
    }
  });
  revertBtn.addEventListener("click", () => {
    renderAll(saved);
    setStatus("");
  });
  resetBtn.addEventListener("click", async () => {
    try {
      renderAll(await invoke("vocab_reset"));
      setStatus("Default expression vocabulary restored.");
    } catch (err) {
      setStatus(err.message, true);
    }
  });
  window.addEventListener("beforeunload", (e) => {
    if (dirty) e.preventDefault();
  });

  async function reload() {
    const [vocab, voice] = await Promise.all([invoke("vocab_get"), invoke("voice_get")]);
    renderAll(vocab);
    renderVoice(voice);
    section.dataset.loaded = "true";
  }
  try {
    await reload();
  } catch (err) {
    setStatus(err.message, true);
  }
  // The voice may have been switched in Settings → Voice since: show it as it is now.
  document.addEventListener("yui:settings-section", (e) => {
    if (e.detail?.id === "expression") invoke("voice_get").then(renderVoice).catch(() => {});
  });
  return { reload };
}

// Self-mount when the settings page has the section (settings.html loads this module).
if (typeof document !== "undefined") {
  const go = () => mountExpression(document.getElementById("expression"));
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", go, { once: true });
  else go();
}
