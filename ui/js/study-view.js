// One study for its researcher (`/studies/{id}`): status with Open / Close / Delete, the
// recruit link with Prolific's placeholders, the conditions as cards (each with a preview and,
// once open, whether it still recruits), the design (editable while a draft, with inline
// validation), the data (study-data.js) with each session's replay (replay.js), and its
// members (study-members.js). What is offered is what the server says the caller `may` do:
// a viewer gets the study to read, an editor also its buttons, the owner also Delete and the
// members.

import { ApiError, api, report } from './api.js';
import { DesignEditor } from './design-editor.js';
import { $, confirmDialog, h, replaceChildren } from './dom.js';
import { StudyData } from './study-data.js';
import { StudyMembers } from './study-members.js';

/** The design's own fields (what `PATCH` may replace); the rest of a study is the server's. */
const DESIGN_FIELDS = ['title', 'task', 'consent', 'entry', 'assignment', 'limits', 'completion', 'conditions'];

/** The entry link with a placeholder per parameter, in Prolific's `{{%NAME%}}` form. */
export function recruitLink(study) {
  const entry = study.entry || {};
  const names = [entry.participant_param || 'PROLIFIC_PID', ...(entry.params || [])];
  const query = names.map((name) => `${encodeURIComponent(name)}={{%${name}%}}`).join('&');
  return `${location.origin}${study.entry_url}?${query}`;
}

function tools(condition) {
  if (condition.tools === '*') return 'every tool';
  if (!condition.tools.length) return 'no tools';
  return condition.tools.join(', ');
}

export class StudyView {
  constructor(id) {
    this.id = id;
    this.study = null;
    this.editor = new DesignEditor('#study-design', '#study-design-error');
    this.data = new StudyData(id);
    this.members = new StudyMembers(id);
  }

  path(rest = '') { return `/api/studies/${encodeURIComponent(this.id)}${rest}`; }

