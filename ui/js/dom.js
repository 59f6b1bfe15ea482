// Small DOM helpers. Text always goes in as text (textContent); the only HTML the page
// inserts is the server's sanitised Markdown rendering, through `setSafeHtml`.

/** Builds an element: h('li', {class: 'x', dataset: {id: 1}, onclick: fn}, 'text', child). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** Replaces an element's children. */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/**
 * Puts HTML that the server rendered from Markdown and sanitised (ammonia) into `el`.
 * It is parsed inertly first (a <template> runs nothing), and anything executable that slipped
 * through is dropped again, so a bug on one side does not become script on the page.
 */
export function setSafeHtml(el, html, { chunk = 0 } = {}) {
  const template = document.createElement('template');
  template.innerHTML = html;
  for (const node of template.content.querySelectorAll('script, style, iframe, object, embed, link, meta, base, form')) {
    node.remove();
  }
  for (const node of template.content.querySelectorAll('*')) {
    for (const attr of [...node.attributes]) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      if (name.startsWith('on') || name === 'style' || name === 'srcdoc' ||
          ((name === 'href' || name === 'src' || name === 'xlink:href') &&
           (value.startsWith('javascript:') || value.startsWith('data:') || value.startsWith('vbscript:')))) {
        node.removeAttribute(attr.name);
      }
    }
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  }
  // The page loads no images from other sites (its CSP says so: no tracking pixels in a
  // document the agent wrote); show such an image as a link to open it by choice instead.
  for (const img of template.content.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    if (/^(https?:)?\/\//i.test(src)) {
      const link = document.createElement('a');
      link.href = src;
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
      link.className = 'external-image';
      link.textContent = `Image: ${img.getAttribute('alt') || src}`;
      img.replaceWith(link);
    }
  }
  if (chunk && template.content.childNodes.length > chunk * 4) {
    // A long document: group its blocks so the browser can skip laying out and painting the
    // groups that are off screen (`content-visibility: auto` on .doc-chunk).
    const nodes = [...template.content.childNodes];
    const grouped = document.createDocumentFragment();
    for (let i = 0; i < nodes.length; i += chunk) {
      const group = document.createElement('div');
      group.className = 'doc-chunk';
      group.append(...nodes.slice(i, i + chunk));
      grouped.append(group);
    }
    el.replaceChildren(grouped);
    return;
  }
  el.replaceChildren(template.content);
}

const flashTimers = new WeakMap();
/** Highlights a panel briefly (the agent or another person just changed it). */
export function flash(el) {
  if (!el) return;
  clearTimeout(flashTimers.get(el));
  el.classList.remove('flash');
  void el.offsetWidth; // restart the animation
  el.classList.add('flash');
  flashTimers.set(el, setTimeout(() => el.classList.remove('flash'), 2000));
}

/** A short message in the corner; `kind` is '', 'warn' or 'bad'. */
export function toast(text, kind = '') {
  const el = h('div', { class: `toast ${kind}`, role: kind === 'bad' ? 'alert' : 'status' }, text);
  $('#toasts').append(el);
  setTimeout(() => el.remove(), kind ? 7000 : 3500);
}

const banners = new Map();
/** Shows (or with `text` null, clears) a banner of one kind; the most serious one is shown. */
export function setBanner(kind, text) {
  if (text) banners.set(kind, text); else banners.delete(kind);
  const order = ['offline', 'error', 'model'];
  const shown = order.find((k) => banners.has(k));
  const banner = $('#banner');
  if (!shown) {
    banner.hidden = true;
    document.body.classList.remove('has-banner');
    return;
  }
  banner.dataset.kind = shown;
  $('.banner-text', banner).textContent = banners.get(shown);
  banner.hidden = false;
  document.body.classList.add('has-banner');
}

export function initBanner() {
  $('#banner .banner-close').addEventListener('click', () => setBanner($('#banner').dataset.kind, null));
}

/** Asks a yes/no question in the page's own dialog; resolves true on "ok". */
export function confirmDialog(text, okLabel = 'Delete') {
  const dialog = $('#confirm-dialog');
  $('#confirm-text').textContent = text;
  $('#confirm-ok').textContent = okLabel;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    $('#confirm-cancel').focus();
  });
}

