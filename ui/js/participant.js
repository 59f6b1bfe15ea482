// A study participant's page (`/s/{entry_key}`, issue 42): enters the study with the link's
// query parameters (`POST /api/s/{key}/sessions`), then follows the session's status on the
// server — consent → instructions → Start → the workspace reduced to the condition's panels,
// with a countdown, Finish and Withdraw → the end screen with the completion code. Every
// screen is drawn from `GET /api/participant`, so a reload or a crashed browser opening the
// link again resumes where the participant was. A researcher's preview arrives with
// `#preview=<token>` and acts with that token instead of a cookie.

import { ApiError, actAsParticipant, api } from './api.js';
import { Countdown, clock } from './countdown.js';
import { $, confirmDialog, h, replaceChildren, setSafeHtml } from './dom.js';

const SCREENS = ['#participant-loading', '#participant-error', '#participant-consent', '#participant-instructions', '#participant-end'];
/**
 * The session this browser entered, per link and query: reloading the same link resumes it
 * even without a participant id (which would otherwise enter anew); another query (another
 * participant id) enters, and the server resumes by the id.
 */
const ENTERED = 'haico.study.';

/** A refusal of the link or the session in words that say what to do: `[kind, heading, text]`. */
function explain(err, stage) {
  if (!(err instanceof ApiError)) return ['error', 'Something went wrong', `${err.message}. Reload this page; if it happens again, contact the researchers.`];
  switch (err.status) {
    case 0: return ['offline', 'The study cannot be reached', 'Check your internet connection, then reload this page. Nothing you did is lost.'];
    case 404: return stage === 'enter'
      ? ['not-found', 'This link does not lead to a study', 'Check that you opened the whole link, or open the study again from the page where you found it (for example your study platform).']
      : ['no-session', 'Your session was not found', 'Your browser may block cookies for this site. Allow them, then open the study link again.'];
    case 410: return ['closed', 'This study has closed', 'It takes no more participants. Thank you for your interest; you can close this page.'];
    case 409: return err.body?.status === 'full'
      ? ['full', 'This study is full', 'All places are taken. Thank you for your interest; return to your study platform (and, if it asks, tell the researchers).']
      : ['conflict', 'This cannot be done now', `${err.message}. Reload this page to see where your session stands.`];
    case 422: return ['invalid', 'This link is incomplete', `The study could not read your participant id (${err.message}). Open the study again from your study platform, without changing the link.`];
    case 429: return ['busy', 'Too many people are starting at once', 'Wait a minute, then reload this page.'];
    default: return ['error', 'Something went wrong', `${err.message}. Reload this page; if it happens again, contact the researchers.`];
  }
}

