// Suggestions (issue 25): the document mode toggle, the agent's open suggestions shown inside
// the document as tracked changes (tracked.js: deleted text struck through, inserted text
// marked, the agent's reason and Accept / Reject beside each), Accept all / Reject all above
// the document, and "Ask about this" on a selection.
//
// The list is redrawn from the server on every `workspace` event that names `suggestions` or
// `document` (another tab or person deciding, or the person editing the text, which can make
// a suggestion stop applying), so it is always what the server holds. Every control is a
// real button, reachable with Tab and pressed with Enter or Space.

import { ApiError, api, report, threadPath } from './api.js';
import { $, toast } from './dom.js';
import { clearTracked, documentText, drawTracked } from './tracked.js';

/** The code-point offset of the JavaScript string index `index` in `text`. */
function codePoints(text, index) {
  return Array.from(text.slice(0, index)).length;
}

export class SuggestionsPanel {
  constructor(app) {
    this.app = app;
    this.box = $('#suggestions');
    this.view = $('#document-view');
    this.mode = 'direct';
    this.open = [];
    this.busy = false;
    $('#document-mode').addEventListener('click', () => this.toggleMode());
    $('#suggestions-accept-all').addEventListener('click', () => this.decideAll('accept'));
    $('#suggestions-reject-all').addEventListener('click', () => this.decideAll('reject'));
    this.view.addEventListener('click', (event) => {
      const button = event.target.closest('.suggestion button[data-action]');
      if (!button) return;
      const card = button.closest('.suggestion');
      this.decide(Number(card.dataset.id), button.dataset.action);
    });
    // A double click on a suggestion's own controls is not a wish to edit the document.
    this.view.addEventListener('dblclick', (event) => {
      if (event.target.closest('.suggestion-controls, .suggestion-block')) event.stopImmediatePropagation();
    }, true);
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
    this.decorate();
  }

  /**
   * Draws the open suggestions into the rendered document; called again whenever the document
   * view is redrawn (doc.js), so the marks always sit on the text they change.
   */
  decorate() {
    const doc = this.app.document;
    if (!doc || doc.editing || !doc.doc.content) {
      clearTracked(this.view);
      return;
    }
    drawTracked(this.view, this.open, doc.doc.content);
    const inline = this.view.querySelectorAll('.suggestion-inline').length;
    $('#suggestions-placement').textContent = this.open.length && inline < this.open.length
      ? `${inline} marked in the text, ${this.open.length - inline} shown as blocks where they could not be marked inline`
      : '';
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
    const view = this.view;
    const text = selection && !selection.isCollapsed && selection.rangeCount
      ? documentText(selection.getRangeAt(0)) : '';
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
