/**
 * Renders the small subset of Prometheus alert templates the rules use, exactly as Prometheus
 * (Go) prints them, so generated promtool tests can state the expected annotations. Anything
 * outside the subset throws: a new template construct must be added here, not silently ignored.
 *
 * Supported actions: `{{ $labels.NAME }}`, `{{ $value }}`, `{{ printf "%.Nf" $value }}`,
 * `{{ $value | printf "%.Nf" }}`, `{{ $value | humanize }}`, `{{ $value | humanizePercentage }}`,
 * `{{ $value | humanizeDuration }}`.
 */

/** Go's `%.<precision>g`: significant digits, trailing zeros dropped, `e+NN` exponents. */
export function goFormatG(value: number, precision: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return '0';
  const [mantissa = '', exponentText = '0'] = value.toExponential(precision - 1).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= precision) {
    const sign = exponent < 0 ? '-' : '+';
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${trimZeros(mantissa)}e${sign}${digits}`;
  }
  return trimZeros(value.toFixed(Math.max(0, precision - 1 - exponent)));
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** Go's `%.<decimals>f`. Ties (exact binary halves) would round differently; values here avoid them. */
export function goFormatF(value: number, decimals: number): string {
  const text = value.toFixed(decimals);
  return text === '-0' || /^-0\.0*$/.test(text) ? text.slice(1) : text;
}

/** Prometheus' `humanize`: SI prefixes above 1, 4 significant digits. */
export function humanize(value: number): string {
  if (value === 0 || !Number.isFinite(value)) return goFormatG(value, 4);
  if (Math.abs(value) >= 1) {
    const prefixes = ['', 'k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
    let v = value;
    let i = 0;
    while (Math.abs(v) >= 1000 && i < prefixes.length - 1) {
      v /= 1000;
      i++;
    }
    return `${goFormatG(v, 4)}${prefixes[i] ?? ''}`;
  }
  const prefixes = ['', 'm', 'u', 'n', 'p', 'f', 'a', 'z', 'y'];
  let v = value;
  let i = 0;
  while (Math.abs(v) < 1 && i < prefixes.length - 1) {
    v *= 1000;
    i++;
  }
  return `${goFormatG(v, 4)}${prefixes[i] ?? ''}`;
}

/** Prometheus' `humanizeDuration` of seconds: `6m 0s`, `1h 2m 3s`, `1.5s`, `250ms`. */
export function humanizeDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return goFormatG(seconds, 4);
  if (seconds === 0) return '0s';
  if (Math.abs(seconds) >= 1) {
    const sign = seconds < 0 ? '-' : '';
    const v = Math.abs(seconds);
    const whole = Math.trunc(v);
    const s = whole % 60;
    const m = Math.trunc(whole / 60) % 60;
    const h = Math.trunc(whole / 3600) % 24;
    const d = Math.trunc(whole / 86400);
    if (d !== 0) return `${sign}${d}d ${h}h ${m}m ${s}s`;
    if (h !== 0) return `${sign}${h}h ${m}m ${s}s`;
    if (m !== 0) return `${sign}${m}m ${s}s`;
    return `${sign}${goFormatG(v, 4)}s`;
  }
  const prefixes = ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y'];
  let v = seconds;
  let prefix = '';
  for (const p of prefixes) {
    if (Math.abs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return `${goFormatG(v, 4)}${prefix}s`;
}

/** Go's `%v` of a float64 (shortest representation; exponent form outside 1e-4..1e21). */
function goDefault(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    const [mantissa = '', exponent = '0'] = value.toExponential().split('e');
    const e = Number(exponent);
    return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return String(value);
}

export interface TemplateData {
  labels: Readonly<Record<string, string>>;
  /** The alert's value; required only when the template uses `$value`. */
  value?: number | undefined;
}

/** Renders one annotation or label template with the alert's labels and value. */
export function renderTemplate(template: string, data: TemplateData): string {
  return template.replace(/\{\{(.*?)\}\}/g, (_match, inner: string) =>
    renderAction(inner.trim(), data),
  );
}

function renderAction(action: string, data: TemplateData): string {
  const label = /^\$labels\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(action);
  if (label) {
    const name = label[1] ?? '';
    const value = data.labels[name];
    if (value === undefined)
      throw new Error(`template uses label "${name}", which the alert lacks`);
    return value;
  }
  const value = (): number => {
    if (data.value === undefined)
      throw new Error(`template "{{ ${action} }}" needs the alert's value`);
    return data.value;
  };
  if (action === '$value') return goDefault(value());
  const printf =
    /^printf "%\.(\d+)f" \$value$/.exec(action) ?? /^\$value \| printf "%\.(\d+)f"$/.exec(action);
  if (printf) return goFormatF(value(), Number(printf[1]));
  switch (action) {
    case '$value | humanize':
      return humanize(value());
    case '$value | humanizePercentage':
      return `${goFormatG(value() * 100, 4)}%`;
    case '$value | humanizeDuration':
      return humanizeDuration(value());
    default:
      throw new Error(
        `unsupported template action "{{ ${action} }}" (see scripts/rules/templates.ts)`,
      );
  }
}
