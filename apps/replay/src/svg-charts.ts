/**
 * Small inline SVG charts for report.html (issue 17 item 9): bar charts, box plots and line
 * charts with a labelled y axis and round ticks (1, 2, 2.5 or 5 × 10^k), sized to be read at
 * 1280 px. Pure string builders; every text is HTML-escaped.
 */

/** Colours of the series, in order (colour-blind-safe Tableau 10 subset). */
export const SERIES_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1', '#9c755f', '#bab0ac', '#edc948'];

/** Escapes `&`, `<`, `>`, `"` for HTML. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Round ticks from 0 to at least `max`: about `target` steps of 1, 2, 2.5 or 5 × 10^k.
 * Returns at least [0, step].
 */
export function niceTicks(max: number, target = 5): number[] {
  const top = max > 0 && Number.isFinite(max) ? max : 1;
  const raw = top / target;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let v = 0; v < top + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < top) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return ticks.length >= 2 ? ticks : [0, step];
}

/** Layout shared by the charts. */
interface Frame {
  width: number;
  height: number;
  pad: { left: number; right: number; top: number; bottom: number };
}

const FONT = 'font-family="system-ui,sans-serif"';

function frame(width: number, height: number, bottom = 48): Frame {
  return { width, height: height + Math.max(0, bottom - 48), pad: { left: 76, right: 16, top: 46, bottom } };
}

/** The y axis: grid lines, tick labels (formatted by `format`), the axis label written vertically. */
function yAxis(f: Frame, ticks: number[], format: (v: number) => string, label: string): { parts: string[]; y: (v: number) => number } {
  const top = ticks[ticks.length - 1];
  const y = (v: number) => f.pad.top + (1 - v / top) * (f.height - f.pad.top - f.pad.bottom);
  const parts = ticks.map(
    (t) =>
      `<line x1="${f.pad.left}" x2="${f.width - f.pad.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="${t === 0 ? '#888' : '#e6e6e6'}"/>` +
      `<text x="${f.pad.left - 8}" y="${(y(t) + 4).toFixed(1)}" font-size="12" text-anchor="end" fill="#444" ${FONT}>${escapeHtml(format(t))}</text>`,
  );
  const mid = (f.pad.top + f.height - f.pad.bottom) / 2;
  parts.push(
    `<text x="16" y="${mid.toFixed(1)}" font-size="13" text-anchor="middle" fill="#222" transform="rotate(-90 16 ${mid.toFixed(1)})" ${FONT}>${escapeHtml(label)}</text>`,
  );
  return { parts, y };
}

function open(f: Frame, title: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}" role="img" aria-label="${escapeHtml(title)}">` +
    `<rect width="${f.width}" height="${f.height}" fill="#fff"/>` +
    `<text x="${f.pad.left}" y="20" font-size="15" font-weight="600" fill="#222" ${FONT}>${escapeHtml(title)}</text>`
  );
}

type LegendItem = { name: string; color: string; dashed?: boolean };

const legendItemWidth = (it: LegendItem) => 34 + it.name.length * 6.8;

/** Rows the legend takes at `width` (items wrap). */
function legendRows(items: readonly LegendItem[], width: number, left: number): number {
  let rows = items.length ? 1 : 0;
  let x = left;
  for (const it of items) {
    if (x + legendItemWidth(it) > width - 8 && x > left) {
      rows++;
      x = left;
    }
    x += legendItemWidth(it);
  }
  return rows;
}

/** The legend under the plot, wrapping onto as many rows as {@link legendRows} says. */
function legend(f: Frame, items: readonly LegendItem[]): string {
  const rows = legendRows(items, f.width, f.pad.left);
  let x = f.pad.left;
  let y = f.height - 10 - (rows - 1) * 20;
  return items
    .map((it) => {
      if (x + legendItemWidth(it) > f.width - 8 && x > f.pad.left) {
        x = f.pad.left;
        y += 20;
      }
      const swatch = it.dashed
        ? `<line x1="${x}" x2="${x + 18}" y1="${y - 4}" y2="${y - 4}" stroke="${it.color}" stroke-width="2.5" stroke-dasharray="5,3"/>`
        : `<rect x="${x}" y="${y - 10}" width="18" height="10" fill="${it.color}"/>`;
      const out = `${swatch}<text x="${x + 24}" y="${y}" font-size="12" fill="#333" ${FONT}>${escapeHtml(it.name)}</text>`;
      x += legendItemWidth(it);
      return out;
    })
    .join('');
}

