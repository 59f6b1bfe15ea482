// A study's data on its page: the live sessions table (read again every few seconds while the
// study is open and the page is looked at), the per-condition summary, the downloads (CSV and
// the JSON Lines export) and, per session, its replay.

import { api, report } from './api.js';
import { clock } from './countdown.js';
import { $, h, replaceChildren, toast } from './dom.js';
import { ReplayDialog } from './replay.js';

const POLL_MS = 5000;

/** The summary's measures worth a glance; the CSV and the export have them all. */
const SHOWN_MEASURES = [
  ['time_on_task_s', 'time on task (s)'],
  ['turns', 'turns'],
  ['tool_calls', 'tool calls'],
  ['participant_revisions', 'participant revisions'],
  ['agent_revisions', 'agent revisions'],
];

function number(value, digits = 1) {
  return value === null || value === undefined ? '–' : Number(value).toFixed(digits).replace(/\.0+$/, '');
}

export class StudyData {
  constructor(studyId) {
    this.studyId = studyId;
    this.replay = new ReplayDialog(studyId);
    this.timer = null;
  }

  path(rest) { return `/api/studies/${encodeURIComponent(this.studyId)}${rest}`; }

  /** Loads everything, then polls while `live()` says the study takes participants. */
  start(live) {
    $('#study-sessions-refresh').addEventListener('click', () => this.load());
    // The server names no file: the study's id tells the downloads of two studies apart.
    const base = `study-${this.studyId.replace(/[^\w-]+/g, '_')}`;
    $('#study-download-csv').addEventListener('click', () => this.download('/sessions.csv', `${base}-sessions.csv`, 'text/csv'));
    $('#study-download-export').addEventListener('click', () => this.download('/export', `${base}.haico-study.jsonl`, 'application/x-ndjson'));
    this.load();
    this.timer = setInterval(() => {
      if (live() && document.visibilityState === 'visible' && !this.replay.isOpen()) this.load();
    }, POLL_MS);
  }

  async load() {
    try {
      const [sessions, summary] = await Promise.all([api.get(this.path('/sessions')), api.get(this.path('/summary'))]);
      this.renderSessions(sessions);
      this.renderSummary(summary);
    } catch (err) {
      report(err, 'Loading the sessions');
    }
  }

  renderSessions(sessions) {
    $('#study-sessions-count').textContent = `${sessions.length}`;
    if (!sessions.length) {
      replaceChildren($('#study-session-rows'), h('tr', { class: 'empty-row' }, h('td', { colspan: 8, class: 'empty' }, 'No sessions yet: they appear here as participants open the link.')));
      return;
    }
    replaceChildren($('#study-session-rows'), sessions.map((s) => {
      const m = s.measures || {};
      const replay = s.thread_id
        ? h('button', { type: 'button', class: 'button small session-replay', dataset: { session: s.session } }, 'Replay')
        : null;
      replay?.addEventListener('click', () => this.replay.open(s.session));
      return h('tr', { dataset: { session: s.session, status: s.status, condition: s.condition || '' } },
        h('td', { class: 'session-ref' }, s.session),
        h('td', {}, s.condition || '–'),
        h('td', { class: 'session-status' }, s.status.replace('_', ' ')),
        h('td', {}, new Date(s.entered_at).toLocaleTimeString()),
        h('td', {}, m.time_on_task_s === undefined || m.time_on_task_s === null ? '–' : clock(m.time_on_task_s)),
        h('td', { class: 'session-turns' }, String(m.turns ?? 0)),
        h('td', {}, String(m.tool_calls ?? 0)),
        h('td', {}, replay));
    }));
  }

  renderSummary(summary) {
    const conditions = Object.entries(summary.conditions || {});
    const unassigned = Object.entries(summary.unassigned || {});
    const card = (key, title, flow, measures) => h('section', { class: 'summary-condition', dataset: { condition: key } },
      h('h4', {}, title),
      h('dl', {},
        Object.entries(flow).flatMap(([status, n]) => [h('dt', {}, status.replace('_', ' ')), h('dd', { dataset: { status } }, String(n))]),
        measures ? SHOWN_MEASURES.flatMap(([name, words]) => {
          const m = measures[name] || {};
          return [h('dt', {}, `${words}, mean (n)`), h('dd', { dataset: { measure: name } }, `${number(m.mean)} (${m.n ?? 0})`)];
        }) : []));
    replaceChildren($('#study-summary'),
      conditions.map(([key, c]) => card(key, key, c.flow || {}, c.measures)),
      unassigned.length ? card('unassigned', 'No condition (declined or not yet consented)', summary.unassigned, null) : null);
  }

  /** Downloads through the API (a plain link could not send the token), saved by its name. */
  async download(rest, fallback, type) {
    try {
      const response = await api.raw(this.path(rest));
      const blob = await response.blob();
      const named = /filename="?([^";]+)"?/i.exec(response.headers.get('content-disposition') || '');
      const name = named ? named[1] : fallback;
      const url = URL.createObjectURL(new Blob([blob], { type }));
      const link = h('a', { href: url, download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      toast(`Downloaded ${name}.`);
    } catch (err) { report(err, 'Downloading'); }
  }
}
