// Click-through for a character window (docs/avatar.md, "Click-through"): the window takes
// clicks only where it draws (the character's outline, its bubble, its buttons, the chat box),
// and a click anywhere else goes to the window below. The page computes the outline
// (ui/character/outline.js) when something changed — the look, the window's size, the bubble or
// a button shown or hidden, the body moving or settling — and sends it to the shell only when
// it differs from the last one sent; the window system then does the hit test itself. Nothing
// runs at rest: no timer, no polling.
//
// Until the first outline is sent the whole window takes clicks, and an outline with nothing in
// it is never sent (the window would be unclickable): null, the whole window, goes instead.

import { invoke } from "./ipc.js";
import { createMask, markDom, RESTING } from "../character/outline.js";

/** Changes closer together than this are one outline (a streaming bubble, a chat box opening). */
const SETTLE_MS = 120;

/** What the page shows besides the character, found again at each outline (some come later). */
const OVERLAYS = ["#bubble", "#chat", "#menu", "#mic-badge", "#voice-note", ".waiting-badge"];

/** Classes that come and go as the mouth moves or the character rests (a blink, a breath): no
 * outline changes with them. */
const SAME_OUTLINE = new Set(["yui-mouth-open", "yui-lipsync", "yui-talking-plain", ...RESTING]);

/** Whether an attribute change may move the outline (a class change only of those: no). */
function changesOutline(m) {
  if (m.attributeName !== "class") return true;
  const was = new Set((m.oldValue ?? "").split(/\s+/).filter(Boolean));
  const now = new Set(m.target.getAttribute?.("class")?.split(/\s+/).filter(Boolean) ?? []);
  const changed = [...was].filter((k) => !now.has(k)).concat([...now].filter((k) => !was.has(k)));
  return changed.some((k) => !SAME_OUTLINE.has(k));
}

const shown = (el) => {
  if (!el || el.hidden) return false;
  const s = getComputedStyle(el);
  return s.display !== "none" && s.visibility === "visible";
};

/**
 * Keep the window's input region on what `getCharacter()` (the character's api) and the
 * overlays draw. Returns {update(): outline again soon, stop()}.
 */
export function watchClickThrough(stage, getCharacter) {
  let timer = 0;
  let sent = "";
  let stopped = false;
  const doc = document.documentElement;

  function outline() {
    const mask = createMask(window.innerWidth, window.innerHeight);
    const c = getCharacter();
    if (typeof c?.markOutline === "function") c.markOutline(mask);
    else if (c?.element) markDom(mask, c.element);
    // Buttons and text keep their exact boxes.
    const rects = mask.rects();
    for (const sel of OVERLAYS) {
      const el = document.querySelector(sel);
      if (!shown(el)) continue;
      const b = el.getBoundingClientRect();
      const x = Math.floor(b.left), y = Math.floor(b.top);
      const w = Math.ceil(b.right) - x, h = Math.ceil(b.bottom) - y;
      if (w > 0 && h > 0) rects.push({ x, y, w, h });
    }
    return rects.length ? rects : null;
  }

  function send() {
    timer = 0;
    if (stopped) return;
    const rects = outline();
    const key = JSON.stringify(rects);
    if (key === sent) return;
    sent = key;
    // Observable for the tests: how many rectangles, and how many outlines were sent.
    doc.dataset.inputRects = rects ? String(rects.length) : "whole";
    doc.dataset.inputRegion = key;
    doc.dataset.inputRegions = String(Number(doc.dataset.inputRegions ?? 0) + 1);
    invoke("window_input_region", { rects }).catch((e) => {
      // The window keeps its last region; the next change tries again.
      sent = "";
      console.warn("cannot set the window's input region", e);
    });
  }

  function update() {
    if (!timer && !stopped) timer = setTimeout(send, SETTLE_MS);
  }

  // What changes the outline, each seen as it happens. Not data-frame nor a face's data-on
  // (blinks and faces at rest), nor the mouth's classes while the voice speaks.
  const attrs = new MutationObserver((records) => {
    if (records.some(changesOutline)) update();
  });
  attrs.observe(document.body, {
    subtree: true,
    attributes: true,
    attributeOldValue: true,
    attributeFilter: ["hidden", "class", "src", "data-sprite", "data-state", "data-emotion", "data-asleep"],
  });
  const added = new MutationObserver(update);
  added.observe(stage, { childList: true });
  added.observe(document.body, { childList: true });
  const sizes = new ResizeObserver(update);
  for (const sel of OVERLAYS) {
    const el = document.querySelector(sel);
    if (el) sizes.observe(el);
  }
  window.addEventListener("resize", update);
  // A sprite's or picture's image finished loading: its pixels are known now.
  stage.addEventListener("load", update, true);
  const c = getCharacter();
  if (c && "onOutline" in c) c.onOutline = update;
  update();

  return {
    update,
    stop() {
      stopped = true;
      clearTimeout(timer);
      attrs.disconnect();
      added.disconnect();
      sizes.disconnect();
    },
  };
}
