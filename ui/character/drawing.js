// The built-in character's drawing: colour sets, the default emotions' faces and the body, as
// inline SVG markup. character.js puts it on screen and animates it (character.css).

export const SVG_NS = 'http://www.w3.org/2000/svg';

/** Colour sets. 'rose' (preset Yui) and 'sky' (preset Kai) ship with the app; the rest are looks to pick. */
export const PALETTES = {
  rose: {
    style: 'twintails',
    hair: '#f4a3bd',
    hairShade: '#dc7896',
    dress: '#ff8fb1',
    dressShade: '#e56b91',
    accent: '#ff4f86',
    eye: '#6b2a45',
    cheek: '#ff8fa8',
    skin: '#ffe6d8',
    skinShade: '#f6cdb9',
  },
  sky: {
    style: 'short',
    hair: '#86bdf2',
    hairShade: '#5b94d3',
    dress: '#8fd0f7',
    dressShade: '#5ba8df',
    accent: '#ffd34d',
    eye: '#243f6b',
    cheek: '#ffa9b5',
    skin: '#ffe6d8',
    skinShade: '#f6cdb9',
  },
  // The other built-in looks a user-made character can pick (presets::PALETTES in the core).
  mint: {
    style: 'short',
    hair: '#7fd6b5', hairShade: '#4fb592', dress: '#a6e8cf', dressShade: '#6fcaa8',
    accent: '#ff9f6b', eye: '#1f5142', cheek: '#ffa9b5', skin: '#ffe6d8', skinShade: '#f6cdb9',
  },
  amber: {
    style: 'twintails',
    hair: '#f2c46d', hairShade: '#d9a23f', dress: '#ffb866', dressShade: '#e8923a',
    accent: '#e8553a', eye: '#5a3812', cheek: '#ff9f8f', skin: '#ffe6d8', skinShade: '#f6cdb9',
  },
  lilac: {
    style: 'twintails',
    hair: '#c3a6f0', hairShade: '#9d7ad8', dress: '#d5bdf7', dressShade: '#ad8ee6',
    accent: '#7fd6e8', eye: '#3e2866', cheek: '#ffa9c8', skin: '#ffe6d8', skinShade: '#f6cdb9',
  },
  slate: {
    style: 'short',
    hair: '#7d8aa3', hairShade: '#5b6780', dress: '#a3b0c7', dressShade: '#7c8aa6',
    accent: '#f2d16b', eye: '#1e2636', cheek: '#f7a9b0', skin: '#ffe6d8', skinShade: '#f6cdb9',
  },
};

/** The default emotions, each drawn by FACES below. */
export const EMOTIONS = [
  'neutral', 'happy', 'sad', 'angry', 'surprised', 'shy', 'sleepy', 'thinking',
];

// --- drawing helpers -------------------------------------------------------------------------

const EYE_L = 78;
const EYE_R = 122;
const EYE_Y = 110;

function openEye(x, y, p, { rx = 8.5, ry = 11.5, dx = 0, dy = 0 } = {}) {
  return `<ellipse cx="${x + dx}" cy="${y + dy}" rx="${rx}" ry="${ry}" fill="${p.eye}"/>
    <circle cx="${x + dx + 2.6}" cy="${y + dy - 4}" r="3.2" fill="#fff"/>
    <circle cx="${x + dx - 2.6}" cy="${y + dy + 4.5}" r="1.5" fill="#fff" opacity=".8"/>`;
}

function cheeks(p, opacity = 0.45, r = 9) {
  return `<ellipse class="cheek" cx="64" cy="128" rx="${r}" ry="${r * 0.6}" fill="${p.cheek}" opacity="${opacity}"/>
    <ellipse class="cheek" cx="136" cy="128" rx="${r}" ry="${r * 0.6}" fill="${p.cheek}" opacity="${opacity}"/>`;
}

