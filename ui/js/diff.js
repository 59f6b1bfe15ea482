// Line diffs: a small LCS diff (for comparing a thread with its fork, which the server's diff
// endpoint cannot do: it compares revisions of one thread), a parser for the server's unified
// diffs, and the two views of a diff (unified and side by side).
//
// Lines go into the page as text nodes. Added and removed lines are marked three ways: a class
// (colour), the element (<ins>, <del>: underline, strike-through) and a visible sign (+, −)
// with a spoken word, so nothing depends on colour alone.

import { h } from './dom.js';

/**
 * Up to this many cells (lines of one side × lines of the other, after the common start and
 * end are set aside) the LCS comes from the plain table (16 MB at most). Larger texts use
 * Myers' O((N+M)·D) search for the same longest common subsequence, while the differences D
 * stay under `MAX_EDITS` (its trace grows with D²); past that, the differing middle is shown as
 * removed and added whole: still a correct diff, just not a minimal one.
 */
const MAX_CELLS = 4_000_000;
const MAX_EDITS = 2_000;

/**
 * Myers' greedy shortest edit script between ka[lo..hiA) and kb[lo..hiB), as ops with indices
 * relative to `lo`; `null` when it needs more than `maxEdits` insertions and deletions.
 */
function myers(ka, kb, lo, hiA, hiB, maxEdits) {
  const n = hiA - lo;
  const m = hiB - lo;
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = []; // trace[d]: v[-d..d] as it was before step d
  let found = -1;
  for (let d = 0; d <= max && d <= maxEdits && found < 0; d++) {
    trace.push(v.slice(off - d, off + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && ka[lo + x] === kb[lo + y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) { found = d; break; }
    }
  }
  if (found < 0) return null;
  const reversed = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const t = trace[d];
    const k = x - y;
    const prevK = (k === -d || (k !== d && t[k - 1 + d] < t[k + 1 + d])) ? k + 1 : k - 1;
    const prevX = t[prevK + d];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) { x--; y--; reversed.push({ type: 'same', i: x, j: y }); }
    if (x === prevX) reversed.push({ type: 'add', j: prevY }); else reversed.push({ type: 'del', i: prevX });
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) { x--; y--; reversed.push({ type: 'same', i: x, j: y }); }
  return reversed.reverse();
}

/**
 * The edit script from `a` to `b`, as `{type: 'same' | 'del' | 'add', a?, b?}` items in order
 * (`a`: the item of the first sequence, `b`: of the second). Items are equal when `key` gives
 * the same value (===). A longest common subsequence, so as few lines as possible are marked.
 */
export function diffSequences(a, b, key = (x) => x) {
  const ka = a.map(key);
  const kb = b.map(key);
  let start = 0;
  while (start < a.length && start < b.length && ka[start] === kb[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && ka[endA - 1] === kb[endB - 1]) { endA--; endB--; }
  const ops = [];
  for (let i = 0; i < start; i++) ops.push({ type: 'same', a: a[i], b: b[i] });
  const n = endA - start;
  const m = endB - start;
  const script = n && m && (n + 1) * (m + 1) > MAX_CELLS ? myers(ka, kb, start, endA, endB, MAX_EDITS) : null;
  if (script) {
    for (const op of script) {
      if (op.type === 'same') ops.push({ type: 'same', a: a[start + op.i], b: b[start + op.j] });
      else if (op.type === 'del') ops.push({ type: 'del', a: a[start + op.i] });
      else ops.push({ type: 'add', b: b[start + op.j] });
    }
  } else if (n === 0 || m === 0 || (n + 1) * (m + 1) > MAX_CELLS) {
    for (let i = start; i < endA; i++) ops.push({ type: 'del', a: a[i] });
    for (let j = start; j < endB; j++) ops.push({ type: 'add', b: b[j] });
  } else {
    // lcs[i][j]: the length of the LCS of a[start+i..endA) and b[start+j..endB).
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] = ka[start + i] === kb[start + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (ka[start + i] === kb[start + j]) {
        ops.push({ type: 'same', a: a[start + i], b: b[start + j] });
        i++; j++;
      } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
        ops.push({ type: 'del', a: a[start + i] });
        i++;
      } else {
        ops.push({ type: 'add', b: b[start + j] });
        j++;
      }
    }
    for (; i < n; i++) ops.push({ type: 'del', a: a[start + i] });
    for (; j < m; j++) ops.push({ type: 'add', b: b[start + j] });
  }
  for (let i = endA, j = endB; i < a.length; i++, j++) ops.push({ type: 'same', a: a[i], b: b[j] });
  return ops;
}

