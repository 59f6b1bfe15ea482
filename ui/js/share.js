// Sharing the open thread (a dialog, for its owner and administrators): who has it and as
// what (`GET …/members`), sharing it with a person by account name as viewer or editor
// (`PUT …/members/{name}`), changing a role, and no longer sharing (`DELETE`). Every change
// answers with the new list, which is drawn as is; a refusal (an unknown name…) is said in the
// dialog.

import { api, auth, threadPath } from './api.js';
import { $, h, icon, replaceChildren } from './dom.js';

const ROLE_WORDS = { viewer: 'view', editor: 'view and change' };

export class ShareDialog {
  constructor(app) {
    this.app = app;
    this.dialog = $('#share-dialog');
    this.list = $('#share-members');
    this.nameInput = $('#share-name');
    this.threadId = null;
    this.members = [];
    this.busy = false;
    $('#share-open').addEventListener('click', () => this.open());
    $('#share-close').addEventListener('click', () => this.close());
    $('#share-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.add();
    });
    this.list.addEventListener('change', (event) => {
      const select = event.target.closest('select.member-role');
      if (select) this.setRole(select.closest('li[data-member]').dataset.member, select.value);
    });
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button.member-remove');
      if (button) this.remove(button.closest('li[data-member]').dataset.member);
    });
    this.dialog.addEventListener('close', () => {
      if (document.activeElement === document.body || !document.activeElement) $('#share-open').focus();
    });
  }

  path(rest = '') { return threadPath(this.threadId, `/members${rest}`); }

  async open() {
    this.threadId = this.app.threadId;
    $('#share-heading').textContent = `Share “${this.app.threadTitle()}”`;
    this.say('');
    this.nameInput.value = '';
    $('#share-role').value = 'viewer';
    this.members = [];
    $('#share-count').textContent = '';
    replaceChildren(this.list, h('li', { class: 'empty' }, 'Loading who has this thread…'));
    if (!this.dialog.open) this.dialog.showModal();
    this.nameInput.focus();
    try {
      this.render(await api.get(this.path()));
    } catch (err) {
      replaceChildren(this.list);
      this.say(`The list could not be loaded: ${err.message}`, 'error');
    }
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  /** `members`: the owner first, then editors and viewers (as the server orders them). */
  render(members) {
    this.members = members;
    const others = members.filter((m) => m.role !== 'owner').length;
    $('#share-count').textContent = others ? `shared with ${others}` : 'not shared';
    replaceChildren(this.list, members.map((m) => this.row(m)));
  }

  row(member) {
    const you = member.name === auth.me?.name;
    const name = h('span', { class: 'member-name' }, member.name, you ? h('span', { class: 'member-you' }, ' (you)') : null);
    if (member.role === 'owner') {
      return h('li', { class: 'member', dataset: { member: member.name, role: member.role } },
        name, h('span', { class: 'member-owner' }, 'owner'));
    }
    const select = h('select', { class: 'member-role', 'aria-label': `What ${member.name} may do` },
      h('option', { value: 'viewer', selected: member.role === 'viewer' }, 'Viewer'),
      h('option', { value: 'editor', selected: member.role === 'editor' }, 'Editor'));
    return h('li', { class: 'member', dataset: { member: member.name, role: member.role } },
      name, select,
      h('button', { type: 'button', class: 'icon-button member-remove', 'aria-label': `Stop sharing with ${member.name}`, title: `Stop sharing with ${member.name}` }, icon('close')));
  }

  /**
   * Runs one change; on success draws the list it answers and says `done`, on failure says
   * why. Resolves whether it succeeded.
   */
  async change(request, done) {
    if (this.busy) return false;
    this.busy = true;
    const threadId = this.threadId;
    try {
      const members = await request();
      if (threadId !== this.threadId) return false;
      this.render(members);
      this.say(done, 'done');
      return true;
    } catch (err) {
      if (threadId === this.threadId) this.render(this.members); // a refused role goes back
      this.say(err.message.charAt(0).toUpperCase() + err.message.slice(1), 'error');
      return false;
    } finally {
      this.busy = false;
    }
  }

  async add() {
    const name = this.nameInput.value.trim();
    if (!name) return;
    const role = $('#share-role').value;
    const ok = await this.change(
      () => api.put(this.path(`/${encodeURIComponent(name)}`), { role }),
      `${name} can now ${ROLE_WORDS[role]} this thread.`,
    );
    if (ok) this.nameInput.value = '';
    this.nameInput.focus();
  }

  async setRole(name, role) {
    await this.change(
      () => api.put(this.path(`/${encodeURIComponent(name)}`), { role }),
      `${name} can now ${ROLE_WORDS[role]} this thread.`,
    );
    // The row was drawn again: the keyboard stays on it (on its role as the server has it).
    this.list.querySelector(`li[data-member="${CSS.escape(name)}"] select.member-role`)?.focus();
  }

  async remove(name) {
    const ok = await this.change(
      () => api.del(this.path(`/${encodeURIComponent(name)}`)),
      `${name} no longer has this thread.`,
    );
    if (ok) this.nameInput.focus();
  }

  /** What the last change did (`kind` `done`), or why it failed (`error`); '' clears it. */
  say(text, kind = '') {
    const status = $('#share-status');
    const error = $('#share-error');
    status.textContent = kind === 'done' ? text : '';
    error.textContent = kind === 'error' ? text : '';
    error.hidden = kind !== 'error';
  }
}