/** Formats an ISO time as a short local time. */
export function shortTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/** Stroke icons (24×24 grid), drawn here so the page needs no icon font or emoji font. */
const ICON_PATHS = {
  edit: ['M4 20h4L19 9l-4-4L4 16z', 'M14 6l4 4'],
  trash: ['M4 7h16', 'M9 7V4h6v3', 'M6 7l1 13h10l1-13', 'M10 11v6', 'M14 11v6'],
  plus: ['M12 5v14', 'M5 12h14'],
  lock: ['M6 11h12v9H6z', 'M8.5 11V8a3.5 3.5 0 0 1 7 0v3'],
  unlock: ['M6 11h12v9H6z', 'M8.5 11V8a3.5 3.5 0 0 1 6.8-1.2'],
  check: ['M5 12.5l4.5 4.5L19 7.5'],
  menu: ['M4 7h16', 'M4 12h16', 'M4 17h16'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  download: ['M12 4v11', 'M7.5 10.5L12 15l4.5-4.5', 'M5 19h14'],
  history: ['M3.5 12a8.5 8.5 0 1 0 2.5-6', 'M3.5 4.5V9H8', 'M12 7.5V12l3 2'],
  fork: ['M7 4v16', 'M17 4v3a5 5 0 0 1-5 5H7'],
  compare: ['M4 5h7v14H4z', 'M13 5h7v14h-7z'],
  undo: ['M9 14L4 9l5-5', 'M4 9h10.5a5.5 5.5 0 0 1 0 11H11'],
  user: ['M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M4.5 20a7.5 7.5 0 0 1 15 0'],
  plug: ['M9 3v5', 'M15 3v5', 'M6 8h12v3a6 6 0 0 1-12 0z', 'M12 17v4'],
  share: ['M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7z', 'M2.5 20a6.5 6.5 0 0 1 13 0', 'M19 8v6', 'M16 11h6'],
};

const iconUrls = new Map();
function iconUrl(name) {
  if (!iconUrls.has(name)) {
    const paths = (ICON_PATHS[name] || []).map((d) => `<path d='${d}'/>`).join('');
    const svg = `<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24' fill='none' stroke='black' stroke-width='1.8' stroke-linecap='round' stroke-linejoin='round'>${paths}</svg>`;
    iconUrls.set(name, `url("data:image/svg+xml,${encodeURIComponent(svg)}")`);
  }
  return iconUrls.get(name);
}

/**
 * An icon, hidden from screen readers (its button carries the label). One element painted
 * with a CSS mask rather than inline SVG: a 1,000-step plan has three icons a row.
 */
export function icon(name) {
  const el = document.createElement('span');
  el.className = `icon icon-${name}`;
  el.setAttribute('aria-hidden', 'true');
  el.style.setProperty('--icon', iconUrl(name));
  return el;
}

/** Replaces `[data-icon]` placeholders in the static page with their icons. */
export function drawStaticIcons() {
  for (const el of document.querySelectorAll('[data-icon]')) el.replaceChildren(icon(el.dataset.icon));
}

/**
 * Brings `list`'s children in line with `items` while keeping every row whose content did not
 * change: a live update then never replaces the checkbox or button a person is about to click,
 * nor moves focus. `signature(item, index)` says when a row must be redrawn.
 */
export function reconcile(list, items, key, signature, create) {
  const existing = new Map();
  for (const child of list.children) {
    if (child.dataset.key !== undefined) existing.set(child.dataset.key, child);
  }
  const wanted = items.map((item, index) => {
    const k = String(key(item));
    const sig = signature(item, index);
    let node = existing.get(k);
    if (!node || node.dataset.sig !== sig) {
      node = create(item, index);
      node.dataset.key = k;
      node.dataset.sig = sig;
    }
    existing.delete(k);
    return node;
  });
  const keep = new Set(wanted);
  for (const child of [...list.children]) {
    if (!keep.has(child)) child.remove();
  }
  wanted.forEach((node, index) => {
    if (list.children[index] !== node) list.insertBefore(node, list.children[index] || null);
  });
}
