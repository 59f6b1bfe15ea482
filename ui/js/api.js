// The REST API and one error type, and how requests say who they are: nothing (one-person
// mode), the bearer token (asked once, kept in localStorage), or, once the server has
// accounts, the session cookie the sign-in form gets (the browser sends it by itself).

import { $, setBanner } from './dom.js';

const TOKEN_KEY = 'haico.token';

/**
 * A failed request: `status` is 0 when the server could not be reached; `retryAfter` is the
 * seconds a `429` asks to wait.
 */
export class ApiError extends Error {
  constructor(status, message, body, retryAfter = null) {
    super(message);
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

export function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

let memoryToken = '';
function currentToken() {
  if (auth.participant) return auth.participantToken;
  return auth.useToken ? token() || memoryToken : '';
}

/**
 * Makes the page a study participant's: its requests carry `participantToken` (a researcher's
 * preview) or nothing (the participant cookie the entry set goes along by itself), never the
 * researcher's stored token, and a `401` is the caller's to explain, not a sign-in form.
 */
export function actAsParticipant(participantToken = '') {
  auth.participant = true;
  auth.participantToken = participantToken;
}

/** Drops the stored token (signing out of an account that used one). */
export function forgetToken() {
  memoryToken = '';
  try { localStorage.removeItem(TOKEN_KEY); } catch { /* private mode */ }
}

/**
 * Who this page acts as. `accounts`: the server has accounts, so a `401` means "sign in"
 * rather than "enter the token". `useToken`: requests carry the stored token (as always
 * without accounts; with accounts only while that token works, for an administrator).
 * `me`: the person (`{name, role}`; `name` is null for the administrator's token).
 */
export const auth = { accounts: false, useToken: true, me: null, participant: false, participantToken: '' };

let onSessionLost = null;
let regaining = null;
/**
 * Hooks the sign-in form: `handler()` shows it and resolves once someone signed in again
 * (a session expired, or was ended elsewhere). Requests that met the `401` then go on.
 */
export function whenSessionLost(handler) {
  onSessionLost = handler;
}

function regainSession() {
  if (!onSessionLost) return Promise.reject(new ApiError(401, 'You are not signed in.'));
  regaining ??= onSessionLost().finally(() => { regaining = null; });
  return regaining;
}

let asking = null;
/** Shows the token dialog (once, however many requests are waiting) and resolves with the token. */
function askForToken(wrong) {
  if (asking) return asking;
  const dialog = $('#token-dialog');
  const input = $('#token-input');
  const error = $('#token-error');
  error.hidden = !wrong;
  error.textContent = wrong ? 'That token was not accepted. Check it and try again.' : '';
  input.value = '';
  asking = new Promise((resolve) => {
    const onSubmit = (event) => {
      event.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      try { localStorage.setItem(TOKEN_KEY, value); } catch { /* private mode: keep for this page */ }
      memoryToken = value;
      dialog.removeEventListener('submit', onSubmit);
      dialog.close();
      asking = null;
      resolve(value);
    };
    dialog.addEventListener('submit', onSubmit);
    dialog.addEventListener('cancel', (event) => event.preventDefault());
    dialog.showModal();
    input.focus();
  });
  return asking;
}

/** Query-string form of the token, for EventSource (which cannot send headers). */
export function tokenQuery() {
  const t = currentToken();
  return t ? `access_token=${encodeURIComponent(t)}` : '';
}

let onReachable = () => {};
let onUnreachable = () => {};
/** Hooks the connection indicator: told whenever a request reaches or fails to reach the server. */
export function watchReachability(reachable, unreachable) {
  onReachable = reachable;
  onUnreachable = unreachable;
}

/**
 * One request. A `401` asks for the token (or, with accounts, shows the sign-in form) and
 * tries again, unless `probe` (the caller handles it); `anonymous` sends no token at all (the
 * session routes: a stale token would make even them answer `401`).
 */
async function send(method, path, body, { raw = false, anonymous = false, probe = anonymous || auth.participant } = {}) {
  let sentToken = anonymous ? '' : currentToken();
  for (let attempt = 0; attempt < 3; attempt++) {
    const headers = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (sentToken) headers.authorization = `Bearer ${sentToken}`;
    let response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      onUnreachable();
      throw new ApiError(0, "Can't reach the haico server. Check that it is running; the page reconnects by itself.");
    }
    onReachable();
    if (response.status === 401 && !probe) {
      if (!auth.accounts) {
        // Accounts may have been made since this page loaded: then sign in, not a token.
        const state = await send('GET', '/api/session', undefined, { anonymous: true }).catch(() => null);
        if (state && state.accounts) auth.accounts = true;
      }
      if (auth.accounts) {
        await regainSession();
      } else {
        await askForToken(Boolean(sentToken));
      }
      sentToken = currentToken();
      continue;
    }
    if (raw && response.ok) return response;
    const text = await response.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = { error: text }; }
    }
    if (!response.ok) {
      const message = (data && data.error) || `${response.status} ${response.statusText}`;
      const retryAfter = Number.parseInt(response.headers.get('retry-after') || '', 10);
      throw new ApiError(response.status, message, data, Number.isNaN(retryAfter) ? null : retryAfter);
    }
    return data;
  }
  throw new ApiError(401, auth.accounts ? 'You are not signed in.' : 'The access token was not accepted.');
}

