// The thread's live events stream (GET …/events), kept open across server restarts.
//
// EventSource retries by itself after a dropped connection and sends Last-Event-ID, so stored
// events missed meanwhile are replayed by the server. When the browser gives up (the server
// answered an error, e.g. while restarting behind a proxy), a new EventSource is opened with
// `?last_event_id=` after a growing pause; first, if the session behind the stream ended (an
// expired sign-in is refused too), the sign-in form comes up and the stream waits for it.

import { checkSignedIn, threadPath, tokenQuery } from './api.js';

// `study`: a study participant's clock (a time warning, the session's end).
const EVENT_NAMES = ['turn', 'token', 'step', 'approval', 'artifact', 'workspace', 'message', 'error', 'done', 'study'];

export class ThreadEvents {
  /**
   * `onEvent(name, data)` gets every event; `onOpen(reconnected)` runs each time the stream
   * (re)opens, so the page can re-sync what it may have missed; `onState(state)` drives the
   * connection indicator ('live', 'reconnecting', 'offline').
   */
  constructor(threadId, { onEvent, onOpen, onState }) {
    this.threadId = threadId;
    this.onEvent = onEvent;
    this.onOpen = onOpen;
    this.onState = onState;
    this.lastId = null;
    this.source = null;
    this.closed = false;
    this.opened = false;
    this.retryMs = 500;
    this.retryTimer = null;
    this.failedSince = null;
    this.connect();
  }

  connect() {
    if (this.closed) return;
    const params = [tokenQuery(), this.lastId ? `last_event_id=${encodeURIComponent(this.lastId)}` : '']
      .filter(Boolean).join('&');
    const source = new EventSource(threadPath(this.threadId, '/events') + (params ? `?${params}` : ''));
    this.source = source;
    source.onopen = () => {
      const reconnected = this.opened;
      this.opened = true;
      this.retryMs = 500;
      this.failedSince = null;
      this.onState('live');
      this.onOpen(reconnected);
    };
    source.onerror = (event) => {
      // A server-sent `event: error` (a failed turn) shares the name: that is not the connection.
      if (this.closed || event instanceof MessageEvent) return;
      this.failedSince ??= Date.now();
      // After a few seconds without the server, say so plainly.
      this.onState(Date.now() - this.failedSince > 4000 ? 'offline' : 'reconnecting');
      if (source.readyState === EventSource.CLOSED) {
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => checkSignedIn().finally(() => this.connect()), this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 8000);
      }
    };
    for (const name of EVENT_NAMES) {
      source.addEventListener(name, (event) => {
        if (source !== this.source || !(event instanceof MessageEvent)) return;
        if (event.lastEventId) this.lastId = event.lastEventId;
        let data = {};
        try { data = JSON.parse(event.data || '{}'); } catch { return; }
        this.onEvent(name, data);
      });
    }
  }

  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.source) this.source.close();
  }
}
