// A fork beside its original (a dialog): the original thread as it was at the fork's revision
// on the left, the fork as it is now on the right: the objective, the document's line diff,
// the plan's steps (only on one side, ticked differently) and the preferences (only on one
// side, or changed: detail, kind, lock).
//
// The server's diff endpoint compares revisions of one thread only, so both workspaces are
// fetched and compared here (diff.js).

import { ApiError, api, report, threadPath } from './api.js';
import { diffLines, diffSequences, renderSideBySide } from './diff.js';
import { $, h, replaceChildren } from './dom.js';

const plural = (n, one, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * One row of a side-by-side list: `left`/`right` are cell contents, `null` for nothing; the
 * `badge` (what differs, in words) goes in the cell that has the difference.
 */
function compareRow(diff, left, right, badge) {
  const badgeSide = diff === 'only-original' ? 'original' : 'fork';
  const cell = (side, content) => (content === null
    ? h('div', { class: `compare-cell side-${side} none` }, h('span', { class: 'visually-hidden' }, side === 'original' ? 'Not in the original' : 'Not in this fork'))
    : h('div', { class: `compare-cell side-${side}` }, content,
      badge && side === badgeSide ? h('span', { class: 'compare-badge' }, badge) : null));
  return h('li', { class: `compare-row ${diff}`, dataset: { diff } }, cell('original', left), cell('fork', right));
}

function stepView(step) {
  return [
    h('span', { class: 'snap-done', role: 'img', 'aria-label': step.done ? 'done' : 'not done' }, step.done ? '✓' : '○'),
    h('span', { class: 'compare-text' }, step.text),
  ];
}

function preferenceView(p) {
  return [
    h('span', { class: `pref-kind ${p.kind}` }, p.kind),
    h('span', { class: 'compare-text' }, p.title, p.subtitle ? h('span', { class: 'snap-pref-subtitle' }, p.subtitle) : null),
    p.locked ? h('span', { class: 'snap-pref-locked' }, 'locked') : null,
  ];
}

export class ComparePanel {
  constructor(app) {
    this.app = app;
    this.dialog = $('#compare-dialog');
    this.seq = 0;
    $('#compare-fork').addEventListener('click', () => this.open());
    this.dialog.addEventListener('close', () => {
      if (document.activeElement === document.body || !document.activeElement) $('#compare-fork').focus();
    });
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  onWorkspace() {
    if (this.dialog.open) this.load();
  }

  async open() {
    if (!this.app.currentThread()?.forked_from) return;
    for (const id of ['#compare-objective-rows', '#compare-document-diff', '#compare-plan-rows', '#compare-preference-rows']) {
      replaceChildren($(id));
    }
    $('#compare-status').textContent = 'Loading both workspaces…';
    $('#compare-status').hidden = false;
    if (!this.dialog.open) this.dialog.showModal();
    $('#compare-close').focus();
    await this.load();
  }

  async load() {
    const seq = ++this.seq;
    const thread = this.app.currentThread();
    const origin = thread?.forked_from;
    if (!origin) return;
    const original = this.app.threads.threads.find((t) => t.id === origin.thread_id);
    $('#compare-heading').textContent = `“${this.app.threadTitle()}” compared with its original`;
    $('#compare-original-head').textContent = `Original: “${original ? original.title : origin.thread_id}” at revision ${origin.rev}`;
    $('#compare-fork-head').textContent = `This fork: “${this.app.threadTitle()}” now`;
    let before;
    let after;
    try {
      [before, after] = await Promise.all([
        api.get(threadPath(origin.thread_id, `/workspace?at=${origin.rev}`)),
        api.get(threadPath(thread.id, '/workspace')),
      ]);
    } catch (err) {
      if (seq !== this.seq) return;
      $('#compare-status').textContent = err instanceof ApiError && err.status === 404
        ? `The original thread “${origin.thread_id}” no longer exists, so there is nothing to compare with.`
        : `The comparison could not be loaded: ${err.message}`;
      $('#compare-status').hidden = false;
      if (!(err instanceof ApiError && err.status === 404)) report(err, 'Comparing with the original');
      return;
    }
    if (seq !== this.seq) return;
    $('#compare-status').hidden = true;
    this.drawObjective(before.objective, after.objective);
    this.drawDocument(before.document, after.document);
    this.drawPlan(before.todos || [], after.todos || []);
    this.drawPreferences(before.preferences || [], after.preferences || []);
  }

  drawObjective(before, after) {
    const same = (before || '') === (after || '');
    const text = (value) => h('span', { class: `compare-text${value ? '' : ' placeholder'}` }, value || 'No objective.');
    replaceChildren($('#compare-objective-rows'), compareRow(same ? 'same' : 'changed', text(before), text(after), same ? null : 'changed'));
    $('#compare-objective-summary').textContent = same ? 'the same' : 'changed';
  }

  drawDocument(before, after) {
    const ops = diffLines(before?.content || '', after?.content || '');
    const added = ops.filter((op) => op.type === 'add').length;
    const removed = ops.filter((op) => op.type === 'del').length;
    const titles = $('#compare-document-titles');
    replaceChildren(titles,
      h('div', { class: 'compare-cell side-original' }, h('strong', {}, before ? before.title || 'Document' : 'No document')),
      h('div', { class: 'compare-cell side-fork' }, h('strong', {}, after ? after.title || 'Document' : 'No document')));
    const diff = $('#compare-document-diff');
    if (!added && !removed) {
      replaceChildren(diff, h('p', { class: 'empty' }, before || after ? 'The documents are the same.' : 'Neither has a document.'));
      diff.setAttribute('aria-label', 'No differences');
    } else {
      renderSideBySide(diff, ops);
      diff.setAttribute('aria-label', `Document differences: ${plural(removed, 'line')} only in the original, ${plural(added, 'line')} only in this fork`);
    }
    $('#compare-document-summary').textContent = added || removed
      ? `${plural(removed, 'line')} removed · ${plural(added, 'line')} added`
      : 'the same';
  }

  drawPlan(before, after) {
    const ops = diffSequences(before, after, (s) => s.text.trim());
    let onlyOriginal = 0;
    let onlyFork = 0;
    let ticked = 0;
    const rows = ops.map((op) => {
      if (op.type === 'del') {
        onlyOriginal++;
        return compareRow('only-original', stepView(op.a), null, 'only in the original');
      }
      if (op.type === 'add') {
        onlyFork++;
        return compareRow('only-fork', null, stepView(op.b), 'only in this fork');
      }
      if (Boolean(op.a.done) !== Boolean(op.b.done)) {
        ticked++;
        return compareRow('done-changed', stepView(op.a), stepView(op.b), op.b.done ? 'done only in this fork' : 'done only in the original');
      }
      return compareRow('same', stepView(op.a), stepView(op.b), null);
    });
    replaceChildren($('#compare-plan-rows'), rows.length ? rows : h('li', { class: 'empty' }, 'Neither has a plan.'));
    const parts = [];
    if (onlyOriginal) parts.push(`${plural(onlyOriginal, 'step')} only in the original`);
    if (onlyFork) parts.push(`${plural(onlyFork, 'step')} only in this fork`);
    if (ticked) parts.push(`${plural(ticked, 'step')} ticked differently`);
    $('#compare-plan-summary').textContent = parts.length ? parts.join(' · ') : 'the same';
  }

  drawPreferences(before, after) {
    const ops = diffSequences(before, after, (p) => p.title.trim());
    let onlyOriginal = 0;
    let onlyFork = 0;
    let changed = 0;
    const rows = ops.map((op) => {
      if (op.type === 'del') {
        onlyOriginal++;
        return compareRow('only-original', preferenceView(op.a), null, 'only in the original');
      }
      if (op.type === 'add') {
        onlyFork++;
        return compareRow('only-fork', null, preferenceView(op.b), 'only in this fork');
      }
      const changes = [];
      if (op.a.kind !== op.b.kind) changes.push(`kind: ${op.a.kind} → ${op.b.kind}`);
      if (Boolean(op.a.locked) !== Boolean(op.b.locked)) changes.push(op.b.locked ? 'locked in this fork' : 'unlocked in this fork');
      if ((op.a.subtitle || '') !== (op.b.subtitle || '')) changes.push('detail changed');
      if (changes.length) {
        changed++;
        return compareRow('changed', preferenceView(op.a), preferenceView(op.b), changes.join(' · '));
      }
      return compareRow('same', preferenceView(op.a), preferenceView(op.b), null);
    });
    replaceChildren($('#compare-preference-rows'), rows.length ? rows : h('li', { class: 'empty' }, 'Neither has preferences.'));
    const parts = [];
    if (onlyOriginal) parts.push(`${plural(onlyOriginal, 'preference')} only in the original`);
    if (onlyFork) parts.push(`${plural(onlyFork, 'preference')} only in this fork`);
    if (changed) parts.push(`${plural(changed, 'preference')} changed`);
    $('#compare-preferences-summary').textContent = parts.length ? parts.join(' · ') : 'the same';
  }
}
