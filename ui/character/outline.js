// Where a character window draws, as a few rectangles (docs/avatar.md, "Click-through"): the
// window takes clicks there only, and a click anywhere else goes to the window below. This is
// rendering (what is opaque), computed only when something changed, never on a timer.
//
// createMask(width, height) is a coarse grid of CELL-px cells over the window; painters mark the
// cells they cover (addRect for a box, addAlpha for an image or canvas's opaque pixels), and
// rects() merges the marked cells into few rectangles (runs along each row, stacked while the
// next row has the same run). markDom marks a DOM character (character.js: the drawn SVG and
// the sprite or picture image); a VRM character marks its own (vrm.js, markOutline).

import { STEPPED } from './character.js';

/**
 * The ambient motions that barely move the body (a blink, a breath, a sway of a few pixels,
 * character.js's STEPPED): no new outline while they play, so a character at rest sends none.
 */
export const RESTING = new Set(Object.keys(STEPPED).map((id) => `yui-m-${id}`));

/** The grid's cell, in CSS pixels: fine enough to follow a silhouette, coarse enough to be cheap. */
export const CELL = 8;
/** An image's pixel counts as drawn above this alpha (of 255): faint shadows and edges do not. */
export const ALPHA_MIN = 24;

/** A grid of `width` × `height` CSS pixels in `cell`-px cells, all clear. */
export function createMask(width, height, cell = CELL) {
  const cols = Math.max(1, Math.ceil(width / cell));
  const rows = Math.max(1, Math.ceil(height / cell));
  const cells = new Uint8Array(cols * rows);
  let marked = 0;

  /** Mark every cell the box (x, y, w, h) touches, clipped to the grid. */
  function addRect(x, y, w, h) {
    if (!(w > 0 && h > 0)) return;
    const c0 = Math.max(0, Math.floor(x / cell));
    const r0 = Math.max(0, Math.floor(y / cell));
    const c1 = Math.min(cols, Math.ceil((x + w) / cell));
    const r1 = Math.min(rows, Math.ceil((y + h) / cell));
    for (let r = r0; r < r1; r++) {
      for (let c = c0; c < c1; c++) {
        if (!cells[r * cols + c]) { cells[r * cols + c] = 1; marked++; }
      }
    }
  }

  /**
   * Mark the cells under the opaque pixels of `source` (an image or a canvas) drawn at (x, y)
   * with size w × h. It is sampled at half a cell: a thin opaque part still marks its cell. A
   * source the page may not read (never the case for the app's data: URLs and its own canvas)
   * marks its whole box.
   */
  function addAlpha(source, x, y, w, h) {
    if (!(w > 0 && h > 0)) return;
    const sw = Math.max(1, Math.ceil((w * 2) / cell));
    const sh = Math.max(1, Math.ceil((h * 2) / cell));
    let data;
    try {
      const cv = document.createElement('canvas');
      cv.width = sw;
      cv.height = sh;
      const g = cv.getContext('2d', { willReadFrequently: true });
      g.drawImage(source, 0, 0, sw, sh);
      data = g.getImageData(0, 0, sw, sh).data;
    } catch (e) {
      console.warn('the outline cannot read an image, its whole box takes clicks', e);
      addRect(x, y, w, h);
      return;
    }
    const px = w / sw;
    const py = h / sh;
    for (let j = 0; j < sh; j++) {
      for (let i = 0; i < sw; i++) {
        if (data[(j * sw + i) * 4 + 3] > ALPHA_MIN) addRect(x + i * px, y + j * py, px, py);
      }
    }
  }

  /** The marked cells as rectangles {x, y, w, h} in CSS pixels (integers), few and disjoint. */
  function rects() {
    const out = [];
    let open = new Map(); // "c0:c1" → the rectangle that run extends
    for (let r = 0; r < rows; r++) {
      const next = new Map();
      for (let c = 0; c < cols; c++) {
        if (!cells[r * cols + c]) continue;
        const c0 = c;
        while (c < cols && cells[r * cols + c]) c++;
        const key = `${c0}:${c}`;
        let run = open.get(key);
        if (run) run.h += 1;
        else { run = { x: c0, y: r, w: c - c0, h: 1 }; out.push(run); }
        next.set(key, run);
      }
      open = next;
    }
    return out.map((q) => ({ x: q.x * cell, y: q.y * cell, w: q.w * cell, h: q.h * cell }));
  }

  return { cols, rows, cell, addRect, addAlpha, rects, get marked() { return marked; } };
}

/** The shapes of the drawn character (character.js's SVG), the ground's shadow left out. */
const SHAPES = 'path, ellipse, circle, rect, polygon, polyline, line';

/**
 * Mark where a DOM character (character.js's root `root`) draws: its shown image's opaque
 * pixels (a sprite or a card's picture, object-fit contain at the bottom centre) and the boxes
 * of its visible SVG shapes. While a motion plays (a one-shot class yui-m-<id> but the RESTING
 * ones, a sprite's hop) the body moves, so its whole box takes clicks until the motion ends.
 */
export function markDom(mask, root) {
  const box = root.getBoundingClientRect();
  const moving = (k) => (k.startsWith('yui-m-') && !RESTING.has(k)) || k === 'yui-sprite-hop';
  if ([...root.classList].some(moving)) {
    mask.addRect(box.left, box.top, box.width, box.height);
    return;
  }
  const img = root.querySelector('img.yui-sprite');
  if (img && !img.hidden && img.complete && img.naturalWidth > 0) {
    const scale = Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight);
    const w = img.naturalWidth * scale;
    const h = img.naturalHeight * scale;
    mask.addAlpha(img, box.left + (box.width - w) / 2, box.top + box.height - h, w, h);
  }
  for (const el of root.querySelectorAll(SHAPES)) {
    if (el.closest('.yui-ground')) continue;
    const style = getComputedStyle(el);
    if (style.visibility !== 'visible' || style.display === 'none' || Number(style.opacity) === 0) continue;
    const b = el.getBoundingClientRect();
    mask.addRect(b.left, b.top, b.width, b.height);
  }
}
