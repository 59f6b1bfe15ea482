// A study session's replay (a dialog): its timeline (`GET …/sessions/{ref}/timeline`: every
// message, tool call, revision and decision in time order) under a scrubber, played at 1×, 4×
// or 16× or stepped one event at a time. At each moment it shows the chat up to then and the
// workspace as it was (`GET /api/threads/{thread}/workspace?at={rev}`), only the panels the
// participant saw.
//
// Position p means "after the first p events"; it opens where the participant pressed Start
// (after the task's seed). Long pauses play as at most five seconds, so a participant who
// thought for ten minutes does not stall the replay.

import { api, report, threadPath } from './api.js';
import { clock } from './countdown.js';
import { $, h, replaceChildren } from './dom.js';
import { snapshotSections } from './snapshot.js';

const LONGEST_PAUSE_S = 5;

/** What one event was, in words. */
function describe(event) {
  switch (event.kind) {
    case 'message': return event.actor === 'participant' ? 'The participant wrote to the assistant.' : 'The assistant answered.';
    case 'step': return `The agent called ${event.tool}${event.success === false ? ' (it failed)' : ''}: ${event.action_and_reasoning || ''}`;
    case 'decision': return `A suggestion was decided (revision ${event.rev}): ${event.summary}`;
    case 'revision': return `${{ participant: 'The participant', agent: 'The agent', seed: 'The task' }[event.actor] || 'Someone'} changed the ${(event.panels || []).join(', ')} (revision ${event.rev}): ${event.summary}`;
    default: return event.kind;
  }
}

