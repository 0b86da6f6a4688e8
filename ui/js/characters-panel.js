// Settings → Characters: add, edit and delete characters (name, persona, look, voice), choose
// the main one, import a character card, and open a character's phone. It renders and forwards;
// names, checks, card parsing and deletion live in the core (yui_core::presets, yui_core::cards).

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";
import { openLook } from "./looks-panel.js";
import { sizeControl } from "./character-size-panel.js";

/** The built-in palettes, as the core offers them (look_options; yui_core::presets::PALETTES). */
let PALETTES = [];

let presets = [];
/** A character whose look the address asked for (`settings.html#character/<id>`), until the rows are drawn. */
let lookWanted = "";
let lookBox = null;
/** A picture look the edited character has (the form keeps it unless another look is picked). */
let keptLook = null;
/** The preset being edited; null while creating a new one. */
let editing = null;

const $ = (id) => document.getElementById(id);

/** Mount into `section` (<section id="characters">), next to the preset list `list`. */
export function mountCharacters(section, list) {
  const form = buildForm();
  const file = el("input", { type: "file", id: "card-file", accept: ".png,.json,image/png,application/json", hidden: true });
  const importBtn = el("button", { type: "button", id: "character-import" }, "Import card…");
  const addBtn = el("button", { type: "button", id: "character-add" }, "Add character");
  lookBox = el("div", { id: "look-picker", class: "look-picker", hidden: true });
  section.replaceChildren(
    el("div", { class: "row character-tools" }, addBtn, importBtn, file),
    sizeControl(),
    el("p", { class: "muted small" }, "Cards: Character Card V2/V3 JSON, or a PNG card (SillyTavern and most character sites). The card's picture becomes the character's look."),
    form,
    lookBox,
  );
  // Opened from a character's menu (Look…): that character's look picker.
  document.addEventListener("yui:settings-section", (e) => {
    if (e.detail?.id !== "character" || !e.detail.arg) return;
    lookWanted = e.detail.arg;
    showWantedLook();
  });
  addBtn.addEventListener("click", () => openForm(form, null));
  importBtn.addEventListener("click", () => file.click());
  file.addEventListener("change", () => importCard(file));
  document.addEventListener("yui:presets-rendered", (e) => {
    presets = e.detail ?? [];
    decorateRows(list, form);
    showWantedLook();
  });
}

function buildForm() {
  const look = el(
    "select",
    { name: "look", id: "character-look" },
    el("option", { value: "sprites" }, "Sprite set (a folder of images)…"),
    el("option", { value: "kept", id: "character-look-kept" }, "The card's picture (see Look)"),
  );
  const voice = el(
    "select",
    { name: "voice_type", id: "character-voice" },
    el("option", { value: "" }, "Default voice"),
  );
  // The palettes (first in the list) and the voice types come from the core (look_options,
  // preset_choices; yui_core::presets::PALETTES, VOICE_TYPES).
  Promise.all([invoke("look_options", { id: null }), invoke("preset_choices")]).then(([options, choices]) => {
    const palettes = options.filter((o) => o.kind === "palette");
    PALETTES = palettes.map((o) => o.avatar.palette);
    look.prepend(...palettes.map((o) => el("option", { value: o.avatar.palette }, o.label)));
    voice.append(...choices.voice_types.map((v) => el("option", { value: v }, v.replace("_", " "))));
    look.dataset.loaded = "true";
  }).catch((err) => setStatus(err.message, true));
  const dirLabel = el("label", { id: "character-dir-label", hidden: true }, "Sprite folder (absolute path)",
    el("input", { name: "dir", id: "character-dir", type: "text", placeholder: "/home/you/sprites/mio" }));
  const range = (name) => el("label", { class: "range" }, `${name[0].toUpperCase()}${name.slice(1)}`,
    el("input", { name, type: "range", min: "-100", max: "100", step: "5", value: "0" }));
  const form = el(
    "form",
    { id: "character-form", class: "character-form", hidden: true, autocomplete: "off" },
    el("h3", { id: "character-form-title" }, "New character"),
    el("label", {}, "Name", el("input", { name: "name", id: "character-name", type: "text", maxLength: 64, required: true })),
    el("label", {}, "Persona (its system prompt)",
      el("textarea", { name: "persona", id: "character-persona", rows: 5, placeholder: "You are Mio, a sleepy cat who…" })),
    el("label", {}, "Look", look),
    dirLabel,
    el("label", {}, "Voice", voice),
    el("div", { class: "row" }, range("rate"), range("pitch")),
    el("div", { class: "row" },
      el("button", { type: "submit", class: "primary", id: "character-save" }, "Create"),
      el("button", { type: "button", id: "character-cancel" }, "Cancel")),
  );
  look.addEventListener("change", () => { dirLabel.hidden = look.value !== "sprites"; });
  form.querySelector("#character-cancel").addEventListener("click", () => { form.hidden = true; editing = null; });
  form.addEventListener("submit", (e) => { e.preventDefault(); save(form); });
  return form;
}

