// Relations: the settings panel (Character → Relations: the switch, one slider per preset and
// target, the history with reasons) and the band word in each quick-controls preset row.
// It renders and forwards; every rule lives in the core (yui_core::relations).

import { invoke, listen, EVENTS } from "./ipc.js";
import { el, setStatus } from "./panels.js";

const MIN = -20;
const MAX = 20;

const targetKey = (t) => (t.kind === "user" ? "user" : `preset:${t.id}`);

// ---- settings -------------------------------------------------------------------------------

/** Mount the settings panel into `section` (<section id="relations">). */
export async function mountSettings(section) {
  if (!section) return;
  section.replaceChildren();
  section.append(el("h3", {}, "Relations"));

  // The Relations switch lives in this section (settings → Character → Relations): the page's
  // switch (wired by panels.js) moves here with its note.
  const label = document.getElementById("switch-relations")?.closest("label");
  if (label) {
    const note = label.nextElementSibling?.tagName === "P" ? label.nextElementSibling : null;
    section.append(label, ...(note ? [note] : []));
  }
  const offNote = el(
    "p",
    { class: "muted small relations-off", hidden: true },
    "Relations are off: the model cannot move them and turns carry no relation line. The values are kept, and you can still set them here.",
  );
  const sliders = el("div", { class: "relations-sliders" });
  const history = el("ol", { class: "relations-history", id: "relations-history" });
  section.append(
    offNote,
    sliders,
    el("h3", {}, "History"),
    el("p", { class: "muted small" }, "Every change, newest first, with its reason. “set by the user” is yours."),
    history,
  );

  let dragging = false;
  const refresh = async () => {
    if (dragging) return; // never yank a slider out from under the pointer
    try {
      const listing = await invoke("relations_list");
      offNote.hidden = listing.enabled;
      renderSliders(sliders, listing, (v) => { dragging = v; });
      renderHistory(history, listing);
      section.dataset.relationsLoaded = "true";
    } catch (err) {
      setStatus(err.message, true);
    }
  };
  await Promise.all([
    listen(EVENTS.relationsChanged, refresh),
    listen(EVENTS.switchesChanged, refresh),
    listen(EVENTS.presetsChanged, refresh),
  ]);
  await refresh();
}

function renderSliders(box, listing, setDragging) {
  const byPreset = new Map();
  for (const row of listing.relations) {
    if (!byPreset.has(row.preset_id)) byPreset.set(row.preset_id, { name: row.preset_name, rows: [] });
    byPreset.get(row.preset_id).rows.push(row);
  }
  box.replaceChildren(
    ...[...byPreset.entries()].map(([presetId, group]) =>
      el(
        "fieldset",
        { class: "relations-preset", dataset: { relationsPreset: presetId } },
        el("legend", {}, group.name),
        ...group.rows.map((row) => sliderRow(presetId, row, setDragging)),
      ),
    ),
  );
}

function sliderRow(presetId, row, setDragging) {
  const who = row.target.kind === "user" ? "you" : row.target_name;
  const output = el("output", { class: "relations-value" }, `${row.value} · ${row.band}`);
  const input = el("input", {
    type: "range",
    min: String(MIN),
    max: String(MAX),
    step: "1",
    value: String(row.value),
    dataset: { relationPreset: presetId, relationTarget: targetKey(row.target) },
  });
  input.setAttribute("aria-label", `${row.preset_name} toward ${who}`);
  input.addEventListener("input", () => {
    setDragging(true);
    output.textContent = `${input.value} · …`;
  });
  input.addEventListener("change", async () => {
    setDragging(false);
    const value = Number(input.value);
    try {
      const out = await invoke("relation_set", { preset: presetId, target: row.target, value });
      output.textContent = `${out.value} · ${out.band}`;
      setStatus("");
    } catch (err) {
      input.value = String(row.value);
      output.textContent = `${row.value} · ${row.band}`;
      setStatus(err.message, true);
    }
  });
  return el("label", { class: "relations-row" }, el("span", { class: "relations-who" }, `toward ${who}`), input, output);
}

function renderHistory(list, listing) {
  const presetName = new Map(listing.relations.map((r) => [r.preset_id, r.preset_name]));
  const targetName = (t) => (t.kind === "user" ? "you" : presetName.get(t.id) ?? t.id);
  if (listing.log.length === 0) {
    list.replaceChildren(el("li", { class: "muted small" }, "No changes yet."));
    return;
  }
  list.replaceChildren(
    ...listing.log.map((e) => {
      const when = new Date(e.at);
      const sign = e.delta > 0 ? `+${e.delta}` : String(e.delta);
      return el(
        "li",
        { dataset: { source: e.source } },
        el("time", { dateTime: e.at, class: "muted small" }, when.toLocaleString()),
        " ",
        el("span", {}, `${presetName.get(e.preset_id) ?? e.preset_id} → ${targetName(e.target)}: ${sign} → ${e.value} (${e.band})`),
        " — ",
        el("q", { class: "relations-reason" }, e.reason),
        el("span", { class: "muted small" }, e.source === "user" ? " (you)" : " (model)"),
      );
    }),
  );
}

// ---- quick controls -------------------------------------------------------------------------

/** Fill the `.band` slot of each preset row in `list` with the band toward the user, live. */
export async function mountQuick(list) {
  if (!list) return;
  let current = { enabled: false, bands: {} };
  const paint = () => {
    for (const slot of list.querySelectorAll("[data-relations-band]")) {
      const band = current.enabled ? current.bands[slot.dataset.relationsBand] ?? "" : "";
      slot.textContent = band;
      slot.title = band ? `Toward you: ${band}` : "";
      slot.dataset.band = band;
    }
    list.dataset.bandsPainted = "true";
  };
  const fetchAndPaint = async () => {
    try {
      current = await invoke("relation_bands");
      paint();
    } catch (err) {
      setStatus(err.message, true);
    }
  };
  document.addEventListener("yui:presets-rendered", paint);
  await Promise.all([
    listen(EVENTS.relationsChanged, (bands) => { current = bands; paint(); }),
    listen(EVENTS.switchesChanged, fetchAndPaint),
  ]);
  await fetchAndPaint();
}
