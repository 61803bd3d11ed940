// Canvas heatmaps for the Attention Playground (a Streamlit components-v2 module; no build step, no network).
//
// The page sends one binary payload per figure (components/heatmap/codec.py: encode): a JSON header, then the
// values (P, R, C) -- float32 for the panels the header does not flag "fixed", then int16 counts of
// 10^-decimals for those it does -- an int16 column index (C), a uint8 mask (P, R, C), a uint8 flag
// per faded row (R) and, where the tokens are an image's patches, an RGBA picture per row token. This module
// lays the panels out for the width it is given, paints every matrix as one image (one pixel per cell, scaled
// up without smoothing: ~100k cells in a few ms), and draws token labels (with their pictures), axis titles (horizontal), the grey x of masked cells, faded rows, head boundaries, a legend per
// colour scale, and a tooltip with the value to the header's decimals. Its type grows by the CSS variable
// --attn-chart-font-scale (a projector slide sets it; 1 elsewhere).
// A "PNG" button in the chart's top-right corner (shown on hover or keyboard focus) paints the chart again, as
// drawn (labels, titles, legends), on a canvas of its own at max(2, devicePixelRatio) times its size on a white
// background, and downloads it: nothing is sent to the server, and the chart's own draws do no extra work.
// Every word comes from the header (already translated); token labels are drawn as canvas text or set
// as textContent, never parsed as HTML.
//
// Steps 1 and 2 follow the head picked on the page. Their payloads hold every head's panels (header
// "heads"), and the head picker (also drawn here) switches the head in the browser: every chart that
// follows it redraws at once, without a run on the server. The server learns the new head a moment
// later (SYNC_MS after the last pick: one small run that writes it into the link), so clicking through
// the heads stays instant. When the server itself moves the head (a link, the head finder, fewer heads),
// its "moves" token changes and the page takes its head.

const SCHEMES = {
  // Vega's "blues" and "redblue" (reversed: blue below 0, red above), as 256-colour tables.
  sequential: "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4690",
  diverging: "053061" + "2166ac4393c392c5ded1e5f0f7f7f7fddbc7f4a582d6604db2182b67001f",
};
const MASKED = [212, 212, 212]; // #d4d4d4
const FADED_OPACITY = 0.25; // a faded row's colour over white (as the training charts draw them)
const CROSS = "#404040";
const TEXT = "#31333f";
const GAP_X = 18; // between panels in a row
const GAP_Y = 14; // between rows of panels
const MIN_LABEL_PX = 9; // smallest label font; a row or column narrower than this gets every k-th label
const LABEL_MAX_PX = 130; // longer token labels are cut with an ellipsis
const LEGEND_BAR = 140;
const LEGEND_LINE = 32; // height of one line of legends
const SYNC_MS = 1000; // the server is told the picked head this long after the last pick
const SELECT_ABOVE = 16; // more heads than this: a drop-down instead of a row of radio buttons
const THUMB_MIN_PX = 10; // a token's picture (an image's patch) is drawn beside its label from this row height
const THUMB_MAX_PX = 24;
const THUMB_FRAME = "#9ca3af";
const PNG_SCALE = 2; // a downloaded PNG has at least this many pixels per CSS pixel (slide resolution)
const PNG_MARGIN = 12; // white CSS px around the chart in a downloaded PNG
const PNG_ROOM = 52; // CSS px (times the type's scale) the PNG button takes at the top-right: no title runs under it
// a title's pieces: a shape in brackets ([11 × 16], kept whole), one CJK character, or one word (each with the
// spaces before it)
const WRAP_PIECES = /\s*\[[^\]]*\]|\s*[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|\s*[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+|\s+/g;
const TITLE_LINE = 18; // a panel title's line height (times the type's scale); a long title wraps onto more lines

// The head the page shows, shared by the picker and every chart that follows it.
const heads = { head: 0, moves: null, listeners: new Set() };

function followServer(view) {
  // The server's view of the head: taken when the server moved it (or the page knows no head yet).
  if (view.moves !== heads.moves || heads.head >= view.count) {
    heads.moves = view.moves;
    pickHead(view.shown);
  }
}

function pickHead(head) {
  if (head === heads.head) return;
  heads.head = head;
  for (const listener of heads.listeners) listener();
}

function headSlice(full) {
  // The panels of the head the page shows (all of them when the payload holds one head only).
  const view = full.header.heads;
  if (!view || !view.every) return full;
  const head = Math.min(heads.head, view.count - 1);
  const k = full.P / view.count;
  const n = k * full.R * full.C;
  const header = { ...full.header, panels: full.header.panels.slice(head * k, (head + 1) * k) };
  const masked = full.masked && full.masked.subarray(head * n, (head + 1) * n);
  return { ...full, header, values: full.values.subarray(head * n, (head + 1) * n), masked, P: k };
}

const tables = {};
function colorTable(scheme) {
  // 256 RGBA colours, packed as the little-endian uint32 an ImageData's Uint32Array view takes.
  if (tables[scheme]) return tables[scheme];
  const hex = SCHEMES[scheme];
  const stops = [];
  for (let i = 0; i < hex.length; i += 6) stops.push([0, 2, 4].map((j) => parseInt(hex.slice(i + j, i + j + 2), 16)));
  const packed = new Uint32Array(256);
  const faded = new Uint32Array(256);
  const rgb = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const at = (i / 255) * (stops.length - 1);
    const lo = Math.min(Math.floor(at), stops.length - 2);
    const f = at - lo;
    const c = [0, 1, 2].map((k) => Math.round(stops[lo][k] + (stops[lo + 1][k] - stops[lo][k]) * f));
    rgb.set(c, 3 * i);
    packed[i] = pack(c);
    faded[i] = pack(fade(c));
  }
  return (tables[scheme] = { packed, faded, rgb });
}

const pack = (c) => (255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0];
const fade = (c) => c.map((v) => Math.round(255 - (255 - v) * FADED_OPACITY));

function parse(bytes) {
  const own = bytes.slice(); // an aligned buffer of our own: the typed arrays below read it in place
  const view = new DataView(own.buffer);
  const length = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(own.subarray(4, 4 + length)));
  let offset = 4 + length + ((4 - ((4 + length) % 4)) % 4);
  const [P, R, C] = header.shape;
  const cells = R * C;
  // panels flagged "fixed" come as int16 counts of 10^-decimals, after the float32 ones
  const fixedCount = header.fixed.filter(Boolean).length;
  const floats = new Float32Array(own.buffer, offset, (P - fixedCount) * cells);
  offset += 4 * (P - fixedCount) * cells;
  const counts = new Int16Array(own.buffer, offset, fixedCount * cells);
  offset += 2 * fixedCount * cells;
  let values = floats;
  if (fixedCount) {
    const unit = 10 ** header.decimals;
    values = new Float32Array(P * cells); // (P, R, C)
    let float = 0;
    let fixed = 0;
    for (let p = 0; p < P; p++) {
      const at = p * cells;
      if (header.fixed[p]) {
        const from = fixed++ * cells;
        for (let i = 0; i < cells; i++) values[at + i] = counts[from + i] / unit;
      } else {
        values.set(floats.subarray(float * cells, (float + 1) * cells), at);
        float++;
      }
    }
  }
  let index = null;
  if (header.index) {
    index = new Int16Array(own.buffer, offset, C);
    offset += 2 * C;
  }
  let masked = null;
  if (header.masked) {
    masked = new Uint8Array(own.buffer, offset, P * R * C);
    offset += P * R * C;
  }
  let faded = null;
  if (header.faded) {
    faded = new Uint8Array(own.buffer, offset, R);
    offset += R;
  }
  // each row token's picture (an image's patches), RGBA (R, h, w, 4): as laid out, one image w wide, R·h high
  let thumbs = null;
  if (header.thumbs) {
    const { height, width } = header.thumbs;
    thumbs = new ImageData(new Uint8ClampedArray(own.buffer, offset, R * height * width * 4), width, R * height);
  }
  return { header, values, index, masked, faded, thumbs, P, R, C };
}

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));

