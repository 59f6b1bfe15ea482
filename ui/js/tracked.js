// Open suggestions drawn *inside* the rendered document as tracked changes (issue 25): the
// text a suggestion deletes is wrapped in <del>, the text it inserts follows in <ins>, and its
// reason and Accept / Reject sit right after the change.
//
// The document view holds HTML the server rendered from Markdown and sanitised; this module
// never parses HTML. It only splits the view's text nodes and adds elements built with `h`
// (text nodes, never markup), so the inserted text of a suggestion stays inert whatever it
// says. A suggestion is placed inline when each of its edits is found exactly once in the
// view's text and the part it deletes lies in one text node (plain text within one paragraph,
// heading or list item). Otherwise — a change across paragraphs or formatting, an addition at
// the end, a rewrite of the whole document, one that no longer applies — it is shown as a
// block at the nearest place, and the block says why.

import { h } from './dom.js';

/** Elements this module adds: removed again before every redraw. */
const ADDED = '.sugg-ins, .suggestion-controls, .suggestion-block';

/** The lines of a unified diff as tracked changes: `-` struck, `+` marked, context plain. */
export function trackedChanges(diff) {
  const box = h('div', { class: 'suggestion-changes' });
  for (const line of (diff || '').split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++') || line === '') continue;
    if (line.startsWith('@@')) {
      // A gap between two hunks; the first hunk needs none.
      if (box.childElementCount) box.append(h('div', { class: 'diff-gap' }, '…'));
    } else if (line.startsWith('-')) {
      box.append(h('del', { class: 'diff-del' }, line.slice(1) || ' '));
    } else if (line.startsWith('+')) {
      box.append(h('ins', { class: 'diff-ins' }, line.slice(1) || ' '));
    } else {
      box.append(h('div', { class: 'diff-ctx' }, line.slice(1) || ' '));
    }
  }
  return box;
}

/** Takes every tracked change out of `view`, leaving the document's own nodes as they were. */
export function clearTracked(view) {
  for (const el of view.querySelectorAll(ADDED)) el.remove();
  const wrapped = view.querySelectorAll('.sugg-del, .suggestion-change, span.suggestion');
  for (const el of wrapped) el.replaceWith(...el.childNodes);
  // Join the text nodes the marks split, so the next search sees the text whole (skipped
  // when nothing was marked: a long document is not walked for nothing).
  if (wrapped.length) view.normalize();
}

/** The view's document text, node by node (what the suggestions' own elements add left out). */
function textMap(view) {
  const walker = document.createTreeWalker(view, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement.closest(ADDED) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes = [];
  let text = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    nodes.push({ node, at: text.length });
    text += node.data;
  }
  return { nodes, text };
}

/** The only place `needle` starts in `text`, or -1 (absent, or found more than once). */
function onlyIndex(text, needle) {
  const at = text.indexOf(needle);
  if (at < 0 || text.indexOf(needle, at + 1) >= 0) return -1;
  return at;
}

/** What an edit really changes: its old and new text less what they share at both ends. */
function core(oldText, newText) {
  let p = 0;
  while (p < oldText.length && p < newText.length && oldText[p] === newText[p]) p += 1;
  let q = 0;
  while (q < oldText.length - p && q < newText.length - p &&
         oldText[oldText.length - 1 - q] === newText[newText.length - 1 - q]) q += 1;
  return { p, del: oldText.slice(p, oldText.length - q), ins: newText.slice(p, newText.length - q) };
}

/**
 * Where each edit of `s` goes in the view, or a reason it cannot go inline. Edits are looked up
 * in the text as it reads now, so edits that only make sense after an earlier one of the same
 * suggestion fall back to a block, as do two suggestions changing the same words.
 */
function placements(view, s) {
  if (!s.applies) return { why: 'stale' };
  if (s.kind !== 'edit' || s.title) return { why: s.kind };
  const { nodes, text } = textMap(view);
  const found = [];
  for (const edit of s.edits) {
    const { p, del, ins } = core(edit.old_text, edit.new_text);
    if (/\n\s*\n/.test(del) || /\n\s*\n/.test(ins)) return { why: 'structure' };
    const at = onlyIndex(text, edit.old_text);
    if (at < 0) return { why: 'structure' };
    const start = at + p;
    const end = start + del.length;
    // The node holding the deletion (or, for a pure insertion, the text just before it).
    const probe = del.length ? start : Math.max(start - 1, 0);
    const entry = nodes.find((n) => probe >= n.at && probe < n.at + n.node.data.length) ||
      nodes.find((n) => start >= n.at && start <= n.at + n.node.data.length);
    if (!entry || end > entry.at + entry.node.data.length) return { why: 'structure' };
    if (entry.node.parentElement.closest('.sugg-del, pre, code')) return { why: 'structure' };
    found.push({ entry, start: start - entry.at, end: end - entry.at, ins });
  }
  // Two edits of one suggestion in the same node would shift each other's offsets.
  if (new Set(found.map((f) => f.entry.node)).size !== found.length) return { why: 'structure' };
  return { found };
}

/** The reason and the buttons of suggestion `s`. */
function controls(s) {
  return h('span', { class: 'suggestion-controls' },
    h('span', { class: 'suggestion-id' }, `#${s.id}`),
    h('span', { class: 'suggestion-reason' }, s.action_and_reasoning || ''),
    h('span', { class: 'suggestion-actions' },
      h('button', { type: 'button', class: 'button small primary', dataset: { action: 'accept' }, 'aria-label': `Accept suggestion ${s.id}` }, 'Accept'),
      h('button', { type: 'button', class: 'button small', dataset: { action: 'reject' }, 'aria-label': `Reject suggestion ${s.id}` }, 'Reject')));
}

