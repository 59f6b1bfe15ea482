// Suggestions (issue 25): the document mode toggle, the agent's open suggestions shown as
// tracked changes (deleted lines struck through, inserted lines marked) with the agent's
// reason and Accept / Reject, Accept all / Reject all, and "Ask about this" on a selection.
//
// The list is redrawn from the server on every `workspace` event that names `suggestions` or
// `document` (another tab or person deciding, or the person editing the text, which can make
// a suggestion stop applying), so it is always what the server holds. Every control is a
// real button, reachable with Tab and pressed with Enter or Space.

import { ApiError, api, report, threadPath } from './api.js';
import { $, h, toast } from './dom.js';

/** The lines of a unified diff as tracked changes: `-` struck, `+` marked, context plain. */
function trackedChanges(diff) {
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

/** The code-point offset of the JavaScript string index `index` in `text`. */
function codePoints(text, index) {
  return Array.from(text.slice(0, index)).length;
}

export class SuggestionsPanel {
  constructor(app) {
    this.app = app;
    this.box = $('#suggestions');
    this.list = $('#suggestions-list');
    this.mode = 'direct';
    this.open = [];
    this.busy = false;
    $('#document-mode').addEventListener('click', () => this.toggleMode());
    $('#suggestions-accept-all').addEventListener('click', () => this.decideAll('accept'));
    $('#suggestions-reject-all').addEventListener('click', () => this.decideAll('reject'));
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-action]');
      if (!button) return;
      const card = button.closest('.suggestion');
      this.decide(Number(card.dataset.id), button.dataset.action);
    });
    const view = $('#document-view');
    const watch = () => setTimeout(() => this.watchSelection(), 0);
    view.addEventListener('mouseup', watch);
    view.addEventListener('keyup', watch);
    document.addEventListener('selectionchange', () => this.watchSelection());
    $('#ask-selection').addEventListener('click', () => this.askAboutSelection());
  }

  async load() {
    const threadId = this.app.threadId;
    const [thread, open] = await Promise.all([
      api.get(threadPath(threadId)),
      api.get(threadPath(threadId, '/suggestions?status=open')),
    ]);
    if (threadId !== this.app.threadId) return;
    this.render(thread.document_mode, open);
  }

  /** Draws the mode and the open suggestions (from the workspace snapshot, or a reload). */
  render(mode, open) {
    this.mode = mode || 'direct';
    this.open = open || [];
    const toggle = $('#document-mode');
    const suggesting = this.mode === 'suggest';
    toggle.setAttribute('aria-pressed', String(suggesting));
    toggle.textContent = suggesting ? 'Suggest mode: on' : 'Suggest mode: off';
    toggle.title = suggesting
      ? 'The agent proposes changes for you to accept or reject. Click to let it edit directly.'
      : 'The agent edits the document directly. Click to have it propose changes instead.';
    document.body.dataset.documentMode = this.mode;
    this.box.hidden = this.open.length === 0;
    $('#suggestions-count').textContent = this.open.length === 1 ? '1 suggestion' : `${this.open.length} suggestions`;
    const cards = this.open.map((s) => this.card(s));
    this.list.replaceChildren(...cards);
  }

  card(s) {
    const what = { edit: 'Edit', append: 'Addition at the end', replace: 'Rewrite of the whole document' }[s.kind] || 'Change';
    const card = h('li', {
      class: `suggestion${s.applies ? '' : ' stale'}`,
      dataset: { id: s.id, applies: String(s.applies) },
      'aria-label': `Suggestion ${s.id}`,
    },
      h('div', { class: 'suggestion-head' },
        h('strong', {}, `#${s.id}`), ' ', h('span', { class: 'panel-meta' }, `${what} · turn ${s.turn_index}`)),
      h('p', { class: 'suggestion-reason' }, s.action_and_reasoning || ''),
      s.title ? h('p', { class: 'suggestion-title' }, `New title: ${s.title}`) : null,
      s.applies
        ? trackedChanges(s.diff)
        : h('p', { class: 'suggestion-note', role: 'note' },
          'This suggestion no longer applies: the text it changes was edited after it was made. Reject it, or press Accept to mark it outdated.'),
      h('div', { class: 'suggestion-actions' },
        h('button', { type: 'button', class: 'button small primary', dataset: { action: 'accept' } }, 'Accept'),
        h('button', { type: 'button', class: 'button small', dataset: { action: 'reject' } }, 'Reject')),
    );
    return card;
  }

  async toggleMode() {
    const next = this.mode === 'suggest' ? 'direct' : 'suggest';
    try {
      const thread = await api.patch(threadPath(this.app.threadId), { document_mode: next });
      this.render(thread.document_mode, this.open);
      toast(next === 'suggest'
        ? 'Suggest mode: the agent now proposes document changes for you to accept or reject.'
        : 'Direct mode: the agent now edits the document itself.');
    } catch (err) {
      report(err, 'Changing the document mode');
    }
  }

  /** Accepts or rejects one suggestion; a `409` (decided meanwhile, or outdated) is explained. */
  async decide(id, action, quiet = false) {
    try {
      await api.post(threadPath(this.app.threadId, `/suggestions/${id}/${action}`));
      $('#suggestions-status').hidden = true;
      if (!quiet) toast(action === 'accept' ? `Suggestion #${id} accepted.` : `Suggestion #${id} rejected.`);
      return 'ok';
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        toast(err.message, 'warn');
        const note = $('#suggestions-status');
        note.textContent = err.message;
        note.hidden = false;
        return 'conflict';
      }
      report(err, action === 'accept' ? 'Accepting the suggestion' : 'Rejecting the suggestion');
      return 'error';
    } finally {
      await this.app.reloaders.suggestions.request();
    }
  }

  /** Accept all / Reject all: one after another, oldest first, each against what the last left. */
  async decideAll(action) {
    if (this.busy) return;
    this.busy = true;
    let done = 0;
    let refused = 0;
    try {
      for (const s of [...this.open]) {
        const outcome = await this.decide(s.id, action, true);
        if (outcome === 'ok') done += 1; else refused += 1;
      }
    } finally {
      this.busy = false;
    }
    const verb = action === 'accept' ? 'accepted' : 'rejected';
    toast(refused ? `${done} ${verb}; ${refused} could not be (see the note above the document).` : `${done} ${verb}.`);
  }

  /** Shows "Ask about this" while text of the document is selected. */
  watchSelection() {
    const selection = document.getSelection();
    const view = $('#document-view');
    const text = selection && !selection.isCollapsed ? selection.toString() : '';
    const inside = text && view.contains(selection.anchorNode) && view.contains(selection.focusNode);
    const button = $('#ask-selection');
    button.hidden = !(inside && text.trim()) || this.app.readOnly;
    if (!button.hidden) this.selected = text;
  }

  /** Opens the chat with the selected passage quoted; where it sits goes along when found. */
  askAboutSelection() {
    const text = (this.selected || '').trim();
    if (!text) return;
    const doc = this.app.document.doc;
    const at = doc.content.indexOf(text);
    const unique = at >= 0 && doc.content.indexOf(text, at + 1) < 0;
    const selection = unique
      ? { text, start: codePoints(doc.content, at), end: codePoints(doc.content, at) + Array.from(text).length, version: doc.version }
      : null;
    this.app.chat.setSelection(text, selection);
    $('#ask-selection').hidden = true;
  }
}
