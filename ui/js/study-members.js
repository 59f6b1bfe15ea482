// Who has a study (a section of the study view, for its owner and administrators), as the
// thread's share dialog does it: who has it and as what (`GET …/members`), adding a person by
// account name as viewer or editor (`POST …/members`), changing a role (`PATCH
// …/members/{name}`) and removing them (`DELETE`). Every change answers with the new list,
// drawn as is; a refusal (an unknown name, someone already a member…) is said in the section.

import { api, auth } from './api.js';
import { $, h, icon, replaceChildren } from './dom.js';

const ROLE_WORDS = {
  viewer: 'read this study and its pseudonymised data',
  editor: 'also change, open and close this study',
};

export class StudyMembers {
  constructor(studyId) {
    this.studyId = studyId;
    this.list = $('#study-members');
    this.nameInput = $('#study-member-name');
    this.members = [];
    this.busy = false;
    $('#study-member-form').addEventListener('submit', (event) => {
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
  }

  path(rest = '') { return `/api/studies/${encodeURIComponent(this.studyId)}/members${rest}`; }

  /** Shows the section when the caller owns the study and accounts exist; loads the list. */
  async start(study) {
    const section = $('#study-members-section');
    section.hidden = !(auth.accounts && study.may?.share);
    if (section.hidden) return;
    try {
      this.render(await api.get(this.path()));
    } catch (err) {
      this.say(`The list could not be loaded: ${err.message}`, 'error');
    }
  }

  /** `members`: the owner first, then editors and viewers (as the server orders them). */
  render(members) {
    this.members = members;
    const others = members.filter((m) => m.role !== 'owner').length;
    $('#study-members-count').textContent = others ? `shared with ${others}` : 'not shared';
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
      h('button', { type: 'button', class: 'icon-button member-remove', 'aria-label': `Remove ${member.name} from this study`, title: `Remove ${member.name} from this study` }, icon('close')));
  }

  /** Runs one change; draws the list it answers and says `done`, or says why it failed. */
  async change(request, done) {
    if (this.busy) return false;
    this.busy = true;
    try {
      this.render(await request());
      this.say(done, 'done');
      return true;
    } catch (err) {
      this.render(this.members); // a refused role goes back
      this.say(err.message.charAt(0).toUpperCase() + err.message.slice(1), 'error');
      return false;
    } finally {
      this.busy = false;
    }
  }

  async add() {
    const name = this.nameInput.value.trim();
    if (!name) return;
    const role = $('#study-member-role').value;
    const ok = await this.change(() => api.post(this.path(), { name, role }), `${name} can now ${ROLE_WORDS[role]}.`);
    if (ok) this.nameInput.value = '';
    this.nameInput.focus();
  }

  async setRole(name, role) {
    await this.change(() => api.patch(this.path(`/${encodeURIComponent(name)}`), { role }), `${name} can now ${ROLE_WORDS[role]}.`);
    this.list.querySelector(`li[data-member="${CSS.escape(name)}"] select.member-role`)?.focus();
  }

  async remove(name) {
    const ok = await this.change(() => api.del(this.path(`/${encodeURIComponent(name)}`)), `${name} no longer has this study.`);
    if (ok) this.nameInput.focus();
  }

  /** What the last change did (`kind` `done`), or why it failed (`error`); '' clears it. */
  say(text, kind = '') {
    const error = $('#study-members-error');
    $('#study-members-status').textContent = kind === 'done' ? text : '';
    error.textContent = kind === 'error' ? text : '';
    error.hidden = kind !== 'error';
  }
}
