/**
 * The latency chart: one point per run over the retained window, failures marked, and the
 * environment's configured thresholds drawn as bands (expected, elevated, warning, critical).
 * uPlot draws on a canvas; the container carries a text summary for screen readers.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Sample } from './types.js';

export interface Thresholds {
  expected: number;
  warning: number;
  critical: number;
}

/** An axis tick: `250 ms`, `1.25 s`. */
function tick(v: number): string {
  return v >= 1000 ? `${+(v / 1000).toFixed(3)} s` : `${v} ms`;
}

/** CSS custom properties of the current colour scheme. */
function css(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** A chart bound to one container; `update` replaces its data, `resize` follows the layout. */
export class LatencyChart {
  private plot: uPlot | null = null;
  private thresholds: Thresholds;
  private data: uPlot.AlignedData = [[], [], []];

  constructor(
    private readonly container: HTMLElement,
    thresholds: Thresholds,
  ) {
    this.thresholds = thresholds;
    new ResizeObserver(() => this.resize()).observe(container);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.rebuild());
  }

  update(samples: Sample[], thresholds: Thresholds): void {
    this.thresholds = thresholds;
    const times = samples.map((s) => s.t / 1000);
    const ok = samples.map((s) => (s.outcome === 'pass' ? s.duration_ms : null));
    const failed = samples.map((s) => (s.outcome === 'fail' ? s.duration_ms : null));
    this.data = [times, ok, failed];
    if (this.plot === null) this.rebuild();
    else this.plot.setData(this.data);
  }

  private width(): number {
    return Math.max(200, Math.floor(this.container.clientWidth));
  }

  private resize(): void {
    this.plot?.setSize({ width: this.width(), height: 220 });
  }

  private rebuild(): void {
    this.plot?.destroy();
    const fg = css('--muted') || '#555';
    const grid = css('--grid') || '#ddd';
    const axis = {
      stroke: fg,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    };
    const bands = (u: uPlot): void => this.drawBands(u);
    this.plot = new uPlot(
      {
        width: this.width(),
        height: 220,
        legend: { show: false },
        cursor: { y: false, points: { size: 6 } },
        scales: {
          x: { time: true },
          y: {
            range: (_u, _min, max) => [
              0,
              Math.max(this.thresholds.critical * 1.25, (max ?? 0) * 1.1),
            ],
          },
        },
        axes: [axis, { ...axis, size: 64, values: (_u, ticks) => ticks.map(tick) }],
        series: [
          {},
          {
            label: 'latency',
            stroke: css('--line') || '#0550ae',
            width: 1.5,
            spanGaps: false,
            points: { show: true, size: 4, fill: css('--line') || '#0550ae' },
          },
          {
            label: 'failed',
            stroke: 'transparent',
            points: { show: true, size: 8, fill: css('--bad') || '#cf222e', stroke: css('--bad') },
          },
        ],
        hooks: { drawClear: [bands] },
      },
      this.data,
      this.container,
    );
  }

  /** Threshold bands behind the series: the API's own latency guidance. */
  private drawBands(u: uPlot): void {
    const t = this.thresholds;
    const ctx = u.ctx;
    const { left, width, top, height } = u.bbox;
    const yMax = u.scales['y']?.max ?? t.critical;
    const bands: Array<[number, number, string]> = [
      [0, t.expected, '--band-expected'],
      [t.expected, t.warning, '--band-elevated'],
      [t.warning, t.critical, '--band-warning'],
      [t.critical, Math.max(yMax, t.critical), '--band-critical'],
    ];
    ctx.save();
    for (const [from, to, color] of bands) {
      if (to <= from) continue;
      const y1 = u.valToPos(to, 'y', true);
      const y0 = u.valToPos(from, 'y', true);
      const yTop = Math.max(top, Math.min(y1, y0));
      const yBottom = Math.min(top + height, Math.max(y1, y0));
      if (yBottom <= yTop) continue;
      ctx.fillStyle = css(color) || 'transparent';
      ctx.fillRect(left, yTop, width, yBottom - yTop);
    }
    ctx.restore();
  }
}
