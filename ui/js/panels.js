// Shared pieces of the settings and quick-controls pages: the preset rows and the switches.

import { invoke, listen, EVENTS, SWITCHES } from "./ipc.js";

/**
 * A DOM element: `props` are set as properties where the element has one (`className`, `hidden`,
 * `value`…), `dataset` entries as data attributes, anything else as an attribute; null and
 * undefined children are skipped.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (k in node) node[k] = v;
    else node.setAttribute(k, v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export function setStatus(text, isError = false) {
  const el = document.getElementById("status");
  if (!el) return;
  el.textContent = text;
  el.classList.toggle("error", isError);
}

/** Render preset rows into `list`: name, main tag, open/close button, and a `.band` slot. */
export function renderPresets(list, presets) {
  list.replaceChildren(
    ...presets.map((p) => {
      const li = document.createElement("li");
      li.dataset.presetId = p.id;
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = p.name;
      li.append(name);
      if (p.is_main) {
        const tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = "main";
        li.append(tag);
      }
      // Band slot: the relations panel writes the band word for this preset here.
      const band = document.createElement("span");
      band.className = "band";
      band.dataset.relationsBand = p.id;
      li.append(band);
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "toggle-open";
      btn.textContent = p.is_open ? "Close" : "Open";
      btn.disabled = p.is_main; // the main character is always on screen
      btn.title = p.is_main ? "The main character stays open" : "";
      btn.addEventListener("click", async () => {
        btn.disabled = true;
        try {
          await invoke(p.is_open ? "preset_close" : "preset_open", { id: p.id });
          setStatus("");
        } catch (err) {
          setStatus(err.message, true);
          btn.disabled = false;
        }
      });
      li.append(btn);
      return li;
    }),
  );
  document.dispatchEvent(new CustomEvent("yui:presets-rendered", { detail: presets }));
}

export async function wirePresets(list) {
  const draw = (presets) => renderPresets(list, presets);
  await listen(EVENTS.presetsChanged, draw);
  draw(await invoke("preset_list"));
}

/** Reflect switch states on every `input[data-switch]`; flipping one writes it through the core. */
export async function wireSwitches(onChange = () => {}) {
  const inputs = [...document.querySelectorAll("input[data-switch]")];
  const show = (s) => {
    const byKey = Object.fromEntries(Object.entries(SWITCHES).map(([name, key]) => [key, s[name]]));
    for (const input of inputs) input.checked = Boolean(byKey[input.dataset.switch]);
    onChange(s);
  };
  for (const input of inputs) {
    input.addEventListener("change", async () => {
      const wanted = input.checked;
      input.disabled = true;
      try {
        show(await invoke("switch_set", { key: input.dataset.switch, enabled: wanted }));
        setStatus("");
      } catch (err) {
        input.checked = !wanted;
        setStatus(err.message, true);
      } finally {
        input.disabled = false;
      }
    });
  }
  await listen(EVENTS.switchesChanged, show);
  show(await invoke("switches_get"));
  document.body.dataset.switchesLoaded = "true";
}