/** A text's lines (a final newline ends the last line; it does not start an empty one). */
export function linesOf(text) {
  if (!text) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The line diff of two texts (see `diffSequences`). */
export function diffLines(before, after) {
  return diffSequences(linesOf(before), linesOf(after));
}

/**
 * The lines of a unified diff as `{kind, text}`: `meta` (the ---/+++ header), `hunk` (@@),
 * `add`, `del`, `ctx`; `text` without its sign.
 */
export function parseUnified(unified) {
  const items = [];
  let inHunks = false;
  for (const line of linesOf(unified)) {
    if (line.startsWith('@@')) {
      inHunks = true;
      items.push({ kind: 'hunk', text: line });
    } else if (!inHunks || line.startsWith('\\')) {
      items.push({ kind: 'meta', text: line });
    } else if (line.startsWith('+')) {
      items.push({ kind: 'add', text: line.slice(1) });
    } else if (line.startsWith('-')) {
      items.push({ kind: 'del', text: line.slice(1) });
    } else {
      items.push({ kind: 'ctx', text: line.startsWith(' ') ? line.slice(1) : line });
    }
  }
  return items;
}

const SIGN = { add: '+', del: '−', ctx: ' ' };
const SPOKEN = { add: 'Added: ', del: 'Removed: ' };

/** One line of a diff: <ins> for added, <del> for removed, <div> otherwise. */
function lineView(kind, text) {
  const tag = kind === 'add' ? 'ins' : kind === 'del' ? 'del' : 'div';
  if (kind === 'hunk' || kind === 'meta' || kind === 'skip') {
    return h('div', { class: `diff-line diff-${kind}` }, h('span', { class: 'diff-text' }, text));
  }
  return h(tag, { class: `diff-line diff-${kind}` },
    h('span', { class: 'diff-sign', 'aria-hidden': 'true' }, SIGN[kind]),
    SPOKEN[kind] ? h('span', { class: 'visually-hidden' }, SPOKEN[kind]) : null,
    h('span', { class: 'diff-text' }, text === '' ? '\u00a0' : text));
}

/** Draws a parsed unified diff (`parseUnified`) into `container`. */
export function renderUnified(container, items) {
  container.replaceChildren(...items.map((item) => lineView(item.kind, item.text)));
  const added = items.filter((i) => i.kind === 'add').length;
  const removed = items.filter((i) => i.kind === 'del').length;
  container.setAttribute('aria-label', `Differences: ${added} line${added === 1 ? '' : 's'} added, ${removed} removed`);
}

/**
 * Draws a line diff (`diffLines`) side by side into `container`: the first text on the left,
 * the second on the right, removed and added lines paired up row by row, and runs of more than
 * `context` × 2 unchanged lines folded into one "unchanged lines" row.
 */
export function renderSideBySide(container, ops, { context = 3 } = {}) {
  const rows = [];
  let k = 0;
  while (k < ops.length) {
    if (ops[k].type === 'same') {
      let end = k;
      while (end < ops.length && ops[end].type === 'same') end++;
      const run = ops.slice(k, end);
      const keepStart = k === 0 ? 0 : context;
      const keepEnd = end === ops.length ? 0 : context;
      if (run.length > keepStart + keepEnd + 1) {
        run.slice(0, keepStart).forEach((op) => rows.push(['ctx', op.a, 'ctx', op.b]));
        rows.push(['skip', run.length - keepStart - keepEnd]);
        run.slice(run.length - keepEnd).forEach((op) => rows.push(['ctx', op.a, 'ctx', op.b]));
      } else {
        run.forEach((op) => rows.push(['ctx', op.a, 'ctx', op.b]));
      }
      k = end;
      continue;
    }
    const dels = [];
    const adds = [];
    while (k < ops.length && ops[k].type !== 'same') {
      if (ops[k].type === 'del') dels.push(ops[k].a); else adds.push(ops[k].b);
      k++;
    }
    for (let r = 0; r < Math.max(dels.length, adds.length); r++) {
      rows.push([r < dels.length ? 'del' : 'empty', dels[r], r < adds.length ? 'add' : 'empty', adds[r]]);
    }
  }
  const cell = (kind, text) => (kind === 'empty'
    ? h('div', { class: 'diff-line diff-empty', 'aria-hidden': 'true' })
    : lineView(kind, text));
  container.replaceChildren(...rows.map((row) => (row[0] === 'skip'
    ? h('div', { class: 'diff-row diff-row-skip' }, lineView('skip', `⋯ ${row[1].toLocaleString()} unchanged line${row[1] === 1 ? '' : 's'}`))
    : h('div', { class: 'diff-row' }, cell(row[0], row[1]), cell(row[2], row[3])))));
  if (!rows.length) container.append(h('p', { class: 'empty' }, 'Both are empty.'));
}