/** A label split into lines of at most `chars` characters (at spaces), as SVG tspans centred on `x`. */
function wrappedLabel(label: string, x: number, y: number, chars: number): string {
  const lines: string[] = [];
  for (const word of label.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && last.length + 1 + word.length <= chars) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  const spans = lines.map((l, i) => `<tspan x="${x.toFixed(1)}" dy="${i === 0 ? 0 : 14}">${escapeHtml(l)}</tspan>`).join('');
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" font-size="12" text-anchor="middle" fill="#222" ${FONT}>${spans}</text>`;
}

/** What every chart takes: its title, the y axis's label and value format, and its size (px, defaults per chart). */
interface ChartFrame {
  title: string;
  yLabel: string;
  format: (v: number) => string;
  /** Top of the y axis (default: from the data). */
  yMax?: number;
  width?: number;
  height?: number;
}

/** A grouped bar chart: one group per category, one bar per series; value labels on the bars. */
export function barChart(
  options: ChartFrame & {
    categories: string[];
    series: Array<{ name: string; values: Array<number | null>; color?: string }>;
  },
): string {
  const width = options.width ?? 1180;
  const items = options.series.map((s, k) => ({ name: s.name, color: s.color ?? SERIES_COLORS[k % SERIES_COLORS.length] }));
  const f = frame(width, options.height ?? 340, 64 + (options.series.length > 1 ? legendRows(items, width, 76) * 20 : 0));
  const max = options.yMax ?? Math.max(0, ...options.series.flatMap((s) => s.values.map((v) => v ?? 0)));
  const { parts, y } = yAxis(f, niceTicks(max), options.format, options.yLabel);
  const groupWidth = (f.width - f.pad.left - f.pad.right) / options.categories.length;
  const barWidth = Math.min(56, (groupWidth * 0.8) / options.series.length);
  options.categories.forEach((cat, c) => {
    const x0 = f.pad.left + c * groupWidth + (groupWidth - barWidth * options.series.length) / 2;
    options.series.forEach((s, k) => {
      const v = s.values[c];
      if (v === null || v === undefined) return;
      const x = x0 + k * barWidth;
      const color = s.color ?? SERIES_COLORS[k % SERIES_COLORS.length];
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barWidth - 3).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${color}"><title>${escapeHtml(`${cat}, ${s.name}: ${options.format(v)}`)}</title></rect>`,
      );
      parts.push(
        `<text x="${(x + (barWidth - 3) / 2).toFixed(1)}" y="${(y(v) - 4).toFixed(1)}" font-size="11" text-anchor="middle" fill="#333" ${FONT}>${escapeHtml(options.format(v))}</text>`,
      );
    });
    parts.push(wrappedLabel(cat, f.pad.left + (c + 0.5) * groupWidth, y(0) + 18, Math.max(8, Math.floor(groupWidth / 7))));
  });
  const keys = options.series.length > 1 ? legend(f, items) : '';
  return `${open(f, options.title)}${parts.join('')}${keys}</svg>`;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Box plots side by side: whiskers min–max, box 25th–75th percentile, line at the median. */
