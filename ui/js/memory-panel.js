// The settings window's "Memory" section (docs/memory.md): per character, every memory it keeps,
// search, edit, pin, forget, forget all, export to a JSON file, which memories the last turn used, and
// the switch that pauses remembering. It renders and forwards; every rule lives in the core
// (src-tauri/src/commands/memory.rs → yui_core::longterm).

import { invoke, listen, EVENTS } from "./ipc.js";
import { el, setStatus } from "./panels.js";

const KINDS = ["fact", "preference", "event", "relationship", "summary"];

/** Mount the panel into `section` (<section id="memory">). */
export async function mountMemory(section) {
  if (!section) return;
  const picker = el("select", { id: "memory-preset", "aria-label": "Character" });
  const pause = el("input", { type: "checkbox", id: "memory-pause" });
  const query = el("input", { type: "search", id: "memory-query", placeholder: "Search memories…" });
  const list = el("ul", { className: "memory-list", id: "memory-list" });
  const used = el("p", { className: "muted small", id: "memory-used" });
  const exportTo = el("input", { type: "text", id: "memory-export-path", placeholder: "Save to: your Downloads folder", "aria-label": "Save the export to (a file or folder; empty: Downloads)" });
  const exportBtn = el("button", { type: "button", id: "memory-export-button" }, "Export to file");
  const exported = el("p", { className: "muted small", id: "memory-exported", hidden: true });
  const forgetAll = el("button", { type: "button", id: "memory-forget-all", className: "danger" }, "Forget all");
  section.replaceChildren(
    el("h2", {}, "Memory"),
    el(
      "p",
      { className: "muted small" },
      "What each character remembers about you across days and restarts. Every memory below can reach a request to your model backend; forget one and it never does again.",
    ),
    el("div", { className: "row" }, el("label", {}, "Character ", picker)),
    el("label", { className: "switch" }, pause, el("span", {}, "Remember new things")),
    el("p", { className: "muted small indent" }, "Off: this character keeps what it knows but learns nothing new from your conversations."),
    el("div", { className: "row" }, query),
    used,
    list,
    el("div", { className: "row" }, exportTo, exportBtn, forgetAll),
    exported,
  );

  let preset = "";
  let armed = false; // "Forget all" asks for a second click
  const disarm = () => {
    armed = false;
    forgetAll.textContent = "Forget all";
  };

  const show = (overview, shown) => {
    pause.checked = !overview.paused;
    pause.disabled = !overview.enabled;
    const lastIds = new Set(overview.last_used.memories.map((m) => m.id));
    used.textContent = overview.last_used.turn_id
      ? `The last turn used ${lastIds.size} ${lastIds.size === 1 ? "memory" : "memories"} (marked “used”).`
      : "No turn has recalled anything yet.";
    const rows = (shown ?? overview.memories).map((m) => row(m, lastIds.has(m.id)));
    list.replaceChildren(...(rows.length ? rows : [el("li", { className: "muted small" }, shown ? "Nothing matches." : "Nothing remembered yet.")]));
    section.dataset.memoryCount = String(overview.memories.length);
    section.dataset.memoryLoaded = "true";
  };

  const refresh = async () => {
    if (!preset) return;
    try {
      const overview = await invoke("memory_overview", { preset });
      const q = query.value.trim();
      show(overview, q ? await invoke("memory_search", { preset, query: q }) : null);
    } catch (err) {
      setStatus(err.message, true);
    }
  };

  const act = async (f) => {
    try {
      await f();
      setStatus("");
    } catch (err) {
      setStatus(err.message, true);
    }
    await refresh();
  };

  function row(m, usedLast) {
    const text = el("span", { className: "memory-text" }, m.text);
    const tags = el(
      "span",
      { className: "muted small" },
      ` ${m.kind} · importance ${m.importance}${m.pinned ? " · pinned" : ""}${usedLast ? " · used" : ""} · used ${m.times_used}×`,
    );
    const pin = el("button", { type: "button", className: "memory-pin" }, m.pinned ? "Unpin" : "Pin");
    pin.addEventListener("click", () => act(() => invoke("memory_edit", { id: m.id, edit: { pinned: !m.pinned } })));
    const edit = el("button", { type: "button", className: "memory-edit" }, "Edit");
    edit.addEventListener("click", () => {
      const input = el("input", { type: "text", value: m.text, className: "memory-edit-text", maxLength: 1000 });
      const kind = el("select", {}, ...KINDS.map((k) => el("option", { value: k, selected: k === m.kind }, k)));
      const save = el("button", { type: "button" }, "Save");
      const cancel = el("button", { type: "button" }, "Cancel");
      save.addEventListener("click", () => act(() => invoke("memory_edit", { id: m.id, edit: { text: input.value, kind: kind.value } })));
      cancel.addEventListener("click", refresh);
      li.replaceChildren(input, kind, save, cancel);
      input.focus();
    });
    const forget = el("button", { type: "button", className: "memory-forget" }, "Forget");
    forget.addEventListener("click", () => act(() => invoke("memory_forget", { id: m.id })));
    const li = el(
      "li",
      { className: `memory${usedLast ? " used" : ""}`, dataset: { memoryId: String(m.id) } },
      el("div", {}, text, tags),
      el("div", { className: "row" }, pin, edit, forget),
    );
    return li;
  }

  pause.addEventListener("change", () => act(() => invoke("memory_pause", { preset, paused: !pause.checked })));
  let searchTimer = 0;
  query.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(refresh, 200);
  });
  exportBtn.addEventListener("click", () =>
    act(async () => {
      const path = exportTo.value.trim() || null;
      const saved = await invoke("memory_export", { preset, path });
      exported.textContent = `Saved ${saved.memories} ${saved.memories === 1 ? "memory" : "memories"} to ${saved.path}`;
      exported.dataset.path = saved.path;
      exported.hidden = false;
      setStatus(exported.textContent);
    }),
  );
  forgetAll.addEventListener("click", () => {
    if (!armed) {
      armed = true;
      forgetAll.textContent = `Click again to forget all ${section.dataset.memoryCount ?? ""} memories`;
      setTimeout(disarm, 5000);
      return;
    }
    disarm();
    act(() => invoke("memory_forget_all", { preset }));
  });
  picker.addEventListener("change", () => {
    preset = picker.value;
    query.value = "";
    exported.hidden = true;
    disarm();
    refresh();
  });

  const drawPresets = (presets) => {
    picker.replaceChildren(...presets.map((p) => el("option", { value: p.id, selected: p.id === preset }, p.name)));
    if (!presets.some((p) => p.id === preset)) preset = presets[0]?.id ?? "";
    picker.value = preset;
    refresh();
  };
  await listen(EVENTS.presetsChanged, drawPresets);
  drawPresets(await invoke("preset_list"));
}
