/** Query strings as the ISA API reads them: repeated values as `name[]` parameters. */

/** `?a=1&b[]=x&b[]=y`, or the empty string for no parameters; every name and value encoded. */
export function queryString(query: Readonly<Record<string, string | readonly string[]>>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (typeof value === 'string') {
      parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
    } else {
      for (const v of value) parts.push(`${encodeURIComponent(name)}[]=${encodeURIComponent(v)}`);
    }
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
