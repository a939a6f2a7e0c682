/**
 * DOM building with text only: every string, whatever the API sent, becomes a text node. No
 * innerHTML anywhere on the page.
 */

type Child = Node | string | null | undefined | false;

/** Creates an element with attributes (set as attributes, never as HTML) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * Replaces a container's children and gives the focus back to the element with the same
 * `data-focus` key, so a keyboard user is not thrown out by a refresh.
 */
export function replaceKeepingFocus(container: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const key =
    active instanceof HTMLElement && container.contains(active) ? active.dataset['focus'] : null;
  container.replaceChildren();
  append(container, children);
  if (key) {
    const again = container.querySelector<HTMLElement>(`[data-focus="${CSS.escape(key)}"]`);
    again?.focus();
  }
}

/**
 * Makes invisible and direction-changing characters visible (`⟨U+202E⟩`), so a hostile value
 * cannot reorder or hide text; long values wrap (CSS) instead of widening the page.
 */
export function visible(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g,
    (c) => `⟨U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}⟩`,
  );
}
