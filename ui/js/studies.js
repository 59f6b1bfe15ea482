// The researcher's Studies page (issue 42): `/studies` lists the caller's studies (and those
// shared with them, marked with their role) with their status and counts and designs a new
// one (a JSON editor with inline validation); `/studies/{id}` is one study (study-view.js).

import { api, report } from './api.js';
import { DesignEditor } from './design-editor.js';
import { $, h, replaceChildren, setBanner } from './dom.js';
import { StudyView } from './study-view.js';

/** A new study's starting design: valid as it is, two conditions to compare. */
const TEMPLATE = {
  title: 'Workspace vs. chat',
  task: {
    title: 'Plan a dinner',
    instructions: 'Plan a dinner for four with the assistant.\n\nWhen you are happy with the plan, press **Finish**.',
    seed: { objective: 'A dinner for four' },
  },
  consent: { text: 'This is a study of working with an AI assistant. Taking part is voluntary; you may stop at any time.', required: true },
  entry: { participant_param: 'PROLIFIC_PID', require_participant_id: false, params: ['STUDY_ID', 'SESSION_ID'], keep_params: ['STUDY_ID'] },
  assignment: { method: 'balanced' },
  limits: { time_limit_s: 900, warn_before_s: 120, min_turns: 1 },
  completion: { completed: { code: 'DONE1', redirect_url: 'https://app.prolific.com/submissions/complete?cc={code}' }, timed_out: { code: 'TIME1' }, no_consent: { code: 'NOCON1' } },
  conditions: [
    { key: 'workspace', label: 'Workspace', weight: 1, panels: ['objective', 'document', 'plan', 'preferences', 'artifacts'], tools: '*' },
    { key: 'chat', label: 'Plain chat', weight: 1, panels: [], tools: [] },
  ],
};

/** Sessions counted by status, in words: "3 completed, 1 active". */
export function statusCounts(byStatus) {
  const parts = Object.entries(byStatus || {}).filter(([, n]) => n > 0).map(([status, n]) => `${n} ${status.replace('_', ' ')}`);
  return parts.length ? parts.join(', ') : 'none yet';
}

export class StudiesPage {
  async start() {
    $('#studies-page').hidden = false;
    const match = location.pathname.match(/^\/studies\/([^/]+)\/?$/);
    if (match) {
      document.title = 'Study · haico';
      await new StudyView(decodeURIComponent(match[1])).start();
      return;
    }
    document.title = 'Studies · haico';
    $('#thread-heading').textContent = 'Studies';
    $('#studies-list-view').hidden = false;
    this.editor = new DesignEditor('#study-new-design', '#study-new-error');
    $('#study-new').addEventListener('click', () => this.openCreate());
    $('#study-create-cancel').addEventListener('click', () => { $('#study-create').hidden = true; });
    $('#study-create-save').addEventListener('click', () => this.create());
    await this.load();
  }

  async load() {
    let studies;
    try {
      studies = await api.get('/api/studies');
    } catch (err) {
      report(err, 'Loading the studies');
      return;
    }
    $('#studies-empty').hidden = studies.length > 0;
    $('#studies-table').hidden = studies.length === 0;
    replaceChildren($('#studies-rows'), studies.map((study) => {
      const total = Object.values(study.counts?.by_status || {}).reduce((a, b) => a + b, 0);
      return h('tr', { dataset: { studyId: study.id, status: study.status } },
        h('td', {}, h('a', { class: 'study-row-link', href: `/studies/${encodeURIComponent(study.id)}` }, study.title),
          study.role && study.role !== 'owner' ? h('span', { class: 'panel-meta study-role' }, ` ${study.role} · ${study.owner ?? ''}`) : null),
        h('td', {}, h('span', { class: 'study-status', dataset: { status: study.status } }, study.status)),
        h('td', {}, String(study.conditions.length)),
        h('td', { class: 'study-row-sessions', title: statusCounts(study.counts?.by_status) }, `${total} (${statusCounts(study.counts?.by_status)})`),
        h('td', {}, new Date(study.created_at).toLocaleString()));
    }));
  }

  openCreate() {
    $('#study-create').hidden = false;
    if (!$('#study-new-design').value) this.editor.set(TEMPLATE);
    $('#study-new-design').focus();
  }

  /** `POST /api/studies`: a draft, then its page; a refusal is shown at its field. */
  async create() {
    const design = this.editor.read();
    if (!design) return;
    try {
      const study = await api.post('/api/studies', design);
      this.editor.clear();
      location.assign(`/studies/${encodeURIComponent(study.id)}`);
    } catch (err) {
      if (err.status === 422 || err.status === 400) this.editor.refuse(err);
      else {
        setBanner('error', `Creating the study failed: ${err.message}`);
      }
    }
  }
}
