// The threads sidebar: create, rename, delete and switch conversations. With accounts it lists
// the threads this person may see: someone else's says whose it is, and a viewer's is marked
// "view only" (rename needs an editor, delete the owner).

import { api, auth, report, threadPath } from './api.js';
import { $, h, confirmDialog, icon, replaceChildren } from './dom.js';

export class ThreadsPanel {
  constructor(app) {
    this.app = app;
    this.list = $('#thread-list');
    this.threads = [];
    this.renaming = null;
    $('#new-thread').addEventListener('click', () => this.create());
    this.list.addEventListener('click', (event) => this.onClick(event));
  }

  async load() {
    const threads = await api.get('/api/threads');
    threads.sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)));
    if (this.renaming) {
      this.threads = threads; // redrawn when the rename ends; never under someone's typing
    } else {
      this.render(threads);
    }
    return threads;
  }

  render(threads = this.threads) {
    this.threads = threads;
    this.app.updateThreadActions();
    if (!threads.length) {
      replaceChildren(this.list, h('li', { class: 'empty' }, 'No threads yet.'));
      return;
    }
    replaceChildren(this.list, threads.map((t) => this.item(t)));
  }

  title(thread) { return thread.title || 'Untitled thread'; }

  item(thread) {
    const current = thread.id === this.app.threadId;
    const li = h('li', { dataset: { threadId: thread.id }, 'aria-current': current ? 'page' : null });
    if (this.renaming === thread.id) {
      const input = h('input', { class: 'thread-rename-input', value: thread.title || '', 'aria-label': 'Thread name', maxlength: 200 });
      input.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') { event.preventDefault(); this.rename(thread, input.value, li); }
        if (event.key === 'Escape') { event.preventDefault(); this.renaming = null; this.redrawItem(li, thread); }
      });
      input.addEventListener('blur', () => { if (this.renaming === thread.id) this.rename(thread, input.value, li); });
      li.append(input);
      setTimeout(() => { input.focus(); input.select(); });
      return li;
    }
    // The server says what this caller may do with the thread (`may`); the page offers just that.
    const canEdit = Boolean(thread.may?.edit);
    const canDelete = Boolean(thread.may?.delete);
    li.append(h('a', { class: 'thread-link', href: `/t/${encodeURIComponent(thread.id)}`, title: this.title(thread) },
      h('span', { class: 'thread-title' }, this.title(thread)),
      this.meta(thread)));
    if (canEdit) li.append(h('button', { type: 'button', class: 'icon-button', dataset: { action: 'rename' }, 'aria-label': `Rename “${this.title(thread)}”` }, icon('edit')));
    if (canDelete) li.append(h('button', { type: 'button', class: 'icon-button', dataset: { action: 'delete' }, 'aria-label': `Delete “${this.title(thread)}”` }, icon('trash')));
    return li;
  }

  /** Whose thread it is, when not this person's own, and "view only" for a viewer. */
  meta(thread) {
    const someoneElse = thread.owner && thread.owner !== auth.me?.name;
    const viewOnly = !thread.may?.edit;
    if (!someoneElse && !viewOnly) return null;
    const shared = thread.access === 'editor' || thread.access === 'viewer';
    // Read out as "Title, shared by ann, view only".
    const comma = () => h('span', { class: 'visually-hidden' }, ', ');
    return h('span', { class: 'thread-meta' },
      someoneElse ? [comma(), h('span', { class: 'thread-owner' }, `${shared ? 'shared by' : 'by'} ${thread.owner}`)] : null,
      viewOnly ? [comma(), h('span', { class: 'thread-badge view-only' }, 'view only')] : null);
  }

  async onClick(event) {
    const li = event.target.closest('li[data-thread-id]');
    if (!li) return;
    const thread = this.threads.find((t) => t.id === li.dataset.threadId);
    if (!thread) return;
    const link = event.target.closest('a.thread-link');
    if (link) {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return; // new tab
      event.preventDefault();
      this.app.open(thread.id, { push: true });
      return;
    }
    const action = event.target.closest('button[data-action]')?.dataset.action;
    if (action === 'rename') {
      this.renaming = thread.id;
      this.render();
    } else if (action === 'delete') {
      if (!(await confirmDialog(`Delete “${this.title(thread)}” and its whole workspace (document, plan, preferences, chat)? This cannot be undone.`))) return;
      try {
        await api.del(threadPath(thread.id));
        const threads = await this.load();
        if (thread.id === this.app.threadId) {
          if (threads.length) this.app.open(threads[0].id, { push: true });
          else this.create();
        }
      } catch (err) { report(err, 'Deleting the thread'); }
    }
  }

  /**
   * Swaps one row in place. Redrawing the whole list here would replace the button a person is
   * clicking right now (the rename input loses focus on that very mouse-down).
   */
  redrawItem(li, thread) {
    if (li.isConnected) li.replaceWith(this.item(thread));
  }

  async rename(thread, value, li) {
    this.renaming = null;
    const title = value.trim();
    if (!title || title === thread.title) { this.redrawItem(li, thread); return; }
    const previous = thread.title;
    thread.title = title;
    this.redrawItem(li, thread);
    if (thread.id === this.app.threadId) this.app.setHeading(title);
    try {
      await api.patch(threadPath(thread.id), { title });
    } catch (err) {
      thread.title = previous;
      this.render();
      if (thread.id === this.app.threadId) this.app.setHeading(previous);
      report(err, 'Renaming the thread');
    }
  }

  async create() {
    try {
      const thread = await api.post('/api/threads', { title: 'New thread' });
      await this.load();
      await this.app.open(thread.id, { push: true });
      this.renaming = thread.id;
      this.render();
    } catch (err) { report(err, 'Creating a thread'); }
  }
}