/** Marks `s` in the text at `found`: <del> around what goes, <ins> with what comes. */
function markInline(s, found) {
  found.forEach(({ entry, start, end, ins }, i) => {
    const last = i === found.length - 1;
    const range = document.createRange();
    range.setStart(entry.node, start);
    range.setEnd(entry.node, end);
    const wrapper = last
      ? h('span', { class: 'suggestion suggestion-inline', dataset: { id: s.id, applies: 'true', placement: 'inline' }, role: 'group', 'aria-label': `Suggestion ${s.id}: ${s.action_and_reasoning || 'a change'}` })
      : h('span', { class: 'suggestion-change', dataset: { suggestion: s.id } });
    const del = h('del', { class: 'sugg-del', dataset: { suggestion: s.id }, title: `Suggestion #${s.id} deletes this` });
    del.append(range.extractContents());
    range.insertNode(wrapper);
    if (del.textContent) wrapper.append(del);
    if (ins) wrapper.append(h('ins', { class: 'sugg-ins', dataset: { suggestion: s.id }, title: `Suggestion #${s.id} inserts this` }, ins));
    if (last) wrapper.append(controls(s));
  });
}

/** The document's blocks (paragraphs, headings, lists…), looking inside the long-document groups. */
function blocks(view) {
  return [...view.children].flatMap((el) => (el.classList.contains('doc-chunk') ? [...el.children] : [el]))
    .filter((el) => !el.classList.contains('suggestion-block'));
}

/** The block nearest to where `s` changes the document, and whether the block goes after it. */
function nearest(view, s, content) {
  const all = blocks(view);
  if (!all.length) return { anchor: null, after: true };
  if (s.kind === 'append') return { anchor: all[all.length - 1], after: true };
  if (s.kind === 'replace') return { anchor: all[0], after: false };
  const old = (s.edits[0] && s.edits[0].old_text) || '';
  // A line of the passage, without Markdown's marks, found in a block's text.
  const line = old.split('\n').map((l) => l.replace(/^[\s>#*+\-\d.]+/, '').replace(/[*_`[\]]/g, '').trim())
    .find((l) => l.length >= 4);
  if (line) {
    const probe = line.slice(0, 40);
    const hit = all.find((el) => el.textContent.includes(probe));
    if (hit) return { anchor: hit, after: true };
  }
  // Not readable in the view: the same fraction of the way through as in the Markdown.
  const at = content.indexOf(old);
  if (at < 0) return { anchor: all[0], after: false };
  const index = Math.min(all.length - 1, Math.floor((at / Math.max(content.length, 1)) * all.length));
  return { anchor: all[index], after: true };
}

const BLOCK_NOTES = {
  stale: 'This suggestion no longer applies: the text it changes was edited after it was made. Reject it, or press Accept to mark it outdated.',
  append: 'An addition at the end of the document.',
  replace: 'A rewrite of the whole document (or a new title), so it is shown as a whole here.',
  structure: 'Shown as a block: this change crosses the document’s structure (paragraphs, lists or formatting), so it cannot be marked inside the text. It goes about here.',
};

/** `s` as a block beside the nearest block of the document, saying why it is not inline. */
function markBlock(view, s, why, content) {
  const what = { edit: 'Edit', append: 'Addition at the end', replace: 'Rewrite of the whole document' }[s.kind] || 'Change';
  const block = h('aside', {
    class: `suggestion suggestion-block${s.applies ? '' : ' stale'}`,
    dataset: { id: s.id, applies: String(s.applies), placement: why },
    role: 'group',
    'aria-label': `Suggestion ${s.id}`,
  },
    h('div', { class: 'suggestion-head' },
      h('strong', {}, `#${s.id}`), ' ', h('span', { class: 'panel-meta' }, `${what} · turn ${s.turn_index}`)),
    h('p', { class: 'suggestion-reason' }, s.action_and_reasoning || ''),
    h('p', { class: `suggestion-note${why === 'stale' ? ' bad' : ''}`, role: 'note' }, BLOCK_NOTES[why] || BLOCK_NOTES.structure),
    s.title ? h('p', { class: 'suggestion-title' }, `New title: ${s.title}`) : null,
    s.applies ? trackedChanges(s.diff) : null,
    h('div', { class: 'suggestion-actions' },
      h('button', { type: 'button', class: 'button small primary', dataset: { action: 'accept' }, 'aria-label': `Accept suggestion ${s.id}` }, 'Accept'),
      h('button', { type: 'button', class: 'button small', dataset: { action: 'reject' }, 'aria-label': `Reject suggestion ${s.id}` }, 'Reject')),
  );
  const { anchor, after } = nearest(view, s, content);
  if (!anchor) view.append(block);
  else if (after) anchor.after(block);
  else anchor.before(block);
}

/**
 * Draws `open` (oldest first) into `view`, whose rendered text is the Markdown `content`:
 * inline where each change can be marked in the text, as a block otherwise.
 */
export function drawTracked(view, open, content) {
  clearTracked(view);
  for (const s of open) {
    const placed = placements(view, s);
    if (placed.found) markInline(s, placed.found);
    else markBlock(view, s, placed.why, content);
  }
}

/** The text of `range` as the document reads it: what the suggestions' own elements add left out. */
export function documentText(range) {
  const box = document.createElement('div');
  box.append(range.cloneContents());
  for (const el of box.querySelectorAll(ADDED)) el.remove();
  return box.textContent;
}
