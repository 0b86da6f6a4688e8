// Lip sync: the mouth follows a clip's loudness. The core sends each clip's envelope once, with
// the clip (`{frame_ms, levels}`: RMS per 20 ms, 0..1; yui://speech), and the window plays it on
// its own clock (a timer per frame, the level read off performance.now() since the clip
// started, so a late tick never drifts): no per-frame IPC. A timer rather than
// requestAnimationFrame: it also runs where no frames are drawn (a covered window, headless
// checks), and the mouth must close when the audio ends, seen or not.
// With no envelope (speech-dispatcher plays by itself) the mouth gets the plain talking animation.
// A realtime reply streams: its envelope comes in batches as the audio arrives (`stream`:
// {item_id, start_ms, frame_ms, levels, last, stopped}, about 100 ms each; the core's
// voice/realtime_audio/envelope.rs); the first batch of an item starts its clock, later ones
// append, `last` lets the mouth close when the levels run out, `stopped` (barge-in) shuts it now.
//
// The level shows as the CSS variable --yui-mouth on the character (the drawn mouth opens by
// it), as data-mouth (two decimals, what tests read), and as the class yui-mouth-open while the
// level is past OPEN (a sprite set's optional `talk` image shows then).

/** Level past which the mouth counts as open (the sprite set's `talk` image shows). */
export const OPEN = 0.35;

/** A stream whose levels ran out without its last batch stops after this long. */
const STREAM_WAIT_MS = 2000;

/** `onLevel(v)`: every level set (0..1), for a renderer that draws the mouth itself (vrm.js). */
export function createLipSync(root, onOpen = () => {}, onLevel = () => {}) {
  let timer = 0;
  let open = false;
  // The streamed item: its id, levels so far, clock start, frame, whether its end came.
  let live = null;

  function set(level) {
    const v = Math.round(Math.max(0, Math.min(1, level)) * 100) / 100;
    root.style.setProperty('--yui-mouth', String(v));
    root.dataset.mouth = String(v);
    onLevel(v);
    const now = v > OPEN;
    if (now !== open) {
      open = now;
      root.classList.toggle('yui-mouth-open', open);
      onOpen(open);
    }
  }

  function stop() {
    clearTimeout(timer);
    timer = 0;
    live = null;
    root.classList.remove('yui-lipsync', 'yui-talking-plain');
    set(0);
  }

  /** A clip starts now: follow `envelope`, or talk plainly without one. */
  function clip(envelope) {
    stop();
    const levels = Array.isArray(envelope?.levels) ? envelope.levels : [];
    const frame = Number(envelope?.frame_ms) > 0 ? Number(envelope.frame_ms) : 20;
    if (levels.length === 0) {
      // Until the speech ends (or a next clip): speech-dispatcher says no more.
      root.classList.add('yui-talking-plain');
      root.dataset.mouth = 'talking';
      return;
    }
    root.classList.add('yui-lipsync');
    const start = performance.now();
    const tick = () => {
      const i = Math.floor((performance.now() - start) / frame);
      if (i >= levels.length) {
        stop();
        return;
      }
      set(Number(levels[i]) || 0);
      timer = setTimeout(tick, frame);
    };
    tick();
  }

  /** One batch of a streamed envelope (a realtime reply): appended to its item's levels. */
  function stream(batch) {
    if (!batch || typeof batch !== 'object') return;
    if (batch.stopped) {
      stop();
      return;
    }
    const frame = Number(batch.frame_ms) > 0 ? Number(batch.frame_ms) : 20;
    const startMs = Number(batch.start_ms) > 0 ? Number(batch.start_ms) : 0;
    if (!live || live.id !== batch.item_id) {
      stop();
      live = { id: batch.item_id, levels: [], start: performance.now() - startMs, frame, last: false, dry: 0 };
      root.classList.add('yui-lipsync');
    }
    const levels = Array.isArray(batch.levels) ? batch.levels : [];
    const at = Math.round(startMs / live.frame);
    levels.forEach((l, k) => { live.levels[at + k] = Number(l) || 0; });
    live.last = live.last || Boolean(batch.last);
    if (!timer) tickLive();
  }

  function tickLive() {
    timer = 0;
    if (!live) return;
    const i = Math.floor((performance.now() - live.start) / live.frame);
    if (i >= live.levels.length) {
      // Ran out: over when its end came, else wait a while for more (the audio waits too).
      live.dry += live.frame;
      if (live.last || live.dry > STREAM_WAIT_MS) {
        stop();
        return;
      }
      set(0);
    } else {
      live.dry = 0;
      set(live.levels[i] || 0);
    }
    timer = setTimeout(tickLive, live.frame);
  }

  return { clip, stream, stop };
}
