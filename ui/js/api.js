// The REST API, with the bearer token (asked once, kept in localStorage) and one error type.

import { $, setBanner } from './dom.js';

const TOKEN_KEY = 'haico.token';

/** A failed request: `status` is 0 when the server could not be reached. */
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
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

let memoryToken = '';
function currentToken() { return token() || memoryToken; }

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

async function send(method, path, body, { raw = false } = {}) {
  let sentToken = currentToken();
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
    if (response.status === 401) {
      sentToken = await askForToken(Boolean(sentToken));
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
      throw new ApiError(response.status, message, data);
    }
    return data;
  }
  throw new ApiError(401, 'The access token was not accepted.');
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
};

/** `/api/threads/{id}` with the id escaped; `rest` is appended as is. */
export function threadPath(threadId, rest = '') {
  return `/api/threads/${encodeURIComponent(threadId)}${rest}`;
}

/** Shows request failures in words people understand; returns the error for chaining. */
export function report(err, what) {
  if (err instanceof ApiError && err.status === 0) {
    setBanner('offline', err.message);
  } else {
    setBanner('error', `${what} failed: ${err.message}`);
    setTimeout(() => setBanner('error', null), 8000);
  }
  return err;
}
