/**
 * The scale curves as one SVG file with two small line charts, written by hand (no charting
 * dependency): left, workflows/min and API writes per workflow as the number of workflows
 * grows; right, the event endpoint's accepted events/s and p99 reply latency as the offered
 * load grows. Each chart has two y axes (left and right, each linear or log) and a log-scale x
 * axis.
 */
export interface Series {
  label: string;
  color: string;
  dashed?: boolean;
  /** Which y axis the series is drawn against. */
  axis: 'left' | 'right';
  points: { x: number; y: number }[];
}

export interface LineChart {
  title: string;
  xLabel: string;
  leftLabel: string;
  rightLabel: string;
  /** Log-scale y axes (for series whose values span decades). */
  leftLog?: boolean;
  rightLog?: boolean;
  series: Series[];
}

const W = 460;
const H = 340;
const M = { top: 40, right: 62, bottom: 112, left: 62 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** About five round tick values from 0 to a little above max. */
export function niceTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** Powers of ten spanning min..max (a log axis). */
export function logTicks(min: number, max: number): number[] {
  const lo = Math.floor(Math.log10(Math.max(min, 1e-9)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(max, 1e-9))));
  return Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
}

const fmt = (v: number) => (Math.abs(v) >= 10_000 ? `${v / 1000}k` : String(Number(v.toPrecision(4))));

function chart(c: LineChart, ox: number): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const xs = c.series.flatMap((s) => s.points.map((p) => p.x)).filter((x) => x > 0);
  const xmin = Math.min(...xs);
  const xmax = Math.max(...xs);
  const lx = (x: number) => (xmax === xmin ? pw / 2 : ((Math.log10(x) - Math.log10(xmin)) / (Math.log10(xmax) - Math.log10(xmin))) * pw);
  const isLog = { left: !!c.leftLog, right: !!c.rightLog };
  const values = (side: 'left' | 'right') =>
    c.series
      .filter((s) => s.axis === side)
      .flatMap((s) => s.points.map((p) => p.y))
      .filter((y) => Number.isFinite(y) && (!isLog[side] || y > 0));
  const axis = (side: 'left' | 'right') =>
    isLog[side] ? logTicks(Math.min(...values(side), 1), Math.max(...values(side), 10)) : niceTicks(Math.max(0, ...values(side)));
  const ticks = { left: axis('left'), right: axis('right') };
  const ly = (side: 'left' | 'right', y: number) => {
    const t = ticks[side];
    if (!isLog[side]) return ph - (y / t[t.length - 1]!) * ph;
    const lo = Math.log10(t[0]!);
    const hi = Math.log10(t[t.length - 1]!);
    return ph - ((Math.log10(Math.max(y, t[0]!)) - lo) / (hi - lo)) * ph;
  };
  const out: string[] = [`<g transform="translate(${ox + M.left},${M.top})">`];
  out.push(`<text x="${pw / 2}" y="-18" text-anchor="middle" font-size="13" font-weight="bold">${esc(c.title)}</text>`);
  out.push(`<rect x="0" y="0" width="${pw}" height="${ph}" fill="none" stroke="#bbb"/>`);
  for (const t of ticks.left) {
    const y = ly('left', t);
    out.push(
      `<line x1="0" x2="${pw}" y1="${y}" y2="${y}" stroke="#eee"/><text x="-6" y="${y + 4}" text-anchor="end" font-size="10">${fmt(t)}</text>`,
    );
  }
  for (const t of ticks.right) out.push(`<text x="${pw + 6}" y="${ly('right', t) + 4}" font-size="10">${fmt(t)}</text>`);
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) {
    out.push(
      `<line x1="${lx(x)}" x2="${lx(x)}" y1="${ph}" y2="${ph + 4}" stroke="#555"/><text x="${lx(x)}" y="${ph + 16}" text-anchor="middle" font-size="10">${fmt(x)}</text>`,
    );
  }
  out.push(`<text x="${pw / 2}" y="${ph + 32}" text-anchor="middle" font-size="11">${esc(c.xLabel)}</text>`);
  out.push(
    `<text transform="translate(-46,${ph / 2}) rotate(-90)" text-anchor="middle" font-size="11">${esc(c.leftLabel + (c.leftLog ? ' (log)' : ''))}</text>`,
  );
  out.push(
    `<text transform="translate(${pw + 50},${ph / 2}) rotate(90)" text-anchor="middle" font-size="11">${esc(c.rightLabel + (c.rightLog ? ' (log)' : ''))}</text>`,
  );
  c.series.forEach((s, i) => {
    const pts = s.points.filter((p) => p.x > 0 && Number.isFinite(p.y)).map((p) => `${lx(p.x).toFixed(1)},${ly(s.axis, p.y).toFixed(1)}`);
    const dash = s.dashed ? ' stroke-dasharray="5,3"' : '';
    out.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    for (const p of pts) out.push(`<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${s.color}"/>`);
    const lyPos = ph + 50 + i * 14;
    const lxPos = 0;
    out.push(`<line x1="${lxPos}" x2="${lxPos + 18}" y1="${lyPos - 4}" y2="${lyPos - 4}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    out.push(`<text x="${lxPos + 22}" y="${lyPos}" font-size="10">${esc(`${s.label} (${s.axis} axis)`)}</text>`);
  });
  out.push('</g>');
  return out.join('\n');
}

/** Both charts side by side, with a caption line (machine and date). */
export function renderCharts(charts: LineChart[], caption: string): string {
  const width = W * charts.length;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 20}" viewBox="0 0 ${width} ${H + 20}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...charts.map((c, i) => chart(c, i * W)),
    `<text x="${width / 2}" y="${H + 12}" text-anchor="middle" font-size="10" fill="#555">${esc(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
