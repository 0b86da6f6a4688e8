// The first run's offer of the built-in model in the main character's bubble (the core decides
// it: firstrun.rs; the download runs in the core's stage: stage/model.rs). This module only
// draws: the offer's button, the download's progress bar, percent and Cancel, and what the core
// said when it ended (a host that cannot be reached: "Add a file…" and "Settings…").

import { invoke, listen, EVENTS } from "./ipc.js";

const el = (tag, props = {}, ...kids) => {
  const n = Object.assign(document.createElement(tag), props);
  n.append(...kids);
  return n;
};

const button = (label, onClick, cls = "bubble-action") => {
  const b = el("button", { type: "button", className: cls, textContent: label });
  b.addEventListener("click", (e) => { e.stopPropagation(); onClick(); });
  return b;
};

/**
 * Show the offer `g` (the core's greeting with `offer`) and carry it through. `ui`: the
 * window's {stage, show(text, extra, {error}), openSettings()}.
 */
export function offerModel(g, ui) {
  const { offer } = g;
  const set = (k, v) => { ui.stage.dataset[k] = v; };
  set("firstRun", "offer");
  set("offerName", offer.name);
  let mine = false;

  const fail = (err) => {
    set("modelPull", "failed");
    ui.show(err?.message ?? String(err), actions([["Try again", start]]), { error: true });
  };
  const actions = (list) => el("div", { className: "bubble-actions" },
    ...list.map(([label, fn]) => button(label, fn)));
  const addFile = () => invoke("model_add_file", { useIt: true })
    .then((page) => { if (page) { set("modelPull", "in_use"); ui.show(page.note ?? "", null, {}); } })
    .catch(fail);

  function progress(p) {
    const bar = el("progress", { className: "pull-bar", max: 100, value: p.percent ?? 0 });
    bar.setAttribute("aria-label", `Downloading ${p.name}`);
    const pct = el("span", { className: "pull-pct", textContent: `${p.percent ?? 0}%` });
    const cancel = button("Cancel", () => invoke("model_cancel", { name: p.name }).catch(fail),
      "bubble-action pull-cancel");
    return el("div", { className: "pull" }, el("div", { className: "pull-row" }, bar, pct, cancel));
  }

  function onPull(p) {
    if (!mine || p?.name !== offer.name) return;
    set("modelPull", p.state);
    set("modelPercent", String(p.percent ?? 0));
    const size = (n) => `${(n / 1e6).toFixed(0)} MB`;
    switch (p.state) {
      case "downloading":
        ui.show(`Downloading ${p.name}… ${size(p.done)} of ${size(p.total)}`, progress(p), {});
        break;
      case "retrying":
        ui.show(p.message ?? `Trying ${p.name} again…`, progress(p), {});
        break;
      case "verifying":
        ui.show(`Checking ${p.name}…`, null, {});
        break;
      case "in_use":
      case "done":
        ui.show(`${p.name} is ready. Give me a moment to wake it up…`, null, {});
        break;
      case "cancelled":
        ui.show(p.message ?? "Cancelled.", actions([[offer.label, start]]), {});
        break;
      default: {
        const list = p.unreachable
          ? [["Add a file…", addFile], ["Settings…", ui.openSettings]]
          : [["Try again", start], ["Add a file…", addFile]];
        ui.show(p.message ?? "The download failed.", actions(list), { error: !p.unreachable });
      }
    }
  }

  function start() {
    mine = true;
    if (offer.action === "use") {
      set("modelPull", "in_use");
      invoke("model_use", { name: offer.name, greet: true })
        .then(() => ui.show(`Waking ${offer.name} up…`, null, {}))
        .catch(fail);
      return;
    }
    invoke("model_pull", { name: offer.name, after: "greet" }).then(onPull).catch(fail);
  }

  listen(EVENTS.modelPull, onPull).catch((e) => console.warn("cannot listen for the download", e));
  ui.show(g.text, actions([[offer.label, start]]), {});
}