export class ReplayDialog {
  constructor(studyId) {
    this.studyId = studyId;
    this.dialog = $('#replay-dialog');
    this.scrubber = $('#replay-scrubber');
    this.timeline = null;
    this.position = 0;
    this.speed = 1;
    this.playing = false;
    this.timer = null;
    this.workspaces = new Map(); // rev → Promise of the workspace then
    this.drawn = 0; // which draw is the latest, so an older fetch never lands over a newer one
    $('#replay-close').addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => this.pause());
    this.scrubber.addEventListener('input', () => { this.pause(); this.go(Number(this.scrubber.value)); });
    $('#replay-back').addEventListener('click', () => { this.pause(); this.go(this.position - 1); });
    $('#replay-forward').addEventListener('click', () => { this.pause(); this.go(this.position + 1); });
    $('#replay-play').addEventListener('click', () => (this.playing ? this.pause() : this.play()));
    for (const button of document.querySelectorAll('#replay-speed [data-speed]')) {
      button.addEventListener('click', () => this.setSpeed(Number(button.dataset.speed)));
    }
  }

  isOpen() { return this.dialog.open; }

  async open(session) {
    this.pause();
    this.workspaces.clear();
    try {
      this.timeline = await api.get(`/api/studies/${encodeURIComponent(this.studyId)}/sessions/${encodeURIComponent(session)}/timeline`);
    } catch (err) {
      report(err, 'Loading the session’s timeline');
      return;
    }
    const t = this.timeline;
    const events = t.events || [];
    $('#replay-heading').textContent = `Replay of session ${t.session}`;
    $('#replay-meta').textContent = `${t.condition ?? 'no condition'} · ${t.status} · ${events.length} events`;
    this.dialog.dataset.session = t.session;
    this.scrubber.max = String(events.length);
    $('#replay-body').classList.toggle('plain-chat', !(t.panels || []).length);
    $('#replay-workspace').hidden = !(t.panels || []).length;
    const seeded = events.findIndex((e) => e.actor !== 'seed');
    if (!this.dialog.open) this.dialog.showModal();
    await this.go(seeded < 0 ? events.length : seeded);
  }

  /** Shows the session as it was after `position` events. */
  async go(position) {
    const events = this.timeline?.events || [];
    this.position = Math.max(0, Math.min(events.length, position));
    this.scrubber.value = String(this.position);
    this.scrubber.setAttribute('aria-valuetext', `${this.position} of ${events.length} events`);
    const shown = events.slice(0, this.position);
    const last = shown[shown.length - 1];
    $('#replay-time').textContent = !last ? 'start' : last.t_s < 0 ? 'before Start' : clock(last.t_s);
    $('#replay-event').textContent = last ? describe(last) : 'The session before anything happened.';
    $('#replay-back').disabled = this.position === 0;
    $('#replay-forward').disabled = this.position === events.length;
    this.drawChat(shown);
    const revision = [...shown].reverse().find((e) => e.rev !== undefined && e.rev !== null);
    await this.drawWorkspace(revision ? revision.rev : 0, last && last.rev !== undefined ? new Set(last.panels || []) : new Set(), this.position);
  }

  drawChat(shown) {
    const chat = $('#replay-chat');
    const items = shown.filter((e) => e.kind === 'message' || e.kind === 'step').map((e) => (e.kind === 'message'
      ? h('div', { class: 'replay-msg', dataset: { actor: e.actor, turn: e.turn ?? '' } }, e.content)
      : h('div', { class: `replay-step${e.success === false ? ' failed' : ''}`, dataset: { turn: e.turn ?? '' } }, `${e.tool}: ${e.action_and_reasoning || ''}`)));
    replaceChildren(chat, items.length ? items : h('p', { class: 'empty' }, 'No messages yet at this moment.'));
    chat.scrollTop = chat.scrollHeight;
  }

  /** Draws the workspace at `rev`; `data-position` says which moment it shows once drawn. */
  async drawWorkspace(rev, changed, position) {
    const panels = this.timeline.panels || [];
    const area = $('#replay-workspace');
    if (!panels.length || !this.timeline.thread_id) {
      area.dataset.position = String(position);
      return;
    }
    const draw = ++this.drawn;
    if (!this.workspaces.has(rev)) {
      const loading = api.get(threadPath(this.timeline.thread_id, `/workspace?at=${rev}&html=true`));
      loading.catch(() => this.workspaces.delete(rev));
      this.workspaces.set(rev, loading);
    }
    let ws;
    try {
      ws = await this.workspaces.get(rev);
    } catch (err) {
      report(err, `Loading the workspace at revision ${rev}`);
      return;
    }
    if (draw !== this.drawn) return;
    area.dataset.rev = String(rev);
    area.dataset.position = String(position);
    replaceChildren(area, snapshotSections(ws, { panels, changed }));
  }

  setSpeed(speed) {
    this.speed = speed;
    for (const button of document.querySelectorAll('#replay-speed [data-speed]')) {
      button.setAttribute('aria-pressed', String(Number(button.dataset.speed) === speed));
    }
    if (this.playing) { this.pause(); this.play(); }
  }

  play() {
    const events = this.timeline?.events || [];
    if (this.position >= events.length) this.go(0);
    this.playing = true;
    $('#replay-play').setAttribute('aria-pressed', 'true');
    $('#replay-play').textContent = 'Pause';
    this.schedule();
  }

  /** Waits as long as the session did before its next event (scaled by the speed), then steps. */
  schedule() {
    const events = this.timeline?.events || [];
    if (!this.playing) return;
    if (this.position >= events.length) { this.pause(); return; }
    const before = this.position > 0 ? events[this.position - 1].t_s : events[0].t_s;
    const gap = Math.min(LONGEST_PAUSE_S, Math.max(0, events[this.position].t_s - before));
    this.timer = setTimeout(async () => {
      await this.go(this.position + 1);
      this.schedule();
    }, Math.max(40, (gap * 1000) / this.speed));
  }

  pause() {
    this.playing = false;
    clearTimeout(this.timer);
    $('#replay-play').setAttribute('aria-pressed', 'false');
    $('#replay-play').textContent = 'Play';
  }
}
