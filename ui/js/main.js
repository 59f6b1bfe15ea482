// The page's entry point: finds out who the page acts as (signing in first when the server has
// accounts), opens a thread (from the URL), keeps every panel in sync with the thread's events
// stream, reports the connection and model state, and shows what this person may do with the
// open thread (sharing for its owner, a read-only page for a viewer).
//
// The same page serves two more modes, by its path: `/s/{entry_key}` is a study participant's
// (participant.js walks it through the study and opens its one thread here, reduced to its
// condition's panels), and `/studies…` is the researcher's Studies page (studies.js).

import { ApiError, api, auth, report, threadPath, watchReachability, whenForbidden } from './api.js';
import { ArtifactsPanel } from './artifacts.js';
import { ChatPanel } from './chat.js';
import { ComparePanel } from './compare.js';
import { DocumentPanel } from './doc.js';
import { $, drawStaticIcons, flash, h, initBanner, setBanner, toast } from './dom.js';
import { ThreadEvents } from './events.js';
import { HistoryPanel } from './history.js';
import { ObjectivePanel } from './objective.js';
import { PlanPanel } from './plan.js';
import { ParticipantPage } from './participant.js';
import { PreferencesPanel } from './preferences.js';
import { SessionPanel } from './session.js';
import { SuggestionsPanel } from './suggestions.js';
import { ServersDialog } from './servers.js';
import { ShareDialog } from './share.js';
import { StudiesPage } from './studies.js';
import { ThreadsPanel } from './threads.js';

const LAST_THREAD = 'haico.lastThread';
/** Workspace panel name (as in `workspace` events) → the section that shows it. */
const PANEL_SECTIONS = {
  objective: '#objective',
  document: '#document',
  plan: '#plan',
  preferences: '#preferences',
  artifacts: '#artifacts',
  suggestions: '#suggestions',
};

/** Which page this is, by its path: a study participant's, the researcher's studies, or the workspace. */
function pageMode() {
  if (/^\/s\/[^/]+\/?$/.test(location.pathname)) return 'participant';
  if (/^\/studies(\/[^/]+)?\/?$/.test(location.pathname)) return 'studies';
  return 'workspace';
}

/**
 * Reloads one panel at a time: a burst of events costs one request in flight plus one after,
 * and an older answer never lands after a newer one.
 */
class Reloader {
  constructor(load) {
    this.load = load;
    this.running = null;
    this.again = false;
    // How many times a reload was asked for: a full re-sync compares it before and after its
    // own read to learn whether this panel moved meanwhile.
    this.requests = 0;
  }

  request() {
    this.requests += 1;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.load();
        } while (this.again);
      } catch (err) {
        report(err, 'Refreshing the workspace');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}

class App {
  constructor() {
    this.mode = pageMode();
    this.threadId = null;
    this.events = null;
    this.readOnly = false;
    // A participant's page: the panels its condition shows (null: every panel).
    this.shown = null;
    // Told of every event of the open thread before the panels are (the participant page
    // follows `study` and `done` events).
    this.watcher = null;
    this.session = new SessionPanel();
    this.threads = new ThreadsPanel(this);
    this.preferences = new PreferencesPanel(this);
    this.objective = new ObjectivePanel(this);
    this.document = new DocumentPanel(this);
    this.suggestions = new SuggestionsPanel(this);
    this.plan = new PlanPanel(this);
    this.artifacts = new ArtifactsPanel(this);
    this.chat = new ChatPanel(this);
    this.history = new HistoryPanel(this);
    this.compare = new ComparePanel(this);
    this.share = new ShareDialog(this);
    this.servers = new ServersDialog(this);
    this.reloaders = {
      objective: new Reloader(() => this.objective.load()),
      document: new Reloader(() => this.document.load()),
      plan: new Reloader(() => this.plan.load()),
      preferences: new Reloader(() => this.preferences.load()),
      artifacts: new Reloader(() => this.artifacts.load()),
      suggestions: new Reloader(() => this.suggestions.load()),
    };
    this.syncer = new Reloader(() => this.syncAll());
  }

  async start() {
    drawStaticIcons();
    initBanner();
    document.body.dataset.mode = this.mode;
    watchReachability(
      () => setBanner('offline', null),
      () => setBanner('offline', "Can't reach the haico server. Check that it is still running; this page reconnects by itself and nothing you typed is lost."),
    );
    if (this.mode === 'participant') {
      // No sign-in, thread list, server information or tools: a participant reaches only its
      // own session and thread.
      await new ParticipantPage(this).start();
      return;
    }
    $('#toggle-threads').addEventListener('click', () => {
      const open = document.body.classList.toggle('threads-open');
      $('#toggle-threads').setAttribute('aria-expanded', String(open));
    });
    $('#export-thread').addEventListener('click', () => this.exportThread());
    // Signed in (or not needed) before anything else asks the server.
    await this.session.begin();
    if (this.mode === 'studies') {
      await new StudiesPage().start();
      return;
    }
    window.addEventListener('popstate', () => this.route(false));
    // A refused change: what this person may do changed (an owner made them a viewer).
    whenForbidden(() => { this.threads.load().catch(() => {}); });
    // Threads made, renamed or shared elsewhere (another tab, the API, MCP, their owner) show
    // up when the page is looked at again, and every half minute while it is.
    window.addEventListener('focus', () => { this.threads.load().catch(() => {}); });
    setInterval(() => {
      if (document.visibilityState === 'visible') this.threads.load().catch(() => {});
    }, 30000);
    await this.loadInfo();
    await this.servers.load();
    await this.route(true);
  }

