// The preferences panel (top left): hard and soft constraints, locked ones safe from the agent.

import { api, report, threadPath } from './api.js';
import { $, h, confirmDialog, icon, reconcile, replaceChildren } from './dom.js';

export class PreferencesPanel {
  constructor(app) {
    this.app = app;
    this.list = $('#preference-list');
    this.items = [];
    this.editing = null; // id of the preference being edited
    $('#preference-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.add();
    });
    this.list.addEventListener('click', (event) => this.onClick(event));
  }

  path(rest = '') { return threadPath(this.app.threadId, `/preferences${rest}`); }

  async load() {
    this.render(await api.get(this.path()));
  }

  /** Redraws the list; while one preference is being edited, a live update waits for it. */
  render(items, force = false) {
    this.items = items;
    if (!force && this.editing !== null && this.list.querySelector('.pref-edit-form')) return;
    $('#preferences-count').textContent = items.length ? `${items.filter((p) => p.kind === 'hard').length} hard · ${items.filter((p) => p.kind === 'soft').length} soft` : '';
    if (!items.length) {
      replaceChildren(this.list, h('li', { class: 'empty' }, 'No preferences yet. Add the constraints the agent must respect; lock one to keep the agent from changing it.'));
      return;
    }
    if (this.editing === null) {
      reconcile(this.list, items, (p) => p.id,
        (p, i) => `${p.title}\u0000${p.subtitle}\u0000${p.kind}\u0000${p.locked}\u0000${i}`,
        (p, i) => this.item(p, i));
      return;
    }
    replaceChildren(this.list, items.map((p, index) => this.item(p, index)));
  }

  item(p, index) {
    const lockLabel = p.locked ? `Unlock “${p.title}”` : `Lock “${p.title}” so the agent cannot change it`;
    const li = h('li', { dataset: { preferenceId: p.id }, class: p.locked ? 'locked' : '' },
      h('span', { class: `pref-kind ${p.kind}`, title: p.kind === 'hard' ? 'Hard constraint: must hold' : 'Soft preference: nice to have' }, p.kind),
      h('div', { class: 'pref-body' },
        h('div', { class: 'pref-title' }, h('span', { class: 'visually-hidden' }, `${index + 1}. `), p.title),
        p.subtitle ? h('div', { class: 'pref-subtitle' }, p.subtitle) : null),
      h('div', { class: 'pref-actions' },
        h('button', { type: 'button', class: 'icon-button pref-lock', 'aria-pressed': String(Boolean(p.locked)), 'aria-label': lockLabel, title: p.locked ? 'Locked: the agent cannot change it' : 'Unlocked: the agent may change it' }, icon(p.locked ? 'lock' : 'unlock')),
        h('button', { type: 'button', class: 'icon-button', dataset: { action: 'edit' }, 'aria-label': `Edit “${p.title}”` }, icon('edit')),
        h('button', { type: 'button', class: 'icon-button', dataset: { action: 'delete' }, 'aria-label': `Delete “${p.title}”` }, icon('trash'))));
    if (this.editing === p.id) li.append(this.editForm(p));
    return li;
  }

  editForm(p) {
    const title = h('input', { class: 'pref-edit-title', value: p.title, 'aria-label': 'Title', maxlength: 500, required: true });
    const subtitle = h('input', { class: 'pref-edit-subtitle', value: p.subtitle || '', 'aria-label': 'Detail', placeholder: 'Detail (optional)', maxlength: 1000 });
    const kind = h('select', { class: 'pref-edit-kind', 'aria-label': 'Kind' },
      h('option', { value: 'hard', selected: p.kind === 'hard' }, 'Hard'),
      h('option', { value: 'soft', selected: p.kind === 'soft' }, 'Soft'));
    const form = h('form', { class: 'pref-edit-form' }, title,
      h('div', { class: 'form-row' }, subtitle, kind,
        h('button', { type: 'button', class: 'button small ghost pref-edit-cancel', onclick: () => { this.editing = null; this.render(this.items, true); } }, 'Cancel'),
        h('button', { type: 'submit', class: 'button small primary pref-edit-save' }, 'Save')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await api.patch(this.path(`/${p.id}`), {
          title: title.value.trim(),
          subtitle: subtitle.value.trim() || null,
          kind: kind.value,
        });
        this.editing = null;
        this.render(await api.get(this.path()), true);
      } catch (err) { report(err, 'Saving the preference'); }
    });
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') { this.editing = null; this.render(this.items, true); }
    });
    setTimeout(() => title.focus());
    return form;
  }

  async onClick(event) {
    const button = event.target.closest('button');
    const li = event.target.closest('li[data-preference-id]');
    if (!button || !li) return;
    const id = Number(li.dataset.preferenceId);
    const p = this.items.find((item) => item.id === id);
    if (!p) return;
    try {
      if (button.classList.contains('pref-lock')) {
        await api.patch(this.path(`/${id}`), { locked: !p.locked });
        await this.load();
        this.list.querySelector(`li[data-preference-id="${id}"] .pref-lock`)?.focus();
      } else if (button.dataset.action === 'edit') {
        this.editing = id;
        this.render(this.items, true);
      } else if (button.dataset.action === 'delete') {
        if (await confirmDialog(`Delete the preference “${p.title}”?`)) {
          await api.del(this.path(`/${id}`));
          await this.load();
        }
      }
    } catch (err) { report(err, 'Changing the preference'); }
  }

  async add() {
    const title = $('#pref-title');
    const subtitle = $('#pref-subtitle');
    if (!title.value.trim()) return;
    try {
      await api.post(this.path(), {
        title: title.value.trim(),
        subtitle: subtitle.value.trim() || null,
        kind: $('#pref-kind').value,
      });
      title.value = '';
      subtitle.value = '';
      await this.load();
      title.focus();
    } catch (err) { report(err, 'Adding the preference'); }
  }
}