export const api = {
  get: (path) => send('GET', path),
  post: (path, body = {}) => send('POST', path, body),
  put: (path, body) => send('PUT', path, body),
  patch: (path, body) => send('PATCH', path, body),
  del: (path) => send('DELETE', path),
  /** A request whose response body the caller reads itself (the chat's event stream). */
  stream: (path, body) => send('POST', path, body, { raw: true }),
  /** A GET whose response the caller reads itself (headers and body: a download). */
  raw: (path) => send('GET', path, undefined, { raw: true }),
  /** Fetches a binary resource (a chart's SVG) with the token, as a Blob. */
  async blob(path) {
    const response = await send('GET', path, undefined, { raw: true });
    return response.blob();
  },
  /** A GET whose `401` is the caller's to handle (is the stored token still good?). */
  probe: (path) => send('GET', path, undefined, { probe: true }),
};

/** `GET /api/session`: whether the server has accounts, and who this browser is signed in as. */
export function sessionState() {
  return send('GET', '/api/session', undefined, { anonymous: true });
}

/** Signs in (the answer sets the session cookie); resolves with the person. */
export async function signIn(name, password) {
  const user = await send('POST', '/api/session', { name, password }, { anonymous: true });
  auth.accounts = true;
  auth.useToken = false;
  auth.me = user;
  return user;
}

/** Signs out: ends the session on the server (and forgets a stored token, if one was used). */
export async function signOut() {
  const viaToken = auth.useToken;
  await send('DELETE', '/api/session', undefined, { anonymous: true });
  if (viaToken) forgetToken();
  auth.me = null;
}

/**
 * After the events stream was refused: if the session behind it ended, shows the sign-in form
 * and resolves once someone signed in again; otherwise at once.
 */
export async function checkSignedIn() {
  if (!auth.accounts || auth.useToken) return;
  let state;
  try { state = await sessionState(); } catch { return; }
  if (!state.user) await regainSession();
}

/** `/api/threads/{id}` with the id escaped; `rest` is appended as is. */
export function threadPath(threadId, rest = '') {
  return `/api/threads/${encodeURIComponent(threadId)}${rest}`;
}

let onForbidden = () => {};
/** Hooks what the page does when a change is refused (`403`): it re-reads what it may do. */
export function whenForbidden(handler) {
  onForbidden = handler;
}

/** Shows request failures in words people understand; returns the error for chaining. */
export function report(err, what) {
  if (err instanceof ApiError && err.status === 403) onForbidden();
  if (err instanceof ApiError && err.status === 0) {
    setBanner('offline', err.message);
  } else {
    setBanner('error', `${what} failed: ${err.message}`);
    setTimeout(() => setBanner('error', null), 8000);
  }
  return err;
}