  async loadInfo() {
    try {
      const info = await api.get('/api/info');
      const pill = $('#model-status');
      pill.hidden = false;
      if (info.model && info.model.configured) {
        pill.textContent = info.model.description;
        pill.title = `The agent thinks with ${info.model.description}`;
        pill.classList.remove('missing');
      } else {
        pill.textContent = 'No model configured';
        pill.classList.add('missing');
        const hint = (info.model && info.model.hint) || 'Start the server with HAICO_LLM_PROVIDER and HAICO_LLM_MODEL set.';
        pill.title = hint;
        setBanner('model', `No language model is configured, so the agent cannot answer yet. You can still edit the workspace.\n${hint}`);
      }
    } catch (err) {
      report(err, 'Loading the server information');
    }
  }

  /** Opens the thread the URL names, else the last one used, else the newest, else a new one. */
  async route(initial) {
    let threads = [];
    try {
      threads = await this.threads.load();
    } catch (err) {
      report(err, 'Loading the threads');
      if (initial) setTimeout(() => this.route(true), 2000);
      return;
    }
    const match = location.pathname.match(/^\/t\/([^/]+)\/?$/);
    let wanted = match ? decodeURIComponent(match[1]) : null;
    if (wanted && !threads.some((t) => t.id === wanted)) {
      setBanner('error', `There is no thread “${wanted}” (it may have been deleted). Showing another one.`);
      setTimeout(() => setBanner('error', null), 8000);
      wanted = null;
    }
    if (!wanted) {
      let last = null;
      try { last = localStorage.getItem(LAST_THREAD); } catch { /* ignore */ }
      wanted = threads.some((t) => t.id === last) ? last : threads[0]?.id;
    }
    if (!wanted) {
      const thread = await api.post('/api/threads', { title: 'My first thread' });
      await this.threads.load();
      wanted = thread.id;
    }
    await this.open(wanted, { push: false, replace: !match || decodeURIComponent(match[1]) !== wanted });
  }

  async open(threadId, { push = false, replace = false } = {}) {
    if (this.threadId === threadId && this.events && !push && !replace) return;
    if (this.events) this.events.close();
    this.threadId = threadId;
    document.body.dataset.ready = 'false';
    document.body.classList.remove('threads-open');
    if (this.mode === 'workspace') {
      try { localStorage.setItem(LAST_THREAD, threadId); } catch { /* ignore */ }
    }
    const url = `/t/${encodeURIComponent(threadId)}`;
    if (push && location.pathname !== url) history.pushState({}, '', url);
    else if (replace && location.pathname !== url) history.replaceState({}, '', url);
    this.history.close();
    this.compare.close();
    this.servers.close();
    this.threads.render();
    const thread = this.threads.threads.find((t) => t.id === threadId);
    this.setHeading(thread ? thread.title : threadId);
    this.updateThreadActions();
    if (this.document.editing) this.document.stopEdit();
    this.chat.clear();
    this.setConnection('reconnecting');
    this.events = new ThreadEvents(threadId, {
      onEvent: (name, data) => this.onEvent(name, data),
      onOpen: () => this.syncer.request(),
      onState: (state) => this.setConnection(state),
    });
  }

  /**
   * A participant's page shows only its condition's `panels` (none: a plain chat); the
   * others are hidden and never asked for (the server would refuse them).
   */
  showOnly(panels) {
    this.shown = new Set(panels);
    for (const [panel, selector] of Object.entries(PANEL_SECTIONS)) {
      if (panel !== 'suggestions') $(selector).hidden = !this.shown.has(panel);
    }
    const left = ['plan', 'preferences', 'artifacts'].some((p) => this.shown.has(p));
    const centre = ['objective', 'document'].some((p) => this.shown.has(p));
    $('.column.left').hidden = !left;
    $('.column.centre').hidden = !centre;
    document.body.classList.toggle('no-left', !left);
    document.body.classList.toggle('no-centre', !centre);
  }

  /** Whether `panel` is on this page (suggestions live in the document). */
  shows(panel) {
    if (!this.shown) return true;
    return this.shown.has(panel === 'suggestions' ? 'document' : panel);
  }

  /** The open thread as the threads list has it (`null` before the list is loaded). */
  currentThread() {
    return this.threads.threads.find((t) => t.id === this.threadId) || null;
  }

  threadTitle() {
    return this.currentThread()?.title || this.threadId || 'Untitled thread';
  }

