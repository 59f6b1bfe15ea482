// The working document (centre): rendered Markdown, an editor, and conflict handling.
//
// An edit starts from a known version and is saved with `expected_version`. If the agent (or
// another tab) saved meanwhile, the server answers 409 with its current document and the
// conflict dialog shows both texts side by side; the person keeps theirs, takes the server's,
// or merges by hand. Live updates never touch an open editor; they only raise a notice.

import { ApiError, api, report, threadPath } from './api.js';
import { $, setSafeHtml, toast } from './dom.js';

/**
 * Above this size the editor holds one section at a time: a browser's text box slows down with
 * every character it holds (about 0.4 s a keystroke at 1 MB in Chromium), a section keeps
 * typing instant. Saving still sends the whole document.
 */
const SECTION_EDIT_CHARS = 64 * 1024;
const MIN_SECTION_CHARS = 4 * 1024;
const MAX_SECTION_CHARS = 48 * 1024;

/**
 * Splits Markdown into sections at headings (outside code fences), merging small ones and
 * cutting very long ones; `sections.join('\n')` gives the text back exactly.
 */
export function splitSections(text) {
  const lines = text.split('\n');
  const starts = [0];
  let fence = false;
  let size = 0;
  lines.forEach((line, i) => {
    if (i > 0 && ((!fence && size >= MIN_SECTION_CHARS && /^#{1,6}\s/.test(line)) || size >= MAX_SECTION_CHARS)) {
      starts.push(i);
      size = 0;
    }
    if (/^(```|~~~)/.test(line)) fence = !fence;
    size += line.length + 1;
  });
  return starts.map((start, k) => lines.slice(start, starts[k + 1] ?? lines.length).join('\n'));
}

function sectionLabel(section, index) {
  const heading = section.split('\n').find((line) => /^#{1,6}\s/.test(line));
  const label = (heading || section.trim().split('\n')[0] || '').replace(/^#+\s*/, '').slice(0, 60);
  return `${index + 1}. ${label || '(untitled)'}`;
}

export class DocumentPanel {
  constructor(app) {
    this.app = app;
    this.view = $('#document-view');
    this.editor = $('#document-editor');
    this.titleInput = $('#document-title-input');
    this.notice = $('#document-notice');
    this.doc = { title: '', content: '', version: 0 };
    this.editing = false;
    this.baseVersion = 0;
    this.saving = false;
    $('#document-edit').addEventListener('click', () => this.startEdit());
    $('#document-cancel').addEventListener('click', () => this.cancel());
    $('#document-save').addEventListener('click', () => this.save());
    this.view.addEventListener('dblclick', () => { if (!this.app.readOnly) this.startEdit(); });
    $('#document-edit-area').addEventListener('keydown', (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key === 's') { event.preventDefault(); this.save(); }
      if (event.key === 'Escape' && !$('#conflict-dialog').open) { event.preventDefault(); this.cancel(); }
    });
    $('#conflict-dialog').addEventListener('close', () => this.onConflictChoice());
    $('#document-section').addEventListener('change', (event) => this.showSection(Number(event.target.value)));
    window.addEventListener('beforeunload', (event) => {
      if (this.editing && this.dirty()) { event.preventDefault(); event.returnValue = ''; }
    });
  }

  path() { return threadPath(this.app.threadId, '/document'); }

  async load() {
    this.apply(await api.get(`${this.path()}?html=true`));
  }

  /** Shows a document from the server (`html` rendered and sanitised there). */
  apply(doc) {
    const next = doc || { title: '', content: '', version: 0, html: '' };
    const changedWhileEditing = this.editing && next.version !== this.baseVersion;
    this.doc = next;
    $('#document-title').textContent = next.title || 'Document';
    $('#document-version').textContent = next.version ? `v${next.version}` : '';
    // The rendered view is hidden while editing: draw it when the editor closes, so a large
    // document's HTML is not rebuilt under someone's typing.
    this.viewStale = this.editing;
    if (!this.editing) this.drawView();
    if (changedWhileEditing) {
      this.notice.textContent = `The document was changed on the server (now v${next.version}) while you were editing. Your text is safe: when you save, you will see both versions and choose.`;
      this.notice.hidden = false;
    }
  }

  drawView() {
    const next = this.doc;
    this.viewStale = false;
    if (next.content) {
      this.view.classList.remove('empty-doc');
      setSafeHtml(this.view, next.html ?? '', { chunk: 60 });
      // The open suggestions are marked in the text they change.
      this.app.suggestions?.decorate();
    } else {
      this.view.classList.add('empty-doc');
      this.view.textContent = 'The document is empty. The agent writes here as you work together; you can also write it yourself with Edit.';
    }
  }

  /** The whole text being edited (the open section put back in place). */
  editedText() {
    if (!this.sections) return this.editor.value;
    this.sections[this.sectionIndex] = this.editor.value;
    return this.sections.join('\n');
  }

  dirty() {
    return this.editedText() !== this.editStart.content || this.titleInput.value !== this.editStart.title;
  }

  showSection(index) {
    this.sections[this.sectionIndex] = this.editor.value;
    this.sectionIndex = index;
    this.editor.value = this.sections[index];
    this.editor.scrollTop = 0;
    this.editor.setSelectionRange(0, 0);
    this.editor.focus();
  }

  startEdit(content = this.doc.content, title = this.doc.title, version = this.doc.version) {
    this.editing = true;
    this.baseVersion = version;
    this.editStart = { content: this.doc.content, title: this.doc.title };
    const select = $('#document-section');
    if (content.length > SECTION_EDIT_CHARS) {
      // Open the section the reader was looking at.
      this.sections = splitSections(content);
      const view = this.view;
      const fraction = view.scrollHeight ? view.scrollTop / view.scrollHeight : 0;
      this.sectionIndex = Math.min(this.sections.length - 1, Math.floor(fraction * this.sections.length));
      const options = document.createDocumentFragment();
      this.sections.forEach((section, i) => {
        const option = document.createElement('option');
        option.value = String(i);
        option.textContent = sectionLabel(section, i);
        options.append(option);
      });
      select.replaceChildren(options);
      select.value = String(this.sectionIndex);
      this.editor.value = this.sections[this.sectionIndex];
    } else {
      this.sections = null;
      this.editor.value = content;
    }
    $('#document-section-row').hidden = !this.sections;
    this.titleInput.value = title;
    this.notice.hidden = true;
    this.view.hidden = true;
    $('#document-edit-area').hidden = false;
    $('#document-edit').hidden = true;
    $('#document-save').hidden = false;
    $('#document-cancel').hidden = false;
    this.editor.focus();
  }

  stopEdit() {
    this.editing = false;
    this.sections = null;
    if (this.viewStale) this.drawView();
    this.notice.hidden = true;
    this.view.hidden = false;
    $('#document-edit-area').hidden = true;
    $('#document-edit').hidden = false;
    $('#document-save').hidden = true;
    $('#document-cancel').hidden = true;
  }

  cancel() {
    this.stopEdit();
    $('#document-edit').focus();
  }

  async save(force = false) {
    if (this.saving) return;
    this.saving = true;
    const content = this.editedText();
    const title = this.titleInput.value.trim();
    try {
      const saved = await api.put(this.path(), {
        content,
        title: title || undefined,
        expected_version: this.baseVersion,
      });
      this.stopEdit();
      this.doc = { ...this.doc, ...saved };
      await this.load();
      toast(force ? 'Your version was saved over the newer one.' : 'Document saved.');
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.body && err.body.document) {
        this.openConflict(content, title, err.body.document);
      } else {
        report(err, 'Saving the document');
      }
    } finally {
      this.saving = false;
    }
  }

  openConflict(mine, myTitle, theirs) {
    this.conflict = { mine, myTitle, theirs };
    $('#conflict-mine').value = mine;
    $('#conflict-theirs').value = theirs.content;
    $('#conflict-version').textContent = `(v${theirs.version})`;
    const dialog = $('#conflict-dialog');
    dialog.returnValue = '';
    dialog.showModal();
    $('#conflict-merge').focus();
  }

  onConflictChoice() {
    const choice = $('#conflict-dialog').returnValue;
    const conflict = this.conflict;
    if (!conflict) return;
    this.conflict = null;
    const { mine, myTitle, theirs } = conflict;
    if (choice === 'mine') {
      // Save over the version just seen; a still newer one opens the dialog again.
      this.baseVersion = theirs.version;
      if (this.sections) this.sections = null;
      this.editor.value = mine;
      this.save(true);
    } else if (choice === 'theirs') {
      this.stopEdit();
      this.load().catch((err) => report(err, 'Loading the document'));
    } else {
      // Merge by hand (also when the dialog is dismissed): both texts in the editor, nothing lost.
      const merged = `${theirs.content}\n\n<!-- your version below: merge, then save -->\n\n${mine}`;
      this.startEdit(merged, myTitle || theirs.title, theirs.version);
      this.editStart = { content: theirs.content, title: theirs.title };
      this.notice.textContent = 'Both versions are in the editor: the current one first, yours below the marker. Merge them and save.';
      this.notice.hidden = false;
    }
  }
}
