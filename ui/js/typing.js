// What typing leaves behind. WebKitGTK keeps an undo step for every edit made in a page (with the
// text nodes it touched) in both processes until a frame of the page loads a document: a chat
// input used all day kept every message ever typed in it (~5 KiB each in the web process,
// docs/PERFORMANCE.md, "Typed as a user types"). A sent message is not something to undo, so
// once one is sent a hidden frame of the page loads an empty document again, which empties the
// page's undo history. One frame per page, reloaded in place: a new frame each time cost the
// app ~1.7 KiB per frame that it never gave back.
//
// WebKitGTK's UI process also keeps a record of every key and mouse press of a page and never
// drops it (~0.3 KiB a key for the life of the app). A `window.open` made during a user gesture
// empties it, once the shell has turned WebKit's check of such gestures on for the page's view
// (`window_context`'s `forgets_input`; src-tauri/src/gestures.rs). The shell refuses every new
// window, so nothing opens.

let sink = null;
let forgetsInput = false;

/** Whether the shell empties WebKit's record of this page's input on a `window.open`. */
export function setForgetsInput(on) {
  forgetsInput = on === true;
}

/**
 * Forget the page's undo history and WebKit's record of its key presses. Call it after a typed
 * message was sent and the input cleared, in the handler of the key or click that sent it: the
 * record is dropped only during that user gesture (not after an `await`).
 */
export function forgetTyping() {
  if (forgetsInput) window.open("about:blank", "_blank");
  if (sink?.isConnected) {
    // A new srcdoc loads a new empty document in the frame, with no entry in the page's session
    // history. Not `contentWindow.location.replace`: a script reaching into the frame made WebKit
    // build the frame's JavaScript window, +0.9 MiB over three pages (docs/PERFORMANCE.md, "The
    // sleeping face's Zz").
    sink.srcdoc = sink.srcdoc ? "" : " ";
    return;
  }
  sink = document.createElement("iframe");
  sink.hidden = true;
  sink.setAttribute("aria-hidden", "true");
  sink.tabIndex = -1;
  // Its first load empties the history too. A srcdoc or about:blank frame is never fetched (the
  // CSP's frame-src 'none' still holds for every URL).
  sink.srcdoc = "";
  document.body.append(sink);
}

/** How long a focused field waits without a key before it lets the focus go (GTK's default). */
export const CARET_REST_MS = 10000;

/**
 * Let `input`'s caret rest. GTK stops a caret blinking 10 s after the last key; WebKitGTK blinks
 * it for as long as the field has the focus, and each blink is a composited frame of the window:
 * a chat input left focused after a message cost 2.4 % of a core at rest, against 0.1 % with
 * the chat closed (docs/PERFORMANCE.md, "Typed as a user types"). A caret that does not blink
 * cannot be had (WebKit 2.50 redraws a caret with no blink interval on every frame: worse). So after
 * CARET_REST_MS without a key the field lets the focus go, and the next key typed in the window
 * gives it back: WebKit looks up a key's target again after its keydown, so that key lands in
 * the field, where the caret was. `canType()`: whether the field is there to type in.
 */
export function restCaret(input, { canType = () => true, afterMs = CARET_REST_MS } = {}) {
  let timer = 0;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (document.activeElement === input) input.blur();
    }, afterMs);
  };
  for (const ev of ["focus", "keydown", "input"]) input.addEventListener(ev, arm);
  input.addEventListener("blur", () => clearTimeout(timer));
  document.addEventListener("keydown", (e) => {
    if (document.activeElement === input || e.ctrlKey || e.altKey || e.metaKey || !canType()) return;
    // Text, and the keys that edit it: the ones a user types expecting the field to have them.
    if (e.key.length === 1 || e.key === "Backspace" || e.key === "Delete" || e.key === "Enter") {
      input.focus();
    }
  });
}