function formatTick(value) {
  if (value === 0) return "0";
  const digits = Math.abs(value) >= 10 ? 0 : Math.abs(value) >= 1 ? 1 : Math.abs(value) >= 0.1 ? 2 : 3;
  return value.toFixed(digits);
}

function fileName(header, head) {
  // An ASCII file name from the panels' titles (accents dropped; other scripts leave only their digits).
  const titles = header.panels.map((panel) => panel.title).join(" ");
  const ascii = titles.normalize("NFKD").replace(/[^\x20-\x7e]/g, "");
  let slug = ascii.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60).replace(/-+$/, "");
  if (!/[a-z]/.test(slug)) slug = slug ? `attention-chart-${slug}` : "attention-chart";
  if (header.heads && !/head/.test(slug)) slug += `-head-${header.heads.every ? head : header.heads.shown}`;
  return `${slug}.png`;
}

function formatValue(value, decimals) {
  if (value === -Infinity) return "−∞";
  if (value === Infinity) return "∞";
  return value.toFixed(decimals);
}

class HeatmapView {
  constructor(parent) {
    this.root = document.createElement("div");
    this.root.className = "attn-heatmap";
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("role", "img");
    this.tip = document.createElement("div");
    this.tip.className = "attn-heatmap-tip";
    this.mark = document.createElement("div");
    this.mark.className = "attn-heatmap-mark";
    this.note = document.createElement("div");
    this.note.className = "attn-heatmap-note";
    // the PNG download: made once; its words (title, accessible name) come with each figure, in the page's language
    this.save = document.createElement("button");
    this.save.type = "button";
    this.save.className = "attn-heatmap-png";
    this.save.textContent = "PNG";
    this.save.hidden = true;
    this.save.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      this.download();
    });
    this.root.append(this.canvas, this.mark, this.tip, this.note, this.save);
    parent.appendChild(this.root);
    this.ctx = this.canvas.getContext("2d");
    this.width = 0;
    this.onHead = () => {
      // another head picked: redraw (a chart still being set up draws once it is, in update)
      if (this.width && this.full && this.full.header.heads && this.full.header.heads.every) {
        this.data = headSlice(this.full);
        this.draw();
      }
    };
    this.canvas.addEventListener("mousemove", (event) => this.hover(event));
    this.canvas.addEventListener("mouseleave", () => this.hideTip());
    // The width is read once (a forced layout) when the chart first draws; after that the observer keeps
    // it, so a rerun's redraw reads nothing from the layout. A new width redraws in the next frame.
    this.resize = new ResizeObserver((entries) => {
      const width = Math.round(entries[entries.length - 1].contentRect.width);
      if (this.data && this.width && Math.abs(width - this.width) >= 2) {
        this.width = width;
        requestAnimationFrame(() => this.draw());
      }
    });
  }

  update(bytes) {
    this.resize.observe(this.root);
    const same = this.bytes && bytes.length === this.bytes.length && bytes.every((b, i) => b === this.bytes[i]);
    if (same) return; // the same figure: nothing to draw
    this.bytes = bytes;
    this.full = parse(bytes);
    this.atlas = null;
    if (this.full.thumbs) {
      // the pictures on a canvas of their own, drawn from there scaled up without smoothing
      this.atlas = document.createElement("canvas");
      [this.atlas.width, this.atlas.height] = [this.full.thumbs.width, this.full.thumbs.height];
      this.atlas.getContext("2d").putImageData(this.full.thumbs, 0, 0);
    }
    if (this.full.header.heads) {
      heads.listeners.add(this.onHead);
      followServer(this.full.header.heads);
    }
    this.data = headSlice(this.full);
    const label = this.full.header.text.png || "PNG";
    if (this.save.title !== label) {
      this.save.title = label;
      this.save.setAttribute("aria-label", label);
    }
    this.save.hidden = false;
    if (!this.width) this.width = this.root.clientWidth; // read once: later widths come from the resize observer
    this.draw();
    if (document.fonts && document.fonts.status !== "loaded") document.fonts.ready.then(() => this.draw());
  }

  detach() {
    clearTimeout(this.recheck);
    this.resize.disconnect();
    heads.listeners.delete(this.onHead);
  }

  font(size, bold) {
    return `${bold ? "600 " : ""}${size}px ${this.family}`;
  }

  textWidth(text, font) {
    this.ctx.font = font;
    return this.ctx.measureText(text).width;
  }

  wrap(text, font, max) {
    // The text in lines of at most `max` px, broken after spaces or between CJK characters (a longer word alone
    // is broken between its characters): the whole text, never cut.
    const pieces = text.match(WRAP_PIECES) || [];
    const lines = [];
    let line = "";
    const add = (piece) => {
      if (!line || this.textWidth(line + piece, font) <= max) line += piece;
      else {
        lines.push(line);
        line = piece.trimStart();
      }
    };
    for (const piece of pieces) {
      if (this.textWidth(piece.trim(), font) <= max) add(piece);
      else for (const character of piece) add(character); // a word wider than the line: its characters
    }
    if (line) lines.push(line);
    return lines.length ? lines : [""];
  }

  fit(text, font, max) {
    // The label, cut with an ellipsis to at most `max` px.
    if (this.textWidth(text, font) <= max) return text;
    let cut = text;
    while (cut.length > 1 && this.textWidth(cut + "…", font) > max) cut = cut.slice(0, -1);
    return cut + "…";
  }

  fitted(width) {
    // The layout for `width`; on a slide (--attn-chart-screen-fit, the px to leave under the chart) no taller than
    // the window's room below the chart's top: its rows as thin as it takes (the largest that fits, by bisection).
    // The note under a chart whose labels were thinned ("hover for every label") counts as the chart's.
    const whole = this.layout(width);
    const room = (this.room = this.screenRoom());
    const note = Math.ceil(13 * this.k * 1.3) + 2;
    const fits = (L) => L.height + (L.thinned ? note : 0) <= room;
    if (!room || fits(whole)) return whole;
    let [low, high] = [1, whole.ch];
    if (!fits(this.layout(width, low))) return this.layout(width, low);
    for (let i = 0; i < 12 && high - low > 0.25; i++) {
      const middle = (low + high) / 2;
      if (fits(this.layout(width, middle))) low = middle;
      else high = middle;
    }
    return this.layout(width, low);
  }

  screenRoom() {
    // The window's height below the chart's top (in the page, whatever the scroll) less the slide's margin; 0 off a
    // slide. A forced layout, on a slide only.
    const margin = parseFloat(getComputedStyle(this.root).getPropertyValue("--attn-chart-screen-fit"));
    if (!Number.isFinite(margin)) return 0;
    const main = this.root.closest('[data-testid="stMain"]');
    const top = this.root.getBoundingClientRect().top + (main ? main.scrollTop : 0) + window.scrollY;
    return Math.max(120, Math.floor(window.innerHeight - top - margin));
  }

  layout(width, cap) {
    // `cap`: the most px a row of a matrix may take (the slide's fit), else the figure's own hint
    const { header, P, R, C } = this.data;
    const hint = header.layout;
    const cols = header.cols;
    const axes = hint.axes;
    const k = this.k;
    const out = { axes, thinned: false, k };
    out.ch = hint.square ? clamp(Math.floor(hint.height / R), 1, 44) : clamp(hint.height / R, 3, 40);
    if (cap) out.ch = hint.square ? Math.max(1, Math.min(out.ch, Math.floor(cap))) : Math.min(out.ch, cap);
    // row axis: labels right-aligned in a gutter as wide as the widest label (or the axis title)
    out.rowFont = clamp(Math.floor(out.ch * 0.85), MIN_LABEL_PX, Math.round(13 * k));
    out.rowStep = out.ch >= MIN_LABEL_PX ? 1 : Math.ceil(MIN_LABEL_PX / out.ch);
    out.rowLabels = header.rows.labels.map((label) => this.fit(label, this.font(out.rowFont), LABEL_MAX_PX));
    // a token's picture beside its label, as tall as its row (none where rows are too thin to show one)
    out.thumb = axes && this.atlas && out.ch >= THUMB_MIN_PX ? Math.min(Math.floor(out.ch) - 2, THUMB_MAX_PX) : 0;
    const thumbRoom = out.thumb ? out.thumb + 4 : 0;
    out.gutter = 0;
    if (axes) {
      const widest = Math.max(...out.rowLabels.map((label) => this.textWidth(label, this.font(out.rowFont))));
      const labels = widest + thumbRoom;
      out.gutter = Math.ceil(Math.max(labels, this.textWidth(header.rows.title, this.font(12 * k, true)))) + 8;
    }
    // panels per row: as many as the hint allows while token columns stay wide enough to label
    const room = Math.max(40, width - out.gutter);
    let n = Math.min(P, hint.columns);
    if (hint.square) {
      out.cw = out.ch;
      while (n > 1 && n * C * out.cw + (n - 1) * GAP_X > room) n--;
      if (C * out.cw > room) out.cw = out.ch = Math.max(1, Math.floor(room / C));
    } else {
      const cellWidth = (k) => (room - (k - 1) * GAP_X) / k / C;
      const wanted = cols.labels && !cap ? 10 : 1.5; // a slide's fit keeps the panels side by side (labels thinned)
      while (n > 1 && cellWidth(n) < wanted) n--;
      out.cw = cellWidth(n);
    }
    out.perRow = n;
    out.pw = out.cw * C;
    out.mh = out.ch * R;
    // column axis: token labels (horizontal when they fit, else vertical), feature ticks, or head blocks
    out.colStep = 1;
    out.colBand = 0;
    if (axes && cols.labels) {
      out.colFont = clamp(Math.floor(out.cw * 0.8), MIN_LABEL_PX, Math.round(13 * k));
      out.colStep = out.cw >= MIN_LABEL_PX ? 1 : Math.ceil(MIN_LABEL_PX / out.cw);
      out.colLabels = cols.labels.map((label) => this.fit(label, this.font(out.colFont), LABEL_MAX_PX));
      const widest = Math.max(...out.colLabels.map((label) => this.textWidth(label, this.font(out.colFont))));
      out.colVertical = widest + 4 > out.cw;
      out.colThumb = this.atlas && out.cw >= THUMB_MIN_PX ? Math.min(Math.floor(out.cw) - 2, THUMB_MAX_PX) : 0;
      const thumbBand = out.colThumb ? out.colThumb + 3 : 0;
      out.colBand = Math.ceil(out.colVertical ? widest + 6 : out.colFont + 6) + thumbBand;
    } else if (axes) {
      out.colFont = Math.round(11 * k);
      out.colBand = Math.round(16 * k);
    }
    out.thinned = axes && (out.rowStep > 1 || out.colStep > 1);
    // each panel's title in lines as wide as its panel (a first-row title stops short of the PNG button), with the
    // width each line takes (tests read them from attnLayout)
    out.titles = header.panels.map((panel, p) => {
      if (!panel.title) return { text: "", lines: [], max: 0, widths: [] };
      const x = out.gutter + (p % n) * (out.pw + GAP_X);
      let max = Math.max(out.pw, 60);
      if (p < n) max = Math.max(40, Math.min(max, width - PNG_ROOM * k - x));
      const font = this.font(14 * k, true);
      const lines = this.wrap(panel.title, font, max);
      return { text: panel.title, lines, max, widths: lines.map((line) => this.textWidth(line, font)) };
    });
    const titleLines = Math.max(0, ...out.titles.map((title) => title.lines.length));
    out.titleBand = titleLines ? Math.round((4 + TITLE_LINE * titleLines) * k) : 0;
    out.axisBand = axes ? Math.round(18 * k) : 0;
    out.rowHeight = out.titleBand + out.axisBand + out.colBand + out.mh;
    const rows = Math.ceil(P / n);
    const legends = this.legendLayout(width, out, rows, n);
    // where each panel's matrix sits: rows of panels, each followed by the legends of the scales it ends
    out.panels = [];
    out.legends = [];
    let top = 0;
    for (let row = 0; row < rows; row++) {
      for (let p = row * n; p < Math.min(P, (row + 1) * n); p++) {
        const x = out.gutter + (p % n) * (out.pw + GAP_X);
        const y = top + out.titleBand + out.axisBand + out.colBand;
        out.panels.push({ x, top, y, row, cw: out.cw, ch: out.ch, R, C });
      }
      top += out.rowHeight + 8;
      for (const item of legends[row]) out.legends.push({ ...item, y: top + item.line * LEGEND_LINE * k });
      const lines = Math.max(0, ...legends[row].map((item) => item.line + 1));
      top += lines * LEGEND_LINE * k + GAP_Y;
    }
    out.height = Math.ceil(top);
    return out;
  }

  legendLayout(width, out, rows, n) {
    // One legend per colour scale, under the row of panels where its last panel is, starting under its
    // first panel in that row; then (last row) the grey x of masked cells and the faded rows. A legend that
    // would not fit the width goes to a new line.
    const { header, masked, faded } = this.data;
    const k = this.k;
    const panels = header.panels;
    const perRow = Array.from({ length: rows }, () => []);
    const scales = [...new Set(panels.map((panel) => panel.scale))];
    for (const s of scales) {
      const indices = panels.map((panel, p) => (panel.scale === s ? p : -1)).filter((p) => p >= 0);
      const row = Math.floor(indices[indices.length - 1] / n);
      const first = indices.find((p) => Math.floor(p / n) === row);
      const scale = header.scales[s];
      const titleWidth = this.textWidth(scale.title, this.font(12 * k, true));
      perRow[row].push({ kind: "scale", scale: s, at: out.gutter + (first % n) * (out.pw + GAP_X), titleWidth });
    }
    for (const [kind, flags] of [["masked", masked], ["faded", faded]]) {
      if (!flags || !flags.some((m) => m)) continue;
      perRow[rows - 1].push({ kind, at: 0, titleWidth: this.textWidth(header.text[kind], this.font(12 * k)) });
    }
    return perRow.map((items) => {
      let x = out.gutter;
      let line = 0;
      return items.map((item) => {
        const itemWidth = item.kind === "scale" ? item.titleWidth + (8 + LEGEND_BAR + 16) * k : 20 * k + item.titleWidth;
        let left = Math.max(x, item.at);
        if (left + itemWidth > width && left > out.gutter) {
          line += 1;
          left = out.gutter;
        }
        x = left + itemWidth + 12;
        return { ...item, x: left, line };
      });
    });
  }

  draw() {
    // the font and how much larger the type is, read at every draw: a slide's style (which sets the variable)
    // may reach the page after the chart first drew
    const style = getComputedStyle(this.root);
    this.family = style.fontFamily || "sans-serif";
    const scale = parseFloat(style.getPropertyValue("--attn-chart-font-scale"));
    this.k = Number.isFinite(scale) && scale > 0 ? scale : 1;
    const { header } = this.data;
    const width = Math.max(80, this.width);
    const L = (this.geometry = this.fitted(width));
    this.root.attnLayout = L;
    const ratio = window.devicePixelRatio || 1;
    const [pixelsWide, pixelsHigh] = [Math.round(width * ratio), Math.round(L.height * ratio)];
    if (this.canvas.width !== pixelsWide || this.canvas.height !== pixelsHigh) {
      // a new size only when it changed: resizing a canvas reallocates (and clears) its bitmap
      this.canvas.width = pixelsWide;
      this.canvas.height = pixelsHigh;
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${L.height}px`;
    }
    this.canvas.setAttribute("aria-label", header.panels.map((panel) => panel.title).join(" · "));
    this.paint(width, ratio, 0);
    this.note.textContent = L.thinned ? header.text.hover : "";
    this.hideTip();
    if (this.room) {
      // on a slide: what is above the chart may still settle (or the window change): fit again if the room moved
      clearTimeout(this.recheck);
      this.recheck = setTimeout(() => this.root.isConnected && this.screenRoom() !== this.room && this.draw(), 400);
    }
  }

  paint(width, ratio, margin) {
    // The chart as laid out (this.geometry) on this.ctx at `ratio` pixels per CSS pixel: on the page's canvas
    // (margin 0, transparent), or `margin` CSS px inside a white picture (a download).
    const { header, values, masked, faded, R, C } = this.data;
    const L = this.geometry;
    const ctx = this.ctx;
    ctx.setTransform(ratio, 0, 0, ratio, margin * ratio, margin * ratio);
    if (margin) {
      ctx.fillStyle = "white";
      ctx.fillRect(-margin, -margin, width + 2 * margin, L.height + 2 * margin);
    } else ctx.clearRect(0, 0, width, L.height);
    ctx.textBaseline = "middle";
    const image = new ImageData(C, R);
    const pixels = new Uint32Array(image.data.buffer);
    const off = (this.offscreen ||= document.createElement("canvas"));
    if (off.width !== C || off.height !== R) [off.width, off.height] = [C, R];
    const offCtx = off.getContext("2d");
    const grey = (255 << 24) | (MASKED[2] << 16) | (MASKED[1] << 8) | MASKED[0];
    header.panels.forEach((panel, p) => {
      const box = L.panels[p];
      const scale = header.scales[panel.scale];
      const tables = colorTable(scale.scheme);
      const span = scale.high - scale.low || 1;
      const base = p * R * C;
      for (let r = 0; r < R; r++) {
        const table = faded && faded[r] ? tables.faded : tables.packed;
        for (let i = r * C; i < (r + 1) * C; i++) {
          const v = values[base + i];
          if ((masked && masked[base + i]) || !Number.isFinite(v)) pixels[i] = grey;
          else pixels[i] = table[clamp(Math.round(((v - scale.low) / span) * 255), 0, 255)];
        }
      }
      offCtx.putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(off, 0, 0, C, R, box.x, box.y, L.pw, L.mh);
      if (masked && L.cw >= 8 && L.ch >= 8) this.crosses(box, base);
      if (header.layout.annotate && L.cw >= 26 && L.ch >= 14) this.numbers(box, base, scale);
      if (header.cols.group) this.boundaries(box);
      this.panelText(panel, box, p);
    });
    this.legends();
  }

  download() {
    // The chart as drawn, at max(PNG_SCALE, devicePixelRatio) times its CSS size on white, saved as a PNG file.
    if (!this.data || !this.geometry) return;
    const width = Math.max(80, this.width);
    const ratio = Math.max(PNG_SCALE, window.devicePixelRatio || 1);
    const picture = document.createElement("canvas");
    picture.width = Math.round((width + 2 * PNG_MARGIN) * ratio);
    picture.height = Math.round((this.geometry.height + 2 * PNG_MARGIN) * ratio);
    const own = this.ctx;
    this.ctx = picture.getContext("2d");
    try {
      this.paint(width, ratio, PNG_MARGIN);
    } finally {
      this.ctx = own;
    }
    const name = fileName(this.data.header, heads.head);
    picture.toBlob((blob) => {
      if (!blob) return;
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = name;
      link.style.display = "none";
      this.root.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    }, "image/png");
  }

  crosses(box, base) {
    const { masked, R, C } = this.data;
    const ctx = this.ctx;
    const inset = 0.3;
    ctx.beginPath();
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        if (!masked[base + r * C + c]) continue;
        const x = box.x + c * box.cw;
        const y = box.y + r * box.ch;
        ctx.moveTo(x + inset * box.cw, y + inset * box.ch);
        ctx.lineTo(x + (1 - inset) * box.cw, y + (1 - inset) * box.ch);
        ctx.moveTo(x + (1 - inset) * box.cw, y + inset * box.ch);
        ctx.lineTo(x + inset * box.cw, y + (1 - inset) * box.ch);
      }
    }
    ctx.strokeStyle = CROSS;
    ctx.lineWidth = 1.2;
    ctx.stroke();
  }

  numbers(box, base, scale) {
    const { values, masked, R, C } = this.data;
    const ctx = this.ctx;
    const { rgb } = colorTable(scale.scheme);
    const span = scale.high - scale.low || 1;
    ctx.font = this.font(clamp(Math.floor(box.ch * 0.45), 9, Math.round(13 * this.k)));
    ctx.textAlign = "center";
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        const i = base + r * C + c;
        const v = values[i];
        if ((masked && masked[i]) || !Number.isFinite(v)) continue;
        const k = 3 * clamp(Math.round(((v - scale.low) / span) * 255), 0, 255);
        const light = 0.299 * rgb[k] + 0.587 * rgb[k + 1] + 0.114 * rgb[k + 2];
        ctx.fillStyle = light < 140 ? "white" : "black";
        ctx.fillText(v.toFixed(2), box.x + (c + 0.5) * box.cw, box.y + (r + 0.5) * box.ch);
      }
    }
  }

  boundaries(box) {
    const { header, C } = this.data;
    const ctx = this.ctx;
    ctx.beginPath();
    for (let c = header.cols.group; c < C; c += header.cols.group) {
      const x = Math.round(box.x + c * box.cw) + 0.5;
      ctx.moveTo(x, box.y);
      ctx.lineTo(x, box.y + this.geometry.mh);
    }
    ctx.strokeStyle = "black";
    ctx.lineWidth = 2;
    ctx.stroke();
  }

  panelText(panel, box, p) {
    const { header, index, C } = this.data;
    const L = this.geometry;
    const k = L.k;
    const ctx = this.ctx;
    ctx.fillStyle = TEXT;
    if (panel.title) {
      ctx.font = this.font(14 * k, true);
      ctx.textAlign = "left";
      L.titles[p].lines.forEach((line, i) => ctx.fillText(line, box.x, box.top + (10 + TITLE_LINE * i) * k));
    }
    if (!L.axes) return;
    const axisY = box.top + L.titleBand + 9 * k;
    ctx.font = this.font(12 * k, true);
    ctx.textAlign = "center";
    ctx.fillText(this.fit(header.cols.title, ctx.font, Math.max(L.pw, 60)), box.x + L.pw / 2, axisY);
    if (p % L.perRow === 0) {
      // the row axis: its title (horizontal) over the gutter, then one label per row (after its picture)
      ctx.textAlign = "right";
      ctx.fillText(header.rows.title, L.gutter - 6, axisY);
      ctx.font = this.font(L.rowFont);
      const labelRight = L.gutter - 4 - (L.thumb ? L.thumb + 4 : 0);
      for (let r = 0; r < box.R; r += L.rowStep) {
        ctx.fillText(L.rowLabels[r], labelRight, box.y + (r + 0.5) * box.ch);
        if (L.thumb) this.thumb(r, L.gutter - 3 - L.thumb, box.y + r * box.ch + (box.ch - L.thumb) / 2, L.thumb);
      }
    }
    let bandBottom = box.y - 3;
    if (header.cols.labels && L.colThumb) {
      for (let c = 0; c < C; c++) {
        this.thumb(c, box.x + c * box.cw + (box.cw - L.colThumb) / 2, bandBottom - L.colThumb, L.colThumb);
      }
      bandBottom -= L.colThumb + 3;
    }
    if (header.cols.labels) {
      ctx.font = this.font(L.colFont);
      for (let c = 0; c < C; c += L.colStep) {
        const x = box.x + (c + 0.5) * box.cw;
        if (L.colVertical) {
          ctx.save();
          ctx.translate(x, bandBottom);
          ctx.rotate(-Math.PI / 2);
          ctx.textAlign = "left";
          ctx.fillText(L.colLabels[c], 0, 0);
          ctx.restore();
        } else {
          ctx.textAlign = "center";
          ctx.fillText(L.colLabels[c], x, bandBottom - L.colFont / 2);
        }
      }
      return;
    }
    ctx.font = this.font(L.colFont);
    ctx.textAlign = "center";
    const group = header.cols.group;
    if (group) {
      // one label per head block, at its centre; every k-th block when blocks are narrow
      const blockWidth = group * box.cw;
      const step = Math.max(1, Math.ceil(20 / blockWidth));
      for (let g = 0; g * group < C; g += step) {
        ctx.fillText(String(g), box.x + (g + 0.5) * blockWidth, bandBottom - 7 * k);
      }
      return;
    }
    // feature ticks at round numbers, at least ~34 px apart
    const nice = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
    const step = nice.find((s) => s * box.cw >= 34 * k) || 1000;
    for (let c = 0; c < C; c++) {
      const f = index ? index[c] : c;
      if (f % step !== 0) continue;
      const x = box.x + (c + 0.5) * box.cw;
      ctx.fillText(String(f), x, bandBottom - 7 * k);
      ctx.fillRect(Math.round(x), bandBottom - 1, 1, 3);
    }
  }

  thumb(token, x, y, size) {
    // token's picture (see parse), size × size px at (x, y), its pixels kept sharp, in a thin frame (white ink
    // would melt into the page); a transparent one (a token that is no patch) is left out
    const { height, width } = this.data.header.thumbs;
    if (this.data.thumbs.data[token * height * width * 4 + 3] === 0) return;
    const ctx = this.ctx;
    const [left, top] = [Math.round(x), Math.round(y)];
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.atlas, 0, token * height, width, height, left, top, size, size);
    ctx.strokeStyle = THUMB_FRAME;
    ctx.lineWidth = 1;
    ctx.strokeRect(left - 0.5, top - 0.5, size + 1, size + 1);
  }

  legends() {
    const { header } = this.data;
    const ctx = this.ctx;
    const k = this.geometry.k;
    const swatch = 14 * k;
    for (const item of this.geometry.legends) {
      const y = item.y + 6 * k;
      let x = item.x;
      ctx.textAlign = "left";
      ctx.fillStyle = TEXT;
      if (item.kind === "masked" || item.kind === "faded") {
        if (item.kind === "masked") {
          ctx.fillStyle = `rgb(${MASKED.join(",")})`;
          ctx.fillRect(x, y - 2 * k, swatch, swatch);
          ctx.beginPath();
          ctx.moveTo(x + 0.3 * swatch, y - 2 * k + 0.3 * swatch);
          ctx.lineTo(x + 0.7 * swatch, y - 2 * k + 0.7 * swatch);
          ctx.moveTo(x + 0.7 * swatch, y - 2 * k + 0.3 * swatch);
          ctx.lineTo(x + 0.3 * swatch, y - 2 * k + 0.7 * swatch);
          ctx.strokeStyle = CROSS;
          ctx.lineWidth = 1.2;
          ctx.stroke();
        } else {
          // a dark blue cell as a faded row draws it
          const rgb = colorTable("sequential").rgb.subarray(3 * 230, 3 * 231);
          ctx.fillStyle = `rgb(${fade([...rgb]).join(",")})`;
          ctx.fillRect(x, y - 2 * k, swatch, swatch);
        }
        ctx.fillStyle = TEXT;
        ctx.font = this.font(12 * k);
        ctx.fillText(header.text[item.kind], x + 20 * k, y + 5 * k);
        continue;
      }
      const scale = header.scales[item.scale];
      ctx.font = this.font(12 * k, true);
      ctx.fillText(scale.title, x, y + 5 * k);
      x += item.titleWidth + 8 * k;
      const { rgb } = colorTable(scale.scheme);
      const bar = LEGEND_BAR * k;
      for (let i = 0; i < bar; i++) {
        const c = 3 * Math.round((i / (bar - 1)) * 255);
        ctx.fillStyle = `rgb(${rgb[c]},${rgb[c + 1]},${rgb[c + 2]})`;
        ctx.fillRect(x + i, y, 1, 10 * k);
      }
      ctx.fillStyle = TEXT;
      ctx.font = this.font(11 * k);
      ctx.textAlign = "center";
      const ticks = [scale.low, (scale.low + scale.high) / 2, scale.high];
      ticks.forEach((tick, i) => ctx.fillText(formatTick(tick), x + (i * (bar - 1)) / 2, y + 20 * k));
    }
  }

  cellAt(event) {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const L = this.geometry;
    for (let p = 0; p < L.panels.length; p++) {
      const box = L.panels[p];
      const c = Math.floor((x - box.x) / box.cw);
      const r = Math.floor((y - box.y) / box.ch);
      if (c >= 0 && c < box.C && r >= 0 && r < box.R) return { p, r, c, box };
    }
    return null;
  }

  hover(event) {
    if (!this.data) return;
    const cell = this.cellAt(event);
    if (!cell) return this.hideTip();
    const { header, values, masked, faded, index, P, R, C } = this.data;
    const { p, r, c, box } = cell;
    const i = p * R * C + r * C + c;
    const cols = header.cols;
    const lines = [];
    if (P > 1 && header.panels[p].title) lines.push([header.panels[p].title, ""]);
    lines.push([header.rows.title, header.rows.labels[r]]);
    if (cols.labels) lines.push([cols.name || cols.title, cols.labels[c]]);
    else {
      if (cols.group) lines.push([cols.group_title, String(Math.floor(c / cols.group))]);
      lines.push([cols.name || cols.title, String(index ? index[c] : c)]);
    }
    lines.push([header.scales[header.panels[p].scale].title, formatValue(values[i], header.decimals)]);
    if (masked && masked[i]) lines.push([header.text.masked, "×"]);
    if (faded && faded[r]) lines.push([header.text.faded, ""]);
    this.tip.replaceChildren(
      ...lines.map(([name, value]) => {
        const line = document.createElement("div");
        const key = document.createElement("b");
        key.textContent = value ? `${name}: ` : name;
        line.append(key, document.createTextNode(value));
        return line;
      }),
    );
    const x = box.x + c * box.cw;
    const y = box.y + r * box.ch;
    Object.assign(this.mark.style, {
      display: "block",
      left: `${x - 1}px`,
      top: `${y - 1}px`,
      width: `${box.cw}px`,
      height: `${box.ch}px`,
    });
    this.tip.style.display = "block";
    const tipWidth = this.tip.offsetWidth;
    const left = x + box.cw + 12 + tipWidth > this.width ? Math.max(0, x - tipWidth - 12) : x + box.cw + 12;
    this.tip.style.left = `${left}px`;
    this.tip.style.top = `${Math.max(0, y - 8)}px`;
  }

  hideTip() {
    this.tip.style.display = "none";
    this.mark.style.display = "none";
  }
}

class HeadPicker {
  // Radio buttons (or a drop-down for many heads) for the head steps 1 and 2 show.
  constructor(parent) {
    this.root = document.createElement("div");
    this.root.className = "attn-head-picker";
    parent.appendChild(this.root);
    this.timer = null;
    this.onHead = () => this.check();
    heads.listeners.add(this.onHead);
  }

  update(data, setStateValue) {
    this.setStateValue = setStateValue;
    this.local = data.every;
    this.root.dataset.local = String(data.every); // whether a pick is drawn here or by the server
    if (!this.built || this.built.count !== data.count || this.built.label !== data.label) this.build(data);
    followServer(data);
    this.check();
    // The page shows a head the server has not heard of (a pick whose message a page change cut short):
    // tell it, as after a pick.
    if (this.local && heads.head !== data.shown) this.tell(heads.head);
  }

  build(data) {
    this.built = { count: data.count, label: data.label };
    const name = `attn-head-${Math.random().toString(36).slice(2)}`;
    const label = document.createElement("span");
    label.className = "attn-head-picker-label";
    label.textContent = data.label;
    label.id = `${name}-label`;
    this.inputs = [];
    if (data.count > SELECT_ABOVE) {
      const select = document.createElement("select");
      select.setAttribute("aria-labelledby", label.id);
      for (let h = 0; h < data.count; h++) select.add(new Option(String(h), String(h)));
      select.addEventListener("change", () => this.pick(Number(select.value)));
      this.select = select;
      this.root.replaceChildren(label, select);
      return;
    }
    this.select = null;
    const group = document.createElement("div");
    group.setAttribute("role", "radiogroup");
    group.setAttribute("aria-labelledby", label.id);
    for (let h = 0; h < data.count; h++) {
      const option = document.createElement("label");
      const input = document.createElement("input");
      input.type = "radio";
      input.name = name;
      input.value = String(h);
      input.addEventListener("change", () => input.checked && this.pick(h));
      option.append(input, document.createTextNode(String(h)));
      group.appendChild(option);
      this.inputs.push(input);
    }
    this.root.replaceChildren(label, group);
  }

  check() {
    if (this.select) this.select.value = String(heads.head);
    else this.inputs.forEach((input, h) => (input.checked = h === heads.head));
  }

  pick(head) {
    pickHead(head);
    this.tell(head);
  }

  tell(head) {
    // every head is on the page: it is drawn already, the server hears of it later; otherwise the server draws it
    clearTimeout(this.timer);
    const send = () => this.setStateValue("head", head);
    if (this.local) this.timer = setTimeout(send, SYNC_MS);
    else send();
  }

  detach() {
    clearTimeout(this.timer);
    heads.listeners.delete(this.onHead);
  }
}

function renderPicker(component) {
  const { data, parentElement, setStateValue } = component;
  let picker = parentElement.attnHeadPicker;
  if (!picker) picker = parentElement.attnHeadPicker = new HeadPicker(parentElement);
  picker.update(data, setStateValue);
  return () => {
    picker.detach();
    parentElement.attnHeadPicker = null;
    picker.root.remove();
  };
}

function render(component) {
  const { data, parentElement } = component;
  let view = parentElement.attnHeatmapView;
  if (!view) view = parentElement.attnHeatmapView = new HeatmapView(parentElement);
  if (data instanceof Uint8Array && data.length) view.update(data);
  return () => view.detach();
}

// This module is the page's one "heatmap code" element; every chart (and the head picker) is a small
// stub that waits for `window.attnHeatmap.ready` and then calls `chart` (or `picker`) (see
// components/canvas.py), so the code is sent once per page run, not once per chart.
export default function () {
  if (!window.attnHeatmap) {
    let resolve;
    window.attnHeatmap = { ready: new Promise((r) => (resolve = r)), resolve };
  }
  window.attnHeatmap.resolve({ chart: render, picker: renderPicker });
}