function sparkle(x, y, s, color) {
  return `<path d="M${x} ${y - s} Q${x} ${y} ${x + s} ${y} Q${x} ${y} ${x} ${y + s} Q${x} ${y} ${x - s} ${y} Q${x} ${y} ${x} ${y - s}Z" fill="${color}"/>`;
}

const stroke = (color, w = 3.5) =>
  `fill="none" stroke="${color}" stroke-width="${w}" stroke-linecap="round" stroke-linejoin="round"`;

/**
 * Emotion id → SVG markup of the face layer (eyes, brows, mouth, marks around the head).
 * Marks are paths, not <text>: the sleeping face's "Zz" in a heavy font cost the web process
 * ~2 MiB a window, once, on the first turn after the characters slept (docs/PERFORMANCE.md,
 * "The sleeping face's Zz"), and a path looks the same whatever fonts the machine has.
 */
export const FACES = {
  neutral: (p) => `
    <g class="eyes">${openEye(EYE_L, EYE_Y, p)}${openEye(EYE_R, EYE_Y, p)}</g>
    ${cheeks(p, 0.35)}
    <path class="mouth" d="M94 135 Q100 139 106 135" ${stroke(p.eye, 3)}/>`,

  happy: (p) => `
    <g class="eyes">
      <path d="M69 113 Q78 100 87 113" ${stroke(p.eye, 4.5)}/>
      <path d="M113 113 Q122 100 131 113" ${stroke(p.eye, 4.5)}/>
    </g>
    ${cheeks(p, 0.7, 11)}
    <g class="mouth">
      <path d="M86 130 Q100 152 114 130 Z" fill="#b8324f" stroke="${p.eye}" stroke-width="2.5" stroke-linejoin="round"/>
      <path d="M93 141 Q100 136 107 141 Q100 148 93 141Z" fill="#ff7b93"/>
    </g>
    <g class="marks">
      ${sparkle(34, 62, 9, '#ffd34d')}${sparkle(168, 50, 11, '#ffd34d')}${sparkle(172, 96, 6, '#ffe98a')}
    </g>`,

  sad: (p) => `
    <g class="brows">
      <path d="M67 95 L87 88" ${stroke(p.eye, 3.5)}/>
      <path d="M113 88 L133 95" ${stroke(p.eye, 3.5)}/>
    </g>
    <g class="eyes">${openEye(EYE_L, EYE_Y + 3, p, { ry: 9, dy: 1 })}${openEye(EYE_R, EYE_Y + 3, p, { ry: 9, dy: 1 })}</g>
    <path d="M70 122 Q64 134 70 140 Q76 134 70 122Z" fill="#63c3ff" stroke="#3a9be0" stroke-width="1.2"/>
    <path d="M131 122 Q126 131 131 136 Q136 131 131 122Z" fill="#63c3ff" stroke="#3a9be0" stroke-width="1.2"/>
    <path class="mouth" d="M90 141 Q100 131 110 141" ${stroke(p.eye, 3.5)}/>
    <g class="marks" ${stroke('#6b8fd6', 3)} opacity=".75">
      <path d="M84 56 L84 72"/><path d="M96 52 L96 70"/><path d="M108 52 L108 70"/><path d="M120 56 L120 72"/>
    </g>`,

  angry: (p) => `
    <circle cx="100" cy="100" r="60" fill="#ff3b3b" opacity=".10"/>
    <g class="brows">
      <path d="M66 92 L89 102" ${stroke(p.eye, 5)}/>
      <path d="M111 102 L134 92" ${stroke(p.eye, 5)}/>
    </g>
    <g class="eyes">
      <path d="M70 107 L87 111 Q87 121 78 121 Q70 121 70 111Z" fill="${p.eye}"/>
      <path d="M130 107 L113 111 Q113 121 122 121 Q130 121 130 111Z" fill="${p.eye}"/>
    </g>
    ${cheeks(p, 0.5)}
    <path class="mouth" d="M88 142 Q94 134 100 138 Q106 134 112 142" ${stroke(p.eye, 3.5)}/>
    <g class="marks" ${stroke('#e8283c', 5)}>
      <path d="M34 45 Q45 45 45 34"/><path d="M55 34 Q55 45 66 45"/>
      <path d="M34 55 Q45 55 45 66"/><path d="M55 66 Q55 55 66 55"/>
    </g>`,

  surprised: (p) => `
    <g class="brows">
      <path d="M67 87 Q77 79 87 86" ${stroke(p.eye, 3.5)}/>
      <path d="M113 86 Q123 79 133 87" ${stroke(p.eye, 3.5)}/>
    </g>
    <g class="eyes">
      <circle cx="${EYE_L}" cy="${EYE_Y}" r="11" fill="#fff" stroke="${p.eye}" stroke-width="3"/>
      <circle cx="${EYE_L}" cy="${EYE_Y}" r="4.5" fill="${p.eye}"/>
      <circle cx="${EYE_R}" cy="${EYE_Y}" r="11" fill="#fff" stroke="${p.eye}" stroke-width="3"/>
      <circle cx="${EYE_R}" cy="${EYE_Y}" r="4.5" fill="${p.eye}"/>
    </g>
    ${cheeks(p, 0.3)}
    <ellipse class="mouth" cx="100" cy="140" rx="7" ry="9" fill="#b8324f" stroke="${p.eye}" stroke-width="2.5"/>
    <g class="marks">
      <path d="M40 14 L34 42" ${stroke('#ff4f4f', 7)}/>
      <circle cx="31" cy="56" r="4.5" fill="#ff4f4f"/>
      <g ${stroke('#ff8a3d', 3)}><path d="M30 70 L40 78"/><path d="M24 92 L37 94"/><path d="M176 92 L164 96"/></g>
    </g>`,

  shy: (p) => `
    <g class="eyes">
      ${openEye(EYE_L, EYE_Y + 2, p, { rx: 7, ry: 9, dx: -4, dy: 2 })}
      ${openEye(EYE_R, EYE_Y + 2, p, { rx: 7, ry: 9, dx: -4, dy: 2 })}
      <path d="M67 99 Q76 97 85 93" ${stroke(p.eye, 2.5)}/>
      <path d="M111 93 Q120 97 129 99" ${stroke(p.eye, 2.5)}/>
    </g>
    <ellipse cx="64" cy="130" rx="16" ry="9" fill="#ff5d7e" opacity=".55"/>
    <ellipse cx="136" cy="130" rx="16" ry="9" fill="#ff5d7e" opacity=".55"/>
    <g ${stroke('#e0405f', 2)}>
      <path d="M54 134 L59 125"/><path d="M62 135 L67 126"/><path d="M70 135 L75 126"/>
      <path d="M126 135 L131 126"/><path d="M134 135 L139 126"/><path d="M142 134 L147 125"/>
    </g>
    <path class="mouth" d="M91 139 q3 -4 6 0 q3 4 6 0 q3 -4 6 0" ${stroke(p.eye, 2.8)}/>
    <g class="marks">
      <path d="M156 78 Q148 92 156 96 Q164 92 156 78Z" fill="#bfe6ff" stroke="#5aaee6" stroke-width="1.5"/>
      <path d="M34 60 C28 52 18 60 34 72 C50 60 40 52 34 60Z" fill="#ff6f91"/>
    </g>`,

  sleepy: (p) => `
    <g class="eyes">
      <path d="M68 111 Q78 118 88 111" ${stroke(p.eye, 4)}/>
      <path d="M112 111 Q122 118 132 111" ${stroke(p.eye, 4)}/>
      <path d="M70 116 L67 121" ${stroke(p.eye, 2)}/><path d="M130 116 L133 121" ${stroke(p.eye, 2)}/>
    </g>
    ${cheeks(p, 0.3)}
    <ellipse class="mouth" cx="102" cy="139" rx="4" ry="5" fill="#b8324f" stroke="${p.eye}" stroke-width="2"/>
    <circle cx="114" cy="128" r="7" fill="#cdeeff" stroke="#7cc6f2" stroke-width="1.5" opacity=".9"/>
    <g class="marks zzz" fill="none" stroke="#7a8fd6" stroke-linecap="round" stroke-linejoin="round">
      <path d="M44 43.6 h6.6 L44 52 h6.6" stroke-width="2"/>
      <path d="M24 18.6 h12.1 L24 34 h12.1" stroke-width="3.7"/>
      <path d="M2 -9 h16.5 L2 12 h16.5" stroke-width="5.1"/>
    </g>`,

  thinking: (p) => `
    <g class="brows">
      <path d="M67 92 L87 92" ${stroke(p.eye, 3.5)}/>
      <path d="M113 90 Q123 82 133 88" ${stroke(p.eye, 3.5)}/>
    </g>
    <g class="eyes">${openEye(EYE_L, EYE_Y, p, { ry: 10, dx: 3, dy: -3 })}${openEye(EYE_R, EYE_Y, p, { ry: 10, dx: 3, dy: -3 })}</g>
    ${cheeks(p, 0.3)}
    <path class="mouth" d="M95 139 L108 135" ${stroke(p.eye, 3.5)}/>
    <g class="marks">
      <circle cx="148" cy="62" r="4" fill="#fff" stroke="#9aa6c8" stroke-width="2"/>
      <circle cx="158" cy="46" r="6" fill="#fff" stroke="#9aa6c8" stroke-width="2"/>
      <ellipse cx="172" cy="24" rx="20" ry="15" fill="#fff" stroke="#9aa6c8" stroke-width="2"/>
      <path d="M166.5 19.5 Q166.5 13 172 13 Q177.5 13 177.5 18.5 Q177.5 22.5 172 25 L172 27.5" ${stroke('#6a78a8', 3.6)}/>
      <circle cx="172" cy="33" r="2.3" fill="#6a78a8"/>
    </g>`,
};

