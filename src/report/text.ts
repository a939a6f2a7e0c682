/**
 * Text from Prometheus (label values: environment, location, incident causes) made safe for the
 * report's forms (docs/cli.md, "report"): control characters, terminal escape sequences among
 * them, never reach a terminal or a file, and Markdown gets no markup it did not ask for.
 */

// eslint-disable-next-line no-control-regex -- the point is to find them
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|.)?/g;
// eslint-disable-next-line no-control-regex -- C0, DEL and C1 controls
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;
const MARKDOWN_SPECIAL = /[\\`*_[\]<>|~]/g;

/** One line of plain text: escape sequences dropped, other controls (newlines too) a space. */
export function plainText(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, ' ');
}

/** Plain text with every Markdown special character escaped: for a table cell or a heading. */
export function markdownText(text: string): string {
  return plainText(text).replace(MARKDOWN_SPECIAL, (c) => `\\${c}`);
}