function openForm(form, preset) {
  editing = preset;
  const f = form.elements;
  $("character-form-title").textContent = preset ? `Edit ${preset.name}` : "New character";
  $("character-save").textContent = preset ? "Save" : "Create";
  f.name.value = preset?.name ?? "";
  f.persona.value = preset?.persona ?? "";
  const avatar = preset?.avatar ?? {};
  keptLook = avatar.kind === "picture" || (avatar.kind === "sprites" && avatar.picture) ? avatar : null;
  f.look.value = keptLook ? "kept" : avatar.kind === "sprites" ? "sprites" : PALETTES.includes(avatar.palette) ? avatar.palette
    : PALETTES[0];
  // A new character's palette is the one the core gives it when none is chosen.
  if (!preset) {
    invoke("preset_choices").then((choices) => {
      if (editing === null && f.look.value === PALETTES[0]) f.look.value = choices.next_palette;
    }).catch((err) => setStatus(err.message, true));
  }
  f.dir.value = avatar.kind === "sprites" ? avatar.dir ?? "" : "";
  $("character-look-kept").hidden = !keptLook;
  $("character-dir-label").hidden = f.look.value !== "sprites";
  f.voice_type.value = preset?.voice?.voice_type ?? "";
  f.rate.value = String(preset?.voice?.rate ?? 0);
  f.pitch.value = String(preset?.voice?.pitch ?? 0);
  form.hidden = false;
  f.name.focus();
}

/** What the form says, as the core's NewPreset / PresetUpdate fields. */
function fields(form) {
  const f = form.elements;
  const avatar = f.look.value === "kept" && keptLook ? keptLook
    : f.look.value === "sprites" ? { kind: "sprites", dir: f.dir.value.trim() }
    : { kind: "builtin", palette: f.look.value };
  const voice = {};
  if (f.voice_type.value) voice.voice_type = f.voice_type.value;
  for (const k of ["rate", "pitch"]) if (Number(f[k].value) !== 0) voice[k] = Number(f[k].value);
  return { name: f.name.value, persona: f.persona.value, avatar, voice };
}

async function save(form) {
  const btn = $("character-save");
  btn.disabled = true;
  try {
    if (editing) {
      const p = await invoke("preset_update", { id: editing.id, change: fields(form) });
      setStatus(`Saved ${p.name}.`);
    } else {
      const p = await invoke("preset_create", { preset: fields(form) });
      setStatus(`${p.name} is on your desktop now.`);
    }
    form.hidden = true;
    editing = null;
  } catch (err) {
    setStatus(err.message, true);
  } finally {
    btn.disabled = false;
  }
}

async function importCard(input) {
  const file = input.files?.[0];
  input.value = "";
  if (!file) return;
  try {
    const data = await new Promise((resolve, reject) => {
      const r = new FileReader();
      r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
      r.onerror = () => reject({ message: `cannot read ${file.name}` });
      r.readAsDataURL(file);
    });
    const p = await invoke("preset_import", { data });
    const look = p.picture ? " with its picture" : "";
    const notes = p.notes?.length ? ` (${p.notes.join("; ")})` : "";
    setStatus(`Imported ${p.name} from ${file.name}${look}; it is on your desktop now.${notes}`);
  } catch (err) {
    setStatus(`${file.name}: ${err.message}`, true);
  }
}

function showWantedLook() {
  const p = presets.find((x) => x.id === lookWanted);
  if (!p) return;
  lookWanted = "";
  openLook(lookBox, p).then(() => lookBox.scrollIntoView?.({ block: "start" }));
}

/** Add Edit / Look / Phone / Make main / Delete to each settings preset row. */
function decorateRows(list, form) {
  for (const li of list.querySelectorAll("li[data-preset-id]")) {
    const p = presets.find((x) => x.id === li.dataset.presetId);
    if (!p || li.querySelector(".character-actions")) continue;
    const button = (cls, text, onClick, extra = {}) => {
      const b = el("button", { type: "button", class: cls, ...extra }, text);
      b.addEventListener("click", onClick);
      return b;
    };
    const actions = el(
      "span",
      { class: "character-actions" },
      button("edit", "Edit", () => openForm(form, p)),
      button("look", "Look", () => openLook(lookBox, p)),
      button("phone", "Phone", () =>
        invoke("window_open", { which: `phone-${p.id}` }).catch((err) => setStatus(err.message, true))),
      p.is_main ? null : button("make-main", "Make main", async () => {
        try {
          await invoke("preset_set_main", { id: p.id });
          setStatus(`${p.name} is the main character now.`);
        } catch (err) {
          setStatus(err.message, true);
        }
      }),
      button("delete", "Delete", () => confirmDelete(li, p), {
        disabled: p.is_main,
        title: p.is_main ? "Make another character main before deleting this one" : "",
      }),
    );
    li.append(actions);
  }
}

/** Deleting asks first, in the row: the whole history goes with the character. */
function confirmDelete(li, p) {
  const ask = el(
    "span",
    { class: "confirm-delete", role: "alertdialog" },
    el("span", { class: "small" }, `Delete ${p.name} with its whole history?`),
  );
  const yes = el("button", { type: "button", class: "danger confirm-yes" }, `Delete ${p.name}`);
  const no = el("button", { type: "button", class: "confirm-no" }, "Keep");
  ask.append(yes, no);
  const actions = li.querySelector(".character-actions");
  actions.hidden = true;
  li.append(ask);
  no.addEventListener("click", () => { ask.remove(); actions.hidden = false; });
  yes.addEventListener("click", async () => {
    yes.disabled = no.disabled = true;
    try {
      const gone = await invoke("preset_delete", { id: p.id });
      setStatus(`Deleted ${gone.preset.name} (${gone.transcript_lines} lines of history).`);
    } catch (err) {
      setStatus(err.message, true);
      ask.remove();
      actions.hidden = false;
    }
  });
}
