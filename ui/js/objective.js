// The objective line above the document.

import { api, report, threadPath } from './api.js';
import { $, icon } from './dom.js';

export class ObjectivePanel {
  constructor(app) {
    this.app = app;
    this.text = $('#objective-text');
    this.input = $('#objective-input');
    this.button = $('#objective-edit');
    this.value = null;
    this.button.addEventListener('click', () => (this.input.hidden ? this.startEdit() : this.save()));
    this.text.addEventListener('dblclick', () => { if (!this.app.readOnly) this.startEdit(); });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') { event.preventDefault(); this.save(); }
      if (event.key === 'Escape') { event.preventDefault(); this.stopEdit(); }
    });
  }

  async load() {
    const data = await api.get(threadPath(this.app.threadId, '/objective'));
    this.render(data.objective);
  }

  render(objective) {
    this.value = objective || null;
    this.text.textContent = this.value || 'No objective yet. Say what you are working towards, or let the agent set it.';
    this.text.classList.toggle('placeholder', !this.value);
  }

  startEdit() {
    this.input.value = this.value || '';
    this.input.hidden = false;
    this.text.hidden = true;
    this.button.replaceChildren(icon('check'));
    this.button.setAttribute('aria-label', 'Save the objective');
    this.input.focus();
  }

  stopEdit() {
    this.input.hidden = true;
    this.text.hidden = false;
    this.button.replaceChildren(icon('edit'));
    this.button.setAttribute('aria-label', 'Edit the objective');
  }

  async save() {
    const objective = this.input.value.trim();
    try {
      await api.put(threadPath(this.app.threadId, '/objective'), { objective });
      this.stopEdit();
      this.render(objective);
      this.button.focus();
    } catch (err) { report(err, 'Saving the objective'); }
  }
}
