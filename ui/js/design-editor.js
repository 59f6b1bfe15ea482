// A study's design as JSON in a textarea, with the server's refusal shown where it points: a
// `422 {error, path}` (or a `400` naming an unknown field) goes under the editor with its path,
// and the text of that field is selected in the editor, so the researcher sees which line to
// fix. Text that is not JSON is refused here, at the place the browser's parser stopped.

import { $, h, replaceChildren } from './dom.js';

/**
 * Where each path's value starts in `text` (valid JSON): `title`, `limits.time_limit_s`,
 * `conditions[1].tools[0]` — the paths the server names — each to the offset of its key (an
 * object member) or its value (an array element).
 */
export function pathOffsets(text) {
  const out = new Map();
  let i = 0;
  const space = () => { while (i < text.length && /\s/.test(text[i])) i += 1; };
  const string = () => {
    const start = i;
    i += 1;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i += 1;
    return JSON.parse(text.slice(start, i));
  };
  const value = (path, at) => {
    space();
    out.set(path, at ?? i);
    const c = text[i];
    if (c === '{' || c === '[') {
      i += 1;
      space();
      if (text[i] === (c === '{' ? '}' : ']')) { i += 1; return; }
      for (let n = 0; ; n += 1) {
        space();
        if (c === '{') {
          const keyAt = i;
          const key = string();
          space();
          i += 1; // the colon
          value(path ? `${path}.${key}` : key, keyAt);
        } else {
          value(`${path}[${n}]`);
        }
        space();
        const next = text[i];
        i += 1;
        if (next !== ',') return;
      }
    }
    if (c === '"') { string(); return; }
    while (i < text.length && !/[\s,\]}]/.test(text[i])) i += 1;
  };
  value('', 0);
  return out;
}

/** The offset of `path`, or of the nearest enclosing field the text has. */
function offsetOf(text, path) {
  let offsets;
  try { offsets = pathOffsets(text); } catch { return null; }
  for (let p = path; p; p = p.replace(/(\.[^.[\]]+|\[\d+\])$/, '')) {
    if (offsets.has(p)) return offsets.get(p);
    if (!/(\.[^.[\]]+|\[\d+\])$/.test(p)) break;
  }
  return null;
}

export class DesignEditor {
  /** `text`: the textarea; `error`: where a refusal is said. */
  constructor(text, error) {
    this.text = $(text);
    this.error = $(error);
    this.text.addEventListener('input', () => this.text.removeAttribute('aria-invalid'));
  }

  set(design, { readOnly = false } = {}) {
    this.text.value = JSON.stringify(design, null, 2);
    this.text.readOnly = readOnly;
    this.clear();
  }

  /** The design as typed, or `null` after saying where it stops being JSON. */
  read() {
    try {
      const design = JSON.parse(this.text.value);
      if (design && typeof design === 'object' && !Array.isArray(design)) return design;
      this.show('body', 'the design is a JSON object: { … }', 0);
    } catch (err) {
      const at = /position (\d+)/.exec(err.message);
      this.show('', `This is not valid JSON: ${err.message}`, at ? Number(at[1]) : null);
    }
    return null;
  }

  /** Shows the server's refusal of the design (`err.body.path`, or a path at the message's start). */
  refuse(err) {
    const message = err.message || String(err);
    const path = err.body?.path || /^([A-Za-z_][\w.[\]]*): /.exec(message)?.[1] || '';
    const text = path && message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
    this.show(path, text, path ? offsetOf(this.text.value, path) : null);
  }

  /** Says `message` about `path` and selects the line of the editor it is about. */
  show(path, message, offset) {
    this.error.dataset.path = path;
    replaceChildren(this.error, path ? h('span', { class: 'design-error-path' }, path) : null, message);
    this.error.hidden = false;
    this.text.setAttribute('aria-invalid', 'true');
    if (offset === null || offset === undefined) return;
    const value = this.text.value;
    const start = value.lastIndexOf('\n', Math.max(0, offset - 1)) + 1;
    const end = value.indexOf('\n', offset);
    this.text.focus();
    this.text.setSelectionRange(start, end < 0 ? value.length : end);
    // Scroll the selected line into view (a textarea keeps its own scroll position).
    const line = value.slice(0, start).split('\n').length - 1;
    const lineHeight = parseFloat(getComputedStyle(this.text).lineHeight) || 18;
    this.text.scrollTop = Math.max(0, line * lineHeight - this.text.clientHeight / 3);
  }

  clear() {
    this.error.hidden = true;
    this.error.dataset.path = '';
    this.error.textContent = '';
    this.text.removeAttribute('aria-invalid');
  }
}