export function bodyMarkup(p) {
  const twin = p.style === 'twintails';
  const backHair = twin
    ? `<g class="tail tail-l"><path d="M48 78 Q14 104 24 168 Q30 186 40 170 Q36 128 62 96Z" fill="${p.hair}" stroke="${p.hairShade}" stroke-width="2"/></g>
       <g class="tail tail-r"><path d="M152 78 Q186 104 176 168 Q170 186 160 170 Q164 128 138 96Z" fill="${p.hair}" stroke="${p.hairShade}" stroke-width="2"/></g>
       <path d="M38 104 Q38 36 100 34 Q162 36 162 104 L158 150 Q100 168 42 150Z" fill="${p.hairShade}"/>`
    : `<path d="M40 104 Q40 36 100 34 Q160 36 160 104 L156 128 Q100 140 44 128Z" fill="${p.hairShade}"/>`;
  const accessory = twin
    ? `<g class="ribbon" transform="translate(140 52) rotate(18)">
         <path d="M0 0 L-16 -11 Q-20 0 -16 11Z" fill="${p.accent}"/>
         <path d="M0 0 L16 -11 Q20 0 16 11Z" fill="${p.accent}"/>
         <circle r="5" fill="#fff" stroke="${p.accent}" stroke-width="2"/></g>`
    : `<g class="pin" transform="translate(140 56)">
         ${sparkle(0, 0, 11, p.accent).replace('/>', ` stroke="#e0a800" stroke-width="1.5"/>`)}</g>
       <path class="cowlick" d="M98 36 Q92 18 110 14 Q100 24 106 36Z" fill="${p.hair}"/>`;
  return `
  <g class="yui-ground"><ellipse cx="100" cy="233" rx="42" ry="5" fill="#000" opacity=".10"/></g>
  <g class="yui-whole">
   <g class="yui-breath">
    <g class="yui-backhair">${backHair}</g>
    <g class="yui-body">
      <ellipse cx="87" cy="228" rx="9" ry="5" fill="${p.dressShade}"/>
      <ellipse cx="113" cy="228" rx="9" ry="5" fill="${p.dressShade}"/>
      <path d="M80 160 Q100 152 120 160 L140 218 Q100 230 60 218Z" fill="${p.dress}" stroke="${p.dressShade}" stroke-width="2"/>
      <path d="M88 160 L100 174 L112 160" fill="#fff" stroke="${p.dressShade}" stroke-width="1.5"/>
      <circle cx="100" cy="190" r="3" fill="${p.accent}"/>
    </g>
    <g class="yui-head">
      <circle cx="100" cy="100" r="60" fill="${p.skin}" stroke="${p.skinShade}" stroke-width="2"/>
      <g class="yui-face"></g>
      <path class="yui-locks" d="M41 96 Q37 128 46 150 Q50 130 53 108Z M159 96 Q163 128 154 150 Q150 130 147 108Z" fill="${p.hair}" stroke="${p.hairShade}" stroke-width="2" stroke-linejoin="round"/>
      <path class="yui-bangs" d="M40 104 Q36 40 100 36 Q164 40 160 104 Q152 76 136 66 Q130 86 114 80 Q106 66 98 80 Q84 88 76 68 Q58 78 40 104Z" fill="${p.hair}" stroke="${p.hairShade}" stroke-width="2"/>
      ${accessory}
      <g class="yui-state-glasses" ${stroke('#40445a', 3)}>
        <circle cx="${EYE_L}" cy="${EYE_Y}" r="15" fill="#bfe3ff" fill-opacity=".25"/>
        <circle cx="${EYE_R}" cy="${EYE_Y}" r="15" fill="#bfe3ff" fill-opacity=".25"/>
        <path d="M93 108 Q100 103 107 108"/><path d="M63 106 L44 100"/><path d="M137 106 L156 100"/>
      </g>
      <g class="yui-marks"></g>
    </g>
    <g class="yui-arm yui-arm-l">
      <path d="M83 168 L67 198" ${stroke(p.dress, 13)}/><circle cx="66" cy="201" r="7.5" fill="${p.skin}" stroke="${p.skinShade}" stroke-width="1.5"/>
    </g>
    <g class="yui-arm yui-arm-r">
      <path d="M117 168 L133 198" ${stroke(p.dress, 13)}/><circle cx="134" cy="201" r="7.5" fill="${p.skin}" stroke="${p.skinShade}" stroke-width="1.5"/>
    </g>
   </g>
  </g>
  <g class="yui-state-browsing">
    <g class="globe">
      <circle cx="164" cy="196" r="19" fill="#7fd3ff" stroke="#2b7fc0" stroke-width="2.5"/>
      <ellipse cx="164" cy="196" rx="8" ry="19" ${stroke('#2b7fc0', 2)}/>
      <path d="M145 196 L183 196 M149 186 L179 186 M149 206 L179 206" ${stroke('#2b7fc0', 2)}/>
      <path d="M155 183 Q160 190 156 196 Q162 200 160 208 Q168 204 170 196 Q176 190 170 182Z" fill="#6cc96a" opacity=".85"/>
    </g>
  </g>
  <g class="yui-state-thinking">
    <circle class="dot d1" cx="84" cy="18" r="5" fill="#9aa6c8"/>
    <circle class="dot d2" cx="100" cy="18" r="5" fill="#9aa6c8"/>
    <circle class="dot d3" cx="116" cy="18" r="5" fill="#9aa6c8"/>
  </g>
  <g class="yui-state-listening" ${stroke('#9aa6c8', 3)}>
    <path d="M30 96 Q22 106 30 116"/><path d="M22 88 Q8 106 22 124"/>
  </g>`;
}

/** A palette by name or object (an object fills in from 'rose'); unknown names warn. */
export function resolvePalette(p) {
  if (p && typeof p === 'object') return { ...PALETTES.rose, ...p };
  if (typeof p === 'string' && PALETTES[p]) return PALETTES[p];
  if (p !== undefined) console.warn(`[character] unknown palette ignored: ${p}`);
  return PALETTES.rose;
}
