// The one bridge to the shell. Pages call invoke()/listen() from here, never window.__TAURI__.
// Errors always reject as {code, message} (the core's CoreError; ACL refusals become "forbidden").

const tauri = () => {
  const t = window.__TAURI__;
  if (!t) throw { code: "internal", message: "not running inside YUI (no Tauri bridge)" };
  return t;
};

/** Bridge event names; mirror of BridgeEvent in src-tauri/src/bridge.rs. */
export const EVENTS = Object.freeze({
  presetsChanged: "yui://presets-changed",
  switchesChanged: "yui://switches-changed",
  characterAddressed: "yui://character-addressed",
  vocabChanged: "yui://vocab-changed",
  relationsChanged: "yui://relations-changed",
  playbackFinished: "yui://playback-finished",
  characterTurn: "yui://character-turn",
  connection: "yui://connection",
  bodyChanged: "yui://body-changed",
  presence: "yui://presence",
  visibility: "yui://visibility",
  speech: "yui://speech",
  settingsChanged: "yui://settings-changed",
  mic: "yui://mic",
  heard: "yui://heard",
  waiting: "yui://waiting",
  modelPull: "yui://model-pull",
});

/** The switch keys (settings keys in the store). */
export const SWITCHES = Object.freeze({
  browser: "yui.browser",
  relations: "yui.relations",
  screen: "yui.screen",
});

function normalize(e) {
  if (e && typeof e === "object" && typeof e.code === "string") return e;
  const message = typeof e === "string" ? e : String(e?.message ?? e);
  // Tauri's ACL answers "<cmd> not allowed ..." for a command this window was not granted.
  const code = /not allowed|denied|forbidden/i.test(message) ? "forbidden" : "internal";
  return { code, message };
}

export async function invoke(cmd, args = {}) {
  try {
    return await tauri().core.invoke(cmd, args);
  } catch (e) {
    throw normalize(e);
  }
}

/** Listen to a bridge event; returns a promise of the unlisten function. */
export function listen(name, handler) {
  return tauri().event.listen(name, (ev) => handler(ev.payload));
}

/** A channel the shell streams into (turn events). */
export function channel(onMessage) {
  const ch = new (tauri().core.Channel)();
  ch.onmessage = onMessage;
  return ch;
}

export function currentWindow() {
  return tauri().window.getCurrentWindow();
}

/** Who this window is: {label, role, preset}. */
export function windowContext() {
  return invoke("window_context");
}
