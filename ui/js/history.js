// The thread's history (a dialog): every revision, newest first, grouped by agent turn and by
// hand edits, each with who, which tool, why (the agent's action_and_reasoning), which panels
// and what changed. Selecting one shows the workspace as it was then, read-only, with Restore
// (all panels or one), Fork from here, and the document's diff with now.
//
// The list follows the thread live: a `workspace` event while it is open fetches the newest
// page again and merges it in.

import { api, report, threadPath } from './api.js';
import { parseUnified, renderUnified } from './diff.js';
import { $, h, replaceChildren, toast } from './dom.js';
import { snapshotSections } from './snapshot.js';

const PAGE = 50;
/** The panels a restore can set back (artifacts are records: never removed). */
const RESTORABLE = ['objective', 'document', 'plan', 'preferences'];

/** A time, with the date when it is not today. */
function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (date.toDateString() === new Date().toDateString()) return time;
  return `${date.toLocaleDateString([], { day: 'numeric', month: 'short' })}, ${time}`;
}

function who(revision) {
  return revision.source === 'agent' ? 'agent' : 'person';
}

/** "ann · agent" (the agent working for ann), "ann · person", or just "agent"/"person". */
function byWho(revision) {
  return revision.by ? `${revision.by} · ${who(revision)}` : who(revision);
}

/** What a revision is, when it is more than an edit: a restore, an undo, the fork's start. */
function markOf(revision) {
  if (revision.restored_from !== null && revision.restored_from !== undefined) return `Restore of revision ${revision.restored_from}`;
  if (revision.reverted_turn !== null && revision.reverted_turn !== undefined) return `Undo of turn ${revision.reverted_turn}`;
  return null;
}

/** Revisions side by side in the list share a group when they share a turn, or an author. */
function groupOf(revision) {
  if (revision.turn_index !== null && revision.turn_index !== undefined) {
    return { key: `turn:${revision.turn_index}`, kind: 'turn', label: `Turn ${revision.turn_index} · the agent` };
  }
  if (revision.source === 'agent') {
    return { key: `agent:${revision.by ?? ''}`, kind: 'agent', label: `Agent tool calls outside a chat turn${revision.by ? ` · ${revision.by}` : ''}` };
  }
  return { key: `user:${revision.by ?? ''}`, kind: 'user', label: revision.by ? `Edits by ${revision.by}` : 'Edits by a person' };
}