  async start() {
    $('#study-view').hidden = false;
    $('#study-open').addEventListener('click', () => this.advance('open'));
    $('#study-close').addEventListener('click', () => this.advance('close'));
    $('#study-delete').addEventListener('click', () => this.remove());
    $('#study-design-save').addEventListener('click', () => this.save());
    $('#study-link-copy').addEventListener('click', () => this.copyLink());
    try {
      this.render(await api.get(this.path()));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        $('#study-title').textContent = 'No such study';
        this.say('There is no study with this address, or it is not yours. Go back to the list of studies.');
        for (const section of document.querySelectorAll('#study-view .study-section')) section.hidden = true;
        $('#study-delete').hidden = true;
        return;
      }
      report(err, 'Loading the study');
      return;
    }
    this.data.start(() => this.study?.status === 'open');
    this.members.start(this.study);
  }

  say(text) {
    $('#study-message').textContent = text;
    $('#study-message').hidden = !text;
  }

  render(study) {
    this.study = study;
    document.title = `${study.title} · Studies · haico`;
    $('#thread-heading').textContent = study.title;
    $('#study-title').textContent = study.title;
    const status = $('#study-status');
    status.textContent = study.status;
    status.dataset.status = study.status;
    // The server says what this caller may do (`may`) and refuses the rest; the page offers just that.
    const edits = Boolean(study.may?.change);
    $('#study-open').hidden = !edits || study.status !== 'draft';
    $('#study-close').hidden = !edits || study.status !== 'open';
    $('#study-delete').hidden = !study.may?.delete;
    $('#study-link').value = recruitLink(study);
    $('#study-link-note').textContent = {
      draft: 'Participants get “not found” from this link until the study is opened. Prolific fills in the {{%…%}} placeholders; other platforms have their own.',
      open: 'Give this link to Prolific (it fills in the {{%…%}} placeholders), with the completion code of the design.',
      closed: 'The study is closed: this link tells participants so and takes nobody new.',
    }[study.status] || '';
    this.renderConditions(study);
    const design = Object.fromEntries(DESIGN_FIELDS.filter((f) => f in study).map((f) => [f, study[f]]));
    this.editor.set(design, { readOnly: !edits || study.status !== 'draft' });
    $('#study-design-save').hidden = !edits || study.status !== 'draft';
    $('#study-design-note').textContent = !edits
      ? 'You may read this study but not change it: ask its owner to make you an editor.'
      : study.status === 'draft'
        ? 'Change the design as JSON and save; a fault is shown next to its field and nothing is stored until it is valid.'
        : 'The design is frozen since the study opened (only recruiting per condition still changes).';
  }

  renderConditions(study) {
    const counted = study.counts?.by_condition || {};
    const edits = Boolean(study.may?.change);
    replaceChildren($('#study-conditions'), study.conditions.map((c) => {
      let preview = null;
      if (edits) {
        preview = h('button', { type: 'button', class: 'button small condition-preview', dataset: { condition: c.key } }, 'Preview');
        preview.addEventListener('click', () => this.preview(c.key, preview));
      }
      let recruiting = null;
      if (study.status === 'open' && edits) {
        const box = h('input', { type: 'checkbox', class: 'condition-recruiting', checked: c.recruiting });
        box.addEventListener('change', () => this.setRecruiting(c.key, box));
        recruiting = h('label', { class: 'condition-facts' }, box, ' recruiting');
      }
      return h('li', { class: 'condition-card', dataset: { condition: c.key } },
        h('h4', {}, c.label),
        h('span', { class: 'condition-key' }, c.key),
        h('p', { class: 'condition-facts' }, `Panels: ${c.panels.length ? c.panels.join(', ') : 'none (plain chat)'}`),
        h('p', { class: 'condition-facts' }, `Agent: ${tools(c)}${c.document_mode === 'suggest' ? ', suggest mode' : ''}`),
        h('p', { class: 'condition-facts' }, `Weight ${c.weight}${c.target ? `, target ${c.target}` : ''} · ${counted[c.key] ?? 0} counted`),
        recruiting,
        preview);
    }));
  }

  /** Saves a draft's design (`PATCH`); a refusal is shown at its field. */
  async save() {
    const design = this.editor.read();
    if (!design) return;
    try {
      this.render(await api.patch(this.path(), design));
      this.say('Saved.');
    } catch (err) {
      if (err instanceof ApiError && (err.status === 422 || err.status === 400)) this.editor.refuse(err);
      else report(err, 'Saving the design');
    }
  }

  async advance(action) {
    try {
      this.render(await api.post(this.path(`/${action}`)));
      this.say(action === 'open'
        ? 'The study is open: its link takes participants, and its design is frozen.'
        : 'The study is closed: its link takes nobody new. Sessions under way go on until they end.');
    } catch (err) { report(err, action === 'open' ? 'Opening the study' : 'Closing the study'); }
  }

  async remove() {
    const sure = await confirmDialog(`Delete “${this.study?.title ?? this.id}” with all its sessions and their threads? This cannot be undone.`);
    if (!sure) return;
    try {
      await api.del(this.path());
      location.assign('/studies');
    } catch (err) { report(err, 'Deleting the study'); }
  }

  async setRecruiting(key, box) {
    try {
      this.render(await api.patch(this.path(), { recruiting: { [key]: box.checked } }));
    } catch (err) {
      box.checked = !box.checked;
      report(err, 'Changing recruiting');
    }
  }

  /**
   * A preview session of one condition, opened in a new tab: the participant page acting with
   * the preview's token (in the URL's fragment, which never reaches a server or a log).
   */
  async preview(condition, button) {
    const tab = window.open('', '_blank');
    try {
      const made = await api.post(this.path('/preview'), { condition });
      const url = `${this.study.entry_url}#preview=${encodeURIComponent(made.participant_token)}`;
      button.dataset.previewUrl = url;
      if (tab) tab.location = url;
      else this.say(`Your browser blocked the new tab: open ${location.origin}${url} to preview.`);
    } catch (err) {
      tab?.close();
      report(err, 'Making a preview');
    }
  }

  async copyLink() {
    const said = $('#study-link-copied');
    try {
      await navigator.clipboard.writeText($('#study-link').value);
      said.textContent = 'Copied the link.';
    } catch {
      $('#study-link').select();
      said.textContent = 'Selected: press Ctrl+C (or ⌘+C) to copy it.';
    }
  }
}
