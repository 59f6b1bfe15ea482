// A study participant's countdown: the time left to the session's deadline, counted down in
// the page from the server's `remaining_s` (so a wrong clock on the participant's computer does
// not matter) and set again whenever the server says more (a `time_warning` event, a reload).

/** Seconds as "m:ss", or "h:mm:ss" from an hour on. */
export function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** The last minute is shown as a warning even before the server's warning arrives. */
const LAST_MINUTE = 60;

export class Countdown {
  /** `el` gets `data-state` (`running`, `warning`, `ended`) and `data-remaining`; `onEnd` runs once at zero. */
  constructor(el, valueEl, onEnd) {
    this.el = el;
    this.valueEl = valueEl;
    this.onEnd = onEnd;
    this.endsAt = null;
    this.timer = null;
    this.warned = false;
  }

  /** Counts down from `remainingS` seconds, now. */
  set(remainingS) {
    this.endsAt = performance.now() + Math.max(0, remainingS) * 1000;
    this.el.hidden = false;
    if (!this.timer) this.timer = setInterval(() => this.tick(), 250);
    this.tick();
  }

  /** The server's warning: shown until the end. */
  warn() {
    this.warned = true;
    this.tick();
  }

  left() {
    return this.endsAt === null ? null : Math.max(0, Math.ceil((this.endsAt - performance.now()) / 1000));
  }

  tick() {
    const left = this.left();
    if (left === null) return;
    this.valueEl.textContent = clock(left);
    this.el.dataset.remaining = String(left);
    this.el.setAttribute('aria-label', `Time left: ${clock(left)}`);
    if (left === 0) {
      this.el.dataset.state = 'ended';
      this.valueEl.textContent = 'Time is up';
      this.stop();
      this.onEnd();
      return;
    }
    this.el.dataset.state = this.warned || left <= LAST_MINUTE ? 'warning' : 'running';
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }
}
