// The plan: an indented checklist the person can tick, edit, extend and prune.
// Steps are addressed by their stable ids; numbers shown are the ones the agent sees.

import { api, report, threadPath } from './api.js';
import { $, h, icon, reconcile, replaceChildren } from './dom.js';

export class PlanPanel {
  constructor(app) {
    this.app = app;
    this.list = $('#plan-list');
    this.steps = [];
    this.editing = null; // {id, mode: 'edit' | 'child'}
    $('#plan-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.add();
    });
    this.list.addEventListener('click', (event) => this.onClick(event));
    this.list.addEventListener('change', (event) => this.onToggle(event));
  }

  path(rest = '') { return threadPath(this.app.threadId, `/todos${rest}`); }

  async load() {
    this.render(await api.get(this.path()));
  }

  /** Redraws the list; an open inline editor holds live updates back until it closes. */
  render(steps, force = false) {
    this.steps = steps;
    const done = steps.filter((s) => s.done).length;
    $('#plan-progress').textContent = steps.length ? `${done.toLocaleString()} of ${steps.length.toLocaleString()} done` : '';
    if (!force && this.editing && this.list.querySelector('.plan-step-edit-input')) return;
    if (!steps.length) {
      this.editing = null;
      replaceChildren(this.list, h('li', { class: 'empty' }, 'No plan yet. Add a first step, or ask the agent to lay one out.'));
      return;
    }
    if (!this.editing) {
      reconcile(this.list, steps, (s) => s.id,
        (s, i) => `${s.text}\u0000${s.depth}\u0000${s.done}\u0000${i}\u0000${this.hasChildren(i)}\u0000${this.app.readOnly}`,
        (s, i) => this.item(s, i));
      return;
    }
    const fragment = document.createDocumentFragment();
    steps.forEach((step, index) => {
      fragment.append(this.item(step, index));
      if (this.editing && this.editing.mode === 'child' && this.editing.id === step.id) {
        fragment.append(this.childForm(step));
      }
    });
    this.list.replaceChildren(fragment);
  }

  item(step, index) {
    const isEditing = this.editing && this.editing.mode === 'edit' && this.editing.id === step.id;
    const checkboxId = `plan-step-done-${step.id}`;
    const li = h('li', { dataset: { stepId: step.id, depth: step.depth }, class: step.done ? 'done' : '' },
      h('input', { type: 'checkbox', class: 'plan-step-done', id: checkboxId, checked: Boolean(step.done), disabled: this.app.readOnly, 'aria-label': `Step ${index + 1} done: ${step.text}` }),
      h('span', { class: 'plan-step-num', 'aria-hidden': 'true' }, `${index + 1}`),
      isEditing
        ? this.editInput(step)
        : h('label', { class: 'plan-step-text', for: checkboxId }, step.text),
      isEditing ? null : h('span', { class: 'plan-step-actions' },
        h('button', { type: 'button', class: 'icon-button', dataset: { action: 'child' }, 'aria-label': `Add a sub-step under step ${index + 1}` }, icon('plus')),
        h('button', { type: 'button', class: 'icon-button', dataset: { action: 'edit' }, 'aria-label': `Edit step ${index + 1}` }, icon('edit')),
        h('button', { type: 'button', class: 'icon-button', dataset: { action: 'delete' }, 'aria-label': `Delete step ${index + 1}${this.hasChildren(index) ? ' and its sub-steps' : ''}` }, icon('trash'))));
    li.style.setProperty('--depth', String(step.depth || 0));
    return li;
  }

  hasChildren(index) {
    const next = this.steps[index + 1];
    return Boolean(next && next.depth > this.steps[index].depth);
  }

  /**
   * An inline text box for one step: Enter runs `save(text)`, then the list is redrawn from
   * the server and `focusAfter` (a selector in step `id`'s row) takes the focus; Escape closes
   * it. `what` names the action in an error message.
   */
  inlineInput(attrs, id, what, save, focusAfter = null) {
    const input = h('input', { class: 'plan-step-edit-input', maxlength: 2000, ...attrs });
    input.addEventListener('keydown', async (event) => {
      if (event.key === 'Escape') { event.preventDefault(); this.closeEditor(id); }
      if (event.key !== 'Enter') return;
      event.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      try {
        await save(text);
        this.editing = null;
        this.render(await api.get(this.path()), true);
        if (focusAfter) this.focusItem(id, focusAfter);
      } catch (err) { report(err, what); }
    });
    setTimeout(() => { input.focus(); input.select(); });
    return input;
  }

  editInput(step) {
    return this.inlineInput({ value: step.text, 'aria-label': 'Step text' }, step.id, 'Saving the step',
      (text) => api.patch(this.path(`/${step.id}`), { text }), '[data-action="edit"]');
  }

  childForm(parent) {
    const input = this.inlineInput({ placeholder: 'New sub-step…', 'aria-label': 'New sub-step' }, parent.id, 'Adding the sub-step',
      (text) => api.post(this.path(), { text, parent_id: parent.id }));
    const li = h('li', { class: 'child-form' }, input);
    li.style.setProperty('--depth', String((parent.depth || 0) + 1));
    return li;
  }

  closeEditor(id) {
    this.editing = null;
    this.render(this.steps, true);
    this.focusItem(id, '.plan-step-done');
  }

  focusItem(id, selector) {
    this.list.querySelector(`li[data-step-id="${id}"] ${selector}`)?.focus();
  }

  async onClick(event) {
    const button = event.target.closest('button[data-action]');
    const li = event.target.closest('li[data-step-id]');
    if (!button || !li) return;
    const id = Number(li.dataset.stepId);
    const action = button.dataset.action;
    if (action === 'edit' || action === 'child') {
      this.editing = { id, mode: action };
      this.render(this.steps, true);
      return;
    }
    if (action === 'delete') {
      try {
        await api.del(this.path(`/${id}`));
        this.render(await api.get(this.path()), true);
      } catch (err) { report(err, 'Deleting the step'); }
    }
  }

  async onToggle(event) {
    const box = event.target;
    if (!box.classList.contains('plan-step-done')) return;
    const li = box.closest('li[data-step-id]');
    const id = Number(li.dataset.stepId);
    li.classList.toggle('done', box.checked);
    try {
      await api.patch(this.path(`/${id}`), { done: box.checked });
      this.render(await api.get(this.path()));
      this.focusItem(id, '.plan-step-done');
    } catch (err) {
      box.checked = !box.checked;
      li.classList.toggle('done', box.checked);
      report(err, 'Ticking the step');
    }
  }

  async add() {
    const input = $('#plan-input');
    const text = input.value.trim();
    if (!text) return;
    try {
      await api.post(this.path(), { text });
      input.value = '';
      this.render(await api.get(this.path()));
      this.list.lastElementChild?.scrollIntoView({ block: 'nearest' });
    } catch (err) { report(err, 'Adding the step'); }
  }
}