/** Only web links leave the page: a redirect URL is the study's, but is checked all the same. */
function webLink(url) {
  try {
    const parsed = new URL(url, location.href);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch { return null; }
}

export class ParticipantPage {
  constructor(app) {
    this.app = app;
    this.key = decodeURIComponent(location.pathname.split('/')[2] || '');
    this.preview = new URLSearchParams(location.hash.slice(1)).get('preview') || '';
    this.view = null;
    this.opened = false;
    this.ending = null;
    this.countdown = new Countdown($('#participant-countdown'), $('#participant-countdown-value'), () => this.timeUp());
    $('#participant-consent').addEventListener('submit', (event) => {
      event.preventDefault();
      this.consent(true);
    });
    $('#participant-decline').addEventListener('click', () => this.consent(false));
    $('#participant-start').addEventListener('click', () => this.act('start', 'Starting'));
    $('#participant-finish').addEventListener('click', () => this.finish());
    $('#participant-withdraw').addEventListener('click', () => this.withdraw());
    $('#participant-code-copy').addEventListener('click', () => this.copyCode());
    $('#participant-task-open').addEventListener('click', () => $('#participant-task-dialog').showModal());
    $('#participant-task-close').addEventListener('click', () => $('#participant-task-dialog').close());
  }

  async start() {
    actAsParticipant(this.preview);
    $('.brand').removeAttribute('href');
    $('#participant-preview-note').hidden = !this.preview;
    this.show('#participant-loading');
    if (!this.preview && !(await this.resumable())) {
      try {
        const entered = await api.post(`/api/s/${encodeURIComponent(this.key)}/sessions`, { params: this.params() });
        try { localStorage.setItem(ENTERED + this.key, JSON.stringify({ session: entered.session, query: location.search })); } catch { /* private mode */ }
      } catch (err) {
        this.fail(err, 'enter');
        return;
      }
    }
    await this.refresh();
  }

  /** Whether this browser's cookie already holds this very link's session (a reload). */
  async resumable() {
    let stored = null;
    try { stored = JSON.parse(localStorage.getItem(ENTERED + this.key) || 'null'); } catch { return false; }
    if (!stored || stored.query !== location.search) return false;
    try {
      return (await api.get('/api/participant')).session === stored.session;
    } catch {
      return false;
    }
  }

  /** The link's query parameters (the platform's id and the study's parameters). */
  params() {
    const out = {};
    for (const [name, value] of new URLSearchParams(location.search)) out[name] = value;
    return out;
  }

  async refresh() {
    try {
      this.render(await api.get('/api/participant'));
    } catch (err) {
      this.fail(err, 'session');
    }
  }

  /** Shows one screen (or none: the workspace). */
  show(selector) {
    for (const screen of SCREENS) $(screen).hidden = screen !== selector;
    $('#participant-screen').hidden = !selector;
    document.body.classList.toggle('task-running', !selector);
  }

  fail(err, stage) {
    const [kind, heading, text] = explain(err, stage);
    const box = $('#participant-error');
    box.dataset.kind = kind;
    $('#participant-error-heading').textContent = heading;
    $('#participant-error-text').textContent = text;
    $('#participant-bar').hidden = true;
    this.show('#participant-error');
  }

  render(view) {
    this.view = view;
    const title = view.task?.title || 'Study';
    $('#thread-heading').textContent = title;
    document.title = `${title} · study`;
    setSafeHtml($('#participant-task-dialog-text'), view.task?.instructions_html ?? '');
    const running = view.status === 'assigned' || view.status === 'active';
    $('#participant-bar').hidden = !running;
    $('#participant-task-open').hidden = view.status !== 'active';
    $('#participant-finish').hidden = view.status !== 'active';
    $('#participant-finish').dataset.canFinish = String(Boolean(view.can_finish));
    $('#participant-finish').title = view.can_finish ? 'Finish the task and get your code' : 'The study asks for a few turns with the assistant before you can finish';
    if (view.status === 'entered') this.showConsent(view);
    else if (view.status === 'assigned') this.showInstructions(view);
    else if (view.status === 'active') this.showTask(view);
    else this.showEnd(view);
  }

  showConsent(view) {
    setSafeHtml($('#participant-consent-text'), view.consent.html ?? '');
    replaceChildren($('#participant-records'), (view.consent.records || []).map((item) => h('li', {}, item)));
    // Without a required consent, reading it and going on is enough.
    $('#participant-decline').hidden = !view.consent.required;
    $('#participant-agree').textContent = view.consent.required ? 'I agree' : 'Continue';
    this.show('#participant-consent');
  }

  showInstructions(view) {
    $('#participant-task-title').textContent = view.task.title;
    setSafeHtml($('#participant-instructions-text'), view.task.instructions_html ?? '');
    this.show('#participant-instructions');
  }

  showTask(view) {
    this.show(null);
    if (view.deadline && view.remaining_s !== null) this.countdown.set(view.remaining_s);
    else $('#participant-countdown').hidden = true;
    if (this.opened) return;
    this.opened = true;
    this.app.showOnly(view.panels || []);
    this.app.watcher = (name, data) => this.onEvent(name, data);
    this.app.open(view.thread_id);
    // The app heads a thread with its title from the thread list, which a participant has not.
    this.app.setHeading(view.task.title);
    document.title = `${view.task.title} · study`;
  }

  showEnd(view) {
    this.countdown.stop();
    this.app.events?.close();
    const end = $('#participant-end');
    end.dataset.status = view.status;
    const [heading, text] = {
      completed: ['Thank you, you are done', 'Your answers are saved. Take this code back to the study platform.'],
      timed_out: ['Time is up', 'The time for this task has run out, and what you did is saved. Thank you for taking part.'],
      declined: ['You chose not to take part', 'Nothing more of yours is recorded. Thank you for considering it.'],
      withdrawn: ['You have withdrawn from the study', 'Your session has ended and will not be counted. You can close this page.'],
    }[view.status] || ['This session has ended', 'You can close this page.'];
    $('#participant-end-heading').textContent = heading;
    $('#participant-end-text').textContent = text;
    const code = view.completion?.code;
    $('#participant-code-row').hidden = !code;
    $('#participant-code').textContent = code || '';
    $('#participant-code-copied').textContent = '';
    const link = view.completion?.redirect_url ? webLink(view.completion.redirect_url) : null;
    const back = $('#participant-return');
    back.hidden = !link;
    if (link) back.href = link;
    else back.removeAttribute('href');
    this.show('#participant-end');
  }

  /** `POST /api/participant/{what}`; the answer is the session as it now stands. */
  async act(what, words, body = {}) {
    try {
      this.render(await api.post(`/api/participant/${what}`, body));
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && /time is up/i.test(err.message)) {
        await this.refresh();
        return false;
      }
      const [kind, heading, text] = explain(err, words);
      if (['full', 'closed', 'offline', 'no-session'].includes(kind)) this.fail(err, words);
      else this.notice('needs', `${heading}: ${text}`);
      return false;
    }
  }

  consent(agree) {
    return this.act('consent', 'Consenting', { agree });
  }

  /** Finish; before the study's minimum of turns the server says how many are missing. */
  async finish() {
    try {
      this.render(await api.post('/api/participant/finish'));
    } catch (err) {
      const turns = err instanceof ApiError ? err.body?.needs?.turns : undefined;
      if (turns !== undefined) {
        this.notice('needs', `Not yet: the study asks for ${turns} more turn${turns === 1 ? '' : 's'} with the assistant before you can finish. Send it a message, wait for its answer, then press Finish again.`);
        return;
      }
      if (err instanceof ApiError && err.status === 409) {
        await this.refresh();
        return;
      }
      this.notice('needs', explain(err, 'finish').slice(1).join(': '));
    }
  }

  async withdraw() {
    const sure = await confirmDialog('Withdraw from the study? Your session ends now, is not counted, and you get no completion code.', 'Withdraw');
    if (sure) await this.act('withdraw', 'Withdrawing');
  }

  notice(kind, text) {
    const el = $('#participant-notice');
    el.dataset.kind = kind;
    el.textContent = text;
    el.hidden = !text;
  }

  /** The thread's events: the clock's warning and end, and turns that may allow Finish. */
  onEvent(name, data) {
    if (name === 'study' && data.kind === 'time_warning') {
      if (typeof data.remaining_s === 'number') this.countdown.set(data.remaining_s);
      this.countdown.warn();
      this.notice('warning', `${clock(data.remaining_s ?? 0)} left: the task ends by itself when the time is up, and what you did is kept.`);
    } else if (name === 'study' && data.kind === 'ended') {
      this.refresh();
    } else if (name === 'done' && this.view?.can_finish === false) {
      this.refreshFinish();
    }
  }

  /** After a turn: whether Finish is possible now (the notice about it goes when it is). */
  async refreshFinish() {
    try {
      const view = await api.get('/api/participant');
      this.view = view;
      $('#participant-finish').dataset.canFinish = String(Boolean(view.can_finish));
      if (view.can_finish && $('#participant-notice').dataset.kind === 'needs') this.notice('', '');
      if (view.status !== 'active') this.render(view);
    } catch { /* the next event or a reload tells */ }
  }

  /**
   * The countdown reached zero: nothing more can be sent, and the page asks the server until it
   * has recorded the end (its clock looks twice a second; the `ended` event usually comes first).
   */
  timeUp() {
    this.app.closedChatText = 'Time is up: the task has ended.';
    this.app.setReadOnly(true);
    this.notice('ended', 'Time is up. Your work is saved; your code follows in a moment.');
    if (this.ending) return;
    let tries = 0;
    this.ending = setInterval(async () => {
      tries += 1;
      try {
        const view = await api.get('/api/participant');
        if (view.status !== 'active' || tries > 30) {
          clearInterval(this.ending);
          this.notice('', '');
          this.render(view);
        }
      } catch {
        if (tries > 30) clearInterval(this.ending);
      }
    }, 1000);
  }

  /** Copies the code; where the clipboard is refused, selects it for copying by hand. */
  async copyCode() {
    const code = $('#participant-code').textContent;
    const said = $('#participant-code-copied');
    try {
      await navigator.clipboard.writeText(code);
      said.textContent = 'Copied';
    } catch {
      getSelection().selectAllChildren($('#participant-code'));
      said.textContent = 'Selected: press Ctrl+C (or ⌘+C) to copy it';
    }
  }
}