  /**
   * "Compare with the original" is there for a fork only, "Share" for whoever the server says
   * may share the thread (when it has accounts); a page the caller may not edit is read-only.
   */
  updateThreadActions() {
    const thread = this.currentThread();
    const origin = thread?.forked_from;
    const button = $('#compare-fork');
    button.hidden = !origin;
    button.title = origin ? `Compare this fork with “${origin.thread_id}” at revision ${origin.rev}` : '';
    $('#share-open').hidden = !(auth.accounts && thread?.may?.share);
    this.setReadOnly(Boolean(thread) && !thread.may?.edit);
  }

  /**
   * A viewer reads everything and changes nothing: the editing controls go (the server would
   * refuse them anyway), forking and exporting stay, and a note says how to get more.
   */
  setReadOnly(readOnly) {
    if (readOnly === this.readOnly) return;
    this.readOnly = readOnly;
    document.body.classList.toggle('read-only', readOnly);
    $('#view-only-note').hidden = !readOnly || this.mode !== 'workspace';
    if (readOnly) {
      this.objective.stopEdit();
      if (this.share.dialog.open) this.share.close();
    }
    if (this.servers.dialog.open) this.servers.render(this.currentThread()?.mcp_servers ?? null);
    this.chat.updateControls();
    this.plan.render(this.plan.steps);
    this.history.updateActions();
  }

  /**
   * Downloads the thread's recording (`GET …/export`). Fetched with the token (a plain link
   * could not send it), then saved through a blob: URL and an <a download>.
   */
  async exportThread() {
    const threadId = this.threadId;
    try {
      const response = await api.raw(threadPath(threadId, '/export'));
      const blob = await response.blob();
      const disposition = response.headers.get('content-disposition') || '';
      const named = disposition.match(/filename="?([^";]+)"?/i);
      const name = named ? named[1] : `${threadId}.haico.jsonl`;
      const url = URL.createObjectURL(new Blob([blob], { type: 'application/x-ndjson' }));
      const link = h('a', { href: url, download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      toast(`Exported the thread as ${name}.`);
    } catch (err) { report(err, 'Exporting the thread'); }
  }

  setHeading(title) {
    $('#thread-heading').textContent = title || 'Untitled thread';
    document.title = `${title || 'Untitled thread'} · haico`;
  }

  setConnection(state) {
    const el = $('#connection-status');
    el.dataset.state = state;
    $('.label', el).textContent = { live: 'Live', reconnecting: 'Reconnecting…', offline: 'Offline' }[state];
    if (state === 'offline') {
      setBanner('offline', "Can't reach the haico server. Check that it is still running; this page reconnects by itself and nothing you typed is lost.");
    } else if (state === 'live') {
      setBanner('offline', null);
    }
  }

  /** Loads every panel (on open, and after each reconnect, for what the stream missed). */
  async syncAll() {
    const threadId = this.threadId;
    // A panel whose own reload was asked for while this read was on its way (a `workspace`
    // event arrived) is left to that reload: it reads after the change, while this answer may
    // have been read before it and would put the older content back.
    const asked = Object.fromEntries(Object.entries(this.reloaders).map(([panel, r]) => [panel, r.requests]));
    const current = (panel) => this.reloaders[panel].requests === asked[panel];
    let workspace;
    try {
      workspace = await api.get(threadPath(threadId, '/workspace?html=true'));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && this.mode === 'workspace') {
        setBanner('error', 'This thread was deleted.');
        await this.route(false);
        return;
      }
      throw err;
    }
    if (threadId !== this.threadId) return;
    if (current('objective')) this.objective.render(workspace.objective);
    if (current('document')) this.document.apply(workspace.document);
    if (current('suggestions')) this.suggestions.render(workspace.document_mode, workspace.suggestions);
    if (current('plan')) this.plan.render(workspace.todos);
    if (current('preferences')) this.preferences.render(workspace.preferences);
    if (current('artifacts')) this.artifacts.render(workspace.artifacts);
    await this.chat.load();
    if (threadId === this.threadId && document.body.dataset.ready !== 'true') {
      document.body.dataset.ready = 'true';
      // For the UI benchmark (benches/ui.rs): navigation start → every panel drawn.
      if (!performance.getEntriesByName('haico-ready').length) performance.mark('haico-ready');
    }
  }

  onEvent(name, data) {
    this.watcher?.(name, data);
    if (name === 'workspace') {
      for (const panel of data.panels || []) {
        if (!this.shows(panel)) continue;
        this.reloaders[panel]?.request();
        // An edit of the text can make an open suggestion stop applying, or change its diff.
        if (panel === 'document') this.reloaders.suggestions.request();
        if (data.source === 'agent') flash($(PANEL_SECTIONS[panel]));
      }
      this.history.onWorkspace();
      this.compare.onWorkspace();
      return;
    }
    if (name === 'artifact' && this.shows('artifacts')) this.reloaders.artifacts.request();
    this.chat.onEvent(name, data);
  }
}

const app = new App();
app.start().catch((err) => report(err, 'Starting'));