export function boxPlot(options: {
  title: string;
  yLabel: string;
  boxes: Array<{ label: string; values: number[]; color?: string }>;
  format: (v: number) => string;
  width?: number;
  height?: number;
}): string {
  const f = frame(options.width ?? 1180, options.height ?? 360);
  const max = Math.max(0, ...options.boxes.flatMap((b) => b.values));
  const { parts, y } = yAxis(f, niceTicks(max), options.format, options.yLabel);
  const slot = (f.width - f.pad.left - f.pad.right) / options.boxes.length;
  const w = Math.min(90, slot * 0.5);
  options.boxes.forEach((b, i) => {
    const s = [...b.values].sort((a, c) => a - c);
    const [min, q1, med, q3, top] = [0, 0.25, 0.5, 0.75, 1].map((q) => quantile(s, q));
    const cx = f.pad.left + (i + 0.5) * slot;
    const color = b.color ?? SERIES_COLORS[i % SERIES_COLORS.length];
    const tip = escapeHtml(
      `${b.label}: ${s.length} sessions, min ${options.format(min)}, 25% ${options.format(q1)}, median ${options.format(med)}, 75% ${options.format(q3)}, max ${options.format(top)}`,
    );
    parts.push(`<line x1="${cx}" x2="${cx}" y1="${y(top).toFixed(1)}" y2="${y(min).toFixed(1)}" stroke="#555"/>`);
    for (const v of [min, top]) parts.push(`<line x1="${cx - w / 4}" x2="${cx + w / 4}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#555"/>`);
    parts.push(
      `<rect x="${cx - w / 2}" y="${y(q3).toFixed(1)}" width="${w}" height="${Math.max(1, y(q1) - y(q3)).toFixed(1)}" fill="${color}" fill-opacity="0.75" stroke="#333"><title>${tip}</title></rect>`,
    );
    parts.push(`<line x1="${cx - w / 2}" x2="${cx + w / 2}" y1="${y(med).toFixed(1)}" y2="${y(med).toFixed(1)}" stroke="#111" stroke-width="2.5"/>`);
    parts.push(`<text x="${cx + w / 2 + 4}" y="${(y(med) + 4).toFixed(1)}" font-size="11" fill="#111" ${FONT}>${escapeHtml(options.format(med))}</text>`);
    parts.push(wrappedLabel(b.label, cx, y(0) + 18, Math.max(8, Math.floor(slot / 7))));
  });
  return `${open(f, options.title)}${parts.join('')}</svg>`;
}

/** A line chart over categorical x values; a null point breaks the line. */
export function lineChart(
  options: ChartFrame & {
    xLabel: string;
    xs: string[];
    series: Array<{ name: string; points: Array<number | null>; color?: string; dashed?: boolean }>;
  },
): string {
  const width = options.width ?? 1180;
  const items = options.series.map((s, k) => ({ name: s.name, color: s.color ?? SERIES_COLORS[k % SERIES_COLORS.length], dashed: s.dashed }));
  const f = frame(width, options.height ?? 340, 52 + legendRows(items, width, 76) * 20);
  const max = options.yMax ?? Math.max(0, ...options.series.flatMap((s) => s.points.map((v) => v ?? 0)));
  const { parts, y } = yAxis(f, niceTicks(max), options.format, options.yLabel);
  const n = options.xs.length;
  const x = (i: number) =>
    f.pad.left + 20 + (n > 1 ? (i / (n - 1)) * (f.width - f.pad.left - f.pad.right - 40) : (f.width - f.pad.left - f.pad.right - 40) / 2);
  const every = Math.max(1, Math.ceil(n / 30));
  options.xs.forEach((label, i) => {
    if (i % every === 0 || i === n - 1)
      parts.push(
        `<text x="${x(i).toFixed(1)}" y="${(y(0) + 18).toFixed(1)}" font-size="12" text-anchor="middle" fill="#444" ${FONT}>${escapeHtml(label)}</text>`,
      );
  });
  parts.push(
    `<text x="${((f.pad.left + f.width - f.pad.right) / 2).toFixed(1)}" y="${(y(0) + 36).toFixed(1)}" font-size="13" text-anchor="middle" fill="#222" ${FONT}>${escapeHtml(options.xLabel)}</text>`,
  );
  options.series.forEach((s, k) => {
    const color = s.color ?? SERIES_COLORS[k % SERIES_COLORS.length];
    let path = '';
    s.points.forEach((v, i) => {
      if (v === null) return;
      path += `${path === '' || s.points[i - 1] === null ? 'M' : 'L'} ${x(i).toFixed(1)} ${y(v).toFixed(1)} `;
    });
    parts.push(`<path d="${path.trim()}" fill="none" stroke="${color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6,4"' : ''}/>`);
    s.points.forEach((v, i) => {
      if (v !== null && !s.dashed)
        parts.push(
          `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5" fill="${color}"><title>${escapeHtml(`${s.name}, ${options.xs[i]}: ${options.format(v)}`)}</title></circle>`,
        );
    });
  });
  return `${open(f, options.title)}${parts.join('')}${legend(f, items)}</svg>`;
}
