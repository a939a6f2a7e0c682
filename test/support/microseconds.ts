/**
 * prom-client's exposition text with every value of a metric in seconds rounded to the
 * microsecond, as the server's renderer writes them (`src/server/exposition.ts`). Decimal rounding
 * (`toFixed`), independent of the renderer's own arithmetic, so a comparison with it checks that.
 */
export function toMicroseconds(exposition: string): string {
  return exposition.replace(
    /^([a-z_:]+_seconds(?:_total|_sum)?)((?:\{.*\})?) (\S+)$/gm,
    (_line, name: string, labels: string, value: string) => {
      const n = Number(value);
      const text =
        Number.isFinite(n) && !Number.isInteger(n) ? String(Number(n.toFixed(6))) : value;
      return `${name}${labels} ${text}`;
    },
  );
}
