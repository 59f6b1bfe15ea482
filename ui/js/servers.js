// The open thread's MCP servers (SPEC §13): which of the configured servers' tools its agent
// may use. A dialog lists every server `GET /api/mcp-servers` reports, with where it stands
// (ready, connecting, failed and why), and a checkbox for each; "All servers" means every
// configured one, also those added later (`mcp_servers: null`). Saving sends the choice with
// `PATCH /api/threads/{id}`; a refusal is said in the dialog. The button is there only when the
// server has MCP servers configured; a viewer sees the choice and cannot change it.

import { api, threadPath } from './api.js';
import { $, h, replaceChildren } from './dom.js';

const STATUS_WORDS = { ready: 'ready', connecting: 'connecting…', failed: 'failed' };

export class ServersDialog {
  constructor(app) {
    this.app = app;
    this.dialog = $('#servers-dialog');
    this.list = $('#servers-list');
    this.all = $('#servers-all');
    this.servers = [];
    this.threadId = null;
    this.busy = false;
    $('#servers-open').addEventListener('click', () => this.open());
    $('#servers-close').addEventListener('click', () => this.close());
    $('#servers-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
    this.all.addEventListener('change', () => this.drawAll());
    this.dialog.addEventListener('close', () => {
      if (document.activeElement === document.body || !document.activeElement) $('#servers-open').focus();
    });
  }

  /** Shows the button when the server has MCP servers configured. */
  async load() {
    try {
      this.servers = await api.get('/api/mcp-servers');
    } catch {
      this.servers = [];
    }
    $('#servers-open').hidden = this.servers.length === 0;
  }

  async open() {
    this.threadId = this.app.threadId;
    const thread = this.app.currentThread();
    $('#servers-heading').textContent = `Tools of other servers in “${this.app.threadTitle()}”`;
    this.say('');
    if (!this.dialog.open) this.dialog.showModal();
    try {
      this.servers = await api.get('/api/mcp-servers');
    } catch (err) {
      this.say(`The servers could not be loaded: ${err.message}`, 'error');
    }
    this.render(thread ? thread.mcp_servers : null);
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  /** `chosen`: the thread's `mcp_servers` (`null`: all of them). */
  render(chosen) {
    const readOnly = this.app.readOnly;
    this.all.checked = chosen == null;
    this.all.disabled = readOnly;
    replaceChildren(this.list, this.servers.map((server) => {
      const id = `server-${server.name}`;
      const box = h('input', {
        type: 'checkbox', id, class: 'server-choice', value: server.name,
        checked: chosen == null || chosen.includes(server.name),
      });
      const status = h('span', { class: `server-status ${server.status}` }, STATUS_WORDS[server.status] || server.status);
      const tools = server.tools.length === 1 ? '1 tool' : `${server.tools.length} tools`;
      const detail = server.error ? server.error : tools;
      return h('li', { class: 'server', dataset: { server: server.name, status: server.status } },
        box,
        h('label', { for: id, class: 'server-name' }, server.name),
        status,
        h('span', { class: 'server-detail' }, detail));
    }));
    if (this.servers.length === 0) {
      replaceChildren(this.list, h('li', { class: 'empty' }, 'No MCP servers are configured (HAICO_MCP_SERVERS).'));
    }
    $('#servers-save').hidden = readOnly;
    this.drawAll();
  }

  /** "All servers" checks every box and locks them; unchecked, each box is a choice. */
  drawAll() {
    for (const box of this.list.querySelectorAll('input.server-choice')) {
      if (this.all.checked) box.checked = true;
      box.disabled = this.all.checked || this.app.readOnly;
    }
  }

  /** The choice as the API takes it: `null` for all, else the checked names. */
  choice() {
    if (this.all.checked) return null;
    return [...this.list.querySelectorAll('input.server-choice')].filter((b) => b.checked).map((b) => b.value);
  }

  async save() {
    if (this.busy || this.app.readOnly) return;
    this.busy = true;
    const threadId = this.threadId;
    const chosen = this.choice();
    try {
      const thread = await api.patch(threadPath(threadId), { mcp_servers: chosen });
      const known = this.app.threads.threads.find((t) => t.id === thread.id);
      if (known) Object.assign(known, thread);
      if (threadId !== this.threadId) return;
      this.render(thread.mcp_servers);
      this.say(thread.mcp_servers == null
        ? 'Saved: the agent may use every server.'
        : thread.mcp_servers.length === 0
          ? 'Saved: the agent uses no other server’s tools.'
          : `Saved: the agent may use ${thread.mcp_servers.join(', ')}.`, 'done');
    } catch (err) {
      this.say(err.message.charAt(0).toUpperCase() + err.message.slice(1), 'error');
    } finally {
      this.busy = false;
    }
  }

  /** What the last save did (`kind` `done`), or why it failed (`error`); '' clears it. */
  say(text, kind = '') {
    const status = $('#servers-status');
    const error = $('#servers-error');
    status.textContent = kind === 'done' ? text : '';
    error.textContent = kind === 'error' ? text : '';
    error.hidden = kind !== 'error';
  }
}
