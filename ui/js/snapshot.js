// The workspace as it was at one revision, drawn read-only, one section per panel: the
// history's detail (with its restore buttons) and a study session's replay (only the panels
// the participant saw) draw the same thing.

import { h, setSafeHtml } from './dom.js';

export const PANELS = ['objective', 'document', 'plan', 'preferences', 'artifacts'];

const PANEL_TITLES = {
  objective: 'Objective',
  document: 'Document',
  plan: 'Plan',
  preferences: 'Preferences',
  artifacts: 'Artifacts',
};

function objectiveBody(ws) {
  return h('p', { class: `snap-objective${ws.objective ? '' : ' placeholder'}` }, ws.objective || 'No objective.');
}

function documentBody(ws) {
  if (!(ws.document && ws.document.content)) return h('p', { class: 'empty' }, 'No document.');
  const view = h('div', { class: 'snap-document-view markdown' });
  setSafeHtml(view, ws.document.html ?? '');
  if (!ws.document.html) view.textContent = ws.document.content;
  return h('div', {}, h('h5', { class: 'snap-document-title' }, ws.document.title || 'Document'), view);
}

function planBody(steps) {
  if (!steps.length) return h('p', { class: 'empty' }, 'No plan.');
  return h('ol', { class: 'snap-plan' }, steps.map((s) => {
    const li = h('li', { class: s.done ? 'done' : '', dataset: { stepId: s.id, depth: s.depth || 0 } },
      h('span', { class: 'snap-done', 'aria-label': s.done ? 'done' : 'not done', role: 'img' }, s.done ? '✓' : '○'),
      h('span', { class: 'snap-step-text' }, s.text));
    li.style.setProperty('--depth', String(s.depth || 0));
    return li;
  }));
}

function preferencesBody(prefs) {
  if (!prefs.length) return h('p', { class: 'empty' }, 'No preferences.');
  return h('ul', { class: 'snap-preferences' }, prefs.map((p) => h('li', { dataset: { preferenceId: p.id }, class: p.locked ? 'locked' : '' },
    h('span', { class: `pref-kind ${p.kind}` }, p.kind),
    h('span', { class: 'snap-pref-body' },
      h('span', { class: 'snap-pref-title' }, p.title),
      p.subtitle ? h('span', { class: 'snap-pref-subtitle' }, p.subtitle) : null),
    p.locked ? h('span', { class: 'snap-pref-locked' }, 'locked') : null)));
}

function artifactsBody(arts) {
  if (!arts.length) return h('p', { class: 'empty' }, 'No artifacts.');
  return h('ul', { class: 'snap-artifacts' }, arts.map((a) => h('li', { dataset: { artifactId: a.id } },
    h('span', { class: 'artifact-title' }, a.title || a.artifact_type),
    h('span', { class: 'panel-meta' }, `${a.artifact_type} · turn ${a.turn_index}`))));
}

/**
 * The sections of `ws` (a `GET …/workspace?at=REV&html=true` answer) for `panels`, in the
 * page's order. `changed` (a Set) marks the panels the revision changed; `extra(panel)` adds
 * controls to a section's head (the history's restore buttons); `meta` overrides a head's
 * note.
 */
export function snapshotSections(ws, { panels = PANELS, changed = new Set(), extra = () => null, meta = {} } = {}) {
  const steps = ws.todos || [];
  const arts = ws.artifacts || [];
  const bodies = {
    objective: () => objectiveBody(ws),
    document: () => documentBody(ws),
    plan: () => planBody(steps),
    preferences: () => preferencesBody(ws.preferences || []),
    artifacts: () => artifactsBody(arts),
  };
  const notes = {
    document: ws.document && ws.document.version ? `v${ws.document.version}` : '',
    plan: steps.length ? `${steps.filter((s) => s.done).length} of ${steps.length} done` : '',
    ...meta,
  };
  return PANELS.filter((panel) => panels.includes(panel)).map((panel) => h('section', {
    class: `snap-panel${changed.has(panel) ? ' changed' : ''}`,
    dataset: { panel },
    'aria-labelledby': `snap-${panel}-heading`,
  },
  h('div', { class: 'snap-head' },
    h('h4', { id: `snap-${panel}-heading` }, PANEL_TITLES[panel]),
    notes[panel] ? h('span', { class: 'panel-meta' }, notes[panel]) : null,
    changed.has(panel) ? h('span', { class: 'rev-badge changed' }, 'changed in this revision') : null,
    extra(panel)),
  bodies[panel]()));
}
