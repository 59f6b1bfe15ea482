// Signing in and out, when the server has accounts: the sign-in form (at start-up, and again
// when a session ends under the page) and the signed-in person's name and "Sign out" in the
// header. Without accounts none of this shows and the page works as it always did (the token
// dialog of api.js, when the server wants a token).

import { ApiError, api, auth, sessionState, signIn, signOut, token, whenSessionLost } from './api.js';
import { $, setBanner } from './dom.js';

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** Seconds in words: "1 second", "40 seconds", "3 minutes". */
function waitWords(seconds) {
  if (seconds >= 120) return `${Math.ceil(seconds / 60)} minutes`;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

export class SessionPanel {
  constructor() {
    this.screen = $('#sign-in');
    this.form = $('#sign-in-form');
    this.name = $('#sign-in-name');
    this.password = $('#sign-in-password');
    this.error = $('#sign-in-error');
    this.submit = $('#sign-in-submit');
    this.waiting = null; // resolves the promise of show() on a successful sign-in
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.attempt();
    });
    $('#sign-out').addEventListener('click', () => this.signOut());
    whenSessionLost(() => this.regain());
  }

  /**
   * Finds out who this page acts as, before anything else loads; resolves once the app may
   * load (at once without accounts, after signing in otherwise).
   */
  async begin() {
    let state;
    for (;;) {
      try {
        state = await sessionState();
        break;
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 0)) throw err;
        await sleep(2000); // the offline banner is up; try again
      }
    }
    auth.accounts = Boolean(state.accounts);
    if (!auth.accounts) return; // one-person mode, or the administrator's token only
    if (state.user) {
      auth.useToken = false;
      auth.me = state.user;
    } else if (!(await this.storedTokenWorks())) {
      auth.useToken = false;
      await this.show();
    }
    this.renderAccount();
  }

  /** An administrator's token kept from before accounts existed still lets them in. */
  async storedTokenWorks() {
    if (!token()) return false;
    try {
      auth.useToken = true;
      auth.me = await api.probe('/api/me');
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return false;
      throw err;
    }
  }

  /**
   * Shows the form (`reason` above it, e.g. that the session ended); resolves with the person
   * once they signed in.
   */
  show(reason = '') {
    if (this.screen.hidden) this.titleBefore = document.title;
    document.title = 'Sign in · haico';
    document.body.classList.add('signed-out');
    this.screen.hidden = false;
    const note = $('#sign-in-reason');
    note.textContent = reason;
    note.hidden = !reason;
    this.error.hidden = true;
    this.password.value = '';
    (this.name.value ? this.password : this.name).focus();
    return new Promise((resolve) => { this.waiting = resolve; });
  }

  hide() {
    if (this.titleBefore) document.title = this.titleBefore;
    this.screen.hidden = true;
    document.body.classList.remove('signed-out');
  }

  async attempt() {
    const name = this.name.value.trim();
    const password = this.password.value;
    if (!name || !password) {
      this.say(name ? 'Enter your password.' : 'Enter your name.');
      (name ? this.password : this.name).focus();
      return;
    }
    this.submit.disabled = true;
    this.error.hidden = true;
    try {
      const user = await signIn(name, password);
      this.password.value = '';
      this.hide();
      this.renderAccount();
      const resolve = this.waiting;
      this.waiting = null;
      resolve?.(user);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        this.say('That name and password do not match. Check both and try again.');
        this.password.value = '';
        this.password.focus();
      } else if (err instanceof ApiError && err.status === 429) {
        const wait = err.retryAfter ?? 1;
        this.say(`Too many wrong passwords. Wait ${waitWords(wait)}, then try again.`);
      } else {
        this.say(err.message);
      }
    } finally {
      this.submit.disabled = false;
    }
  }

  say(text) {
    this.error.textContent = text;
    this.error.hidden = false;
  }

  /**
   * The session ended under the page (expired, or signed out in another tab): sign in again.
   * The same person carries on where they were; someone else gets a fresh page.
   */
  async regain() {
    const before = auth.me?.name ?? null;
    auth.useToken = false;
    const user = await this.show('Your session has ended. Sign in again to carry on.');
    if (user.name !== before) {
      location.reload();
      await new Promise(() => {}); // the page is going away
    }
  }

  /** The header's "signed in as" and "Sign out" (only when the server has accounts). */
  renderAccount() {
    const me = auth.me;
    $('#account').hidden = !auth.accounts || !me;
    if (!me) return;
    const label = me.name || 'Administrator';
    $('#account-name').textContent = label;
    const admin = me.role === 'admin';
    $('#account').title = me.name
      ? `Signed in as ${me.name}${admin ? ' (administrator)' : ''}`
      : 'Using the administrator’s token';
  }

  /** Ends the session on the server, then starts the page again at the sign-in form. */
  async signOut() {
    const button = $('#sign-out');
    button.disabled = true;
    try {
      await signOut();
    } catch (err) {
      button.disabled = false;
      setBanner('error', `Signing out failed: ${err.message}`);
      return;
    }
    // A fresh page: nothing of this person's threads stays in memory for the next one.
    location.assign('/');
  }
}