export class HistoryPanel {
  constructor(app) {
    this.app = app;
    this.dialog = $('#history-dialog');
    this.list = $('#history-list');
    this.detail = $('#history-detail');
    this.revisions = []; // newest first
    this.nextBefore = null;
    this.loaded = false;
    this.selected = null; // the rev shown in the detail pane
    this.selectSeq = 0;
    this.refreshing = null;
    this.refreshAgain = false;
    this.threadId = null;
    $('#history-open').addEventListener('click', () => this.open());
    $('#history-close').addEventListener('click', () => this.close());
    $('#history-more').addEventListener('click', () => this.loadOlder());
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button.history-rev-select');
      if (button) this.select(Number(button.closest('li[data-rev]').dataset.rev));
    });
    $('#history-restore').addEventListener('click', () => this.restore(null));
    this.detail.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-restore-panel]');
      if (button) this.restore([button.dataset.restorePanel]);
    });
    $('#history-compare').addEventListener('click', () => this.compareWithNow());
    $('#history-diff-close').addEventListener('click', () => {
      $('#history-diff-area').hidden = true;
      $('#history-compare').focus();
    });
    $('#history-fork').addEventListener('click', () => this.openForkForm());
    $('#history-fork-cancel').addEventListener('click', () => {
      $('#history-fork-form').hidden = true;
      $('#history-fork').focus();
    });
    $('#history-fork-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.fork();
    });
    $('#history-fork-title').addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        // Close the form, not the whole dialog.
        event.preventDefault();
        event.stopPropagation();
        $('#history-fork-form').hidden = true;
        $('#history-fork').focus();
      }
    });
    this.dialog.addEventListener('close', () => {
      if (document.activeElement === document.body || !document.activeElement) $('#history-open').focus();
    });
  }

  path(rest) { return threadPath(this.threadId, rest); }

  get latest() { return this.revisions[0]?.rev ?? 0; }

  /** Opens the dialog on the newest revisions; `rev` selects one (e.g. a conflicting change). */
  async open(rev = null) {
    this.threadId = this.app.threadId;
    this.revisions = [];
    this.nextBefore = null;
    this.loaded = false;
    this.selected = null;
    this.selectSeq += 1;
    $('#history-heading').textContent = `History of “${this.app.threadTitle()}”`;
    replaceChildren(this.list, h('li', { class: 'empty' }, 'Loading the history…'));
    this.detail.hidden = true;
    $('#history-placeholder').hidden = false;
    $('#history-more').hidden = true;
    $('#history-count').textContent = '';
    if (!this.dialog.open) this.dialog.showModal();
    await this.refresh();
    if (rev !== null && this.revisions.some((r) => r.rev === rev)) {
      await this.select(rev);
      this.list.querySelector(`li[data-rev="${rev}"] button.history-rev-select`)?.focus();
    } else {
      (this.list.querySelector('button.history-rev-select') || $('#history-close')).focus();
    }
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  /** A workspace change while open: the newest page again (a burst costs one request after). */
  onWorkspace() {
    if (this.dialog.open) this.refresh();
  }

  refresh() {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          await this.loadNewest();
        } while (this.refreshAgain);
      } catch (err) {
        report(err, 'Loading the history');
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  async loadNewest() {
    const threadId = this.threadId;
    const page = await api.get(this.path(`/history?limit=${PAGE}`));
    if (threadId !== this.threadId || !this.dialog.open) return;
    const newest = this.latest;
    const oldestFetched = page.revisions.length ? page.revisions[page.revisions.length - 1].rev : 0;
    if (!this.loaded || (page.next_before !== null && oldestFetched > newest + 1)) {
      // First load, or more changed meanwhile than a page holds: start over from this page.
      this.revisions = page.revisions;
      this.nextBefore = page.next_before;
    } else {
      this.merge(page.revisions);
    }
    this.loaded = true;
    this.render();
    this.updateActions();
    if (this.selected !== null && !$('#history-diff-area').hidden) this.compareWithNow(false);
  }

  async loadOlder() {
    if (this.nextBefore === null) return;
    const threadId = this.threadId;
    try {
      const page = await api.get(this.path(`/history?limit=${PAGE}&before=${this.nextBefore}`));
      if (threadId !== this.threadId) return;
      const first = this.revisions.length;
      this.merge(page.revisions);
      this.nextBefore = page.next_before;
      this.render();
      // Keep the keyboard where the reading goes on: the first of the older revisions.
      const next = this.revisions[first];
      const target = next && this.list.querySelector(`li[data-rev="${next.rev}"] button.history-rev-select`);
      (target || this.list.querySelector('li[data-rev] button.history-rev-select:last-of-type'))?.focus();
    } catch (err) { report(err, 'Loading older revisions'); }
  }

  merge(revisions) {
    const byRev = new Map(this.revisions.map((r) => [r.rev, r]));
    for (const r of revisions) byRev.set(r.rev, r);
    this.revisions = [...byRev.values()].sort((a, b) => b.rev - a.rev);
  }

  render() {
    const focusedRev = document.activeElement?.closest?.('#history-list li[data-rev]')?.dataset.rev;
    const groups = [];
    for (const revision of this.revisions) {
      const group = groupOf(revision);
      const last = groups[groups.length - 1];
      if (last && last.key === group.key) last.items.push(revision);
      else groups.push({ ...group, items: [revision] });
    }
    const nodes = groups.map((group) => {
      const first = group.items[0];
      return h('li', {
        class: `history-group ${group.kind}`,
        dataset: { group: group.kind, ...(group.kind === 'turn' ? { turnIndex: first.turn_index } : {}) },
      },
      h('div', { class: 'history-group-head' }, h('span', {}, group.label),
        h('span', { class: 'panel-meta' }, `${group.items.length} change${group.items.length === 1 ? '' : 's'}`)),
      h('ol', { class: 'history-revs' }, group.items.map((r) => this.row(r))));
    });
    if (this.loaded && this.nextBefore === null) {
      // The start of the thread: the empty workspace, revision 0.
      nodes.push(h('li', { class: 'history-group start', dataset: { group: 'start' } },
        h('ol', { class: 'history-revs' }, this.row({ rev: 0, start: true, panels: [], summary: 'The empty workspace, before any change' }))));
    }
    if (!this.revisions.length) {
      nodes.unshift(h('li', { class: 'empty' }, 'Nothing has changed in this thread yet. Every change the agent or a person makes will be listed here.'));
    }
    replaceChildren(this.list, nodes);
    $('#history-more').hidden = this.nextBefore === null;
    $('#history-count').textContent = this.revisions.length
      ? `${this.latest.toLocaleString()} revision${this.latest === 1 ? '' : 's'}`
      : '';
    if (focusedRev !== undefined) {
      this.list.querySelector(`li[data-rev="${focusedRev}"] button.history-rev-select`)?.focus();
    }
  }

  row(r) {
    const mark = r.start ? null : markOf(r);
    const isLatest = !r.start && r.rev === this.latest;
    const selected = r.rev === this.selected;
    const li = h('li', {
      class: `history-rev${selected ? ' selected' : ''}${mark ? ' rewrite' : ''}`,
      dataset: { rev: r.rev, source: r.start ? 'start' : r.source },
    },
    h('button', { type: 'button', class: 'history-rev-select', 'aria-current': selected ? 'true' : null },
      h('span', { class: 'rev-line' },
        h('span', { class: 'rev-num' }, `#${r.rev}`),
        r.by ? h('span', { class: 'rev-by' }, r.by, h('span', { 'aria-hidden': 'true' }, ' ·')) : null,
        r.start ? h('span', { class: 'rev-who' }, 'start') : h('span', { class: `rev-who ${r.source}` }, who(r)),
        r.tool ? h('span', { class: 'rev-tool' }, r.tool) : null,
        isLatest ? h('span', { class: 'rev-badge now' }, 'now') : null,
        mark ? h('span', { class: 'rev-badge mark' }, mark) : null,
        r.at ? h('time', { class: 'rev-time', datetime: r.at }, when(r.at)) : null),
      r.action_and_reasoning ? h('span', { class: 'rev-why' }, r.action_and_reasoning) : null,
      h('span', { class: 'rev-summary' }, r.summary || ''),
      r.panels.length ? h('span', { class: 'rev-panels' },
        h('span', { class: 'visually-hidden' }, 'Changed: '),
        r.panels.map((p) => h('span', { class: 'rev-panel', dataset: { panel: p } }, p))) : null));
    return li;
  }

  revision(rev) {
    if (rev === 0) return { rev: 0, start: true, panels: [], summary: 'The empty workspace, before any change' };
    return this.revisions.find((r) => r.rev === rev) || { rev, panels: [], summary: '' };
  }

  /** Shows the workspace as it was after revision `rev`, read-only. */
  async select(rev) {
    this.selected = rev;
    const seq = ++this.selectSeq;
    for (const li of this.list.querySelectorAll('li[data-rev]')) {
      const on = Number(li.dataset.rev) === rev;
      li.classList.toggle('selected', on);
      const button = li.querySelector('button.history-rev-select');
      if (on) button.setAttribute('aria-current', 'true'); else button.removeAttribute('aria-current');
    }
    const revision = this.revision(rev);
    this.detail.hidden = false;
    this.detail.dataset.rev = String(rev);
    this.detail.setAttribute('aria-busy', 'true');
    $('#history-placeholder').hidden = true;
    $('#history-detail-heading').textContent = rev === 0 ? 'Revision 0 · the start' : `Revision ${rev}`;
    replaceChildren($('#history-detail-meta'),
      revision.at ? h('time', { datetime: revision.at }, when(revision.at)) : null,
      revision.start ? null : h('span', { class: 'history-detail-who' }, byWho(revision)),
      revision.turn_index !== null && revision.turn_index !== undefined ? h('span', {}, `turn ${revision.turn_index}`) : null,
      revision.tool ? h('span', { class: 'rev-tool' }, revision.tool) : null,
      markOf(revision) ? h('span', { class: 'rev-badge mark' }, markOf(revision)) : null);
    const why = $('#history-detail-why');
    why.textContent = revision.action_and_reasoning || '';
    why.hidden = !revision.action_and_reasoning;
    $('#history-detail-summary').textContent = revision.summary || '';
    $('#history-status').textContent = '';
    $('#history-fork-form').hidden = true;
    $('#history-diff-area').hidden = true;
    replaceChildren($('#history-snapshot'), h('p', { class: 'empty' }, 'Loading the workspace as it was…'));
    this.updateActions();
    try {
      const workspace = await api.get(this.path(`/workspace?at=${rev}&html=true`));
      if (seq !== this.selectSeq) return;
      this.drawSnapshot(workspace, revision);
    } catch (err) {
      if (seq !== this.selectSeq) return;
      replaceChildren($('#history-snapshot'), h('p', { class: 'error-text' }, `The workspace at revision ${rev} could not be loaded: ${err.message}`));
    } finally {
      if (seq === this.selectSeq) this.detail.removeAttribute('aria-busy');
    }
  }

  /**
   * Restore and compare make no sense on the revision the workspace is at now; a viewer may
   * not restore at all (forking stays: a fork is theirs).
   */
  updateActions() {
    if (this.selected === null) return;
    const current = this.selected === this.latest;
    const readOnly = this.app.readOnly;
    $('#history-restore').disabled = current || readOnly;
    $('#history-compare').disabled = current;
    for (const button of this.detail.querySelectorAll('button[data-restore-panel]')) button.disabled = current || readOnly;
    const note = $('#history-current-note');
    note.hidden = !current;
    $('#history-readonly').hidden = current;
    this.detail.dataset.current = String(current);
  }

  drawSnapshot(ws, revision) {
    const current = revision.rev === this.latest;
    const arts = ws.artifacts || [];
    replaceChildren($('#history-snapshot'), snapshotSections(ws, {
      changed: new Set(revision.panels || []),
      meta: { artifacts: arts.length ? 'kept by every restore' : '' },
      extra: (panel) => (RESTORABLE.includes(panel)
        ? h('button', { type: 'button', class: 'button small', dataset: { restorePanel: panel }, disabled: current || this.app.readOnly },
          `Restore only the ${panel}`)
        : null),
    }));
  }

  async restore(panels) {
    const rev = this.selected;
    if (rev === null) return;
    const before = this.latest;
    const what = panels ? `The ${panels[0]}` : 'The workspace';
    const status = $('#history-status');
    try {
      const result = await api.post(this.path('/restore'), panels ? { rev, panels } : { rev });
      const text = result.rev > before
        ? `${what} ${panels && panels[0] === 'preferences' ? 'are' : 'is'} back as at revision ${rev} (saved as revision ${result.rev}; this can be undone from here too).`
        : `${what} already ${panels && panels[0] === 'preferences' ? 'match' : 'matches'} revision ${rev}: nothing to restore.`;
      status.textContent = text;
      status.dataset.kind = result.rev > before ? 'done' : 'same';
      toast(text);
      await this.refresh();
    } catch (err) {
      status.textContent = `The restore failed: ${err.message}`;
      status.dataset.kind = 'error';
      report(err, 'Restoring');
    }
  }

  async compareWithNow(focus = true) {
    const rev = this.selected;
    if (rev === null) return;
    const area = $('#history-diff-area');
    const diff = $('#history-diff');
    try {
      const result = await api.get(this.path(`/document/diff?from=${rev}`));
      if (rev !== this.selected) return;
      $('#history-diff-heading').textContent = `Document: revision ${result.from} → now (revision ${result.to})`;
      if (result.unified) {
        renderUnified(diff, parseUnified(result.unified));
        diff.dataset.empty = 'false';
      } else {
        replaceChildren(diff, h('p', { class: 'empty' }, `The document is the same now as at revision ${rev}.`));
        diff.dataset.empty = 'true';
      }
      area.hidden = false;
      if (focus) {
        area.scrollIntoView({ block: 'nearest' });
        $('#history-diff-close').focus();
      }
    } catch (err) { report(err, 'Comparing the document'); }
  }

  openForkForm() {
    const form = $('#history-fork-form');
    form.hidden = false;
    $('#history-fork-title').value = '';
    $('#history-fork-title').focus();
  }

  async fork() {
    const rev = this.selected;
    if (rev === null) return;
    const title = $('#history-fork-title').value.trim();
    const body = { at: rev };
    if (title) body.title = title;
    try {
      const thread = await api.post(this.path('/fork'), body);
      this.close();
      await this.app.threads.load();
      await this.app.open(thread.id, { push: true });
      toast(`“${thread.title}” starts from revision ${rev}. Changes here leave the original as it is.`);
    } catch (err) {
      $('#history-status').textContent = `The fork failed: ${err.message}`;
      $('#history-status').dataset.kind = 'error';
      report(err, 'Forking the thread');
    }
  }
}
