// The chat: streamed answers, a stop button, and under each answer the collapsible
// "Internal reasoning" trace (each tool call's action_and_reasoning, tool and outcome).
//
// Everything shown comes from the thread's events stream, so every tab on the thread watches a
// turn the same way; the tab that sends a message only adds its text until the turn starts.

import { ApiError, api, auth, report, threadPath } from './api.js';
import { chartView, isChart } from './artifacts.js';
import { $, h, icon, replaceChildren, setBanner, setSafeHtml, toast } from './dom.js';

/**
 * How a tool call went: 'ok', 'failed', 'unchanged' (it ran but changed nothing: its summary
 * starts with "nothing changed: ", e.g. every target locked), or 'partial' (it ran, but skipped
 * something).
 */
function outcomeOf(result) {
  if (!result || result.success === false) return 'failed';
  const summary = result.summary || '';
  if (summary.startsWith('nothing changed: ')) return 'unchanged';
  if (/skipped/i.test(summary)) return 'partial';
  return 'ok';
}

const OUTCOME_MARK = { ok: '✓', failed: '✕', partial: '!', unchanged: '–' };
const OUTCOME_WORDS = { ok: 'done', failed: 'failed', partial: 'partly done', unchanged: 'nothing changed' };

export class ChatPanel {
  constructor(app) {
    this.app = app;
    this.messages = $('#messages');
    this.input = $('#chat-input');
    this.turns = new Map();
    this.running = null; // turn_index of the turn in progress
    this.pending = null; // the view of a message sent but not yet started
    this.approvals = new Map(); // call_id → the request's view, while it is shown
    $('#chat-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.send();
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
      if (event.key === 'Escape' && this.running !== null) this.stop();
    });
    $('#chat-stop').addEventListener('click', () => this.stop());
    $('#chat-selection-clear').addEventListener('click', () => this.setSelection(null, null));
  }

  /**
   * Quotes a selected passage of the document above the input for the next message (`text`
   * null: none). `selection` is what the server checks (`{text, start, end, version}`), or
   * null when the passage could not be found in the Markdown as written; then the quote goes
   * in the message itself.
   */
  setSelection(text, selection) {
    this.quoted = text ? { text, selection } : null;
    $('#chat-selection').hidden = !text;
    $('#chat-selection-text').textContent = text || '';
    if (text) this.input.focus();
  }

  /** The body of `POST …/chat` for `text`, with the quoted passage when there is one. */
  chatBody(text) {
    const quoted = this.quoted;
    if (!quoted) return { message: text };
    if (quoted.selection) return { message: text, selection: quoted.selection };
    const lines = quoted.text.split('\n').map((line) => `> ${line}`).join('\n');
    return { message: `About this passage of the document:\n\n${lines}\n\n${text}` };
  }

  /** Rebuilds the conversation from `GET …/messages` (on open and after a reconnect). */
  async load() {
    const turns = await api.get(threadPath(this.app.threadId, '/messages?html=true'));
    const nearBottom = this.isNearBottom();
    const pending = this.pending;
    this.turns.clear();
    this.messages.replaceChildren();
    this.running = null;
    for (const turn of turns) {
      const view = this.turnView(turn.turn_index);
      const user = turn.messages.find((m) => m.role === 'user');
      if (user) this.setUser(view, user.content, user.by);
      for (const call of turn.steps) this.addCall(view, call); // `steps`: the API's name for tool calls
      for (const chart of this.app.artifacts.chartsOfTurn(turn.turn_index)) this.addChart(view, chart);
      const answer = turn.messages.filter((m) => m.role === 'assistant').pop();
      if (answer) this.setAnswerHtml(view, answer.html ?? '', answer.content);
      if (turn.status === 'running') this.markRunning(turn.turn_index);
      else if (turn.status === 'failed' && turn.error) this.addError(view, turn.error);
      else if (turn.status === 'cancelled') this.addError(view, 'Stopped before it finished.', true);
      if (turn.status !== 'running') this.offerUndo(view);
      this.setUsage(view, turn.usage);
    }
    if (pending) this.messages.append(pending.el);
    this.approvals.clear();
    await this.loadApprovals();
    this.emptyState();
    this.updateControls();
    if (nearBottom) this.scrollToEnd();
  }

  emptyState() {
    const empty = this.messages.querySelector('.chat-empty');
    if (this.messages.querySelector('.turn')) {
      empty?.remove();
    } else if (!empty) {
      const text = this.app.mode === 'participant'
        ? 'Write to the assistant to begin.'
        : 'Tell the agent what you are working on. It keeps the objective, plan, document and preferences beside this chat up to date, and you can edit them too.';
      this.messages.append(h('p', { class: 'chat-empty' }, text));
    }
  }

  turnView(turnIndex) {
    let view = this.turns.get(turnIndex);
    if (view) return view;
    const el = h('div', { class: 'turn', dataset: { turnIndex } });
    view = { el, index: turnIndex, calls: 0 };
    this.turns.set(turnIndex, view);
    this.messages.querySelector('.chat-empty')?.remove();
    // Keep turns in order, even if one arrives late.
    const later = [...this.messages.querySelectorAll('.turn[data-turn-index]')].find((t) => Number(t.dataset.turnIndex) > turnIndex);
    const pendingEl = this.pending && this.pending.el.parentNode === this.messages ? this.pending.el : null;
    this.messages.insertBefore(el, later || pendingEl);
    return view;
  }

  /** The person's message; `by` names who wrote it (when the server has accounts). */
  setUser(view, text, by = null) {
    if (!view.user) {
      view.user = h('div', { class: 'msg user' });
      view.el.prepend(view.user);
    }
    view.user.textContent = text;
    if (by && !view.by) {
      view.by = h('div', { class: 'msg-by' }, by);
      view.el.insertBefore(view.by, view.user);
    }
  }

  reasoning(view) {
    if (!view.reasoning) {
      view.summary = h('summary', {}, 'Internal reasoning');
      view.callList = h('ol', {});
      view.reasoning = h('details', { class: 'reasoning' }, view.summary, view.callList);
      view.summary.addEventListener('click', () => { view.touched = true; });
      const before = view.answer || view.error || view.actions || null;
      view.el.insertBefore(view.reasoning, before);
    }
    return view.reasoning;
  }

  addCall(view, call) {
    this.reasoning(view);
    const outcome = outcomeOf(call.result);
    const result = call.result || {};
    const detail = result.success === false ? result.error : result.summary;
    view.calls += 1;
    view.callList.append(h('li', { class: `call ${outcome}` },
      h('span', { class: `call-outcome ${outcome}`, title: OUTCOME_WORDS[outcome], 'aria-label': OUTCOME_WORDS[outcome] }, OUTCOME_MARK[outcome]),
      h('span', { class: 'call-reason' }, call.action_and_reasoning || '(no reason given)', ' ', h('span', { class: 'call-tool' }, call.tool)),
      detail ? h('span', { class: 'call-result' }, detail) : null));
    const failed = view.callList.querySelectorAll('.call.failed').length;
    view.summary.textContent = `Internal reasoning · ${view.calls} tool call${view.calls === 1 ? '' : 's'}${failed ? ` · ${failed} failed` : ''}`;
    return outcome;
  }

  /** The calls waiting for the person's approval (`GET …/approvals`), after a (re)load. */
  async loadApprovals() {
    if (this.app.mode === 'participant') return; // not a participant's route
    try {
      const waiting = await api.get(threadPath(this.app.threadId, '/approvals'));
      for (const request of waiting) this.addApproval(this.turnView(request.turn_index), request);
    } catch (err) {
      report(err, 'Loading the calls waiting for approval');
    }
  }

  /**
   * A call of another MCP server waiting for the person: the tool, its arguments and the
   * agent's reason (all from outside this page, so all set as text), with Approve / Decline.
   */
  addApproval(view, request) {
    if (this.approvals.has(request.call_id)) return;
    this.reasoning(view);
    const args = JSON.stringify(request.arguments ?? {}, null, 2);
    const state = h('span', { class: 'approval-state', role: 'status' }, 'Waiting for your approval');
    const approve = h('button', { type: 'button', class: 'button small primary approval-approve' }, 'Approve');
    const decline = h('button', { type: 'button', class: 'button small approval-decline' }, 'Decline');
    const actions = h('div', { class: 'approval-actions' }, approve, decline);
    const el = h('li', { class: 'call approval waiting', dataset: { callId: request.call_id } },
      h('span', { class: 'call-outcome partial', title: 'waiting', 'aria-label': 'waiting' }, '?'),
      h('span', { class: 'call-reason' }, request.action_and_reasoning || '(no reason given)', ' ', h('span', { class: 'call-tool' }, request.tool)),
      h('pre', { class: 'approval-arguments' }, args),
      h('div', { class: 'approval-bar' }, state, actions));
    const item = { el, state, actions };
    approve.addEventListener('click', () => this.decide(request.call_id, true, item));
    decline.addEventListener('click', () => this.decide(request.call_id, false, item));
    this.approvals.set(request.call_id, item);
    view.callList.append(el);
    view.reasoning.open = true;
  }

  /** `POST …/approvals/{call_id}`; the `approval` event that follows updates every tab. */
  async decide(callId, approve, item) {
    for (const button of item.actions.querySelectorAll('button')) button.disabled = true;
    try {
      await api.post(threadPath(this.app.threadId, `/approvals/${encodeURIComponent(callId)}`), { approve });
      this.settleApproval(callId, approve ? 'approved' : 'declined');
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) this.settleApproval(callId, 'gone');
      else {
        for (const button of item.actions.querySelectorAll('button')) button.disabled = false;
        report(err, approve ? 'Approving the call' : 'Declining the call');
      }
    }
  }

  /** Shows how a request ended (here or in another tab) in place of its buttons. */
  settleApproval(callId, status) {
    const item = this.approvals.get(callId);
    if (!item) return;
    const words = {
      approved: 'Approved',
      declined: 'Declined',
      timed_out: 'Declined: no answer in time',
      cancelled: 'Not made: the turn was stopped',
      gone: 'Already decided',
    };
    item.el.classList.remove('waiting');
    item.el.classList.add(status === 'approved' ? 'ok' : 'failed');
    item.state.textContent = words[status] || status;
    item.actions.remove();
    this.approvals.delete(callId);
  }

  /**
   * What the turn cost, under it: model calls, prompt tokens and the share the provider took
   * from its cache, tokens written, and how long the first answer took to start. Counts the
   * provider did not report are left out rather than shown as zero.
   */
  setUsage(view, usage) {
    if (!usage || !usage.model_calls) return;
    const n = (x) => Number(x).toLocaleString('en');
    const parts = [`${n(usage.model_calls)} model call${usage.model_calls === 1 ? '' : 's'}`];
    if (usage.prompt_tokens != null) {
      const cached = usage.cached_tokens != null && usage.prompt_tokens > 0
        ? `, ${Math.round((100 * usage.cached_tokens) / usage.prompt_tokens)}% cached` : '';
      parts.push(`${n(usage.prompt_tokens)} prompt tokens${cached}`);
    }
    if (usage.completion_tokens != null) parts.push(`${n(usage.completion_tokens)} written`);
    const first = usage.calls?.[0]?.first_token_ms ?? usage.first_token_ms;
    if (first != null) parts.push(`first token after ${(first / 1000).toFixed(1)} s`);
    const text = parts.join(' · ');
    if (!view.usage) {
      view.usage = h('div', { class: 'turn-usage' });
      view.el.insertBefore(view.usage, view.actions || null);
    }
    view.usage.textContent = text;
    view.usage.title = (usage.calls || []).map((c, i) => `call ${i + 1}: ${c.prompt_tokens ?? '?'} prompt (${c.cached_tokens ?? '?'} cached), ${c.completion_tokens ?? '?'} written, first token ${c.first_token_ms ?? '?'} ms`).join('\n');
  }

  answerContent(view) {
    if (!view.answer) {
      view.content = h('div', { class: 'msg-content' });
      view.answer = h('div', { class: 'msg assistant' }, view.content);
      view.el.insertBefore(view.answer, view.error || view.actions || null);
    }
    return view.content;
  }

  setAnswerHtml(view, html, text) {
    const content = this.answerContent(view);
    content.classList.remove('streaming');
    content.classList.add('markdown');
    if (html) setSafeHtml(content, html);
    else content.textContent = text;
  }

  addChart(view, artifact) {
    const id = artifact.artifact_id ?? artifact.id;
    if (view.el.querySelector(`.chart[data-artifact-id="${id}"]`)) return;
    view.el.insertBefore(chartView(this.app.threadId, artifact), view.answer || view.error || view.actions || null);
  }

  addError(view, message, cancelled = false) {
    view.error?.remove();
    view.error = h('div', { class: `msg error${cancelled ? ' cancelled' : ''}`, role: 'alert' }, message);
    view.el.insertBefore(view.error, view.actions || null);
  }

  /**
   * Under a finished turn whose tool calls may have changed the workspace: "Undo this turn".
   * (A turn without a successful call changed nothing; the server would say so too.)
   */
  offerUndo(view) {
    if (this.app.mode === 'participant') return; // a participant's turns stay as they were made
    if (view.actions || !view.callList || !view.callList.querySelector('.call:not(.failed)')) return;
    const button = h('button', { type: 'button', class: 'button small turn-undo', dataset: { turnIndex: view.index } }, icon('undo'), 'Undo this turn');
    button.addEventListener('click', () => this.undo(view, button));
    view.undoMessage = h('div', { class: 'undo-message', role: 'status', hidden: true });
    view.actions = h('div', { class: 'turn-actions' }, button, view.undoMessage);
    view.el.append(view.actions);
  }

  /** `POST …/turns/{n}/revert`; the panels re-sync from the `workspace` events it sends. */
  async undo(view, button) {
    button.disabled = true;
    const message = view.undoMessage;
    const say = (kind, ...content) => {
      message.dataset.kind = kind;
      message.setAttribute('role', kind === 'done' ? 'status' : 'alert');
      replaceChildren(message, ...content);
      message.hidden = false;
    };
    try {
      const result = await api.post(threadPath(this.app.threadId, `/turns/${view.index}/revert`));
      button.textContent = 'Undone';
      button.dataset.state = 'undone';
      say('done', `Undone: what this turn changed is back as it was before it (revision ${result.rev}). The conversation stays; the history keeps both.`);
    } catch (err) {
      button.disabled = false;
      if (!(err instanceof ApiError && err.status === 409)) {
        report(err, 'Undoing the turn');
        return;
      }
      const conflicts = (err.body && err.body.conflicts) || [];
      if (!conflicts.length) {
        say('nothing', `Nothing to undo: ${err.message}.`);
        return;
      }
      const open = h('button', { type: 'button', class: 'button small undo-open-history' }, 'Open the history');
      open.addEventListener('click', () => this.app.history.open(conflicts[0].rev));
      say('conflict',
        h('p', {}, `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}. Nothing was changed.`),
        h('ul', { class: 'undo-conflicts', 'aria-label': 'Later changes in the way' }, conflicts.map((c) => h('li', { dataset: { panel: c.panel, rev: c.rev } },
          `The ${c.panel}, changed again in revision ${c.rev}`))),
        open);
    }
  }

  markRunning(turnIndex) {
    this.running = turnIndex;
    const view = this.turnView(turnIndex);
    if (!view.thinking) {
      view.thinking = h('div', { class: 'thinking' }, 'The agent is working…');
      view.el.append(view.thinking);
    }
    this.updateControls();
  }

  /** Send and Stop follow the turn in progress; a viewer has neither, only the conversation. */
  updateControls() {
    const busy = this.running !== null || this.pending !== null;
    const readOnly = this.app.readOnly;
    $('#chat-stop').hidden = !busy || readOnly;
    $('#chat-send').disabled = busy || readOnly;
    this.input.disabled = readOnly;
    this.input.placeholder = readOnly
      ? this.app.closedChatText || 'Only its owner and editors can write to the agent in this thread.'
      : `${this.app.mode === 'participant' ? 'Write to the assistant' : 'Ask the agent'}… (Enter sends, Shift+Enter adds a line)`;
    $('#chat-state').textContent = busy ? 'working…' : '';
  }

  isNearBottom() {
    const m = this.messages;
    return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
  }

  scrollToEnd() {
    this.messages.scrollTop = this.messages.scrollHeight;
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.pending || this.running !== null || this.app.readOnly) return;
    const el = h('div', { class: 'turn pending' }, h('div', { class: 'msg user' }, text), h('div', { class: 'thinking' }, 'Sending…'));
    this.pending = { el, text };
    this.messages.querySelector('.chat-empty')?.remove();
    this.messages.append(el);
    this.scrollToEnd();
    this.input.value = '';
    this.updateControls();
    let response;
    try {
      response = await api.stream(threadPath(this.app.threadId, '/chat'), this.chatBody(text));
      this.setSelection(null, null);
    } catch (err) {
      // Not accepted: nothing ran. Give the text back.
      el.remove();
      this.pending = null;
      this.input.value = text;
      this.updateControls();
      if (err instanceof ApiError && (err.status === 422 || err.status === 400) && this.quoted) {
        toast(`${err.message} Select the passage again, or remove the quote.`, 'warn');
      } else if (err instanceof ApiError && err.status === 409) {
        toast('The agent is still working on this thread. Wait for it to finish, or press Stop.', 'warn');
      } else if (err instanceof ApiError && (err.status === 0 || err.status === 403)) {
        report(err, 'Sending the message');
      } else {
        toast(`The message could not be sent: ${err.message}`, 'bad');
      }
      this.emptyState();
      return;
    }
    // Accepted: the turn runs on the server whatever happens to this response. It is drawn
    // from the events stream; this copy is read to its end so the request completes normally.
    try {
      const reader = response.body.getReader();
      while (!(await reader.read()).done) { /* drain */ }
    } catch {
      // This copy broke (e.g. the server restarted); the events stream catches up on its own.
    }
    if (this.pending && this.pending.el === el) {
      // The turn ended without this tab seeing it start (its events stream was down): draw
      // it from the stored conversation instead.
      this.pending = null;
      el.remove();
      this.load().catch((err) => report(err, 'Loading the conversation'));
    }
  }


  async stop() {
    try {
      await api.post(threadPath(this.app.threadId, '/cancel'));
    } catch (err) { report(err, 'Stopping the turn'); }
  }

  /** One event of the thread's stream. */
  onEvent(name, data) {
    const nearBottom = this.isNearBottom();
    const current = this.running !== null ? this.turns.get(this.running) : null;
    switch (name) {
      case 'turn': {
        const view = this.turnView(data.turn_index);
        if (this.pending) {
          this.setUser(view, this.pending.text, auth.accounts ? auth.me?.name : null);
          this.pending.el.remove();
          this.pending = null;
        } else if (!view.user) {
          // Started from another tab or client: fetch its message.
          this.fillUser(view);
        }
        this.markRunning(data.turn_index);
        break;
      }
      case 'token': {
        if (!current) break;
        const content = this.answerContent(current);
        content.classList.add('streaming');
        content.append(data.text || '');
        break;
      }
      case 'step': { // the events stream's name for one tool call
        const view = this.turnView(data.turn_index ?? this.running);
        const outcome = this.addCall(view, data);
        if (!view.touched) view.reasoning.open = true;
        if (/locked/i.test(JSON.stringify(data.result || {})) && outcome !== 'ok') {
          toast('The agent tried to change a locked preference. It was left as you set it.', 'warn');
        }
        break;
      }
      case 'approval': { // a call waiting for the person, or how it was decided
        if (data.status === 'waiting') this.addApproval(this.turnView(data.turn_index ?? this.running), data);
        else this.settleApproval(data.call_id, data.status);
        break;
      }
      case 'artifact': {
        if (isChart(data)) this.addChart(this.turnView(data.turn_index ?? this.running), data);
        break;
      }
      case 'message': {
        const view = this.turnView(data.turn_index ?? this.running);
        const content = this.answerContent(view);
        content.classList.remove('streaming');
        content.textContent = data.content || '';
        this.rendered(data.turn_index ?? view.index, data.content || '')
          .then((html) => this.setAnswerHtml(view, html, data.content))
          .catch(() => {});
        break;
      }
      case 'error': {
        const view = data.turn_index !== undefined ? this.turnView(data.turn_index)
          : current || (this.turns.size ? [...this.turns.values()].pop() : null);
        const message = data.message || 'The turn failed.';
        if (view) this.addError(view, message, /cancel/i.test(message));
        if (/not configured|no provider|HAICO_LLM/i.test(message)) setBanner('model', message);
        break;
      }
      case 'done': {
        const view = this.turns.get(data.turn_index) || current;
        if (view) {
          view.thinking?.remove();
          view.thinking = null;
          view.content?.classList.remove('streaming');
          if (view.reasoning && !view.touched) view.reasoning.open = false;
          if (data.status === 'cancelled' && !view.error) this.addError(view, 'Stopped before it finished.', true);
          this.offerUndo(view);
          this.setUsage(view, data.usage);
        }
        this.running = null;
        this.updateControls();
        break;
      }
      default:
        break;
    }
    if (nearBottom) this.scrollToEnd();
  }

  /**
   * The answer's HTML: from `POST /api/markdown`, or, for a participant (who may not call it),
   * from its own thread's `GET …/messages?html=true`.
   */
  async rendered(turnIndex, markdown) {
    if (this.app.mode !== 'participant') return (await api.post('/api/markdown', { markdown })).html;
    const turns = await api.get(threadPath(this.app.threadId, '/messages?html=true'));
    const answer = turns.find((t) => t.turn_index === turnIndex)?.messages.filter((m) => m.role === 'assistant').pop();
    if (!answer || answer.html === undefined) throw new Error('no rendered answer yet');
    return answer.html;
  }

  async fillUser(view) {
    try {
      const turns = await api.get(threadPath(this.app.threadId, '/messages'));
      const turn = turns.find((t) => t.turn_index === view.index);
      const user = turn && turn.messages.find((m) => m.role === 'user');
      if (user) this.setUser(view, user.content, user.by);
    } catch { /* the next re-sync fills it */ }
  }

  clear() {
    this.turns.clear();
    this.approvals.clear();
    this.running = null;
    this.pending = null;
    replaceChildren(this.messages);
    this.updateControls();
  }
}
